package algorithm_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
)

// TestProjectSimplexKnownValues: projections traced by hand with the
// sort-based rule of afl.go.
func TestProjectSimplexKnownValues(t *testing.T) {
	tests := []struct {
		give []float64
		want []float64
	}{
		{[]float64{0.5, 0.5}, []float64{0.5, 0.5}},
		{[]float64{1, 0}, []float64{1, 0}},
		{[]float64{2, 0}, []float64{1, 0}},
		{[]float64{0.6, 0.6}, []float64{0.5, 0.5}},
		{[]float64{1, 2, 3}, []float64{0, 0, 1}},                                    // θ = 2
		{[]float64{0.3, 0.2, -0.1}, []float64{0.5, 0.4, 0.1}},                       // θ = −0.2
		{[]float64{0.1, 0.3, 0.3, 0.45}, []float64{0.0625, 0.2625, 0.2625, 0.4125}}, // θ = 0.0375
		{[]float64{-5}, []float64{1}},
	}
	for _, tt := range tests {
		got := algorithm.ProjectSimplex(tt.give)
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-15 {
				t.Errorf("ProjectSimplex(%v) = %v; want %v", tt.give, got, tt.want)
				break
			}
		}
	}
}

// bruteProject returns the projection onto the simplex by trying every
// support S: x_S = v_S − (Σ v_S − 1)/|S|, 0 elsewhere, the nearest feasible.
func bruteProject(v []float64) []float64 {
	n := len(v)
	var best []float64
	bestD := math.Inf(1)
	for mask := 1; mask < 1<<n; mask++ {
		sum, size := 0.0, 0
		for i := range n {
			if mask&(1<<i) != 0 {
				sum += v[i]
				size++
			}
		}
		x := make([]float64, n)
		ok, d := true, 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				x[i] = v[i] - (sum-1)/float64(size)
				ok = ok && x[i] >= -1e-12
			}
			d += (x[i] - v[i]) * (x[i] - v[i])
		}
		if ok && d < bestD {
			best, bestD = x, d
		}
	}
	return best
}

// TestProjectSimplexProperties: on random vectors the projection is on the
// simplex, leaves simplex points where they are, and equals the brute-force
// projection.
func TestProjectSimplexProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 2000 {
		n := 1 + trial%7
		v := make([]float64, n)
		for i := range v {
			v[i] = 2 * r.NormFloat64()
		}
		p := algorithm.ProjectSimplex(v)
		sum := 0.0
		for _, x := range p {
			sum += x
			if x < 0 {
				t.Fatalf("ProjectSimplex(%v) = %v has a negative entry", v, p)
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("ProjectSimplex(%v) sums to %v; want 1", v, sum)
		}
		again := algorithm.ProjectSimplex(p)
		for i := range p {
			if math.Abs(again[i]-p[i]) > 1e-15 {
				t.Errorf("ProjectSimplex moved the simplex point %v to %v", p, again)
				break
			}
		}
		want := bruteProject(v)
		for i := range p {
			if math.Abs(p[i]-want[i]) > 1e-12 {
				t.Errorf("ProjectSimplex(%v) = %v; brute force %v", v, p, want)
				break
			}
		}
	}
}

func newAFL(t *testing.T, opts fl.Options) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.NewAFL(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// aflState returns AFL's state with λ and the count of averaged iterates.
func aflState(t *testing.T, lambda []float64, averaged int, avg []float32) fl.State {
	t.Helper()
	var s fl.State
	if avg != nil {
		s.Set("average", avg)
	}
	if err := s.SetMeta(map[string]any{"lambda": lambda, "averaged": averaged}); err != nil {
		t.Fatal(err)
	}
	return s
}

// aflLambda decodes λ from AFL's state.
func aflLambda(t *testing.T, s fl.State) []float64 {
	t.Helper()
	var m struct {
		Lambda []float64 `json:"lambda"`
	}
	if err := json.Unmarshal(s.Meta, &m); err != nil {
		t.Fatal(err)
	}
	return m.Lambda
}

// aflRound runs one round of AFL's server and returns θ⁺, the state and
// the reported weights.
func aflRound(t *testing.T, a algorithm.Algorithm, r algorithm.Server, deltas [][]float32) ([]float32, fl.State, []float64) {
	t.Helper()
	agg, err := a.Begin(r)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range r.Selection.Clients {
		if err := agg.Add(k, deltas[i], fl.State{}); err != nil {
			t.Fatal(err)
		}
	}
	dst := make([]float32, len(r.Global))
	s, err := agg.Finish(dst)
	if err != nil {
		t.Fatal(err)
	}
	return dst, s, agg.(algorithm.Reporting).Report().Weights
}

// TestAFLFullParticipationUniform: in round 1, with every client selected
// and λ uniform, AFL's step is FedAvg's uniform mean θ + (1/N)·Σ Δ_k.
func TestAFLFullParticipationUniform(t *testing.T) {
	global := vec(61, 9, 1)
	deltas := [][]float32{vec(62, 9, 0.1), vec(63, 9, 0.1), vec(64, 9, 0.1), vec(65, 9, 0.1)}
	sel := uniformSel(0, 1, 2, 3)
	sel.Weights = []float64{0.1, 0.2, 0.3, 0.4} // ignored: AFL weighs by λ
	r := lossServer(global, sel, []float64{1, 2, 3, 4}, nil, 1, 0.1)
	r.N = 4
	got, _, w := aflRound(t, newAFL(t, nil), r, deltas)
	want := make([]float64, len(global))
	for j, g := range global {
		want[j] = float64(g)
		for k := range deltas {
			want[j] += float64(deltas[k][j]) / 4
		}
	}
	relClose(t, "θ⁺", got, want, 1e-6)
	for _, v := range w {
		if math.Abs(v-0.25) > 1e-15 {
			t.Errorf("reported weights %v; want λ = 1/4 each", w)
			break
		}
	}
}

// TestAFLLambda: λ ← Proj(λ + γ_λ F(θ^t)) moves toward the high-loss
// client. With γ_λ = 0.01, λ = 1/3 each and F = (0.1, 0.2, 2) nothing is
// clipped: λ_k = 1/3 + γ_λ·(F_k − mean F) = (0.326667, 0.327667, 0.345667),
// and round 2 aggregates with it. With γ_λ = 0.7 the projection puts all
// the mass on the high-loss client (θ = 0.7333).
func TestAFLLambda(t *testing.T) {
	sel := uniformSel(0, 1, 2)
	f := []float64{0.1, 0.2, 2}
	deltas := [][]float32{{1}, {1}, {1}}
	r := lossServer([]float32{0}, sel, f, nil, 1, 0.1)
	r.N = 3
	a := newAFL(t, fl.Options{"lambda_lr": 0.01})
	_, s, _ := aflRound(t, a, r, deltas)
	lambda := aflLambda(t, s)
	want := []float64{1.0/3 + 0.01*(0.1-2.3/3), 1.0/3 + 0.01*(0.2-2.3/3), 1.0/3 + 0.01*(2-2.3/3)}
	for i := range want {
		if math.Abs(lambda[i]-want[i]) > 1e-15 {
			t.Errorf("λ = %v; want %v", lambda, want)
			break
		}
	}
	// λ is stored exactly: it is the projection computed in float64.
	third := 1 / 3.0
	exact := algorithm.ProjectSimplex([]float64{third + 0.01*f[0], third + 0.01*f[1], third + 0.01*f[2]})
	for i := range exact {
		if lambda[i] != exact[i] {
			t.Errorf("stored λ_%d = %v; want %v bit for bit (a resumed run must be identical)", i, lambda[i], exact[i])
		}
	}
	r.State = s
	_, _, w := aflRound(t, a, r, deltas)
	for i := range w {
		if math.Abs(w[i]-lambda[i]) > 1e-15 {
			t.Errorf("round 2 weights %v; want λ %v", w, lambda)
			break
		}
	}
	r.State = fl.State{}
	_, s, _ = aflRound(t, newAFL(t, nil), r, deltas)
	if got := aflLambda(t, s); got[0] != 0 || got[1] != 0 || got[2] != 1 {
		t.Errorf("γ_λ = 0.7: λ = %v; want (0, 0, 1)", got)
	}
}

// TestAFLPartial: with S_t = {1, 3} of N = 4 and λ = (0.1, 0.2, 0.3, 0.4),
// the round aggregates with λ̃ = (0.2, 0.4)/0.6 and only λ_1, λ_3 take the
// ascent step: γ_λ = 0.1, F = (1, 0.5) gives (0.1, 0.3, 0.3, 0.45), projected
// (θ = 0.0375) to (0.0625, 0.2625, 0.2625, 0.4125). When the selected
// clients have no mass, the weights are uniform.
func TestAFLPartial(t *testing.T) {
	sel := uniformSel(1, 3)
	r := lossServer([]float32{0}, sel, []float64{1, 0.5}, nil, 1, 0.1)
	r.N = 4
	r.State = aflState(t, []float64{0.1, 0.2, 0.3, 0.4}, 0, nil)
	got, s, w := aflRound(t, newAFL(t, fl.Options{"lambda_lr": 0.1}), r, [][]float32{{3}, {-3}})
	if math.Abs(w[0]-1.0/3) > 1e-15 || math.Abs(w[1]-2.0/3) > 1e-15 {
		t.Errorf("weights = %v; want (1/3, 2/3)", w)
	}
	relClose(t, "θ⁺", got, []float64{3.0/3 - 6.0/3}, 1e-6)
	want := []float64{0.0625, 0.2625, 0.2625, 0.4125}
	lambda := aflLambda(t, s)
	for i := range want {
		if math.Abs(lambda[i]-want[i]) > 1e-15 {
			t.Errorf("λ = %v; want %v", lambda, want)
			break
		}
	}
	r.State = aflState(t, []float64{0.5, 0.5, 0, 0}, 0, nil)
	r.Selection = uniformSel(2, 3)
	if _, _, w := aflRound(t, newAFL(t, nil), r, [][]float32{{1}, {1}}); w[0] != 0.5 || w[1] != 0.5 {
		t.Errorf("weights of clients without mass = %v; want uniform", w)
	}
	r.State = aflState(t, []float64{0.5, 0.5}, 0, nil)
	_, err := newAFL(t, nil).Begin(r)
	wantInvalid(t, "λ of another population", err, "λ for 2 clients")
}

// TestAFLReportsRunningAverage traces two rounds by hand, N = 2, both
// clients each round, equal losses (λ stays (½, ½)):
//
//	θ0 = (1, 2);  Δ = (1, 0), (0, 1) → θ1 = (1.5, 2.5), avg = (1.25, 2.25)
//	Δ = (2, 2), (0, 0) → θ2 = (2.5, 3.5), avg = (2·avg + θ2)/3 = (5/3, 8/3)
//
// the mean of θ0, θ1, θ2. Report "last" evaluates θ2; before round 1 both
// evaluate θ0.
func TestAFLReportsRunningAverage(t *testing.T) {
	a := newAFL(t, nil)
	rep := a.(algorithm.Reporter)
	theta0 := []float32{1, 2}
	init, err := a.Init(2)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rep.Reported(theta0, init); err != nil || got[0] != 1 || got[1] != 2 {
		t.Errorf("Reported before round 1 = %v, %v; want θ0", got, err)
	}
	r := lossServer(theta0, uniformSel(0, 1), []float64{1, 1}, nil, 1, 0.1)
	r.N, r.State = 2, init
	theta1, s1, _ := aflRound(t, a, r, [][]float32{{1, 0}, {0, 1}})
	relClose(t, "θ1", theta1, []float64{1.5, 2.5}, 1e-7)
	r.Global, r.State = theta1, s1
	theta2, s2, _ := aflRound(t, a, r, [][]float32{{2, 2}, {0, 0}})
	relClose(t, "θ2", theta2, []float64{2.5, 3.5}, 1e-7)
	avg, err := rep.Reported(theta2, s2)
	if err != nil {
		t.Fatal(err)
	}
	relClose(t, "reported model after round 2", avg, []float64{5.0 / 3, 8.0 / 3}, 1e-7)
	last := newAFL(t, fl.Options{"report": "last"})
	r.Global, r.State = theta0, fl.State{}
	_, sl, _ := aflRound(t, last, r, [][]float32{{1, 0}, {0, 1}})
	if _, ok := sl.Vectors["average"]; ok {
		t.Errorf("report last keeps an average; want none")
	}
	if got, err := last.(algorithm.Reporter).Reported(theta2, s2); err != nil || got[0] != theta2[0] || got[1] != theta2[1] {
		t.Errorf("report last: Reported = %v, %v; want θ2 = %v", got, err, theta2)
	}
	delete(s2.Vectors, "average")
	_, err = rep.Reported(theta2, s2)
	wantInvalid(t, "state without its average", err, "average")
}
