package algorithm_test

import (
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestFedDynClient checks a client's round against Acar et al. 2021,
// Algorithm 1, with a nonzero ∇L_k(θ_k^{t−1}) in its state: it trains with
// the trainer's FedDyn(α, grad) objective and keeps
//
//	grad⁺ = grad − α·(θ_k − θ^t)
//
// elementwise (float64, stored as float32); its first round starts from
// grad = 0.
func TestFedDynClient(t *testing.T) {
	const alpha = 0.1 // the paper's largest α, so the term moves the weights
	n := len(newFixture(t, sgd()).global)
	// σ = 0.05: a state of the size of the gradients' entries.
	tests := []struct {
		name      string
		giveState fl.State
		wantGrad  []float32 // the grad the client trains with
	}{
		{"first round", fl.State{}, make([]float32, n)},
		{"with state", state("grad", vec(21, n, 0.05)), vec(21, n, 0.05)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sgd())
			up := f.train(algorithm.FedDyn{Alpha: alpha}, fl.State{}, tt.giveState)
			w, res := f.reference(trainer.FedDyn(alpha, tt.wantGrad))
			sameBits(t, "θ_k", up.Weights, w)
			sameBits(t, "Δ", up.Delta, algorithm.Delta(w, f.global))
			if !reflect.DeepEqual(up.Train, res) {
				t.Errorf("Train = %+v; want %+v", up.Train, res)
			}
			next := vector(t, up.State, "grad", n)
			for j := range n {
				want := float32(float64(tt.wantGrad[j]) - alpha*(float64(w[j])-float64(f.global[j])))
				if next[j] != want {
					t.Errorf("grad⁺[%d] = %v; want grad − α(θ_k − θ^t) = %v", j, next[j], want)
					break
				}
			}
		})
	}
}

// TestFedDynAdaptiveAlpha checks the official code's per-client α: a client
// with SizeRatio 2.5 under {alpha: 0.1, adaptive_alpha: true} uploads bit
// for bit what FedDyn{Alpha: 0.1/2.5} uploads (weights, delta and state),
// and differs from FedDyn{Alpha: 0.1}.
func TestFedDynAdaptiveAlpha(t *testing.T) {
	const alpha, ratio = 0.1, 2.5 // ratio: a client 2.5 times the mean size
	adaptive, err := algorithm.NewFedDyn(fl.Options{"alpha": alpha, "adaptive_alpha": true})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, sgd())
	f.ratio = ratio
	grad := state("grad", vec(22, len(f.global), 0.05))
	got := f.train(adaptive, fl.State{}, grad)
	want := f.train(algorithm.FedDyn{Alpha: alpha / ratio}, fl.State{}, grad)
	sameBits(t, "θ_k", got.Weights, want.Weights)
	sameBits(t, "Δ", got.Delta, want.Delta)
	sameBits(t, "grad⁺", vector(t, got.State, "grad", len(f.global)), vector(t, want.State, "grad", len(f.global)))
	if fixed := f.train(algorithm.FedDyn{Alpha: alpha}, fl.State{}, grad); equalBits(fixed.Weights, got.Weights) {
		t.Error("adaptive α trained exactly like the fixed α; SizeRatio was not used")
	}
}

// TestFedDynServer traces one round of the server by hand: α = 0.5, N = 3,
// two selected clients with ω = (½, ½), rule θ + Σ ω Δ (η_g = 1):
//
//	h = (0.1, −0.2), θ = (1, 2), Δ_1 = (0.2, 0.4), Δ_2 = (−0.1, 0.2)
//	Σ Δ = (0.1, 0.6)
//	h⁺ = h − α·(1/N)·ΣΔ = (0.1 − 0.5·0.1/3, −0.2 − 0.5·0.6/3) = (0.1 − 1/60, −0.3) = (0.0833333…, −0.3)
//	θ + Σ ω Δ = (1 + 0.05, 2 + 0.3) = (1.05, 2.3)
//	θ⁺ = (θ + Σ ω Δ) − h⁺/α = (1.05 − 0.1666667, 2.3 + 0.6) = (0.8833333…, 2.9)
//
// The inputs are float32 (0.1 is not exact) and the code stores float32:
// 1e-6 is about 4 float32 ulps at 2.9.
func TestFedDynServer(t *testing.T) {
	const tol = 1e-6
	a := algorithm.FedDyn{Alpha: 0.5}
	s0, err := a.Init(2)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "initial h", vector(t, s0, "h", 2), []float32{0, 0})
	if got := a.Sends(); len(got) != 0 {
		t.Errorf("Sends() = %v; want nothing (h stays on the server)", got)
	}
	sel := fl.Selection{Clients: []int{0, 2}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	r := algorithm.Server{
		Global: []float32{1, 2}, State: state("h", []float32{0.1, -0.2}),
		Selection: sel, Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 3,
	}
	got, s := serve(t, a, r, [][]float32{{0.2, 0.4}, {-0.1, 0.2}}, nil)
	closeTo(t, "h⁺", vector(t, s, "h", 2), []float64{0.1 - 1.0/60, -0.3}, tol)
	closeTo(t, "θ⁺", got, []float64{1.05 - (0.1-1.0/60)/0.5, 2.9}, tol)
}
