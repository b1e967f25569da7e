package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/internal/floattest"
	"github.com/flsweep/flsweep/internal/mem"
)

// TestWinograd45Transforms checks F(4×4, 5×5)'s transforms on known
// values: the one-dimensional identity Aᵀ[(G g)⊙(Bᵀ d)] = g ⋆ d exactly,
// in float64 with small integers (every transform coefficient is a dyadic
// fraction or a ninth, forty-fifth or ninetieth, and the sums come back
// to integers); the transformed 5×5 filter of ones, (G·1)(G·1)ᵀ with G·1
// = (1, −10/9, −2/9, 31/90, 11/90, 62/45, 22/45, 1); and each transform
// against its adjoint: ⟨T(x), y⟩ = ⟨x, Tᵀ(y)⟩. (Ones through an 8×8 image
// of ones padded by 2 is the trainer's TestWinograd45Ones.)
func TestWinograd45Transforms(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for range 50 {
		var g [5]float64
		var d [8]float64
		for i := range g {
			g[i] = float64(r.IntN(19) - 9)
		}
		for i := range d {
			d[i] = float64(r.IntN(19) - 9)
		}
		u, v := g8(g[0], g[1], g[2], g[3], g[4]), bt8(d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7])
		var m [8]float64
		for i := range m {
			m[i] = u[i] * v[i]
		}
		y := at48(m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7])
		for i := range 4 {
			var want float64
			for k := range 5 {
				want += g[k] * d[i+k]
			}
			if math.Abs(y[i]-want) > 1e-9 {
				t.Fatalf("g = %v, d = %v: y[%d] = %v; want %v", g, d, i, y[i], want)
			}
		}
	}

	w := make([]float64, 25)
	for i := range w {
		w[i] = 1
	}
	u := make([]float64, 64)
	wino45Weights(w, 1, 1, u, nil)
	g1 := []float64{1, -10.0 / 9, -2.0 / 9, 31.0 / 90, 11.0 / 90, 62.0 / 45, 22.0 / 45, 1}
	for k := range 8 {
		for l := range 8 {
			if want := g1[k] * g1[l]; math.Abs(u[8*k+l]-want) > 1e-15 {
				t.Errorf("U[%d][%d] = %v; want %v", k, l, u[8*k+l], want)
			}
		}
	}
	checkAdjoint(t, r, 25, 64,
		func(w, u []float64) { wino45Weights(w, 3, 2, u, nil) },
		func(du, dw []float64) { wino45WeightsGrad(du, 3, 2, dw, nil) })

	// Bᵀ against B and Aᵀ against A, one dimension at a time.
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64()
		}
		return v
	}
	dot := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	x, y := vec(8), vec(8)
	bx, by := bt8(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]), b8(y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7])
	if l, rr := dot(bx[:], y), dot(x, by[:]); math.Abs(l-rr) > 1e-12*(1+math.Abs(l)) {
		t.Errorf("⟨Bᵀx, y⟩ = %v, ⟨x, By⟩ = %v", l, rr)
	}
	z := vec(4)
	ax, az := at48(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]), a8(z[0], z[1], z[2], z[3])
	if l, rr := dot(ax[:], z), dot(x, az[:]); math.Abs(l-rr) > 1e-12*(1+math.Abs(l)) {
		t.Errorf("⟨Aᵀx, z⟩ = %v, ⟨x, Az⟩ = %v", l, rr)
	}
}

// TestWinograd45Rows compares F(4×4, 5×5)'s transforms in use (vector
// ones where the CPU has them) with the portable loops bit for bit, for
// runs of 1 to 19 tiles and weight transforms of 1 to 2·wBlock+3 filters
// (the vector ones take whole blocks), with zeros of both signs among the
// values.
func TestWinograd45Rows(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	vals := func(n int) []float32 { return floattest.MixedVals(r, n, 8) }
	same := func(what string, n int, got, want []float32) {
		t.Helper()
		floattest.SameBits(t, fmt.Sprintf("%s, %d tiles", what, n), got, want)
	}
	alg, fns := wino4Alg[float32](Geom{K: 5}), wino4Fns[float32](Geom{K: 5})
	for n := 1; n < 20; n++ {
		s, vs := n+5, 2*n+5
		var h [8][]float32
		for q := range h {
			h[q] = vals(7*s + n)
		}
		v1 := vals(63*vs + n)
		v2 := append([]float32(nil), v1...)
		alg.in(v1, vs, n, h, s)
		wino45In(v2, vs, n, h, s)
		same("in", n, v1, v2)

		m := vals(63*vs + n)
		y1, y2 := vals(16*n), vals(16*n)
		fns.out(y1, n, m, vs, -0.75)
		wino45Out(y2, n, m, vs, -0.75)
		same("out", n, y1, y2)

		d := vals(16 * n)
		fns.dy(v1, vs, n, d)
		wino45Dy(v2, vs, n, d)
		same("dy", n, v1, v2)

		c1, c2 := vals(64*n), vals(64*n)
		alg.dx(c1, n, m, vs)
		wino45Dx(c2, n, m, vs)
		same("dx", n, c1, c2)
	}
	for _, oc := range []int{1, 2, 7, 19, wBlock, 2*wBlock + 3} {
		w, du := vals(25*oc), vals(64*oc)
		u1, u2 := make([]float32, 64*oc), make([]float32, 64*oc)
		fns.w(w, oc, 1, u1, nil)
		wino45Weights(w, oc, 1, u2, nil)
		same("weights", oc, u1, u2)
		d1, d2 := make([]float32, 25*oc), make([]float32, 25*oc)
		fns.wg(du, 1, oc, d1, nil)
		wino45WeightsGrad(du, 1, oc, d2, nil)
		same("weight gradients", oc, d1, d2)
	}
}

// TestWino4Stage compares the short rows' staging and unstaging, and the
// moves of output planes into and out of their tiles, in use
// (wino4StageAVX2, wino4UnstageAVX2 and wino4TilesAVX2 where the CPU has
// AVX2) with wino4Stage, wino4Unstage and wino4TilesShort bit for bit, for F(4×4, 3×3) and F(4×4,
// 5×5), rows of 1 to 7 tiles, padding 0 to 2, and two samples' planes
// after each other in the staging rows: the staged receptive fields (the
// floats the transforms read) and the input-gradient planes, with zeros
// of both signs among the values.
func TestWino4Stage(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, k := range []int{3, 5} {
		for p := range 3 {
			for wo := 1; wo <= 28; wo++ {
				ho := 2 + wo%5
				h, w := ho+k-1-2*p, wo+k-1-2*p
				if h < 1 || w < 1 {
					continue
				}
				g := NewGeom(1, 1, k, 1, p, h, w, ho, wo, Kernels{})
				g.Wino, g.Wino4 = true, true
				if !g.winoShort() {
					continue
				}
				what := fmt.Sprintf("k %d, pad %d, %d×%d", k, p, h, w)
				fns, a := wino4Fns[float32](g), g.alpha()
				tiles := g.Tiles()
				L := 2 * tiles
				ls := L + 8
				ws := &mem.Workspace[float32]{}
				planes := [2][]float32{floattest.MixedVals(r, h*w, 6), floattest.MixedVals(r, h*w, 6)}
				st1, st2 := floattest.MixedVals(r, a*a*ls, 6), floattest.MixedVals(r, a*a*ls, 6)
				for n, pl := range planes {
					fns.stagePlane(g, ws, pl, st1, ls, n*tiles)
					wino4Stage(g, ws, pl, st2, ls, n*tiles)
				}
				for row := range a * a {
					floattest.SameBits(t, fmt.Sprintf("%s: staging row %d", what, row), st1[row*ls:][:L], st2[row*ls:][:L])
				}
				// The output planes (ho×wo) into and out of their tiles'
				// phase rows (16 rows L apart, zero where no output is).
				for n := range 2 {
					dy := floattest.MixedVals(r, g.HW(), 6)
					d1, d2 := make([]float32, 16*L+8), make([]float32, 16*L+8)
					fns.tilesShort(g, dy, d1, L, n*tiles, true)
					wino4TilesShort(g, dy, d2, L, n*tiles, true)
					floattest.SameBits(t, fmt.Sprintf("%s: output gradient of sample %d into tiles", what, n), d1, d2)
					m := floattest.MixedVals(r, 16*L+8, 6)
					y1, y2 := floattest.MixedVals(r, g.HW(), 6), floattest.MixedVals(r, g.HW(), 6)
					fns.tilesShort(g, y1, m, L, n*tiles, false)
					wino4TilesShort(g, y2, m, L, n*tiles, false)
					floattest.SameBits(t, fmt.Sprintf("%s: output of sample %d from tiles", what, n), y1, y2)
				}
				cb := floattest.MixedVals(r, a*a*L+8, 6)
				for n := range 2 {
					d1, d2 := floattest.MixedVals(r, h*w, 6), floattest.MixedVals(r, h*w, 6)
					fns.unstagePlane(g, ws, cb, L, n*tiles, d1)
					wino4Unstage(g, ws, cb, L, n*tiles, d2)
					floattest.SameBits(t, fmt.Sprintf("%s: input gradient of sample %d", what, n), d1, d2)
				}
			}
		}
	}
}
