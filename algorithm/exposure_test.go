package algorithm_test

import (
	"math"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// recordingLocal remembers the Objective the algorithm trained with.
type recordingLocal struct {
	*testLocal
	obj trainer.Objective
}

func (l *recordingLocal) Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error) {
	l.obj = obj
	return l.testLocal.Train(w, obj)
}

// TestExposure checks that every Exposed algorithm tells the attacks the
// objective its client trained with, and the local update θ_k − θ^t its
// upload reveals, from the client's state before the round.
func TestExposure(t *testing.T) {
	f := newFixture(t, sgd())
	n := len(f.global)
	c, ci := vec(50, n, 0.05), vec(51, n, 0.05)
	drift, last, g := vec(52, n, 0.05), vec(53, n, 0.05), vec(54, n, 0.05)
	grad := vec(55, n, 0.05)
	tests := []struct {
		name          string
		give          algorithm.Algorithm
		server, state fl.State
		// exact: Δ is the upload itself; otherwise it is recovered to
		// within float32 rounding.
		exact bool
	}{
		{"fedavg", algorithm.FedAvg{}, fl.State{}, fl.State{}, true},
		{"fedprox", algorithm.FedProx{Mu: 0.01}, fl.State{}, fl.State{}, true},
		{"fednova", algorithm.FedNova{}, fl.State{}, fl.State{}, true},
		{"scaffold", algorithm.SCAFFOLD{}, state("c", c), state("c_i", ci), true},
		{"scaffold after_step", algorithm.SCAFFOLD{Correction: algorithm.CorrectAfterStep}, state("c", c), state("c_i", ci), true},
		{"feddyn", algorithm.FedDyn{Alpha: 0.01}, fl.State{}, state("grad", grad), true},
		{"feddc all", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftAll}, state("mean_update", g), state("drift", drift, "last", last), true},
		{"feddc selected", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftSelected}, state("mean_update", g), state("drift", drift, "last", last), false},
		{"feddc control_variate", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftAll, Correction: algorithm.FedDCControlVariate, SizeScaled: true}, state("c", g), state("drift", drift, "c_i", last), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingLocal{testLocal: f.local()}
			cl := f.client(tt.server, tt.state)
			cl.Local = rec
			up, err := tt.give.Train(t.Context(), cl)
			if err != nil {
				t.Fatal(err)
			}
			ex, ok := tt.give.(algorithm.Exposed)
			if !ok {
				t.Fatalf("%T is not Exposed", tt.give)
			}
			got, err := ex.Exposure(f.client(tt.server, tt.state), up.Delta)
			if err != nil {
				t.Fatal(err)
			}
			want := rec.obj
			if got.Objective.Prox != want.Prox {
				t.Errorf("prox = %v; want %v", got.Objective.Prox, want.Prox)
			}
			for _, v := range []struct {
				name      string
				got, want []float32
			}{{"anchor", got.Objective.Anchor, want.Anchor}, {"linear", got.Objective.Linear, want.Linear}, {"after_step", got.Objective.AfterStep, want.AfterStep}} {
				if (v.got == nil) != (v.want == nil) {
					t.Errorf("%s set = %v; want %v", v.name, v.got != nil, v.want != nil)
					continue
				}
				sameBits(t, v.name, v.got, v.want)
			}
			step := algorithm.Delta(up.Weights, f.global)
			if tt.exact {
				sameBits(t, "Δ", got.Delta, step)
				return
			}
			for j := range step {
				if d := math.Abs(float64(got.Delta[j] - step[j])); d > 1e-6*(1+math.Abs(float64(step[j]))) {
					t.Fatalf("Δ[%d] = %v; want %v", j, got.Delta[j], step[j])
				}
			}
		})
	}
}
