package algorithm_test

import (
	"math"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
)

// TestTiltedWeights: known values, the t → 0 limit and overflow safety.
func TestTiltedWeights(t *testing.T) {
	tests := []struct {
		name  string
		giveF []float64
		giveT float64
		want  []float64
		tol   float64
	}{
		// e^k/(e + e² + e³), k = 1, 2, 3.
		{"known", []float64{1, 2, 3}, 1, []float64{0.09003, 0.24473, 0.66524}, 5e-6},
		// e^{4.5t}: (1, e^{4.5})/(1 + e^{4.5}).
		{"two", []float64{0, 4.5}, 1, []float64{0.010987, 0.989013}, 5e-7},
		{"t = 0", []float64{0.1, 5, 40}, 0, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 0},
		{"t → 0", []float64{0.1, 5, 40}, 1e-12, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-10},
		// exp(100·50) overflows; log-sum-exp does not. e^{−100} ≈ 3.7e−44.
		{"large", []float64{50, 49, 0}, 100, []float64{1, 0, 0}, 1e-40},
		{"negative t", []float64{1, 2, 3}, -1, []float64{0.66524, 0.24473, 0.09003}, 5e-6},
	}
	for _, tt := range tests {
		got := algorithm.TiltedWeights(tt.giveF, tt.giveT)
		sum := 0.0
		for i, w := range got {
			sum += w
			if math.IsNaN(w) || math.Abs(w-tt.want[i]) > tt.tol {
				t.Errorf("%s: TiltedWeights(%v, %v) = %v; want %v ± %g", tt.name, tt.giveF, tt.giveT, got, tt.want, tt.tol)
				break
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: weights sum to %v; want 1", tt.name, sum)
		}
	}
}

// TestTERMUsesLossesBeforeTraining: TERM weighs by F_k(θ^t), never by the
// losses after training (FedEBA's). Swapping the two swaps nothing; swapping
// the losses before training swaps the weights.
func TestTERMUsesLossesBeforeTraining(t *testing.T) {
	a, err := algorithm.NewTERM(fl.Options{"t": 1})
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := a.(algorithm.LossUser); !ok || !usesBefore(u) {
		t.Errorf("term is not a LossUser; the engine would not measure F_k(θ^t)")
	}
	sel := uniformSel(3, 6)
	weights := func(before, after []float64) []float64 {
		t.Helper()
		agg, err := a.Begin(lossServer([]float32{0}, sel, before, after, 1, 0.1))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range sel.Clients {
			if err := agg.Add(k, []float32{1}, fl.State{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := agg.Finish(make([]float32, 1)); err != nil {
			t.Fatal(err)
		}
		return agg.(algorithm.Reporting).Report().Weights
	}
	w := weights([]float64{1, 3}, []float64{3, 1})
	want := algorithm.TiltedWeights([]float64{1, 3}, 1)
	if w[0] != want[0] || w[1] != want[1] {
		t.Errorf("weights = %v; want softmax of the losses before training %v", w, want)
	}
	if sw := weights([]float64{1, 3}, []float64{1, 3}); sw[0] != w[0] || sw[1] != w[1] {
		t.Errorf("weights with other losses after training = %v; want %v (unchanged)", sw, w)
	}
	if sw := weights([]float64{3, 1}, []float64{3, 1}); sw[0] != w[1] || sw[1] != w[0] {
		t.Errorf("weights with the losses before training swapped = %v; want %v swapped", sw, w)
	}
	_, err = a.Begin(lossServer([]float32{0}, sel, nil, []float64{1, 2}, 1, 0.1))
	wantInvalid(t, "no loss before training", err, "client 3")
}

// TestTERMStep: θ⁺ = θ + η_g Σ w_k Δ_k with the rule's η_g = 0.5 and
// w = softmax(t·F), t = 0.1.
func TestTERMStep(t *testing.T) {
	a, err := algorithm.NewTERM(nil)
	if err != nil {
		t.Fatal(err)
	}
	global := vec(51, 7, 1)
	deltas := [][]float32{vec(52, 7, 0.1), vec(53, 7, 0.1), vec(54, 7, 0.1)}
	f := []float64{0.4, 2.2, 1.3}
	got, s := serve(t, a, lossServer(global, uniformSel(0, 2, 9), f, nil, 0.5, 0.1), deltas, nil)
	w := algorithm.TiltedWeights(f, 0.1)
	want := make([]float64, len(global))
	for j, g := range global {
		want[j] = float64(g)
		for k := range deltas {
			want[j] += 0.5 * w[k] * float64(deltas[k][j])
		}
	}
	relClose(t, "θ⁺", got, want, 1e-6)
	if !s.Empty() {
		t.Errorf("server state = %v; want none", s)
	}
}
