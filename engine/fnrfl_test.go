package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// fnrBase is NIID-Bench's setting in small: 6 clients, all trained every
// round, FedAvg weights |D_i|/Σ|D| (importance size, normalized), a public
// set of 20 per class held out of the synthetic train split.
const fnrBase = `
name: fnr
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 6, alpha: 0.5, public_per_class: 20}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 3
clients_per_round: 6
aggregator: {name: fedavg, normalize: true}
eval_every: 1
seeds: [4]
`

// TestFNRFLPaperIsFedAvgWithoutRefinement (specs' §7 item 11): with p = 0
// or E_re = 0, FNR-FL's models and rows are FedAvg's bit for bit (the
// points keep FedAvg's ID: the registry maps "fedavg" to FNR-FL), apart
// from the refine phase's own columns and traffic.
func TestFNRFLPaperIsFedAvgWithoutRefinement(t *testing.T) {
	_, _, want := runSpec(t, fnrBase, nil)
	for name, a := range map[string]algorithm.FNRFL{
		"p = 0":    {Variant: algorithm.FNRPaper, P: 0, Epochs: 5, Lambda: 1, Batch: 32},
		"E_re = 0": {Variant: algorithm.FNRPaper, P: 0.5, Epochs: 0, Lambda: 1, Batch: 32},
	} {
		reg := methods.New()
		reg.AddSampler("uniform", func(m int, o fl.Options) (fl.Planner, error) { return methods.Builtin().Sampler("uniform", m, o) })
		reg.AddRule("fedavg", aggregate.NewWeightedDelta)
		reg.AddAlgorithm("fedavg", func(fl.Options) (algorithm.Algorithm, error) { return a, nil })
		_, _, got := runSpec(t, fnrBase, reg)
		for i := range got.Rounds {
			r := &got.Rounds[i]
			if r.Round > 0 && (r.Refined == nil || *r.Refined != 0) {
				t.Errorf("%s round %d: refined %v; want 0", name, r.Round, r.Refined)
			}
			// Every client uploads its K norms and its accuracy.
			if r.Round > 0 && r.UpFloats-want.Rounds[i].UpFloats != 6*(10+1) {
				t.Errorf("%s round %d: %d more values up than FedAvg; want 6·(K+1) = 66", name, r.Round, r.UpFloats-want.Rounds[i].UpFloats)
			}
			r.Refined, r.RefineSamples, r.RefinePenalty, r.UpFloats = nil, nil, nil, want.Rounds[i].UpFloats
		}
		for i := range got.Clients {
			got.Clients[i].PublicAcc, got.Clients[i].Refined = nil, nil
		}
		for i := range got.Points {
			got.Points[i].Methods = want.Points[i].Methods
		}
		compare(t, name+" vs fedavg", got, want)
	}
}

// fnrRegistry is the built-in registry with "fnrfl" fixed to a: points of
// one spec keep their IDs (and so their streams) whatever a's options.
func fnrRegistry(a algorithm.FNRFL) *methods.Registry {
	reg := methods.New()
	reg.AddSampler("uniform", func(m int, o fl.Options) (fl.Planner, error) { return methods.Builtin().Sampler("uniform", m, o) })
	reg.AddRule("fedavg", aggregate.NewWeightedDelta)
	reg.AddAlgorithm("fnrfl", func(fl.Options) (algorithm.Algorithm, error) { return a, nil })
	return reg
}

// TestFNRFL: as published, λ changes no weight (item 10: λ ∈ {0, 0.5, 1,
// 100} give the same models; only the logged penalty scales with λ); the
// ⌊n·p⌋ clients with the lowest public accuracy are refined, and their
// refined models, not the uploaded ones, enter the average (item 12); the
// corrected variant's penalty moves the weights; the code variant runs;
// every variant is deterministic and survives crashes.
func TestFNRFL(t *testing.T) {
	spec := fnrBase + `checkpoint_every: 1
run: {keep_updates: true}
algorithm: {name: fnrfl, epochs: 2}
`
	paperOf := func(lambda float64) algorithm.FNRFL {
		return algorithm.FNRFL{Variant: algorithm.FNRPaper, P: 0.5, Epochs: 2, Lambda: lambda, Batch: 32}
	}
	e, plan, want := runSpec(t, spec, fnrRegistry(paperOf(1)))
	id := plan.Points[0].ID
	penalty := func(s snapshot) float64 {
		var p float64
		for _, r := range s.Rounds {
			if r.RefinePenalty != nil {
				p += *r.RefinePenalty
			}
		}
		return p
	}
	if penalty(want) == 0 {
		t.Error("the logged penalty is 0")
	}
	for _, l := range []float64{0, 0.5, 100} {
		_, _, got := runSpec(t, spec, fnrRegistry(paperOf(l)))
		if m := models(got, id); !equalStrings(m, models(want, id)) {
			t.Errorf("λ = %v: models %v; want λ = 1's %v", l, m, models(want, id))
		}
		if p := penalty(got); math.Abs(p-l*penalty(want)) > 1e-9*math.Abs(l*penalty(want)) {
			t.Errorf("λ = %v: logged penalty %v; want %v·(λ = 1's %v)", l, p, l, penalty(want))
		}
	}
	// Selection: 3 of 6 refined each round, the lowest public accuracies.
	for r := int32(1); r <= 3; r++ {
		var acc []float64
		var refined []bool
		for _, c := range want.Clients {
			if c.Round == r && c.PublicAcc != nil {
				acc, refined = append(acc, *c.PublicAcc), append(refined, *c.Refined)
			}
		}
		n, worst := 0, math.Inf(-1)
		for i, ok := range refined {
			if ok {
				n++
				worst = math.Max(worst, acc[i])
			}
		}
		for i, ok := range refined {
			if !ok && acc[i] < worst {
				t.Errorf("round %d: a client with public accuracy %v not refined, one with %v refined", r, acc[i], worst)
			}
		}
		if len(acc) != 6 || n != 3 {
			t.Errorf("round %d: %d scored, %d refined; want 6 and ⌊6·0.5⌋ = 3", r, len(acc), n)
		}
	}
	checkRefinedAverage(t, e, plan.Name, id)
	for _, v := range []string{algorithm.FNRCorrected, algorithm.FNRCode} {
		a := paperOf(1)
		a.Variant = v
		_, _, got := runSpec(t, spec, fnrRegistry(a))
		m := models(got, id)
		if m[len(m)-1] == models(want, id)[len(m)-1] {
			t.Errorf("variant %s ends with the paper's model; its penalty (corrected) or optimiser (code) should move it", v)
		}
	}
	grid := strings.Replace(spec, "algorithm: {name: fnrfl, epochs: 2}\n", `grid:
  algorithm:
    - {name: fnrfl, epochs: 2}
    - {name: fnrfl, epochs: 2, variant: code}
    - {name: fnrfl, epochs: 2, variant: corrected}
`, 1)
	_, gridPlan, gridWant := runSpec(t, grid, nil)
	checkDeterministic(t, grid, gridPlan, gridWant)
}

// checkRefinedAverage recomputes round 1 of a point from the kept files:
// θ¹ = θ⁰ + Σ_k ω_k Δ'_k with ω_k = n_k/Σn and Δ'_k the refined update of
// the refined clients, the uploaded one of the others.
func checkRefinedAverage(t *testing.T, e *Engine, sweepName, point string) {
	t.Helper()
	ctx := context.Background()
	env, err := e.env(ctx, steps.PointRef{Sweep: sweepName, Point: point})
	if err != nil {
		t.Fatal(err)
	}
	g0, err := e.loadGlobal(ctx, env, 0)
	if err != nil {
		t.Fatal(err)
	}
	var c store.Commit
	if err := e.Store.GetJSON(ctx, env.keys.Committed(1), &c); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, k := range c.Clients {
		total += env.pop.Sizes[k]
	}
	want := make([]float64, len(g0))
	for j, v := range g0 {
		want[j] = float64(v)
	}
	refined := 0
	for _, k := range c.Clients {
		u, err := e.loadUpdate(ctx, env, 1, k)
		if err != nil {
			t.Fatal(err)
		}
		d := u.delta
		if r, err := e.loadRefined(ctx, env, 1, k); err == nil {
			d = r
			refined++
		}
		w := float64(env.pop.Sizes[k]) / float64(total)
		for j, v := range d {
			want[j] += w * float64(v)
		}
	}
	g1, err := e.loadGlobal(ctx, env, 1)
	if err != nil {
		t.Fatal(err)
	}
	if refined != 3 {
		t.Fatalf("%d refined updates kept in round 1; want 3", refined)
	}
	for j, v := range g1 {
		if math.Abs(float64(v)-want[j]) > 1e-5 {
			t.Fatalf("θ¹[%d] = %v; the average of the refined and uploaded updates gives %v", j, v, want[j])
		}
	}
}

// TestPublicSet (item 13): the public set is drawn from the train split,
// class-balanced, held by no client and in no local test set (holdout test
// sets come from the clients' own data); without it an FNR-FL point is
// refused, naming the field.
func TestPublicSet(t *testing.T) {
	e := newEngine(t)
	for _, test := range []string{"split", "holdout"} {
		spec := strings.Replace(fnrBase, "public_per_class: 20}", "public_per_class: 20, test: "+test+"}", 1) + "algorithm: fnrfl\n"
		sw, err := sweep.Parse("t.yaml", []byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		sp, err := e.PointSplit(context.Background(), sw.Points[0])
		if err != nil {
			t.Fatal(err)
		}
		pub := sp.Part.Public
		per := make([]int, sp.Data.Classes)
		in := map[int]bool{}
		for _, i := range pub {
			per[sp.Data.Train.Y[i]]++
			in[i] = true
		}
		for j, n := range per {
			if n != 20 {
				t.Errorf("test %s: class %d has %d public samples; want 20", test, j, n)
			}
		}
		for k, idx := range sp.Part.Train {
			for _, i := range idx {
				if in[i] {
					t.Fatalf("test %s: public sample %d is in client %d's training data", test, i, k)
				}
			}
		}
		if sp.Part.TestFrom == "train" {
			for k, idx := range sp.Part.Test {
				for _, i := range idx {
					if in[i] {
						t.Fatalf("public sample %d is in client %d's holdout test set", i, k)
					}
				}
			}
		}
		n := len(pub)
		for _, idx := range sp.Part.Train {
			n += len(idx)
		}
		if test == "split" && n != len(sp.Data.Train.Y) {
			t.Errorf("public and clients hold %d of %d training samples; want all", n, len(sp.Data.Train.Y))
		}
	}
	bad := strings.Replace(fnrBase, ", public_per_class: 20", "", 1) + "algorithm: fnrfl\n"
	sw, err := sweep.Parse("t.yaml", []byte(bad))
	if err == nil {
		err = sw.Validate(e.Reg)
	}
	if err == nil || !strings.Contains(err.Error(), "partition.public_per_class") {
		t.Errorf("fnrfl without a public set: %v; want an error naming partition.public_per_class", err)
	}
	if _, err := sweep.Parse("t.yaml", []byte(bad+"grid: {algorithm: [{name: fnrfl, leak: true}]}\n")); err != nil {
		t.Errorf("fnrfl with leak needs no public set: %v", err)
	}
}
