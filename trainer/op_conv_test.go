package trainer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/internal/conv"
	"github.com/flsweep/flsweep/internal/mem"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convPasses runs a convolution's forward pass, input gradient and weight
// gradient for x, w, b (b nil for none) and dy, as a training step's graph
// runs them.
func convPasses[T float](t *testing.T, g convGeom, batch int, x, w, b, dy []T) (y, dx, dw []T) {
	return convPassesCache(t, g, batch, x, w, b, dy, true)
}

// convPassesCache is convPasses with the forward pass's column matrices
// or transformed inputs cached for the weight gradient (where they fit)
// or not.
func convPassesCache[T float](t *testing.T, g convGeom, batch int, x, w, b, dy []T, cache bool) (y, dx, dw []T) {
	t.Helper()
	ws := &mem.Workspace[T]{BLAS: !g.packed}
	fwd := &convOp[T]{g: g, ws: ws, train: cache}
	xt := tensor.New(tensor.WithShape(batch, g.Cin, g.H, g.W), tensor.WithBacking(x))
	wt := tensor.New(tensor.WithShape(g.Cout, g.Cin, g.K, g.K), tensor.WithBacking(w))
	dyt := tensor.New(tensor.WithShape(batch, g.Cout, g.Ho, g.Wo), tensor.WithBacking(dy))
	args := []G.Value{xt, wt}
	if b != nil {
		args = append(args, tensor.New(tensor.WithShape(g.Cout), tensor.WithBacking(b)))
	}
	out, err := fwd.Do(args...)
	if err != nil {
		t.Fatal(err)
	}
	y = append([]T(nil), out.(*tensor.Dense).Data().([]T)...)
	dxo, err := (&convDxOp[T]{g: g, ws: ws, fwd: fwd}).Do(dyt, wt)
	if err != nil {
		t.Fatal(err)
	}
	dwo, err := (&convDwOp[T]{g: g, ws: ws, fwd: fwd}).Do(dyt, xt)
	if err != nil {
		t.Fatal(err)
	}
	return y, dxo.(*tensor.Dense).Data().([]T), dwo.(*tensor.Dense).Data().([]T)
}

// TestWinogradConv checks F(2×2, 3×3)'s and F(2×2, 5×5)'s forward pass,
// input gradient and weight gradient against im2col's (which
// TestConvForward and the finite-difference tests check against the
// definition): to 1e-12 relative to the terms' scale in float64, and
// within 2·10⁻⁶ (3×3) or 5·10⁻⁵ (5×5) of it in float32. The geometries cover padding 0 and 1, even and odd outputs
// (a last row and column of tiles reaching past them), bias, rows of
// tiles shorter and longer than a vector, and chunks of one sample and of
// several with a rest chunk.
func TestWinogradConv(t *testing.T) {
	tests := []struct {
		name      string
		cin, cout int
		h, w, p   int
		bias      bool
		batch     int
		chunk     int  // conv.MaxWinoFloats, or 0 for the default
		k         int  // 3, or 5 for F(2×2, 5×5)
		m4        bool // F(4×4, ·) rather than F(2×2, ·)
	}{
		{"padded even", 3, 4, 6, 8, 1, false, 3, 0, 0, false},
		{"padded odd", 2, 3, 5, 7, 1, true, 2, 0, 0, false},
		{"valid odd", 3, 2, 7, 6, 0, true, 2, 0, 0, false},
		{"valid 3x3 image", 2, 2, 3, 3, 0, false, 3, 0, 0, false},
		{"one row", 2, 2, 1, 9, 1, false, 2, 0, 0, false},
		{"many channels", 20, 17, 8, 8, 1, false, 5, 0, 0, false},
		{"long rows", 3, 2, 5, 37, 1, true, 3, 0, 0, false},
		{"chunks of one", 3, 4, 6, 8, 1, true, 3, 16 * 4 * 12, 0, false},
		{"chunks of two and a rest", 2, 3, 7, 18, 1, false, 5, 16 * 3 * 36 * 2, 0, false},
		{"5x5 valid even", 3, 4, 12, 12, 0, true, 3, 0, 5, false},
		{"5x5 valid odd", 2, 3, 7, 9, 0, false, 2, 0, 5, false},
		{"5x5 padded 2", 3, 2, 6, 7, 2, true, 2, 0, 5, false},
		{"5x5 padded 1", 2, 3, 8, 9, 1, false, 2, 0, 5, false},
		{"5x5 many channels", 20, 17, 14, 14, 0, true, 3, 0, 5, false},
		{"5x5 long rows", 3, 2, 5, 37, 2, true, 3, 0, 5, false},
		{"5x5 chunks of two and a rest", 2, 3, 9, 20, 2, false, 5, 36 * 3 * 50 * 2, 5, false},
		{"4x4 padded even", 3, 4, 6, 8, 1, false, 3, 0, 0, true},
		{"4x4 padded odd", 2, 3, 5, 7, 1, true, 2, 0, 0, true},
		{"4x4 valid odd", 3, 2, 7, 6, 0, true, 2, 0, 0, true},
		{"4x4 valid 3x3 image", 2, 2, 3, 3, 0, false, 3, 0, 0, true},
		{"4x4 many channels", 20, 17, 8, 8, 1, false, 5, 0, 0, true},
		{"4x4 ResNet 4x4 stage", 18, 16, 4, 4, 1, true, 3, 0, 0, true},
		{"4x4 long rows", 3, 2, 9, 37, 1, true, 3, 0, 0, true},
		{"4x4 chunks of two and a rest", 2, 3, 7, 18, 1, false, 5, 36 * 3 * 10 * 2, 0, true},
		{"4x4 5x5 valid even", 3, 4, 12, 12, 0, true, 3, 0, 5, true},
		{"4x4 5x5 CIFAR-like", 20, 17, 14, 14, 0, true, 3, 0, 5, true},
		{"4x4 5x5 HiCS-like", 18, 16, 12, 12, 0, false, 2, 0, 5, true},
		{"4x4 5x5 valid odd", 2, 3, 7, 9, 0, false, 2, 0, 5, true},
		{"4x4 5x5 padded 2", 3, 2, 6, 7, 2, true, 2, 0, 5, true},
		{"4x4 5x5 long rows", 3, 2, 9, 41, 2, true, 3, 0, 5, true},
		{"4x4 5x5 chunks of two and a rest", 2, 3, 9, 20, 2, false, 5, 64 * 3 * 15 * 2, 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.chunk > 0 {
				defer func(m int) { conv.MaxWinoFloats = m }(conv.MaxWinoFloats)
				conv.MaxWinoFloats = tt.chunk
			}
			k := max(tt.k, 3)
			l := layer{name: "c", in: shape{tt.cin, tt.h, tt.w}, out: shape{tt.cout, tt.h + 2*tt.p - k + 1, tt.w + 2*tt.p - k + 1}, k: k, stride: 1, pad: tt.p, b: -1}
			if tt.bias {
				l.b = 0
			}
			g := newConvGeom(l, testKern)
			g.needDx = true
			r := rand.New(rand.NewPCG(11, 12))
			rnd := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = r.NormFloat64()
				}
				return v
			}
			x, w, dy := rnd(tt.batch*g.InSize()), rnd(g.Cout*g.KDim()), rnd(tt.batch*g.OutSize())
			var b []float64
			if tt.bias {
				b = rnd(g.Cout)
			}
			direct, wino := g, g
			direct.Wino, wino.Wino, wino.Wino4 = false, true, tt.m4
			if tt.chunk > 0 && wino.WinoChunk() >= tt.batch {
				t.Fatalf("one chunk of %d samples for a batch of %d", wino.WinoChunk(), tt.batch)
			}
			y0, dx0, dw0 := convPasses(t, direct, tt.batch, x, w, b, dy)
			y1, dx1, dw1 := convPasses(t, wino, tt.batch, x, w, b, dy)
			// Scales: a sum of k²·cin (forward), k²·cout (dx) or
			// batch·hw (dw) products of unit normals.
			scale := map[string]float64{
				"y": math.Sqrt(float64(k * k * g.Cin)), "dx": math.Sqrt(float64(k * k * g.Cout)),
				"dw": math.Sqrt(float64(tt.batch * g.HW())),
			}
			for _, c := range []struct {
				what      string
				got, want []float64
			}{{"y", y1, y0}, {"dx", dx1, dx0}, {"dw", dw1, dw0}} {
				if len(c.got) != len(c.want) {
					t.Fatalf("%s: %d values; want %d", c.what, len(c.got), len(c.want))
				}
				for i := range c.got {
					if d := math.Abs(c.got[i] - c.want[i]); !(d <= 1e-12*scale[c.what]) {
						t.Fatalf("%s[%d] = %v; want %v (im2col)", c.what, i, c.got[i], c.want[i])
					}
				}
			}

			// float32: the same passes, against float64's im2col.
			f32 := func(v []float64) []float32 {
				if v == nil {
					return nil
				}
				o := make([]float32, len(v))
				for i, e := range v {
					o[i] = float32(e)
				}
				return o
			}
			// F(2×2, 5×5)'s transforms have coefficients 4, 5, ⅙ and
			// 1/24 and round more: its worst errors here were 1.2·10⁻⁵
			// (y) and 2.0·10⁻⁵ (dw) of the scale, F(2×2, 3×3)'s 8·10⁻⁷.
			tol := 2e-6
			if k == 5 || tt.m4 {
				tol = 5e-5
			}
			y2, dx2, dw2 := convPasses(t, wino, tt.batch, f32(x), f32(w), f32(b), f32(dy))
			// Without the forward pass's transformed inputs cached, the
			// weight gradient transforms them again: the same bits.
			if !wino.cacheWino(tt.batch) {
				t.Fatalf("transformed inputs of %d samples not cached", tt.batch)
			}
			_, _, dw3 := convPassesCache(t, wino, tt.batch, f32(x), f32(w), f32(b), f32(dy), false)
			for i := range dw3 {
				if math.Float32bits(dw3[i]) != math.Float32bits(dw2[i]) {
					t.Fatalf("dw[%d] = %v transformed again; %v cached", i, dw3[i], dw2[i])
				}
			}
			for _, c := range []struct {
				what string
				got  []float32
				want []float64
			}{{"y", y2, y0}, {"dx", dx2, dx0}, {"dw", dw2, dw0}} {
				for i := range c.got {
					if d := math.Abs(float64(c.got[i]) - c.want[i]); !(d <= tol*scale[c.what]) {
						t.Fatalf("float32 %s[%d] = %v; want %v", c.what, i, c.got[i], c.want[i])
					}
				}
			}
		})
	}
}

// TestWinogradOnes runs F(2×2, 3×3) with the 3×3 filter of ones on an
// input of ones, giving 9 at each output (4 with padding at a corner).
// (The transforms on known values are package conv's
// TestWinogradTransforms.)
func TestWinogradOnes(t *testing.T) {
	w := make([]float64, 9)
	for i := range w {
		w[i] = 1
	}
	// Ones through a padded 4×4 image: 4 at corners, 6 on edges, 9 inside.
	l := layer{name: "c", in: shape{1, 4, 4}, out: shape{1, 4, 4}, k: 3, stride: 1, pad: 1, b: -1}
	g := newConvGeom(l, testKern)
	g.Wino = true
	x := make([]float64, 16)
	for i := range x {
		x[i] = 1
	}
	y, _, _ := convPasses(t, g, 1, x, w, nil, make([]float64, 16))
	want := []float64{4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4}
	for i := range y {
		if y[i] != want[i] {
			t.Fatalf("y = %v; want %v", y, want)
		}
	}
}

// TestWinograd5Ones runs F(2×2, 5×5) with the 5×5 filter of ones on a 6×6
// image of ones padded by 2, giving the count of the image's pixels under
// each output's window (9 at a corner to 25 inside), and an input
// gradient of ones likewise. (The transforms on known values are package
// conv's TestWinograd5Transforms.)
func TestWinograd5Ones(t *testing.T) {
	w := make([]float64, 25)
	for i := range w {
		w[i] = 1
	}
	// Each output (i, j) of a 6×6 image padded by 2 sees the pixels in
	// rows i−2..i+2 and columns j−2..j+2 inside the image: 3, 4, 5, 5, 4,
	// 3 of each; each input pixel gets the gradient from as many outputs.
	checkOnes(t, 6, false, w, []float64{3, 4, 5, 5, 4, 3})
}

// TestWinograd45Ones runs F(4×4, 5×5) with the 5×5 filter of ones on an
// 8×8 image of ones padded by 2, giving the count of the image's pixels
// under each output's window, and an input gradient of ones likewise.
// (The transforms on known values are package conv's
// TestWinograd45Transforms.)
func TestWinograd45Ones(t *testing.T) {
	w := make([]float64, 25)
	for i := range w {
		w[i] = 1
	}
	// Each output (i, j) of an 8×8 image padded by 2 sees the pixels in
	// rows i−2..i+2 and columns j−2..j+2 inside the image; each input
	// pixel gets the gradient from as many outputs.
	checkOnes(t, 8, true, w, []float64{3, 4, 5, 5, 5, 5, 4, 3})
}

// checkOnes runs a 5×5 convolution padded by 2 by Winograd (F(4×4, 5×5)
// if m4, else F(2×2, 5×5)) on a size×size image of ones with the filter
// w, and an output gradient of ones back: both must be n[i]·n[j] at (i,
// j), the count of pixels under each output's window.
func checkOnes(t *testing.T, size int, m4 bool, w, n []float64) {
	t.Helper()
	l := layer{name: "c", in: shape{1, size, size}, out: shape{1, size, size}, k: 5, stride: 1, pad: 2, b: -1}
	g := newConvGeom(l, testKern)
	g.Wino, g.Wino4, g.needDx = true, m4, true
	ones := make([]float64, size*size)
	for i := range ones {
		ones[i] = 1
	}
	y, dx, _ := convPasses(t, g, 1, ones, w, nil, ones)
	for i := range size {
		for j := range size {
			want := n[i] * n[j]
			if math.Abs(y[size*i+j]-want) > 1e-12 || math.Abs(dx[size*i+j]-want) > 1e-12 {
				t.Fatalf("at (%d, %d): y = %v, dx = %v; want %v", i, j, y[size*i+j], dx[size*i+j], want)
			}
		}
	}
}

// TestWinoBackwardFused trains the Winograd architectures two steps with
// each convolution's input and weight gradients in one pass
// (winoBackward) and in two (winoDx, winoDw), and wants the same weights
// bit for bit; it checks that a training session does take the one pass
// for every Winograd convolution that has an input gradient.
func TestWinoBackwardFused(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		in   [3]int
	}{
		{Spec{Arch: ArchCNNFedEBACIFAR}, cifar}, {Spec{Arch: ArchCNNHiCS}, mnist}, {Spec{Arch: ArchCNNHiCSCIFAR}, cifar},
		{Spec{Arch: ArchCNNHiCS3Conv}, mnist}, {Spec{Arch: ArchResNet18}, [3]int{3, 16, 16}},
	} {
		n := mustNet(t, c.spec, c.in, 10)
		ex := uniformData(1, 40, n.Dim(), 10)
		w0 := initWeights(t, n, 1)
		train := func(fuse bool) []float32 {
			fuseWinoBackward = fuse
			defer func() { fuseWinoBackward = true }()
			w := append([]float32(nil), w0...)
			if _, err := newTrainer().Train(t.Context(), n, w, ex, sgdSteps(0.01, 20, 2), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatalf("%s (fused %v): %v", n.Key(), fuse, err)
			}
			return w
		}
		if !equalBits(train(true), train(false)) {
			t.Errorf("%s: weights after 2 steps differ with the Winograd gradients in one pass", n.Key())
		}

		s, err := newSession[float32](n, testKern, 20, true)
		if err != nil {
			t.Fatal(err)
		}
		fused := 0
		for _, st := range s.tape.steps {
			op, ok := st.op.(*convDxOp[float32])
			if !ok || !op.g.Wino {
				continue
			}
			if op.dw == nil || !op.dw.dw.bound {
				t.Errorf("%s: %v computes dx alone", n.Key(), op)
				continue
			}
			fused++
		}
		if fused == 0 {
			t.Errorf("%s: no Winograd convolution with an input gradient", n.Key())
		}
	}
}
