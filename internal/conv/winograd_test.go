package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/internal/floattest"
)

// TestWinogradTransforms checks the weight transforms on known values: the
// transformed 3×3 filter of ones, and the weight-gradient transform as
// winoWeights' adjoint: ⟨U(w), dU⟩ = ⟨w, Uᵀ(dU)⟩. (F(2×2, 3×3) of an
// input of ones with that filter is the trainer's TestWinogradOnes.)
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
}

// TestWinogradRows compares the row transforms in use (vector ones where
// the CPU has them) with the portable loops bit for bit, for rows of 1 to
// 19 tiles (whole vectors and partial ones), with zeros of both signs
// among the values.
func TestWinogradRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vals := func(n int) []float32 { return floattest.MixedVals(r, n, 8) }
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
// ⅚, ⅙, 31/24, 11/24, 1), and the weight-gradient transform as
// wino5Weights' adjoint. (Ones through an image of ones padded by 2 is the
// trainer's TestWinograd5Ones.)
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
}

// TestWinograd5Rows compares F(2×2, 5×5)'s transforms in use (vector ones
// where the CPU has them) with the portable loops bit for bit, for runs of
// 1 to 19 tiles, with zeros of both signs among the values.
func TestWinograd5Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vals := func(n int) []float32 { return floattest.MixedVals(r, n, 8) }
	same := func(what string, n int, got, want []float32) {
		t.Helper()
		floattest.SameBits(t, fmt.Sprintf("%s, %d tiles", what, n), got, want)
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
	vals := func(n int) []float32 { return floattest.MixedVals(r, n, 6) }
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
	vals := func(n int) []float32 { return floattest.MixedVals(r, n, 8) }
	same := func(what string, n int, got, want []float32) {
		t.Helper()
		floattest.SameBits(t, fmt.Sprintf("%s, %d tiles", what, n), got, want)
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
		src := floattest.MixedVals(r, n, 4)
		fill := floattest.MixedVals(r, 4*(n/4+9), 4)
		got, gall := phases(n, fill)
		want, wall := phases(n, fill)
		fns.split4(got, src)
		phaseSplit(want, src)
		floattest.SameBits(t, fmt.Sprintf("split of %d", n), gall, wall)
		for i, v := range src {
			if math.Float32bits(want[i%4][i/4]) != math.Float32bits(v) {
				t.Fatalf("split of %d: float %d is not at phase %d, %d", n, i, i%4, i/4)
			}
		}
		d1 := append(floattest.MixedVals(r, n, 4), 7)
		d2 := append([]float32(nil), d1...)
		fns.merge4(d1[:n], got)
		phaseMerge(d2[:n], want)
		floattest.SameBits(t, fmt.Sprintf("merge of %d", n), d1, d2)
		floattest.SameBits(t, fmt.Sprintf("merge of %d against the row", n), d1[:n], src)
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

// TestWinograd23WeightsVec checks F(2×2, 3×3)'s weight transforms in use
// (vector ones where the CPU has them) against the portable loops bit for
// bit, for 1 to 19 filters and for blocks of wBlock and a rest (ResNet-18's
// 512×512 is 4,096 whole blocks).
func TestWinograd23WeightsVec(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, oc := range []int{1, 3, 7, 8, 9, 15, 16, 17, 19, wBlock, wBlock + 8, 3*wBlock + 5, 4096} {
		w32, du32 := floattest.MixedVals(r, 9*oc, 7), floattest.MixedVals(r, 16*oc, 7)
		u1, u2 := make([]float32, 16*oc), make([]float32, 16*oc)
		wino23W32.w(w32, oc, 1, u1)
		winoWeights(w32, oc, 1, u2)
		floattest.SameBits(t, fmt.Sprintf("%d filters: U", oc), u1, u2)
		d1, d2 := make([]float32, 9*oc), make([]float32, 9*oc)
		wino23W32.wg(du32, 1, oc, d1)
		winoWeightsGrad(du32, 1, oc, d2)
		floattest.SameBits(t, fmt.Sprintf("%d filters: dW", oc), d1, d2)
	}
}
