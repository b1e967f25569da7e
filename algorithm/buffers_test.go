package algorithm_test

import (
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestServerCorrectionsSkipBuffers: FedDyn's h and FedDC's drift sum
// correct the trainable parameters only; BatchNorm's running statistics
// leave the server exactly as the rule averaged them, as in the official
// codes, which flatten model.parameters() (the buffers are not in it).
func TestServerCorrectionsSkipBuffers(t *testing.T) {
	net, err := trainer.NewNet(trainer.Spec{Arch: trainer.ArchCNNHiCS}, [3]int{1, 16, 16}, 10)
	if err != nil {
		t.Fatal(err)
	}
	n := net.NumParams()
	buffers := 0
	for _, p := range net.Params() {
		if !p.Trainable {
			buffers += p.Len
		}
	}
	if buffers == 0 {
		t.Fatal("cnn-hics has no BatchNorm buffers")
	}
	global := vec(1, n, 1)
	sel := fl.Selection{Clients: []int{0, 2}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	deltas := [][]float32{vec(2, n, 0.1), vec(3, n, 0.1)}
	ruleOnly, _ := serve(t, algorithm.FedAvg{}, algorithm.Server{Global: global, Selection: sel, Clients: summaries(sel, nil),
		Rule: aggregate.WeightedDelta{EtaG: 1}, N: 4, Net: net}, deltas, nil)
	tests := []struct {
		name  string
		alg   algorithm.Algorithm
		state fl.State
		vec   string // the state vector that must stay 0 at buffers
	}{
		{"feddyn", algorithm.FedDyn{Alpha: 0.1}, state("h", vec(4, n, 0.1)), "h"},
		{"feddc all", algorithm.FedDC{Lambda: 0.01, DriftMean: algorithm.DriftAll}, state("mean_update", vec(5, n, 0.1), "drift_sum", vec(6, n, 0.1)), "drift_sum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next := serve(t, tt.alg, algorithm.Server{Global: global, State: tt.state, Selection: sel, Clients: summaries(sel, nil),
				Rule: aggregate.WeightedDelta{EtaG: 1}, N: 4, Net: net}, deltas, nil)
			s := vector(t, next, tt.vec, n)
			corrected := 0
			for _, p := range net.Params() {
				for j := p.Offset; j < p.Offset+p.Len; j++ {
					switch {
					case !p.Trainable && (got[j] != ruleOnly[j] || s[j] != 0):
						t.Fatalf("buffer %s[%d]: θ⁺ = %v (rule %v), %s = %v; want the rule's value and 0", p.Name, j-p.Offset, got[j], ruleOnly[j], tt.vec, s[j])
					case p.Trainable && got[j] != ruleOnly[j]:
						corrected++
					}
				}
			}
			if corrected == 0 {
				t.Error("no trainable parameter was corrected")
			}
		})
	}
}
