package qp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/qp"
)

// TestSimplexBoxLinearTerm: with a linear term c, on random PSD instances
// (singular ones included) the answer is feasible, satisfies the KKT
// conditions of ½xᵀGx + cᵀx to 1e−10 and attains the brute-force optimum.
func TestSimplexBoxLinearTerm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	epsilons := []float64{-1, 0.1, 1}
	for trial := range 400 {
		n := 1 + trial%6
		k := 1 + r.IntN(n+1)
		eps := epsilons[trial%len(epsilons)]
		g, lo, hi := randomInstance(r, n, k, eps)
		c := make([]float64, n)
		for i := range c {
			c[i] = 2 * r.NormFloat64()
		}
		got, err := qp.SimplexBox(g, c, lo, hi)
		if err != nil {
			t.Fatalf("trial %d (n %d, rank ≤ %d, ε %v): %v", trial, n, k, eps, err)
		}
		if v := kktViolation(g, c, lo, hi, got); v > 1e-10 {
			t.Errorf("trial %d (n %d, rank ≤ %d, ε %v): KKT violated by %.3g at %v", trial, n, k, eps, v, got)
		}
		obj, want := objective(g, c, got), bruteForce(g, c, lo, hi)
		if math.Abs(obj-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("trial %d (n %d, rank ≤ %d, ε %v): objective %v; brute force %v", trial, n, k, eps, obj, want)
		}
	}
}

// TestSimplexBoxLinearOnly: with G = 0 the problem is linear and the
// answer is the vertex at the least c_i (the simplex's box is [0, 1]).
func TestSimplexBoxLinearOnly(t *testing.T) {
	g := [][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
	got, err := qp.SimplexBox(g, []float64{3, -1, 2}, []float64{0, 0, 0}, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 0}; !equal(got, want, 0) {
		t.Errorf("SimplexBox(0, c = (3, −1, 2)) = %v; want %v", got, want)
	}
}

// TestSimplexLeastSquaresKnownValues: with A = I the answer is the
// Euclidean projection of u onto the simplex (worked by hand: subtract the
// τ that makes the positive part sum to 1).
func TestSimplexLeastSquaresKnownValues(t *testing.T) {
	id := [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	tests := []struct {
		name  string
		giveA [][]float64
		giveU []float64
		want  []float64
	}{
		{"inside", id, []float64{0.2, 0.3, 0.5}, []float64{0.2, 0.3, 0.5}},
		{"shifted", id, []float64{0.7, 0.5, 0.1}, []float64{0.6, 0.4, 0}},             // τ = 0.1
		{"vertex", id, []float64{2, 0, -1}, []float64{1, 0, 0}},                       // τ = 1
		{"scaled", [][]float64{{2, 0}, {0, 2}}, []float64{1, 1}, []float64{0.5, 0.5}}, // z = u/2
		{"tall", [][]float64{{1, 0}, {0, 1}, {1, 1}}, []float64{1, 0, 1}, []float64{1, 0}},
	}
	for _, tt := range tests {
		got, err := qp.SimplexLeastSquares(tt.giveA, tt.giveU)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !equal(got, tt.want, 1e-12) {
			t.Errorf("%s: SimplexLeastSquares = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// TestSimplexLeastSquaresRecovers: for u = A z0 with z0 on the simplex
// (some entries 0) the least squares returns z0 to 1e−9, for tall random
// A and for square A of the RLU attack's shape (diagonal Σ_{n≠j} S[j][n],
// off-diagonal −S[n][j], every column summing to 0: singular, but
// injective on the simplex).
func TestSimplexLeastSquaresRecovers(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for trial := range 200 {
		n := 2 + trial%9
		z0 := make([]float64, n)
		total := 0.0
		for i := range z0 {
			if r.IntN(3) > 0 {
				z0[i] = r.Float64()
				total += z0[i]
			}
		}
		if total == 0 {
			z0[0], total = 1, 1
		}
		for i := range z0 {
			z0[i] /= total
		}
		var a [][]float64
		if trial%2 == 0 {
			a = make([][]float64, n+3)
			for i := range a {
				a[i] = make([]float64, n)
				for j := range a[i] {
					a[i][j] = r.NormFloat64()
				}
			}
		} else {
			s := make([][]float64, n) // rows on the simplex
			for i := range s {
				s[i] = make([]float64, n)
				sum := 0.0
				for j := range s[i] {
					s[i][j] = 0.05 + r.Float64()
					sum += s[i][j]
				}
				for j := range s[i] {
					s[i][j] /= sum
				}
			}
			a = make([][]float64, n)
			for j := range a {
				a[j] = make([]float64, n)
				for k := range a[j] {
					if k == j {
						a[j][j] = 1 - s[j][j]
					} else {
						a[j][k] = -s[k][j]
					}
				}
			}
		}
		u := make([]float64, len(a))
		for i, row := range a {
			for j, v := range row {
				u[i] += v * z0[j]
			}
		}
		got, err := qp.SimplexLeastSquares(a, u)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		sum := 0.0
		for _, v := range got {
			sum += v
			if v < 0 {
				t.Errorf("trial %d: z = %v has a negative entry", trial, got)
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("trial %d: Σz = %v; want 1", trial, sum)
		}
		if !equal(got, z0, 1e-9) {
			t.Errorf("trial %d (n %d): z = %v; want z0 = %v", trial, n, got, z0)
		}
	}
}

// TestSimplexLeastSquaresRejects: malformed problems are fl.ErrInvalid.
func TestSimplexLeastSquaresRejects(t *testing.T) {
	tests := []struct {
		name  string
		giveA [][]float64
		giveU []float64
	}{
		{"empty", nil, nil},
		{"no columns", [][]float64{{}}, []float64{1}},
		{"u length", [][]float64{{1, 0}, {0, 1}}, []float64{1}},
		{"ragged", [][]float64{{1, 0}, {0}}, []float64{1, 1}},
		{"NaN in A", [][]float64{{math.NaN(), 0}, {0, 1}}, []float64{1, 1}},
		{"Inf in u", [][]float64{{1, 0}, {0, 1}}, []float64{math.Inf(-1), 1}},
	}
	for _, tt := range tests {
		if _, err := qp.SimplexLeastSquares(tt.giveA, tt.giveU); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: error = %v; want fl.ErrInvalid", tt.name, err)
		}
	}
}

func equal(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}
