package algorithm_test

import (
	"math"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// lossServer returns round t's server for the clients of sel, with their
// losses before and after training (nil: not measured), n_k = 10 each, the
// rule θ + η_g Σ ω_k Δ_k and the local learning rate lr.
func lossServer(global []float32, sel fl.Selection, before, after []float64, etaG, lr float64) algorithm.Server {
	sums := summaries(sel, nil)
	for i := range sums {
		if before != nil {
			sums[i].LossBefore = &before[i]
		}
		if after != nil {
			sums[i].LossAfter = &after[i]
		}
	}
	return algorithm.Server{Round: 1, Global: global, Selection: sel, Clients: sums, Rule: aggregate.WeightedDelta{EtaG: etaG},
		N: 10, Hyper: trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: lr}}
}

// uniformSel selects clients with the uniform sampler's weights 1/m.
func uniformSel(clients ...int) fl.Selection {
	sel := fl.Selection{Clients: clients}
	for range clients {
		sel.Weights = append(sel.Weights, 1/float64(len(clients)))
		sel.Draws = append(sel.Draws, 1)
	}
	return sel
}

// relClose reports entries of got farther than rel·|want| (plus 1e−12)
// from want.
func relClose(t *testing.T, what string, got []float32, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d values; want %d", what, len(got), len(want))
	}
	for j := range got {
		if math.Abs(float64(got[j])-want[j]) > rel*math.Abs(want[j])+1e-12 {
			t.Errorf("%s[%d] = %v; want %v (relative tolerance %g)", what, j, got[j], want[j], rel)
		}
	}
}

func newQFFL(t *testing.T, q float64) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.NewQFFL(fl.Options{"q": q})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestQFFLZeroIsUniformFedAvg: with q = 0, h_k = L and q-FedAvg's step is
// θ^t + (1/m)·Σ Δ_k whatever the losses and the sampler's weights (qffl.go).
func TestQFFLZeroIsUniformFedAvg(t *testing.T) {
	global := vec(41, 12, 1)
	deltas := [][]float32{vec(42, 12, 0.1), vec(43, 12, 0.1), vec(44, 12, 0.1)}
	sel := fl.Selection{Clients: []int{1, 4, 8}, Weights: []float64{0.2, 0.5, 0.9}, Draws: []int{1, 1, 1}}
	got, s := serve(t, newQFFL(t, 0), lossServer(global, sel, []float64{0.3, 2.5, 7}, nil, 1, 0.05), deltas, nil)
	want := make([]float64, len(global))
	for j, g := range global {
		want[j] = float64(g) + (float64(deltas[0][j])+float64(deltas[1][j])+float64(deltas[2][j]))/3
	}
	relClose(t, "θ⁺ (q = 0)", got, want, 1e-6)
	if !s.Empty() {
		t.Errorf("server state = %v; want none", s)
	}
}

// TestQFFLKnownValues traces q-FedAvg by hand on two clients, with
// η_L = 0.5 (L = 2), θ = (1, 1), Δ_A = (0.5, 0), F_A = 1, Δ_B = (0, −0.25),
// F_B = 4 (the loss offset 1e−10 is below float32's resolution here):
//
//	Δw_A = (−1, 0), ‖Δw_A‖² = 1;   Δw_B = (0, 0.5), ‖Δw_B‖² = 0.25
//	q = 1: Δ'_A = (−1, 0), h_A = 1 + 2 = 3;  Δ'_B = (0, 2), h_B = 0.25 + 8 = 8.25
//	       θ⁺ = (1, 1) − (−1, 2)/11.25 = (1.0888…, 0.8222…)
//	q = 2: Δ'_A = (−1, 0), h_A = 2 + 2 = 4;  Δ'_B = (0, 8), h_B = 2 + 32 = 34
//	       θ⁺ = (1, 1) − (−1, 8)/38 = (1.026315…, 0.789473…)
func TestQFFLKnownValues(t *testing.T) {
	tests := []struct {
		giveQ float64
		want  []float64
	}{
		{1, []float64{1 + 1/11.25, 1 - 2/11.25}},
		{2, []float64{1 + 1.0/38, 1 - 8.0/38}},
	}
	sel := uniformSel(2, 5)
	deltas := [][]float32{{0.5, 0}, {0, -0.25}}
	for _, tt := range tests {
		got, _ := serve(t, newQFFL(t, tt.giveQ), lossServer([]float32{1, 1}, sel, []float64{1, 4}, nil, 1, 0.5), deltas, nil)
		relClose(t, "θ⁺", got, tt.want, 1e-6)
	}
}

// TestQFFLFavoursHighLoss: two clients pulling in opposite directions with
// equal force cancel at q = 0; for q > 0 the model moves toward the client
// with the higher loss, and further as q grows.
func TestQFFLFavoursHighLoss(t *testing.T) {
	sel := uniformSel(0, 1)
	deltas := [][]float32{{0.1, 0}, {-0.1, 0}} // client 1 has the higher loss
	before := []float64{0.5, 2}
	step := func(q float64) float64 {
		got, _ := serve(t, newQFFL(t, q), lossServer([]float32{0, 0}, sel, before, nil, 1, 0.1), deltas, nil)
		return float64(got[0])
	}
	if s := step(0); s != 0 {
		t.Errorf("q = 0: θ⁺_0 = %v; want 0 (the updates cancel)", s)
	}
	s1, s5 := step(1), step(5)
	if !(s1 < 0 && s5 < s1) {
		t.Errorf("θ⁺_0 = %v (q = 1), %v (q = 5); want negative (toward client 1, whose loss is higher) and further at q = 5", s1, s5)
	}
}

// TestQFFLServerRejects: the server needs every client's loss before
// training and a positive local learning rate.
func TestQFFLServerRejects(t *testing.T) {
	sel := uniformSel(0, 1)
	a := newQFFL(t, 0.5)
	if u, ok := a.(algorithm.LossUser); !ok || !usesBefore(u) {
		t.Errorf("qffl is not a LossUser; the engine would not measure F_k(θ^t)")
	}
	noBefore := lossServer([]float32{0}, sel, nil, []float64{1, 2}, 1, 0.1)
	_, err := a.Begin(noBefore)
	wantInvalid(t, "no loss before training", err, "client 0")
	_, err = a.Begin(lossServer([]float32{0}, sel, []float64{1, 2}, nil, 1, 0))
	wantInvalid(t, "η_L = 0", err, "learning rate")
}

// usesBefore reports whether u's server reads F_k(θ^t), so that the
// engine measures it.
func usesBefore(u algorithm.LossUser) bool {
	before, _ := u.UsesLosses()
	return before
}
