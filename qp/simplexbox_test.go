package qp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/qp"
	"gonum.org/v1/gonum/mat"
)

// gram returns G = DᵀD for the columns d_i of D (k rows, n columns): rank
// at most k.
func gram(d [][]float64) [][]float64 {
	n := len(d[0])
	g := make([][]float64, n)
	for i := range g {
		g[i] = make([]float64, n)
	}
	for i := range n {
		for j := range n {
			for _, row := range d {
				g[i][j] += row[i] * row[j]
			}
		}
	}
	return g
}

// objective returns ½ xᵀGx + cᵀx (c nil: 0).
func objective(g [][]float64, c, x []float64) float64 {
	v := 0.0
	for i := range x {
		for j := range x {
			v += x[i] * g[i][j] * x[j] / 2
		}
		if c != nil {
			v += c[i] * x[i]
		}
	}
	return v
}

// kktViolation returns how far x is from satisfying the KKT conditions of
// min ½xᵀGx + cᵀx over {Σx = 1, lo ≤ x ≤ hi}: infeasibility, and for any i
// that could decrease (x_i > lo_i) and j that could increase (x_j < hi_j)
// the amount by which moving mass from i to j would decrease the
// objective, max(0, (Gx + c)_i − (Gx + c)_j). Zero means optimal.
func kktViolation(g [][]float64, c, lo, hi, x []float64) float64 {
	sum, worst := 0.0, 0.0
	for i, v := range x {
		sum += v
		worst = math.Max(worst, math.Max(lo[i]-v, v-hi[i]))
	}
	worst = math.Max(worst, math.Abs(sum-1))
	gx := make([]float64, len(x))
	for i := range x {
		for j := range x {
			gx[i] += g[i][j] * x[j]
		}
		if c != nil {
			gx[i] += c[i]
		}
	}
	down, up := math.Inf(-1), math.Inf(1)
	for i, v := range x {
		if v > lo[i] {
			down = math.Max(down, gx[i])
		}
		if v < hi[i] {
			up = math.Min(up, gx[i])
		}
	}
	return math.Max(worst, down-up)
}

// bruteForce enumerates every active set (each variable at lo, at hi or
// free), solves the equality-constrained problem on the free variables,
//
//	G_FF x_F + G_FB x_B + c_F = ν·1,  Σ x_F = 1 − Σ x_B,
//
// and returns the least objective over the feasible KKT points. Singular
// systems are skipped: some optimal point (a vertex of the optimal set) has
// a nonsingular one.
func bruteForce(g [][]float64, c, lo, hi []float64) float64 {
	n := len(g)
	best := math.Inf(1)
	code := make([]int, n) // 0 lower, 1 upper, 2 free
	for {
		x := make([]float64, n)
		var free []int
		rest := 1.0
		for i, c := range code {
			switch c {
			case 0:
				x[i] = lo[i]
			case 1:
				x[i] = hi[i]
			default:
				free = append(free, i)
				continue
			}
			rest -= x[i]
		}
		ok := true
		if len(free) == 0 {
			ok = math.Abs(rest) < 1e-12
		} else {
			m := len(free) + 1
			a, b := mat.NewDense(m, m, nil), mat.NewVecDense(m, nil)
			for r, i := range free {
				for c, j := range free {
					a.Set(r, c, g[i][j])
				}
				a.Set(r, m-1, -1)
				a.Set(m-1, r, 1)
				v := 0.0
				if c != nil {
					v = -c[i]
				}
				for j := range n {
					if code[j] != 2 {
						v -= g[i][j] * x[j]
					}
				}
				b.SetVec(r, v)
			}
			b.SetVec(m-1, rest)
			var sol mat.VecDense
			if mat.Cond(a, 2) > 1e10 || sol.SolveVec(a, b) != nil {
				ok = false
			} else {
				for r, i := range free {
					x[i] = sol.AtVec(r)
					ok = ok && x[i] >= lo[i]-1e-9 && x[i] <= hi[i]+1e-9
				}
			}
		}
		if ok && kktViolation(g, c, lo, hi, clamp(x, lo, hi)) < 1e-8 {
			best = math.Min(best, objective(g, c, x))
		}
		i := 0
		for i < n && code[i] == 2 {
			code[i] = 0
			i++
		}
		if i == n {
			return best
		}
		code[i]++
	}
}

func clamp(x, lo, hi []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Min(math.Max(v, lo[i]), hi[i])
	}
	return out
}

// fedmgdaBox returns FedMGDA+'s bounds max(0, λ0 − ε) ≤ λ ≤ min(1, λ0 + ε).
func fedmgdaBox(lambda0 []float64, eps float64) (lo, hi []float64) {
	lo, hi = make([]float64, len(lambda0)), make([]float64, len(lambda0))
	for i, v := range lambda0 {
		lo[i], hi[i] = math.Max(0, v-eps), math.Min(1, v+eps)
	}
	return lo, hi
}

// randomInstance draws an n-variable problem: G = DᵀD with D of rank
// ≤ k (k < n: singular G; repeated columns: duplicated clients), λ0 on the
// simplex and a box of FedMGDA+'s form with radius ε, or (ε < 0) an
// arbitrary box with Σ lo ≤ 1 ≤ Σ hi.
func randomInstance(r *rand.Rand, n, k int, eps float64) ([][]float64, []float64, []float64) {
	d := make([][]float64, k)
	for a := range d {
		d[a] = make([]float64, n)
		for i := range d[a] {
			d[a][i] = r.NormFloat64()
		}
	}
	if n > 2 && r.IntN(3) == 0 { // a duplicated client
		for a := range d {
			d[a][n-1] = d[a][0]
		}
	}
	lambda0 := make([]float64, n)
	total := 0.0
	for i := range lambda0 {
		lambda0[i] = 0.1 + r.Float64()
		total += lambda0[i]
	}
	for i := range lambda0 {
		lambda0[i] /= total
	}
	if eps >= 0 {
		lo, hi := fedmgdaBox(lambda0, eps)
		return gram(d), lo, hi
	}
	lo, hi := make([]float64, n), make([]float64, n)
	for i := range lo {
		lo[i] = lambda0[i] * r.Float64()
		hi[i] = lambda0[i] + r.Float64()*(1-lambda0[i])
	}
	return gram(d), lo, hi
}

// TestSimplexBoxKnownValues: small problems solved by hand.
func TestSimplexBoxKnownValues(t *testing.T) {
	tests := []struct {
		name   string
		giveD  [][]float64 // rows of D; G = DᵀD
		giveLo []float64
		giveHi []float64
		want   []float64
	}{
		// Opposite directions u, −u: (½, ½) cancels them.
		{"opposite", [][]float64{{1, -1}, {0, 0}}, []float64{0, 0}, []float64{1, 1}, []float64{0.5, 0.5}},
		// e_1 and e_2: the min-norm point of the segment is its middle.
		{"orthogonal", [][]float64{{1, 0}, {0, 1}}, []float64{0, 0}, []float64{1, 1}, []float64{0.5, 0.5}},
		// (1, 0) and (2, 1): ‖(1+t, t)‖² grows from t = 0, so λ = (1, 0).
		{"vertex", [][]float64{{1, 2}, {0, 1}}, []float64{0, 0}, []float64{1, 1}, []float64{1, 0}},
		// Opposite directions with the box |λ − (0.8, 0.2)| ≤ 0.1: the
		// closest feasible point to (½, ½) is (0.7, 0.3).
		{"box", [][]float64{{1, -1}}, []float64{0.7, 0.1}, []float64{0.9, 0.3}, []float64{0.7, 0.3}},
		// Three unit vectors at 120°: the centroid is 0, λ = ⅓ each.
		{"triangle", [][]float64{{1, -0.5, -0.5}, {0, math.Sqrt(3) / 2, -math.Sqrt(3) / 2}}, []float64{0, 0, 0}, []float64{1, 1, 1}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		// e_1, e_2 and (1, 1): the segment's middle (½, ½) is the min-norm
		// point, reached with λ_3 = 0 (the third lies beyond it).
		{"dominated", [][]float64{{1, 0, 1}, {0, 1, 1}}, []float64{0, 0, 0}, []float64{1, 1, 1}, []float64{0.5, 0.5, 0}},
	}
	for _, tt := range tests {
		got, err := qp.SimplexBox(gram(tt.giveD), nil, tt.giveLo, tt.giveHi)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-12 {
				t.Errorf("%s: SimplexBox = %v; want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

// TestSimplexBoxEpsilonLimits: ε = 0 returns λ0 exactly; ε = 1 is the
// unconstrained min-norm element of the convex hull (FedMGDA+, Hu et al.
// 2022, §3: ε = 0 is FedAvg's weights, ε = 1 MGDA's).
func TestSimplexBoxEpsilonLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 50 {
		n := 2 + trial%5
		g, lo, hi := randomInstance(r, n, 1+trial%n, 0)
		got, err := qp.SimplexBox(g, nil, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != lo[i] {
				t.Errorf("trial %d, ε = 0: λ = %v; want λ0 = %v exactly", trial, got, lo)
				break
			}
		}
		g, lo, hi = randomInstance(r, n, 1+trial%n, 1)
		for i := range lo {
			if lo[i] != 0 || hi[i] != 1 {
				t.Fatalf("ε = 1 gave the box [%v, %v]; want [0, 1]", lo[i], hi[i])
			}
		}
		got, err = qp.SimplexBox(g, nil, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if v := kktViolation(g, nil, lo, hi, got); v > 1e-10 {
			t.Errorf("trial %d, ε = 1: KKT violated by %.3g", trial, v)
		}
		if got, want := objective(g, nil, got), bruteForce(g, nil, lo, hi); math.Abs(got-want) > 1e-10*math.Max(1, want) {
			t.Errorf("trial %d, ε = 1: objective %v; brute force %v", trial, got, want)
		}
	}
}

// TestSimplexBoxKKT: on random PSD instances, singular ones included,
// the answer is feasible and satisfies the KKT conditions to 1e−10, and
// its objective equals the brute-force enumeration of the active sets for
// n ≤ 6.
func TestSimplexBoxKKT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	epsilons := []float64{-1, 0.03, 0.1, 0.3, 1} // −1: an arbitrary box
	for trial := range 600 {
		n := 1 + trial%6
		k := 1 + r.IntN(n+1) // k < n: rank-deficient G
		eps := epsilons[trial%len(epsilons)]
		g, lo, hi := randomInstance(r, n, k, eps)
		got, err := qp.SimplexBox(g, nil, lo, hi)
		if err != nil {
			t.Fatalf("trial %d (n %d, rank ≤ %d, ε %v): %v", trial, n, k, eps, err)
		}
		if v := kktViolation(g, nil, lo, hi, got); v > 1e-10 {
			t.Errorf("trial %d (n %d, rank ≤ %d, ε %v): KKT violated by %.3g at %v", trial, n, k, eps, v, got)
		}
		obj, want := objective(g, nil, got), bruteForce(g, nil, lo, hi)
		if math.Abs(obj-want) > 1e-10*math.Max(1, want) {
			t.Errorf("trial %d (n %d, rank ≤ %d, ε %v): objective %v; brute force %v", trial, n, k, eps, obj, want)
		}
	}
}

// TestSimplexBoxLarge: 100 variables of rank 20 (more clients than
// directions, as with large rounds on small models) still satisfy KKT.
func TestSimplexBoxLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, eps := range []float64{0.003, 0.01, 0.03, 1} {
		g, lo, hi := randomInstance(r, 100, 20, eps)
		got, err := qp.SimplexBox(g, nil, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if v := kktViolation(g, nil, lo, hi, got); v > 1e-10 {
			t.Errorf("ε %v: KKT violated by %.3g", eps, v)
		}
	}
}

// TestSimplexBoxRejects: malformed problems are fl.ErrInvalid.
func TestSimplexBoxRejects(t *testing.T) {
	id := [][]float64{{1, 0}, {0, 1}}
	tests := []struct {
		name   string
		giveG  [][]float64
		giveLo []float64
		giveHi []float64
	}{
		{"empty", nil, nil, nil},
		{"bounds length", id, []float64{0}, []float64{1, 1}},
		{"ragged", [][]float64{{1, 0}, {0}}, []float64{0, 0}, []float64{1, 1}},
		{"asymmetric", [][]float64{{1, 0.5}, {0, 1}}, []float64{0, 0}, []float64{1, 1}},
		{"NaN", [][]float64{{math.NaN(), 0}, {0, 1}}, []float64{0, 0}, []float64{1, 1}},
		{"lo > hi", id, []float64{0.6, 0}, []float64{0.5, 1}},
		{"Σ lo > 1", id, []float64{0.6, 0.6}, []float64{1, 1}},
		{"Σ hi < 1", id, []float64{0, 0}, []float64{0.4, 0.4}},
	}
	for _, tt := range tests {
		_, err := qp.SimplexBox(tt.giveG, nil, tt.giveLo, tt.giveHi)
		if !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: error = %v; want fl.ErrInvalid", tt.name, err)
		}
	}
	if _, err := qp.SimplexBox(id, []float64{1}, []float64{0, 0}, []float64{1, 1}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("c of length 1: error = %v; want fl.ErrInvalid", err)
	}
	if _, err := qp.SimplexBox(id, []float64{math.Inf(1), 0}, []float64{0, 0}, []float64{1, 1}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("infinite c: error = %v; want fl.ErrInvalid", err)
	}
}
