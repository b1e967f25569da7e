package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// fedebaSpec runs the FedEBA family on the synthetic dataset: FedEBA,
// FedEBA+ with θ = 0 (gradient alignment every round, an extra round trip)
// and θ = 2° (both branches: the synthetic clients' losses are within a few degrees of equal), and Prac-FedEBA+.
const fedebaSpec = `
name: eba
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.3}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 6
clients_per_round: 4
eval_every: 2
checkpoint_every: 3
seeds: [3]
grid:
  algorithm:
    - {name: fedeba, tau: 0.1}
    - fedeba+
    - {name: fedeba+, theta: 2, alpha: 0.5}
    - {name: prac-fedeba+, theta: 0.5}
`

// TestFedEBADeterministic: the FedEBA family gives bit-identical models
// and rows run twice, one client per activity, and crashed in training, in
// a query, after aggregating and after committing, then resumed (FedEBA+
// has the extra round trip: its loss and gradient queries and the
// broadcast).
func TestFedEBADeterministic(t *testing.T) {
	_, plan, want := runSpec(t, fedebaSpec, nil)
	checkDeterministic(t, fedebaSpec, plan, want)

	// What each round recorded: p = softmax(F(x_{t,K})/τ) over the
	// selected clients' losses after training, and (FedEBA+) φ_t from
	// their losses before training.
	aligned := map[string]int{}
	for _, p := range plan.Points {
		plus, theta := !strings.Contains(p.Label, "algorithm=fedeba("), 0.0
		switch {
		case strings.Contains(p.Label, "theta=2"):
			theta = 2
		case strings.Contains(p.Label, "theta=0.5"):
			theta = 0.5
		}
		for _, r := range want.Rounds {
			if r.Point != p.ID || r.Round == 0 {
				continue
			}
			var after, before, w []float64
			for _, c := range want.Clients {
				if c.Point == p.ID && c.Round == r.Round && c.Selected {
					if c.AggWeight == nil || c.TrainLossAfter == nil || c.TrainLossBefore == nil {
						t.Fatalf("%s round %d client %d: agg_weight or losses missing", p.Label, r.Round, c.Client)
					}
					after, before, w = append(after, *c.TrainLossAfter), append(before, *c.TrainLossBefore), append(w, *c.AggWeight)
				}
			}
			p0 := algorithm.Softmax(after, 0.1, nil)
			h := 0.0
			for i := range p0 {
				if w[i] != p0[i] {
					t.Fatalf("%s round %d: agg_weight %v; want softmax(loss after/τ) %v", p.Label, r.Round, w, p0)
				}
				h -= p0[i] * math.Log(p0[i])
			}
			if r.AggEntropy == nil || math.Abs(*r.AggEntropy-h) > 1e-12 || !(h < math.Log(float64(len(w)))) {
				t.Errorf("%s round %d: agg_entropy %v; want %v < log n", p.Label, r.Round, r.AggEntropy, h)
			}
			if !plus {
				if r.FairAngle != nil || r.QuerySamples != 0 {
					t.Errorf("%s round %d: FedEBA recorded an angle or asked its clients", p.Label, r.Round)
				}
				continue
			}
			phi := algorithm.FairAngle(before)
			if r.FairAngle == nil || *r.FairAngle != phi || *r.Aligned != (phi > theta) {
				t.Errorf("%s round %d: fair_angle %v aligned %v; want %v, %v", p.Label, r.Round, r.FairAngle, r.Aligned, phi, phi > theta)
			}
			if *r.Aligned {
				aligned[strings.Fields(p.Label)[0]]++
			}
		}
	}
	if aligned["algorithm=fedeba+"] != 6 {
		t.Errorf("FedEBA+ with θ = 0 aligned %d of 6 rounds", aligned["algorithm=fedeba+"])
	}
	if n := aligned["algorithm=fedeba+(alpha=0.5,theta=2)"]; n == 6 || n == 0 {
		t.Errorf("FedEBA+ with θ = 2° aligned %d of 6 rounds; the test wants both branches", n)
	}
	if n := aligned["algorithm=prac-fedeba+(theta=0.5)"]; n == 0 {
		t.Errorf("Prac-FedEBA+ with θ = 0.5° never aligned")
	}
}

// TestFedEBACommunication: per selected client, FedEBA+'s aligned rounds
// cost one loss query and one gradient query (two extra round trips, a
// gradient and the loss uploaded twice, θ^t for each answer) and g̃ sent
// with training; model-aligned rounds the loss query and the first step
// uploaded; Prac-FedEBA+ and FedEBA exactly FedAvg's traffic.
func TestFedEBACommunication(t *testing.T) {
	_, plan, s := runSpec(t, fedebaSpec, nil)
	var fedavg store.RoundRow
	for _, p := range plan.Points {
		for _, r := range s.Rounds {
			if r.Point != p.ID || r.Round == 0 {
				continue
			}
			m, n := int64(r.Clients), int64(0)
			for _, pt := range s.Points {
				if pt.Point == p.ID {
					n = pt.NumParams
				}
			}
			fedavg = store.RoundRow{RoundTrips: 1, DownFloats: m * n, UpFloats: m * n}
			want := fedavg
			switch {
			case strings.Contains(p.Label, "algorithm=fedeba(") || strings.Contains(p.Label, "prac-fedeba+"):
			case *r.Aligned:
				want.RoundTrips += 2
				want.DownFloats += m * n     // g̃ (θ^t reaches each client once)
				want.UpFloats += m + m*(n+1) // the losses, then gradient and loss
			default:
				want.RoundTrips++
				want.UpFloats += m + m*n // the losses, then the first steps
			}
			if r.RoundTrips != want.RoundTrips || r.DownFloats != want.DownFloats || r.UpFloats != want.UpFloats {
				t.Errorf("%s round %d: trips %d down %d up %d; want %d, %d, %d", p.Label, r.Round,
					r.RoundTrips, r.DownFloats, r.UpFloats, want.RoundTrips, want.DownFloats, want.UpFloats)
			}
		}
	}
}

// TestFedEBALimits: FedEBA+ with α = 0 is FedEBA bit for bit (no angle,
// no alignment, nothing extra uploaded), and FedEBA with τ → ∞ is FedAvg
// with uniform weights to 1e-6 per parameter. The points keep FedEBA's
// and FedAvg's IDs (and so their streams): the registry maps the name to
// the other algorithm.
func TestFedEBALimits(t *testing.T) {
	const spec = `
name: lim
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.3}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
importance: uniform
rounds: 4
clients_per_round: 4
eval_every: 2
seeds: [3]
grid:
  algorithm: [fedavg, fedeba]
`
	_, plan, want := runSpec(t, spec, nil)
	reg := func(name string, f methods.AlgorithmFactory) *methods.Registry {
		r := methods.New()
		r.AddSampler("uniform", func(m int, o fl.Options) (fl.Planner, error) { return methods.Builtin().Sampler("uniform", m, o) })
		r.AddRule("fedavg", aggregate.NewWeightedDelta)
		for n, b := range map[string]methods.AlgorithmFactory{"fedavg": algorithm.NewFedAvg, "fedeba": algorithm.NewFedEBA} {
			if n != name {
				r.AddAlgorithm(n, b)
			}
		}
		r.AddAlgorithm(name, f)
		return r
	}
	_, _, plus := runSpec(t, spec, reg("fedeba", func(fl.Options) (algorithm.Algorithm, error) {
		return algorithm.FedEBAPlus{EBA: algorithm.EBA{Tau: 0.1}, Alpha: 0, ModelAlignScale: algorithm.AlignScalePaper}, nil
	}))
	eba := pointByLabel(t, plan, "fedeba")
	if got, w := models(plus, eba), models(want, eba); len(got) == 0 || !equalStrings(got, w) {
		t.Errorf("FedEBA+ with α = 0 gives models %v; FedEBA %v", got, w)
	}
	e, _, hot := runSpec(t, spec, reg("fedavg", func(fl.Options) (algorithm.Algorithm, error) {
		return algorithm.FedEBA{EBA: algorithm.EBA{Tau: 1e9}}, nil
	}))
	ew, _, _ := runSpec(t, spec, nil)
	fedavg := pointByLabel(t, plan, "fedavg")
	a, b := finalModel(t, e, plan.Name, fedavg, 4), finalModel(t, ew, plan.Name, fedavg, 4)
	for j := range a {
		if math.Abs(float64(a[j])-float64(b[j])) > 1e-6 {
			t.Fatalf("FedEBA with τ = 1e9 differs from FedAvg at parameter %d: %v vs %v", j, a[j], b[j])
		}
	}
	if equalStrings(models(hot, fedavg), models(want, eba)) {
		t.Error("FedEBA at τ = 0.1 ends with FedAvg's models; the test is vacuous")
	}
}

// finalModel returns a point's model after round r.
func finalModel(t *testing.T, e *Engine, sweepName, point string, r int) []float32 {
	t.Helper()
	env, err := e.env(t.Context(), steps.PointRef{Sweep: sweepName, Point: point})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.loadGlobal(t.Context(), env, r)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
