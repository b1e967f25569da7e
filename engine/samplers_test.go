package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// everySampler runs every built-in sampler on one tiny federation, past
// every warm-up: HiCS-FL's ⌈10/3⌉ = 4 rounds, FedCor's shortened one; and
// the variants that keep state of their own (DivFL refreshing the selected
// clients' gradients only, from per-client memory).
const everySampler = `
name: every
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 7
clients_per_round: 3
importance: uniform
eval_every: 7
checkpoint_every: 2
seeds: [1]
grid:
  sampler:
    - uniform
    - md
    - binomial
    - poisson
    - clustered
    - random
    - {name: pow-d, d: 6}
    - divfl
    - {name: divfl, refresh: selected}
    - {name: fedcor, warmup: 2, interval: 2, warmup_epochs: 50, epochs: 20}
    - hics
    - {name: clustered-similarity, distance: l1}
`

// TestEverySamplerResumes: for every built-in sampler (the spec must name
// them all), a point crashed in round 5, in one of its phases, and resumed
// selects the same clients with the same weights and ends with the same
// model and rows as an uninterrupted run.
func TestEverySamplerResumes(t *testing.T) {
	_, plan, want := runSpec(t, everySampler, nil)
	var ran []string
	for _, p := range want.Points {
		ran = append(ran, p.Sampler)
	}
	slices.Sort(ran)
	if all := methods.Builtin().Samplers(); !slices.Equal(slices.Compact(ran), all) {
		t.Fatalf("the spec runs samplers %v; add the missing ones of %v", ran, all)
	}
	e := newEngine(t)
	ctx := context.Background()
	if _, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(everySampler)}); err != nil {
		t.Fatal(err)
	}
	// Samplers that ask their clients crash in the query, the others in
	// one of the other phases, in turn.
	asks := map[string]bool{"pow-d": true, "divfl": true, "fedcor": true}
	crashes := []string{steps.SelectClients.Name, steps.TrainClients.Name, steps.Aggregate.Name, steps.CommitRound.Name}
	sk, _ := store.SweepKeys(plan.Name)
	for i, p := range want.Points {
		crash := crashes[i%len(crashes)]
		if asks[p.Sampler] {
			crash = steps.QueryClients.Name
		}
		runSteps(t, e, steps.PointRef{Sweep: plan.Name, Point: p.Point}, 5, crash)
		pk, _ := sk.Point(p.Point)
		if ok, err := e.Store.Exists(ctx, pk.Committed(7)); err != nil || ok {
			t.Fatalf("%s: did not crash in %s of round 5 (round 7 committed: %v, %v)", p.Sampler, crash, ok, err)
		}
	}
	restarted := restartedWorker(e)
	if _, err := restarted.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(everySampler)}, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, "crashed in round 5 and resumed", take(t, restarted, plan), want)
}
