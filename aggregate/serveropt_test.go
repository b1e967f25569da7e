package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
)

// trace runs opt for rounds whose pseudo-gradients on entry 0 are deltas
// (entry 1 is a BatchNorm statistic: not trainable), from θ^0 = [1, 5], and
// returns θ^t and the memory after each round.
func trace(t *testing.T, opt fl.ServerOptimizer, deltas []float32) ([][]float32, []fl.State) {
	t.Helper()
	st, err := opt.Init(2)
	if err != nil {
		t.Fatal(err)
	}
	theta := []float32{1, 5}
	var thetas [][]float32
	var states []fl.State
	for i, d := range deltas {
		proposed := []float32{theta[0] + d, theta[1] + float32(i+1)}
		next := make([]float32, 2)
		if st, err = opt.Step(fl.OptimizerStep{Global: theta, Proposed: proposed, State: st, Trainable: []bool{true, false}, Dst: next}); err != nil {
			t.Fatal(err)
		}
		if next[1] != proposed[1] {
			t.Errorf("round %d: the non-trainable entry is %v; want the proposed %v", i+1, next[1], proposed[1])
		}
		theta = next
		thetas = append(thetas, next)
		states = append(states, st)
	}
	return thetas, states
}

func near(t *testing.T, what string, got float64, want float64) {
	t.Helper()
	if math.Abs(got-want) > 2e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.9g; want %.9g", what, got, want)
	}
}

// TestAdaptiveKnownValues traces Reddi et al.'s Algorithm 2 by hand for
// three rounds with Δ_t = 2, −1, 0.1 on one entry, at the paper's β₁ = 0.9,
// β₂ = 0.99, τ = 10⁻³ and η = 0.1. FedYogi's sign takes both branches:
// v < Δ² in rounds 1 and 2, v > Δ² in round 3.
func TestAdaptiveKnownValues(t *testing.T) {
	const eta, tau = 0.1, 1e-3
	m := []float64{0.1 * 2, 0.9*0.2 + 0.1*-1, 0.9*0.08 + 0.1*0.1} // 0.2, 0.08, 0.082
	v0 := tau * tau
	vs := map[string][]float64{
		RuleAdam:    {0.99*v0 + 0.01*4, 0.99*(0.99*v0+0.01*4) + 0.01*1, 0.99*(0.99*(0.99*v0+0.01*4)+0.01*1) + 0.01*0.01},
		RuleAdagrad: {v0 + 4, v0 + 5, v0 + 5.01},
		RuleYogi:    {v0 + 0.01*4, v0 + 0.01*4 + 0.01*1, v0 + 0.01*4 + 0.01*1 - 0.01*0.01},
	}
	for rule, v := range vs {
		opt, err := newAdaptive(rule, fl.Options{"lr": eta})
		if err != nil {
			t.Fatal(err)
		}
		thetas, states := trace(t, opt, []float32{2, -1, 0.1})
		theta := 1.0
		for r := range 3 {
			theta += eta * m[r] / (math.Sqrt(v[r]) + tau)
			near(t, rule+" θ", float64(thetas[r][0]), theta)
			near(t, rule+" m", float64(states[r].Vectors["m"][0]), m[r])
			near(t, rule+" v", float64(states[r].Vectors["v"][0]), v[r])
			if states[r].Vectors["v"][1] != float32(v0) || states[r].Vectors["m"][1] != 0 {
				t.Errorf("%s round %d: the non-trainable entry's moments moved: m %v v %v", rule, r+1, states[r].Vectors["m"][1], states[r].Vectors["v"][1])
			}
		}
	}
}

// TestFedAvgMKnownValues: m_t = μm + Δ, θ += ηm with μ = 0.9, η = 0.5:
// θ = 1 → 2 → 2.4 → 2.81.
func TestFedAvgMKnownValues(t *testing.T) {
	opt, err := NewFedAvgM(fl.Options{"lr": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	thetas, states := trace(t, opt, []float32{2, -1, 0.1})
	for r, want := range []struct{ theta, m float64 }{{2, 2}, {2.4, 0.8}, {2.81, 0.82}} {
		near(t, "fedavgm θ", float64(thetas[r][0]), want.theta)
		near(t, "fedavgm m", float64(states[r].Vectors["m"][0]), want.m)
	}
}

// TestSGDIdentity: server SGD with η = 1 and no momentum takes the
// proposed model bit for bit and keeps no memory; with η = 0.5 it takes
// half the step.
func TestSGDIdentity(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	g, p := make([]float32, 1000), make([]float32, 1000)
	for j := range g {
		g[j] = float32(r.NormFloat64() * 1e3)
		p[j] = g[j] + float32(r.NormFloat64()*1e-4)
	}
	one, err := NewSGD(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := one.Init(len(g))
	if !st.Empty() {
		t.Fatalf("sgd at η = 1 keeps memory %v", st.Names())
	}
	dst := make([]float32, len(g))
	if st, err = one.Step(fl.OptimizerStep{Global: g, Proposed: p, State: st, Dst: dst}); err != nil || !st.Empty() {
		t.Fatal(st, err)
	}
	for j := range dst {
		if math.Float32bits(dst[j]) != math.Float32bits(p[j]) {
			t.Fatalf("entry %d: %v, want the proposed %v bit for bit", j, dst[j], p[j])
		}
	}
	half, _ := NewSGD(fl.Options{"lr": 0.5})
	if _, err := half.Step(fl.OptimizerStep{Global: []float32{1}, Proposed: []float32{3}, Dst: dst[:1]}); err != nil || dst[0] != 2 {
		t.Fatalf("η = 0.5: θ = %v (%v); want 2", dst[0], err)
	}
}

// TestServerOptimizerRefusals: bad options name the field; a blown-up
// step is a divergence; memory of another model is bad input.
func TestServerOptimizerRefusals(t *testing.T) {
	for _, c := range []struct {
		f    func(fl.Options) (fl.ServerOptimizer, error)
		opts fl.Options
		want string
	}{
		{NewFedAdam, nil, "server_optimizer.lr is required"},
		{NewFedAdam, fl.Options{"lr": 0.1, "beta1": 1.0}, "server_optimizer.beta1"},
		{NewFedYogi, fl.Options{"lr": 0.1, "beta2": -0.1}, "server_optimizer.beta2"},
		{NewFedAdagrad, fl.Options{"lr": 0.1, "beta2": 0.9}, "not an option of fedadagrad"},
		{NewFedAdam, fl.Options{"lr": 0.1, "tau": 0.0}, "server_optimizer.tau"},
		{NewFedAvgM, fl.Options{"lr": 1.0, "momentum": 1.0}, "server_optimizer.momentum"},
		{NewSGD, fl.Options{"lr": -1.0}, "server_optimizer.lr"},
		{NewSGD, fl.Options{"eta": 1.0}, "eta"},
	} {
		_, err := c.f(c.opts)
		if !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want an invalid-input error naming %q", c.opts, err, c.want)
		}
	}
	adam, _ := NewFedAdam(fl.Options{"lr": 1e39})
	st, _ := adam.Init(1)
	if _, err := adam.Step(fl.OptimizerStep{Global: []float32{0}, Proposed: []float32{1}, State: st, Dst: make([]float32, 1)}); !errors.Is(err, fl.ErrDiverged) {
		t.Errorf("a step past float32: %v; want fl.ErrDiverged", err)
	}
	if _, err := adam.Step(fl.OptimizerStep{Global: []float32{0}, Proposed: []float32{1e30}, State: st, Dst: make([]float32, 1)}); !errors.Is(err, fl.ErrDiverged) {
		t.Errorf("v_t past float32: %v; want fl.ErrDiverged", err)
	}
	if _, err := adam.Step(fl.OptimizerStep{Global: []float32{0, 0}, Proposed: []float32{1, 1}, State: st, Dst: make([]float32, 2)}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("memory of a 1-value model on a 2-value one: %v; want fl.ErrInvalid", err)
	}
}
