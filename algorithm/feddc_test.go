package algorithm_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestFedDCWithoutCorrectionIsFedProx checks that FedDC's extra terms
// vanish when they should: with zero drift the anchor θ^t − d_k is θ^t, and
// with last = global_update the linear term (Δθ_k − Δθ)/(η·m) is exactly 0,
// so FedDC with λ trains bit for bit like FedProx with μ = λ. That holds in
// a client's first round (no state, global_update 0) and later.
func TestFedDCWithoutCorrectionIsFedProx(t *testing.T) {
	const lambda = 0.5 // large enough that the proximal term shows
	f := newFixture(t, sgd())
	n := len(f.global)
	g := vec(41, n, 0.05) // σ = 0.05: a global update of the size 5 steps of η = 0.1 make
	tests := []struct {
		name       string
		giveServer fl.State
		giveState  fl.State
	}{
		{"first round", state("global_update", make([]float32, n)), fl.State{}},
		{"last = global update", state("global_update", g), state("drift", make([]float32, n), "last", slices.Clone(g))},
	}
	prox, err := algorithm.NewFedProx(fl.Options{"mu": lambda})
	if err != nil {
		t.Fatal(err)
	}
	want := f.train(prox, fl.State{}, fl.State{})
	for _, tt := range tests {
		for _, mode := range []string{algorithm.DriftSelected, algorithm.DriftAll} {
			up := f.train(algorithm.FedDC{Lambda: lambda, DriftMean: mode}, tt.giveServer, tt.giveState)
			if j := firstDiff(up.Weights, want.Weights); j >= 0 {
				t.Errorf("%s, %s: θ_k[%d] = %v; want FedProx(μ = λ)'s %v", tt.name, mode, j, up.Weights[j], want.Weights[j])
			}
		}
	}
}

// TestFedDCClient checks a client's round with nonzero drift d_k, last
// update and global update, against RLU Table 1 / App. A.9 (specs/rlu.md
// §1.7):
//
//   - it trains with CE + λ/2·‖θ − (θ^t − d_k)‖² + ⟨θ, (Δθ_k − Δθ)/(η·m)⟩,
//     η·m = 0.1·5 = 0.5 here;
//   - it keeps d_k⁺ = d_k + (θ_k − θ^t) (Eq. (82)) and last = θ_k − θ^t;
//   - it uploads Δ = (θ_k − θ^t) + d_k⁺ (drift_mean "selected": the paper's
//     θ_k + h_k) or Δ = θ_k − θ^t ("all": the server adds the drifts).
func TestFedDCClient(t *testing.T) {
	tests := []struct {
		name      string
		give      algorithm.FedDC
		wantObj   func(anchor, lin []float32) trainer.Objective
		wantDelta func(step, drift []float32) []float32
	}{
		{"selected", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftSelected}, anchored(0.1), plusDrift},
		{"all", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftAll}, anchored(0.1), stepOnly},
		// λ = 0: no proximal term, and no anchor (the trainer refuses one without μ).
		{"lambda 0", algorithm.FedDC{Lambda: 0, DriftMean: algorithm.DriftAll},
			func(_, lin []float32) trainer.Objective { return trainer.Objective{Linear: lin} }, stepOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sgd())
			n := len(f.global)
			// σ = 0.05: drifts and updates of the size 5 steps of η = 0.1 make.
			drift, last, g := vec(42, n, 0.05), vec(43, n, 0.05), vec(44, n, 0.05)
			up := f.train(tt.give, state("global_update", g), state("drift", drift, "last", last))

			anchor, lin := make([]float32, n), make([]float32, n)
			for j := range n {
				anchor[j] = f.global[j] - drift[j]
				lin[j] = float32((float64(last[j]) - float64(g[j])) / (0.1 * 5))
			}
			w, res := f.reference(tt.wantObj(anchor, lin))
			sameBits(t, "θ_k", up.Weights, w)
			if !reflect.DeepEqual(up.Train, res) {
				t.Errorf("Train = %+v; want %+v", up.Train, res)
			}
			step := algorithm.Delta(w, f.global)
			next := make([]float32, n)
			for j := range n {
				next[j] = drift[j] + step[j]
			}
			sameBits(t, "d_k⁺", vector(t, up.State, "drift", n), next)
			sameBits(t, "last", vector(t, up.State, "last", n), step)
			sameBits(t, "Δ", up.Delta, tt.wantDelta(step, next))
		})
	}
}

// anchored is FedDC's objective with λ > 0.
func anchored(lambda float64) func(anchor, lin []float32) trainer.Objective {
	return func(anchor, lin []float32) trainer.Objective {
		return trainer.Objective{Prox: lambda, Anchor: anchor, Linear: lin}
	}
}

// plusDrift is the upload of drift_mean "selected": (θ_k − θ^t) + d_k⁺.
func plusDrift(step, drift []float32) []float32 {
	d := make([]float32, len(step))
	for j := range d {
		d[j] = step[j] + drift[j]
	}
	return d
}

// stepOnly is the upload of drift_mean "all": θ_k − θ^t.
func stepOnly(step, _ []float32) []float32 { return step }

// TestFedDCServer traces the server by hand: N = 4, θ = (1, 2), clients 0
// and 2 selected with ω = (½, ½), rule θ + Σ ω Δ (η_g = 1), deltas
// Δ_0 = (0.25, 0.5), Δ_2 = (−0.75, 1). All values are dyadic, so every
// result is exact.
//
//	rule:        θ + ½Δ_0 + ½Δ_2 = (1 + 0.125 − 0.375, 2 + 0.25 + 0.5) = (0.75, 2.75)
//	"selected":  θ⁺ = (0.75, 2.75), global_update = θ⁺ − θ = (−0.25, 0.75)
//	"all", drift_sum = (0.5, −1):
//	             drift_sum⁺ = drift_sum + Δ_0 + Δ_2 = (0.5 + 0.25 − 0.75, −1 + 0.5 + 1) = (0, 0.5)
//	             θ⁺ = rule + drift_sum⁺/N = (0.75 + 0, 2.75 + 0.125) = (0.75, 2.875)
//	             global_update = (−0.25, 0.875)
func TestFedDCServer(t *testing.T) {
	sel := fl.Selection{Clients: []int{0, 2}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	deltas := [][]float32{{0.25, 0.5}, {-0.75, 1}}
	tests := []struct {
		name          string
		give          algorithm.FedDC
		giveState     fl.State
		wantGlobal    []float32
		wantUpdate    []float32
		wantDriftSum  []float32 // nil: the server keeps none
		wantInitNames []string
	}{
		{"selected", algorithm.FedDC{Lambda: 0.01, DriftMean: algorithm.DriftSelected},
			state("global_update", []float32{9, 9}),
			[]float32{0.75, 2.75}, []float32{-0.25, 0.75}, nil, []string{"global_update"}},
		{"all", algorithm.FedDC{Lambda: 0.01, DriftMean: algorithm.DriftAll},
			state("global_update", []float32{9, 9}, "drift_sum", []float32{0.5, -1}),
			[]float32{0.75, 2.875}, []float32{-0.25, 0.875}, []float32{0, 0.5}, []string{"drift_sum", "global_update"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s0, err := tt.give.Init(2)
			if err != nil {
				t.Fatal(err)
			}
			if got := s0.Names(); !slices.Equal(got, tt.wantInitNames) {
				t.Errorf("Init holds %v; want %v", got, tt.wantInitNames)
			}
			if got := tt.give.Sends(); !slices.Equal(got, []string{"global_update"}) {
				t.Errorf("Sends() = %v; want [global_update]", got)
			}
			r := algorithm.Server{Global: []float32{1, 2}, State: tt.giveState, Selection: sel, Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 4}
			got, s := serve(t, tt.give, r, deltas, nil)
			sameBits(t, "θ⁺", got, tt.wantGlobal)
			sameBits(t, "global_update", vector(t, s, "global_update", 2), tt.wantUpdate)
			sameBits(t, "drift_sum", s.Vectors["drift_sum"], tt.wantDriftSum)
		})
	}
}
