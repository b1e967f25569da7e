package trainer

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/internal/conv"
	"github.com/flsweep/flsweep/internal/floattest"
)

// TestChannelLaneWinograd checks that the channel-lane F(4×4, 3×3) and
// F(2×2, 3×3) (internal/conv/winograd_cl.go) compute the tile-lane paths'
// bits: the forward pass, the input gradient and the weight gradient,
// fused and apart, with the transformed inputs cached and recomputed, on
// ResNet-18's stride-1 geometries and on outputs that the tiles overhang,
// with and without padding and bias, in batches of several chunks and of
// one partial one.
func TestChannelLaneWinograd(t *testing.T) {
	if !testKern.CL {
		t.Skip("no channel-lane path on this CPU (AVX-512) or with FLSWEEP_GEMM=blas")
	}
	tests := []struct {
		cin, cout, h, p int
		bias            bool
		k               int
	}{
		{64, 64, 32, 1, false, 3},   // ResNet-18's first stage
		{128, 128, 16, 1, false, 3}, // second
		{256, 256, 8, 1, false, 3},  // third
		{64, 96, 18, 1, true, 3},    // tiles past the output (5×5 tiles of 18×18)
		{80, 48, 18, 0, true, 3},    // no padding: 16×16 outputs
		{512, 512, 4, 1, false, 3},  // ResNet-18's fourth stage: F(2×2, 3×3)
		{64, 64, 14, 1, true, 3},    // F(2×2, 3×3) on 7×7 tiles
		{64, 80, 13, 1, false, 3},   // tiles past the output
		{64, 64, 9, 0, true, 3},     // no padding: 7×7 outputs
		{64, 64, 14, 0, true, 5},    // the FedEBA+ CIFAR CNN's second: F(4×4, 5×5), 3×3 tiles past 10×10 outputs
		{64, 96, 12, 2, false, 5},   // padded, 3×3 tiles covering 12×12
		{80, 64, 17, 1, true, 5},    // padded, 4×4 tiles past 15×15
	}
	for _, tt := range tests {
		for _, batch := range []int{50, 7, 1} {
			for _, cache := range []bool{false, true} { // the tile-lane path's cache (the channel-lane one recomputes)
				k := tt.k
				name := fmt.Sprintf("%dx%dx%d-k%d-p%d-b%d-cache%v", tt.cin, tt.cout, tt.h, k, tt.p, batch, cache)
				t.Run(name, func(t *testing.T) {
					ho := tt.h + 2*tt.p - k + 1
					l := layer{name: "c", in: shape{tt.cin, tt.h, tt.h}, out: shape{tt.cout, ho, ho}, k: k, stride: 1, pad: tt.p, b: -1}
					if tt.bias {
						l.b = 0
					}
					g := newConvGeom(l, testKern)
					g.needDx = true
					if !g.Wino || g.K == 5 && !g.Wino4 {
						t.Skipf("FLSWEEP_CONV or FLSWEEP_WINO45 sends this geometry to another algorithm")
					}
					if !g.CL {
						t.Fatalf("geometry %+v does not take the channel-lane path", g)
					}
					r := rand.New(rand.NewPCG(uint64(tt.cin), uint64(batch)))
					rnd := func(n int) []float32 {
						v := make([]float32, n)
						for i := range v {
							v[i] = float32(r.NormFloat64())
						}
						return v
					}
					x, w, dy := rnd(batch*g.InSize()), rnd(tt.cout*tt.cin*k*k), rnd(batch*g.OutSize())
					var b []float32
					if tt.bias {
						b = rnd(tt.cout)
					}
					old := g
					old.CL = false
					for _, fused := range []bool{true, false} {
						was := fuseWinoBackward
						fuseWinoBackward = fused
						y0, dx0, dw0 := convPassesCache(t, old, batch, x, w, b, dy, cache)
						y1, dx1, dw1 := convPassesCache(t, g, batch, x, w, b, dy, cache)
						fuseWinoBackward = was
						if len(y1) != len(y0) || len(dx1) != len(dx0) || len(dw1) != len(dw0) {
							t.Fatal("lengths differ")
						}
						floattest.SameBits(t, "y", y1, y0)
						floattest.SameBits(t, "dx", dx1, dx0)
						floattest.SameBits(t, "dw", dw1, dw0)
					}
				})
			}
		}
	}
}

// TestChannelLaneTraining trains ResNet-18 (whose first three stages take
// the channel-lane path) for two steps with and without it: the weights
// and running statistics must come out bit for bit the same.
func TestChannelLaneTraining(t *testing.T) {
	if !testKern.CL {
		t.Skip("no channel-lane path on this CPU (AVX-512) or with FLSWEEP_GEMM=blas")
	}
	n := mustNet(t, Spec{Arch: ArchResNet18}, cifar, 10)
	ex := uniformData(3, 40, n.Dim(), 10)
	w0 := initWeights(t, n, 5)
	run := func(cl bool) []float32 {
		choice := testChoice
		choice.NoChannelLane = !cl
		w := append([]float32(nil), w0...)
		r := rand.New(rand.NewPCG(9, 9))
		if _, err := New(&Options{Kernels: choice}).Train(t.Context(), n, w, ex, sgdSteps(0.05, 20, 2), r, nil); err != nil {
			t.Fatal(err)
		}
		return w
	}
	floattest.SameBits(t, "weights", run(true), run(false))
}

// TestDwTransposed checks that the im2col weight gradient computed as
// dWᵀ = col·dYᵀ (dwTransposed) has dW = dY·colᵀ's bits, on ResNet-18's
// stride-2 and 1×1 convolutions and the CIFAR CNN's first, whole and in
// chunks.
func TestDwTransposed(t *testing.T) {
	if !testKern.packed {
		t.Skip("the BLAS computes the products (FLSWEEP_GEMM=blas or no AVX2)")
	}
	tests := []struct{ cin, cout, h, k, s, p, batch int }{
		{64, 128, 32, 3, 2, 1, 9},  // ResNet-18's second stage, first convolution
		{256, 512, 8, 3, 2, 1, 50}, // fourth stage
		{128, 256, 16, 1, 2, 0, 9}, // a shortcut
		{3, 64, 32, 5, 1, 0, 7},    // the FedEBA+ CIFAR CNN's first
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d-%d-k%d-s%d", tt.cin, tt.cout, tt.h, tt.k, tt.s), func(t *testing.T) {
			ho := (tt.h+2*tt.p-tt.k)/tt.s + 1
			l := layer{name: "c", in: shape{tt.cin, tt.h, tt.h}, out: shape{tt.cout, ho, ho}, k: tt.k, stride: tt.s, pad: tt.p, b: -1}
			g := newConvGeom(l, testKern)
			g.needDx = true
			if g.Wino || !g.dwTransposed() {
				t.Fatalf("geometry %+v does not take the transposed weight gradient", g)
			}
			r := rand.New(rand.NewPCG(uint64(tt.cin), uint64(tt.cout)))
			x, w, dy := floattest.MixedVals(r, tt.batch*g.InSize(), 50), floattest.MixedVals(r, tt.cout*g.KDim(), 50), floattest.MixedVals(r, tt.batch*g.OutSize(), 50)
			_, _, dw1 := convPassesCache(t, g, tt.batch, x, w, nil, dy, false)
			useDwT = false
			_, _, dw0 := convPassesCache(t, g, tt.batch, x, w, nil, dy, false)
			useDwT = true
			floattest.SameBits(t, "dw", dw1, dw0)
		})
	}
}

// TestChannelLaneIm2col checks that the channel-lane im2col
// (internal/conv/im2col_cl.go) computes the im2col path's bits: forward
// pass with and without bias, input gradient and weight gradient, on
// ResNet-18's three stride-2 convolutions and on stride-1 and stride-3 3×3
// convolutions without Winograd, whole batches and chunks of several and
// of one sample.
func TestChannelLaneIm2col(t *testing.T) {
	if !testKern.CL {
		t.Skip("no channel-lane path on this CPU (AVX-512) or with FLSWEEP_GEMM=blas")
	}
	tests := []struct {
		cin, cout, h, s, p int
		bias               bool
	}{
		{64, 128, 32, 2, 1, false},  // ResNet-18's second stage, first convolution
		{128, 256, 16, 2, 1, false}, // third
		{256, 512, 8, 2, 1, false},  // fourth
		{32, 64, 15, 2, 1, true},    // odd planes, bias
		{16, 64, 9, 3, 0, true},     // stride 3, no padding
		{32, 64, 11, 1, 1, false},   // stride 1, Winograd turned off below
	}
	for _, tt := range tests {
		for _, batch := range []int{50, 5, 1} {
			t.Run(fmt.Sprintf("%dx%dx%d-s%d-p%d-b%d", tt.cin, tt.cout, tt.h, tt.s, tt.p, batch), func(t *testing.T) {
				ho := (tt.h+2*tt.p-3)/tt.s + 1
				l := layer{name: "c", in: shape{tt.cin, tt.h, tt.h}, out: shape{tt.cout, ho, ho}, k: 3, stride: tt.s, pad: tt.p, b: -1}
				if tt.bias {
					l.b = 0
				}
				g := newConvGeom(l, testKern)
				g.needDx = true
				if g.Wino {
					g.Wino, g.Wino4, g.CL = false, false, false
					g.CLI = g.CliFits()
				}
				if !g.CLI {
					t.Fatalf("geometry %+v does not take the channel-lane im2col", g)
				}
				r := rand.New(rand.NewPCG(uint64(tt.cin), uint64(batch)))
				x, w, dy := floattest.MixedVals(r, batch*g.InSize(), 40), floattest.MixedVals(r, tt.cout*g.KDim(), 40), floattest.MixedVals(r, batch*g.OutSize(), 40)
				var b []float32
				if tt.bias {
					b = floattest.MixedVals(r, tt.cout, 40)
				}
				old := g
				old.CLI = false
				y0, dx0, dw0 := convPassesCache(t, old, batch, x, w, b, dy, false)
				y1, dx1, dw1 := convPassesCache(t, g, batch, x, w, b, dy, false)
				floattest.SameBits(t, "y", y1, y0)
				floattest.SameBits(t, "dx", dx1, dx0)
				floattest.SameBits(t, "dw", dw1, dw0)
			})
		}
	}
}

// TestRunKernels checks that im2col and col2im (package conv) give the
// same bits with their runs copied and added by wino.CopyRuns and
// wino.AddRuns (conv.RunKernels) and by the loops: LeNet's two
// convolutions, a padded one (through padded planes), and rows of 17 and
// 33 floats (a partial last step of 16) and of 16 and 32 (none); planes up
// to 16 wide take wino.Col2imRows.
func TestRunKernels(t *testing.T) {
	if !conv.RunKernels {
		t.Skip("no AVX-512")
	}
	tests := []struct{ cin, cout, h, k, p, batch int }{
		{1, 6, 28, 5, 0, 9},  // LeNet's first (rows of 24)
		{6, 16, 12, 5, 0, 9}, // second (rows of 8)
		{1, 32, 28, 3, 1, 3}, // the HiCS three-convolution CNN's first, padded
		{3, 8, 21, 5, 0, 2},  // rows of 17
		{2, 8, 37, 5, 0, 2},  // rows of 33
		{2, 8, 20, 5, 0, 2},  // rows of 16
		{2, 8, 36, 5, 0, 2},  // rows of 32
		{4, 8, 16, 3, 0, 3},  // planes 16 wide (Col2imRows)
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d-%d-k%d-p%d", tt.cin, tt.cout, tt.h, tt.k, tt.p), func(t *testing.T) {
			ho := tt.h + 2*tt.p - tt.k + 1
			l := layer{name: "c", in: shape{tt.cin, tt.h, tt.h}, out: shape{tt.cout, ho, ho}, k: tt.k, stride: 1, pad: tt.p, b: 0}
			g := newConvGeom(l, testKern)
			g.needDx = true
			if g.Wino || g.CLI {
				t.Fatalf("geometry %+v does not take im2col", g)
			}
			r := rand.New(rand.NewPCG(uint64(tt.h), uint64(tt.k)))
			x, w, b, dy := floattest.MixedVals(r, tt.batch*g.InSize(), 30), floattest.MixedVals(r, tt.cout*g.KDim(), 30), floattest.MixedVals(r, tt.cout, 30), floattest.MixedVals(r, tt.batch*g.OutSize(), 30)
			y1, dx1, dw1 := convPassesCache(t, g, tt.batch, x, w, b, dy, false)
			conv.RunKernels = false
			y0, dx0, dw0 := convPassesCache(t, g, tt.batch, x, w, b, dy, false)
			conv.RunKernels = true
			floattest.SameBits(t, "y", y1, y0)
			floattest.SameBits(t, "dx", dx1, dx0)
			floattest.SameBits(t, "dw", dw1, dw0)
		})
	}
}
