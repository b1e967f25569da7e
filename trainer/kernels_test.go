package trainer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/internal/floattest"
	"github.com/flsweep/flsweep/internal/vector"
)

// vecData returns n float32 values: mostly normal, with NaNs, infinities,
// signed zeros, ties and subnormals sprinkled in.
func vecData(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		0, float32(math.Copysign(0, -1)), 1, -1, math.SmallestNonzeroFloat32}
	for i := range x {
		switch {
		case r.IntN(8) == 0:
			x[i] = special[r.IntN(len(special))]
		case r.IntN(8) == 0 && i > 0:
			x[i] = x[i-1] // ties
		default:
			x[i] = float32(r.NormFloat64())
		}
	}
	return x
}

// TestVecKernels checks each set of vector kernels the CPU runs
// (package vector) against the portable loops: the
// elementwise ones bit for bit, the float64 sums to within rounding and,
// bit for bit, against sums16, the 16-lane order every set keeps. It
// checks nothing in a build without them.
func TestVecKernels(t *testing.T) { eachVecSet(t, testVecKernels) }

// eachVecSet runs test once per vector kernel set the CPU runs, with vec
// set to it, and skips in a build without them.
func eachVecSet(t *testing.T, test func(*testing.T)) {
	if len(vecSets) == 0 {
		t.Skip("portable build: no vector kernels (GOEXPERIMENT=simd on an AVX-512 or AVX2 CPU adds them)")
	}
	saved := vec
	defer func() { vec = saved }()
	for _, set := range vecSets {
		t.Run(set.Name, func(t *testing.T) {
			vec = set
			test(t)
		})
	}
}

func testVecKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 24, 64, 100, 576, 1000} {
		x, d := vecData(r, n), vecData(r, n)
		got, want := make([]float32, n), make([]float32, n)
		saved := vec
		vec.Add = nil
		addInto(want, x, d)
		vec = saved
		vec.Add(got, x, d)
		floattest.SameBits(t, "add", got, want)
		vec.ReLU, vec.ReLUDx = nil, nil
		relu(want, x)
		vec = saved
		vec.ReLU(got, x)
		floattest.SameBits(t, "relu", got, want)
		vec.ReLU, vec.Add = nil, nil
		addInto(want, x, d)
		relu(want, want)
		vec = saved
		vec.AddReLU(got, x, d)
		floattest.SameBits(t, "addReLU", got, want)
		vec.ReLU, vec.ReLUDx = nil, nil
		reluDx(want, x, d)
		vec = saved
		vec.ReLUDx(got, x, d)
		floattest.SameBits(t, "reluDx", got, want)
		for _, a := range []float32{0.25, -0.5, 0} {
			vec.PReLU(got, x, d, a)
			vector.PReLUGo(want, x, d, a)
			floattest.SameBits(t, "prelu", got, want)
		}
	}
	for _, shape := range [][3]int{{1, 1, 1}, {2, 3, 5}, {3, 2, 16}, {2, 4, 17}, {5, 32, 64}, {2, 32, 576}, {1, 3, 49}} {
		b, c, hw := shape[0], shape[1], shape[2]
		n := b * c * hw
		x, d := vecData(r, n), vecData(r, n)
		got, want := make([]float32, n), make([]float32, n)
		s, sh, k := vecData(r, c), vecData(r, c), vecData(r, c)
		vec.BNAffine(got, x, s, sh, hw)
		for i, v := range x {
			ch := i / hw % c
			want[i] = v*s[ch] + sh[ch]
		}
		floattest.SameBits(t, "bnAffine", got, want)
		vec.BNAffineReLU(got, x, s, sh, hw)
		for i, v := range want {
			if !(v > 0 || v != v) {
				want[i] = 0
			}
		}
		floattest.SameBits(t, "bnAffineReLU", got, want)
		addBias(got, x, sh[:1])
		for i, v := range x {
			want[i] = v + sh[0]
		}
		floattest.SameBits(t, "addBias (bnAffine with scale 1)", got, want)
		vec.BNDx(got, d, x, s, sh, k, hw)
		for i, v := range x {
			ch := i / hw % c
			want[i] = s[ch]*d[i] + sh[ch]*v + k[ch]
		}
		floattest.SameBits(t, "bnDx", got, want)

		// The sums, on finite data, agree with plain float64 sums to within
		// a few ulps of the sum of magnitudes.
		f, g := make([]float32, n), make([]float32, n)
		for i := range f {
			f[i], g[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		mean := make([]float64, c)
		for ch := range mean {
			mean[ch] = r.NormFloat64()
		}
		wSum, wSq, wDy, wDyx, mag := make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c)
		for i := range f {
			ch := i / hw % c
			xv, dv := float64(f[i]), float64(g[i])
			wSum[ch] += xv
			wSq[ch] += (xv - mean[ch]) * (xv - mean[ch])
			wDy[ch] += dv
			wDyx[ch] += dv * (xv - mean[ch])
			mag[ch] += math.Abs(xv) + math.Abs(dv) + math.Abs(dv*(xv-mean[ch])) + (xv-mean[ch])*(xv-mean[ch])
		}
		gSum, gSq, gDy, gDyx := make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c)
		vec.ChannelSum(gSum, f, c, hw)
		vec.ChannelSqDev(gSq, f, mean, hw)
		vec.ChannelDot(gDy, gDyx, f, g, mean, hw)
		for ch := range c {
			for _, q := range []struct {
				what      string
				got, want float64
			}{{"channelSum", gSum[ch], wSum[ch]}, {"channelSqDev", gSq[ch], wSq[ch]}, {"channelDot Σdy", gDy[ch], wDy[ch]}, {"channelDot Σdy·(x−m)", gDyx[ch], wDyx[ch]}} {
				if math.Abs(q.got-q.want) > 1e-13*(mag[ch]+1) {
					t.Errorf("shape %v channel %d: %s = %v, want %v", shape, ch, q.what, q.got, q.want)
				}
			}
		}
		saved := vec
		vec.NegDot = nil
		wantNeg := negDot(f, g)
		vec = saved
		var magN float64
		for i := range f {
			magN += math.Abs(float64(f[i]) * float64(g[i]))
		}
		if gotNeg := vec.NegDot(f, g); math.Abs(gotNeg-wantNeg) > 1e-13*(magN+1) {
			t.Errorf("shape %v: negDot = %v, portable %v", shape, gotNeg, wantNeg)
		}
		for ch := range c {
			want := sums16(f, g, mean[ch], ch, c, hw)
			for _, q := range []struct {
				what      string
				got, want float64
			}{{"channelSum", gSum[ch], want[0]}, {"channelSqDev", gSq[ch], want[1]}, {"channelDot Σdy", gDy[ch], want[2]}, {"channelDot Σdy·(x−m)", gDyx[ch], want[3]}} {
				if math.Float64bits(q.got) != math.Float64bits(q.want) {
					t.Errorf("shape %v channel %d: %s = %v, want %v in the 16-lane order", shape, ch, q.what, q.got, q.want)
				}
			}
		}
		if got, want := vec.NegDot(f, g), negDot16(f, g); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("shape %v: negDot = %v, want %v in the 16-lane order", shape, got, want)
		}
		if n > 0 {
			f[n-1] = float32(math.NaN())
			vec.ChannelSum(gSum, f, c, hw)
			if !math.IsNaN(gSum[c-1]) || !math.IsNaN(vec.NegDot(f, g)) {
				t.Errorf("shape %v: a NaN input does not make the sums NaN", shape)
			}
		}
	}
}

// sums16 is channel ch's four float64 sums (Σx, Σ(x−m)², Σdy, Σdy·(x−m),
// with x = f and dy = g) in the vector kernels' order: 16 lanes, lane q
// adding element q of every full step of 16 of every plane of the channel;
// then lane q + lane q+8, then the pairs as sumLanes adds them; then the
// planes' scalar tails, in order.
func sums16(f, g []float32, m float64, ch, c, hw int) [4]float64 {
	var lanes [4][16]float64
	var tails [4]float64
	for p := ch; p < len(f)/hw; p += c {
		xs, ds := f[p*hw:(p+1)*hw], g[p*hw:(p+1)*hw]
		i := 0
		for ; i+16 <= hw; i += 16 {
			for q := range 16 {
				x, d := float64(xs[i+q]), float64(ds[i+q])
				v := float64(x - m)
				lanes[0][q] += x
				lanes[1][q] += float64(v * v)
				lanes[2][q] += d
				lanes[3][q] += float64(d * v)
			}
		}
		for ; i < hw; i++ {
			x, d := float64(xs[i]), float64(ds[i])
			v := float64(x - m)
			tails[0] += x
			tails[1] += float64(v * v)
			tails[2] += d
			tails[3] += float64(d * v)
		}
	}
	var out [4]float64
	for k := range out {
		var l [8]float64
		for q := range l {
			l[q] = lanes[k][q] + lanes[k][q+8]
		}
		out[k] = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])) + tails[k]
	}
	return out
}

// negDot16 is negDot in the vector kernels' order (as sums16).
func negDot16(x, dy []float32) float64 {
	var lanes [16]float64
	i := 0
	for ; i+16 <= len(x); i += 16 {
		for q := range 16 {
			v := x[i+q]
			if v > 0 {
				v = 0
			}
			lanes[q] += float64(float64(v) * float64(dy[i+q]))
		}
	}
	var l [8]float64
	for q := range l {
		l[q] = lanes[q] + lanes[q+8]
	}
	s := ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
	for ; i < len(x); i++ {
		v := x[i]
		if v > 0 {
			v = 0
		}
		s += float64(float64(v) * float64(dy[i]))
	}
	return s
}

// TestVecMaxPool checks each vector max-pooling the CPU runs against the
// portable one, NaN (the first wins), ties (the first wins) and ±0
// included.
func TestVecMaxPool(t *testing.T) { eachVecSet(t, testVecMaxPool) }

func testVecMaxPool(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, hw := range [][2]int{{2, 2}, {4, 8}, {24, 24}, {8, 8}, {5, 33}, {6, 48}, {3, 64}, {4, 7}, {2, 34}, {6, 18}} {
		h, w := hw[0], hw[1]
		for trial := 0; trial < 20; trial++ {
			planes := 1 + trial%3
			x := vecData(r, planes*h*w)
			if trial%2 == 0 {
				// Small integers: many ties and ±0.
				for i := range x {
					if !math.IsNaN(float64(x[i])) {
						x[i] = float32(math.Round(float64(x[i])))
					}
				}
			}
			n := planes * (h / 2) * (w / 2)
			gy, wy := make([]float32, n), make([]float32, n)
			ga, wa := make([]int32, n), make([]int32, n)
			vec.MaxPool(gy, ga, x, planes, h, w)
			saved := vec
			vec.MaxPool = nil
			maxPool32(wy, wa, x, planes, h, w)
			vec = saved
			floattest.SameBits(t, "maxpool y", gy, wy)
			for j := range wa {
				if ga[j] != wa[j] {
					t.Fatalf("%d×%d: arg[%d] = %d, want %d", h, w, j, ga[j], wa[j])
				}
			}
		}
	}
}

// TestMaskedBNKernels checks bnDxReLU and channelDotReLU of each vector
// kernel set against the passes they replace, bit for bit: bnAffineReLU,
// reluDx on its output, then bnDx and channelDot of the masked gradient.
// The data has NaNs, infinities, signed zeros and ties, and shifts that
// make some of the ReLU's inputs exactly zero (t = −x₀·s for a channel's
// first value x₀ and its ties); the planes have tails of every length the
// sets' vector loops leave.
func TestMaskedBNKernels(t *testing.T) {
	eachVecSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, shape := range [][3]int{{1, 1, 1}, {2, 3, 5}, {3, 2, 16}, {2, 4, 17}, {2, 3, 31}, {5, 32, 64}, {2, 8, 49}} {
			b, c, hw := shape[0], shape[1], shape[2]
			n := b * c * hw
			x, dy := vecData(r, n), vecData(r, n)
			s, sh, a, bb, k := vecData(r, c), vecData(r, c), vecData(r, c), vecData(r, c), vecData(r, c)
			for ch := range c {
				if ch%3 == 0 {
					sh[ch] = -x[ch*hw] * s[ch]
				}
			}
			out, masked := make([]float32, n), make([]float32, n)
			vec.BNAffineReLU(out, x, s, sh, hw)
			vec.ReLUDx(masked, out, dy)
			zeros := 0
			for i, v := range masked {
				if v == 0 && dy[i] != 0 {
					zeros++
				}
			}
			if n >= 64 && zeros == 0 {
				t.Fatalf("shape %v: the ReLU masks nothing", shape)
			}
			got, want := make([]float32, n), make([]float32, n)
			vec.BNDx(want, masked, x, a, bb, k, hw)
			vec.BNDxReLU(got, dy, x, a, bb, k, s, sh, hw)
			floattest.SameBits(t, "bnDxReLU", got, want)

			mean := make([]float64, c)
			for ch := range mean {
				mean[ch] = r.NormFloat64()
			}
			// x without its NaNs and infinities (the sums would be NaN), and a
			// finite gradient.
			f, g := make([]float32, n), make([]float32, n)
			for i, v := range x {
				f[i], g[i] = v, float32(r.NormFloat64())
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					f[i] = float32(r.NormFloat64())
				}
			}
			vec.BNAffineReLU(out, f, s, sh, hw)
			vec.ReLUDx(masked, out, g)
			wDy, wDyx, gDy, gDyx := make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c)
			vec.ChannelDot(wDy, wDyx, f, masked, mean, hw)
			vec.ChannelDotReLU(gDy, gDyx, f, g, mean, s, sh, hw)
			for ch := range c {
				if math.Float64bits(gDy[ch]) != math.Float64bits(wDy[ch]) || math.Float64bits(gDyx[ch]) != math.Float64bits(wDyx[ch]) {
					t.Errorf("shape %v channel %d: channelDotReLU = %v, %v; want %v, %v", shape, ch, gDy[ch], gDyx[ch], wDy[ch], wDyx[ch])
				}
			}
		}
	})
}
