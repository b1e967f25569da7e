package algorithm_test

import (
	"math"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestNormSteps checks a_k = [τ − ρ(1 − ρ^τ)/(1 − ρ)]/(1 − ρ)
// (specs/fnrfl.md §3) against values worked out by hand.
func TestNormSteps(t *testing.T) {
	tests := []struct {
		giveTau int
		giveRho float64
		want    float64
	}{
		{10, 0, 10}, // ρ = 0: a_k = τ
		{1, 0, 1},
		// (3 − 0.9·(1 − 0.729)/0.1)/0.1 = (3 − 2.439)/0.1 = 5.61; also
		// Σ_{s=1..3} (1 − ρ^s)/(1 − ρ) = 1 + 1.9 + 2.71 (RLU Table 1, SGDm ρ^(τ)).
		{3, 0.9, 5.61},
		// (2 − 0.5·0.75/0.5)/0.5 = (2 − 0.75)/0.5 = 2.5 = 1 + 1.5.
		{2, 0.5, 2.5},
		{1, 0.9, 1}, // one step: (1 − 0.9·0.1/0.1)/0.1 = 0.1/0.1 = 1
	}
	for _, tt := range tests {
		if got := algorithm.NormSteps(tt.giveTau, tt.giveRho); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("NormSteps(%d, %v) = %v; want %v", tt.giveTau, tt.giveRho, got, tt.want)
		}
	}
}

// TestFedNovaClient checks a client's upload: plain local SGD with
// momentum (the zero Objective), Δ = θ_k − θ^t, and a_k = NormSteps(K, ρ)
// in its scalars, ρ = train.momentum.
func TestFedNovaClient(t *testing.T) {
	hp := sgd()
	hp.Momentum = 0.9
	f := newFixture(t, hp)
	up := f.train(algorithm.FedNova{}, fl.State{}, fl.State{})
	w, res := f.reference(trainer.Objective{})
	sameBits(t, "θ_k", up.Weights, w)
	sameBits(t, "Δ", up.Delta, algorithm.Delta(w, f.global))
	// K = 5, ρ = 0.9: (5 − 0.9·(1 − 0.59049)/0.1)/0.1 = (5 − 3.68559)/0.1 = 13.1441.
	if got := up.Scalars[algorithm.FedNovaA]; math.Abs(got-13.1441) > 1e-12 || res.Steps != 5 {
		t.Errorf("a_k = %v after %d steps; want 13.1441 after 5", got, res.Steps)
	}
}

func fednovaServer(global []float32, sel fl.Selection, a []float64) algorithm.Server {
	sc := make([]map[string]float64, len(a))
	for i, v := range a {
		sc[i] = map[string]float64{algorithm.FedNovaA: v}
	}
	return algorithm.Server{Global: global, Selection: sel, Clients: summaries(sel, sc), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 10}
}

// TestFedNovaServer traces the server by hand: a = (2, 4), ω = (½, ½),
// rule θ + Σ ω Δ (η_g = 1). All values are dyadic, so the result is exact:
//
//	τ_eff = (½·2 + ½·4)/(½ + ½) = 3
//	θ = (1, 2), Δ_1 = (0.5, −1), Δ_2 = (1, 0.25)
//	θ⁺ = θ + ½·(3/2)·Δ_1 + ½·(3/4)·Δ_2
//	   = (1 + 0.375 + 0.375, 2 − 0.75 + 0.09375) = (1.75, 1.34375)
func TestFedNovaServer(t *testing.T) {
	sel := fl.Selection{Clients: []int{3, 7}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	got, s := serve(t, algorithm.FedNova{}, fednovaServer([]float32{1, 2}, sel, []float64{2, 4}), [][]float32{{0.5, -1}, {1, 0.25}}, nil)
	sameBits(t, "θ⁺", got, []float32{1.75, 1.34375})
	if !s.Empty() {
		t.Errorf("server state = %v; want none", s)
	}
}

// TestFedNovaEqualStepsIsRule checks that equal a_k give exactly the rule's
// result (FedAvg bit for bit, as fednova.go promises), on deltas that are
// not dyadic and weights that do not sum to 1.
func TestFedNovaEqualStepsIsRule(t *testing.T) {
	global := vec(31, 6, 1)
	deltas := [][]float32{vec(32, 6, 0.1), vec(33, 6, 0.1), vec(34, 6, 0.1)}
	sel := fl.Selection{Clients: []int{0, 4, 5}, Weights: []float64{0.3, 0.7, 1.1}, Draws: []int{1, 1, 1}}
	// a_k = NormSteps(5, 0.9) = 13.1441 for all three (TestFedNovaClient).
	r := fednovaServer(global, sel, []float64{13.1441, 13.1441, 13.1441})
	got, _ := serve(t, algorithm.FedNova{}, r, deltas, nil)

	agg, err := r.Rule.Begin(global, sel, r.Clients)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range sel.Clients {
		if err := agg.Add(k, deltas[i]); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]float32, len(global))
	if err := agg.Finish(want); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "θ⁺", got, want)
}

// TestFedNovaServerRejects checks that the server refuses summaries
// without a positive a_k and summaries that do not match the selection.
func TestFedNovaServerRejects(t *testing.T) {
	sel := fl.Selection{Clients: []int{1, 2}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	tests := []struct {
		name string
		give algorithm.Server
	}{
		{"zero a_k", fednovaServer([]float32{0}, sel, []float64{2, 0})},
		{"negative a_k", fednovaServer([]float32{0}, sel, []float64{-1, 2})},
		{"missing a_k", algorithm.Server{Global: []float32{0}, Selection: sel, Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 3}},
		{"too few summaries", algorithm.Server{Global: []float32{0}, Selection: sel, Clients: summaries(sel, nil)[:1], Rule: aggregate.WeightedDelta{EtaG: 1}, N: 3}},
	}
	for _, tt := range tests {
		_, err := algorithm.FedNova{}.Begin(tt.give)
		wantInvalid(t, tt.name, err)
	}
}

// TestFedNovaCheck checks that FedNova accepts heavy-ball SGD at a constant
// rate and rejects anything its a_k is not derived for, naming the field.
func TestFedNovaCheck(t *testing.T) {
	spec := trainer.Spec{Arch: trainer.ArchMLP}
	sgdm := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.1, Momentum: 0.9, BatchSize: 4, LocalSteps: 5}
	with := func(edit func(h *trainer.Hyper)) trainer.Hyper {
		h := sgdm
		edit(&h)
		return h
	}
	tests := []struct {
		name      string
		give      trainer.Hyper
		wantField string // "" means accepted
	}{
		{"sgd momentum", sgdm, ""},
		{"sgd constant", with(func(h *trainer.Hyper) { h.Schedule = trainer.ScheduleConstant }), ""},
		{"adam", with(func(h *trainer.Hyper) { h.Optimizer, h.Momentum = trainer.OptimizerAdam, 0 }), "train.optimizer"},
		{"adamw", with(func(h *trainer.Hyper) { h.Optimizer, h.Momentum = trainer.OptimizerAdamW, 0 }), "train.optimizer"},
		{"nesterov", with(func(h *trainer.Hyper) { h.Nesterov = true }), "train.nesterov"},
		{"step schedule", with(func(h *trainer.Hyper) { h.Schedule, h.StepSize, h.Gamma = trainer.ScheduleStep, 2, 0.5 }), "train.lr_schedule"},
		{"cosine schedule", with(func(h *trainer.Hyper) { h.Schedule = trainer.ScheduleCosine }), "train.lr_schedule"},
	}
	for _, tt := range tests {
		err := algorithm.FedNova{}.Check(spec, tt.give)
		if (err == nil) != (tt.wantField == "") {
			t.Errorf("%s: Check(%+v) = %v; want error %v", tt.name, tt.give, err, tt.wantField != "")
			continue
		}
		if err != nil {
			wantInvalid(t, tt.name, err, tt.wantField)
		}
	}
}
