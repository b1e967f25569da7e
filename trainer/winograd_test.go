package trainer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

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
	xt := tensor.New(tensor.WithShape(batch, g.cin, g.h, g.w), tensor.WithBacking(x))
	wt := tensor.New(tensor.WithShape(g.cout, g.cin, g.k, g.k), tensor.WithBacking(w))
	dyt := tensor.New(tensor.WithShape(batch, g.cout, g.ho, g.wo), tensor.WithBacking(dy))
	args := []G.Value{xt, wt}
	if b != nil {
		args = append(args, tensor.New(tensor.WithShape(g.cout), tensor.WithBacking(b)))
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
		chunk     int  // maxWinoFloats, or 0 for the default
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
				defer func(m int) { maxWinoFloats = m }(maxWinoFloats)
				maxWinoFloats = tt.chunk
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
			x, w, dy := rnd(tt.batch*g.inSize()), rnd(g.cout*g.kdim()), rnd(tt.batch*g.outSize())
			var b []float64
			if tt.bias {
				b = rnd(g.cout)
			}
			direct, wino := g, g
			direct.wino, wino.wino, wino.wino4 = false, true, tt.m4
			if tt.chunk > 0 && wino.winoChunk() >= tt.batch {
				t.Fatalf("one chunk of %d samples for a batch of %d", wino.winoChunk(), tt.batch)
			}
			y0, dx0, dw0 := convPasses(t, direct, tt.batch, x, w, b, dy)
			y1, dx1, dw1 := convPasses(t, wino, tt.batch, x, w, b, dy)
			// Scales: a sum of k²·cin (forward), k²·cout (dx) or
			// batch·hw (dw) products of unit normals.
			scale := map[string]float64{
				"y": math.Sqrt(float64(k * k * g.cin)), "dx": math.Sqrt(float64(k * k * g.cout)),
				"dw": math.Sqrt(float64(tt.batch * g.hw())),
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

// TestWinogradTransforms checks the transforms on known values: the
// transformed 3×3 filter of ones, and F(2×2, 3×3) of an input of ones
// with it giving 9 at each output (4 with padding at a corner), and the
// weight-gradient transform as winoWeights' adjoint: ⟨U(w), dU⟩ = ⟨w, Uᵀ(dU)⟩.
func TestWinogradTransforms(t *testing.T) {
	w := make([]float64, 9)
	for i := range w {
		w[i] = 1
	}
	u := make([]float64, 16)
	winoWeights(w, 1, 1, u)
	// G·1 = (1, 1.5, 0.5, 1), and U = (G·1)(G·1)ᵀ.
	g1 := []float64{1, 1.5, 0.5, 1}
	for k := range 4 {
		for l := range 4 {
			if want := g1[k] * g1[l]; u[4*k+l] != want {
				t.Errorf("U[%d][%d] = %v; want %v", k, l, u[4*k+l], want)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	checkAdjoint(t, r, 9, 16,
		func(w, u []float64) { winoWeights(w, 3, 2, u) },
		func(du, dw []float64) { winoWeightsGrad(du, 3, 2, dw) })

	// Ones through a padded 4×4 image: 4 at corners, 6 on edges, 9 inside.
	l := layer{name: "c", in: shape{1, 4, 4}, out: shape{1, 4, 4}, k: 3, stride: 1, pad: 1, b: -1}
	g := newConvGeom(l, testKern)
	g.wino = true
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

// TestWinogradRows compares the row transforms in use (vector ones where
// the CPU has them) with the portable loops bit for bit, for rows of 1 to
// 19 tiles (whole vectors and partial ones), with zeros of both signs
// among the values.
func TestWinogradRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := func(n int) []float32 { return mixedVals(r, n, 8) }
	same := func(what string, n int, got, want [][]float32) {
		t.Helper()
		for i := range got {
			for j := range got[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("%s, %d tiles: row %d [%d] = %v; want %v", what, n, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
	vec := winoRowsFor[float32]()
	flat := func(n int) []float32 { return vals(n) }
	for n := 1; n < 20; n++ {
		// Strides past the rows, as in a chunk's matrices.
		s, vs := n+3, 2*n+5
		e, o := flat(3*s+n+1), flat(3*s+n+1)
		v1 := flat(15*vs + n)
		v2 := append([]float32(nil), v1...)
		vec.in(v1, vs, n, e, o, e[1:], o[1:], s)
		winoInGo(v2, vs, n, e, o, e[1:], o[1:], s)
		same("in", n, [][]float32{v1}, [][]float32{v2})
		e1, o1 := flat(3*s+n), flat(3*s+n)
		vec.in(v1, vs, n, e, o, e1, o1, s)
		winoInGo(v2, vs, n, e, o, e1, o1, s)
		same("in, staged", n, [][]float32{v1}, [][]float32{v2})

		m := flat(15*vs + n)
		y1, y2 := flat(4*n), flat(4*n)
		vec.out(y1, n, m, vs, 0.25)
		winoOutGo(y2, n, m, vs, 0.25)
		same("out", n, [][]float32{y1}, [][]float32{y2})

		e2, o2 := flat(2*n), flat(2*n)
		vec.dy(v1, vs, n, e2, o2)
		winoDyGo(v2, vs, n, e2, o2)
		same("dy", n, [][]float32{v1}, [][]float32{v2})

		c1, c2 := flat(16*n), flat(16*n)
		vec.dx(c1, n, m, vs)
		winoDxGo(c2, n, m, vs)
		same("dx", n, [][]float32{c1}, [][]float32{c2})

		d1 := flat(n)
		d2 := append([]float32(nil), d1...)
		vec.add(d1, c1[:n])
		addGo(d2, c1[:n])
		same("add", n, [][]float32{d1}, [][]float32{d2})

		// split and merge of 2n and 2n−1 entries.
		for _, w := range []int{2 * n, 2*n - 1} {
			src := vals(w)
			ev, od, ev2, od2 := vals(n), vals(n), vals(n), vals(n)
			copy(ev2, ev)
			copy(od2, od)
			vec.split(ev, od, src)
			splitGo(ev2, od2, src)
			same("split", w, [][]float32{ev, od}, [][]float32{ev2, od2})
			for i, v := range src {
				if i%2 == 0 && ev[i/2] != v || i%2 == 1 && od[i/2] != v {
					t.Fatalf("split of %d: entry %d = %v went astray", w, i, v)
				}
			}
			back := vals(w)
			vec.merge(back, ev, od)
			same("merge", w, [][]float32{back}, [][]float32{src})
		}
	}
}

// TestWinograd5Transforms checks F(2×2, 5×5)'s transforms on known
// values: the transformed 5×5 filter of ones, (G·1)(G·1)ᵀ with G·1 = (¼,
// ⅚, ⅙, 31/24, 11/24, 1); ones through a 6×6 image of ones padded by 2,
// giving the count of the image's pixels under each output's window (9 at
// a corner to 25 inside); an input gradient of ones likewise; and the
// weight-gradient transform as wino5Weights' adjoint.
func TestWinograd5Transforms(t *testing.T) {
	w := make([]float64, 25)
	for i := range w {
		w[i] = 1
	}
	u := make([]float64, 36)
	wino5Weights(w, 1, 1, u)
	g1 := []float64{0.25, 5.0 / 6, 1.0 / 6, 31.0 / 24, 11.0 / 24, 1}
	for k := range 6 {
		for l := range 6 {
			if want := g1[k] * g1[l]; math.Abs(u[6*k+l]-want) > 1e-15 {
				t.Errorf("U[%d][%d] = %v; want %v", k, l, u[6*k+l], want)
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	checkAdjoint(t, r, 25, 36,
		func(w, u []float64) { wino5Weights(w, 3, 2, u) },
		func(du, dw []float64) { wino5WeightsGrad(du, 3, 2, dw) })

	// Each output (i, j) of a 6×6 image padded by 2 sees the pixels in
	// rows i−2..i+2 and columns j−2..j+2 inside the image: 3, 4, 5, 5, 4,
	// 3 of each; each input pixel gets the gradient from as many outputs.
	checkOnes(t, 6, false, w, []float64{3, 4, 5, 5, 4, 3})
}

// TestWinograd5Rows compares F(2×2, 5×5)'s transforms in use (vector ones
// where the CPU has them) with the portable loops bit for bit, for runs of
// 1 to 19 tiles, with zeros of both signs among the values.
func TestWinograd5Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vals := func(n int) []float32 { return mixedVals(r, n, 8) }
	same := func(what string, n int, got, want []float32) {
		t.Helper()
		sameBits(t, fmt.Sprintf("%s, %d tiles", what, n), got, want)
	}
	vec := wino5Alg32
	for n := 1; n < 20; n++ {
		s, vs := n+5, 2*n+5
		var h [8][]float32
		for q := range h {
			h[q] = vals(5*s + n)
		}
		v1 := vals(35*vs + n)
		v2 := append([]float32(nil), v1...)
		vec.in(v1, vs, n, h, s)
		wino5In(v2, vs, n, h, s)
		same("in", n, v1, v2)

		m := vals(35*vs + n)
		y1, y2 := vals(4*n), vals(4*n)
		vec.out(y1, n, m, vs, -0.75)
		wino5Out(y2, n, m, vs, -0.75)
		same("out", n, y1, y2)

		e, o := vals(2*n), vals(2*n)
		vec.dy(v1, vs, n, e, o)
		wino5Dy(v2, vs, n, e, o)
		same("dy", n, v1, v2)

		c1, c2 := vals(36*n), vals(36*n)
		vec.dx(c1, n, m, vs)
		wino5Dx(c2, n, m, vs)
		same("dx", n, c1, c2)
	}
}

// TestWinogradUnstage compares the short rows' adds in use (vector ones
// where the CPU has them) with unstage's loop bit for bit, for both
// algorithms and rows of 1 to 7 tiles, with zeros of both signs in the
// planes and the gradients.
func TestWinogradUnstage(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	vals := func(n int) []float32 { return mixedVals(r, n, 6) }
	vec := unstageFor[float32]()
	for _, a := range []int{4, 6} {
		for tw := 1; tw < 8; tw++ {
			const th = 3
			s := tw + a/2 - 1
			n := (2*th+a-2)*s + 8
			L := 2*th*tw + 3 // two samples' tiles and a few more columns
			cb := vals(a*a*L + 8)
			pe, po := vals(n), vals(n)
			pe2, po2 := append([]float32(nil), pe...), append([]float32(nil), po...)
			for sample := range 2 {
				for ti := range th {
					tt := sample*th*tw + ti*tw
					vec(pe, po, s, 2*ti*s, cb, L, tt, tw, a)
					unstage(pe2, po2, s, 2*ti*s, cb, L, tt, tw, a)
				}
			}
			for i := range pe {
				if math.Float32bits(pe[i]) != math.Float32bits(pe2[i]) || math.Float32bits(po[i]) != math.Float32bits(po2[i]) {
					t.Fatalf("α = %d, %d tiles: [%d] = %v, %v; want %v, %v", a, tw, i, pe[i], po[i], pe2[i], po2[i])
				}
			}
		}
	}
}

// TestWinograd43Rows compares F(4×4, 3×3)'s output and output-gradient
// transforms in use (vector ones where the CPU has them) with the
// portable loops bit for bit, for runs of 1 to 19 tiles, with zeros of
// both signs among the values.
func TestWinograd43Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	vals := func(n int) []float32 { return mixedVals(r, n, 8) }
	same := func(what string, n int, got, want []float32) {
		t.Helper()
		sameBits(t, fmt.Sprintf("%s, %d tiles", what, n), got, want)
	}
	vec := wino43For[float32]()
	for n := 1; n < 20; n++ {
		vs := 2*n + 5
		m := vals(35*vs + n)
		y1, y2 := vals(16*n), vals(16*n)
		vec.out(y1, n, m, vs, -0.75)
		wino43Out(y2, n, m, vs, -0.75)
		same("out", n, y1, y2)

		d := vals(16 * n)
		v1 := vals(35*vs + n)
		v2 := append([]float32(nil), v1...)
		vec.dy(v1, vs, n, d)
		wino43Dy(v2, vs, n, d)
		same("dy", n, v1, v2)
	}
}

// TestPhaseSplit checks the split of rows into four phases and the merge
// back in use (vector ones where the CPU has them) against the portable
// loops, for rows of 0 to 80 floats (the vector ones take 32 and 16 at a
// time): the same floats in the same places, and the floats past the
// phases' ends untouched.
func TestPhaseSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	fns := wino43For[float32]()
	phases := func(n int, fill []float32) (ph [4][]float32, all []float32) {
		all = append([]float32(nil), fill...)
		for q := range 4 {
			ph[q] = all[q*(n/4+9):]
		}
		return ph, all
	}
	for n := range 81 {
		src := mixedVals(r, n, 4)
		fill := mixedVals(r, 4*(n/4+9), 4)
		got, gall := phases(n, fill)
		want, wall := phases(n, fill)
		fns.split4(got, src)
		phaseSplit(want, src)
		sameBits(t, fmt.Sprintf("split of %d", n), gall, wall)
		for i, v := range src {
			if math.Float32bits(want[i%4][i/4]) != math.Float32bits(v) {
				t.Fatalf("split of %d: float %d is not at phase %d, %d", n, i, i%4, i/4)
			}
		}
		d1 := append(mixedVals(r, n, 4), 7)
		d2 := append([]float32(nil), d1...)
		fns.merge4(d1[:n], got)
		phaseMerge(d2[:n], want)
		sameBits(t, fmt.Sprintf("merge of %d", n), d1, d2)
		sameBits(t, fmt.Sprintf("merge of %d against the row", n), d1[:n], src)
	}
}

// TestWinograd43Weights checks F(4×4, 3×3)'s weight transforms: the
// transformed 3×3 filter of ones, (G·1)(G·1)ᵀ with G·1 = (¼, ½, ⅙, 7/24,
// ⅛, 1); the gradient transform as the adjoint; and the transforms in
// use (vector ones where the CPU has them) against the portable loops bit
// for bit, for 1 to 19 filters.
func TestWinograd43Weights(t *testing.T) {
	w := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}
	u := make([]float64, 36)
	wino43Weights(w, 1, 1, u, nil)
	g1 := []float64{0.25, 0.5, 1.0 / 6, 7.0 / 24, 0.125, 1}
	for k := range 6 {
		for l := range 6 {
			if want := g1[k] * g1[l]; math.Abs(u[6*k+l]-want) > 1e-15 {
				t.Errorf("U[%d][%d] = %v; want %v", k, l, u[6*k+l], want)
			}
		}
	}
	r := rand.New(rand.NewPCG(17, 18))
	checkAdjoint(t, r, 9, 36,
		func(w, u []float64) { wino43Weights(w, 3, 2, u, nil) },
		func(du, dw []float64) { wino43WeightsGrad(du, 3, 2, dw, nil) })

	vec := wino43For[float32]()
	for oc := 1; oc < 20; oc++ {
		w32, du32 := make([]float32, 9*oc), make([]float32, 36*oc)
		for i := range w32 {
			w32[i] = float32(r.NormFloat64())
		}
		for i := range du32 {
			du32[i] = float32(r.NormFloat64())
		}
		u1, u2 := make([]float32, 36*oc), make([]float32, 36*oc)
		vec.w(w32, oc, 1, u1, make([]float32, 9*oc))
		wino43Weights(w32, oc, 1, u2, nil)
		d1, d2 := make([]float32, 9*oc), make([]float32, 9*oc)
		vec.wg(du32, 1, oc, d1, make([]float32, 9*oc))
		wino43WeightsGrad(du32, 1, oc, d2, nil)
		for i := range u1 {
			if math.Float32bits(u1[i]) != math.Float32bits(u2[i]) {
				t.Fatalf("%d filters: U[%d] = %v; want %v", oc, i, u1[i], u2[i])
			}
		}
		for i := range d1 {
			if math.Float32bits(d1[i]) != math.Float32bits(d2[i]) {
				t.Fatalf("%d filters: dW[%d] = %v; want %v", oc, i, d1[i], d2[i])
			}
		}
	}
}

// mixedVals returns n unit normals from r with zeros of both signs among
// them: +0 and −0 each with probability 1/k.
func mixedVals(r *rand.Rand, n, k int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch r.IntN(k) {
		case 0:
			v[i] = 0
		case 1:
			v[i] = float32(math.Copysign(0, -1))
		default:
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}

// checkAdjoint checks that grad is the adjoint of the weight transform
// fwd (taps floats a filter to xi) for 3 output and 2 input channels:
// ⟨U(w), dU⟩ = ⟨w, Uᵀ(dU)⟩ for w and dU of unit normals from r.
func checkAdjoint(t *testing.T, r *rand.Rand, taps, xi int, fwd func(w, u []float64), grad func(du, dw []float64)) {
	t.Helper()
	const oc = 3 * 2
	w, du := make([]float64, oc*taps), make([]float64, xi*oc)
	for i := range w {
		w[i] = r.NormFloat64()
	}
	for i := range du {
		du[i] = r.NormFloat64()
	}
	u, dw := make([]float64, xi*oc), make([]float64, oc*taps)
	fwd(w, u)
	grad(du, dw)
	var lhs, rhs float64
	for i := range u {
		lhs += u[i] * du[i]
	}
	for i := range w {
		rhs += w[i] * dw[i]
	}
	if math.Abs(lhs-rhs) > 1e-12*(1+math.Abs(lhs)) {
		t.Errorf("⟨U(w), dU⟩ = %v, ⟨w, Uᵀ(dU)⟩ = %v", lhs, rhs)
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
			if !ok || !op.g.wino {
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

// TestWinograd23WeightsVec checks F(2×2, 3×3)'s weight transforms in use
// (vector ones where the CPU has them) against the portable loops bit for
// bit, for 1 to 19 filters and for blocks of wBlock and a rest (ResNet-18's
// 512×512 is 4,096 whole blocks).
func TestWinograd23WeightsVec(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, oc := range []int{1, 3, 7, 8, 9, 15, 16, 17, 19, wBlock, wBlock + 8, 3*wBlock + 5, 4096} {
		w32, du32 := mixedVals(r, 9*oc, 7), mixedVals(r, 16*oc, 7)
		u1, u2 := make([]float32, 16*oc), make([]float32, 16*oc)
		wino23W32.w(w32, oc, 1, u1)
		winoWeights(w32, oc, 1, u2)
		sameBits(t, fmt.Sprintf("%d filters: U", oc), u1, u2)
		d1, d2 := make([]float32, 9*oc), make([]float32, 9*oc)
		wino23W32.wg(du32, 1, oc, d1)
		winoWeightsGrad(du32, 1, oc, d2)
		sameBits(t, fmt.Sprintf("%d filters: dW", oc), d1, d2)
	}
}
