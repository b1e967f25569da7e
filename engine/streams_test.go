package engine

import (
	"context"
	"math"
	"slices"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// streamsSpec compares methods that must compute the same thing when they
// see the same draws: FedAvg, FedProx with μ = 0 (FedAvg's local training
// exactly) and FedEBA with τ = 10⁹ (p = softmax(F/τ) is 1/m to within
// 1e−9, FedAvg's ω_k = 1/m under importance: uniform). Every round's model
// is kept.
const streamsSpec = `
name: crn
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 5
clients_per_round: 4
importance: uniform
eval_every: 5
checkpoint_every: 1
seeds: [3]
grid:
  algorithm: [fedavg, {name: fedprox, mu: 0}, {name: fedeba, tau: 1000000000}]
`

// globals returns a point's model after every round.
func globals(t *testing.T, e *Engine, sweepName, point string, rounds int) [][]float32 {
	t.Helper()
	env, err := e.env(context.Background(), steps.PointRef{Sweep: sweepName, Point: point})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for r := 1; r <= rounds; r++ {
		w, err := e.loadGlobal(context.Background(), env, r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	return out
}

// TestCommonRandomNumbers: with the streams every new sweep has (common),
// FedProx μ = 0 equals FedAvg bit for bit in every round and FedEBA at
// τ = 10⁹ equals it to float tolerance, because they sample the same
// clients and train them on the same minibatches; with streams: point
// (keyed by the point, as before the option) they do not, so the test can
// fail.
func TestCommonRandomNumbers(t *testing.T) {
	for _, tt := range []struct {
		streams string
		same    bool
	}{{"", true}, {"streams: point\n", false}} {
		e, plan, snap := runSpec(t, tt.streams+streamsSpec, nil)
		avg := pointByLabel(t, plan, "algorithm=fedavg ")
		prox := pointByLabel(t, plan, "mu=0")
		eba := pointByLabel(t, plan, "fedeba")
		sel := func(p string) [][]int {
			var out [][]int
			for _, c := range snap.Clients {
				if c.Point == p && c.Selected {
					for len(out) < int(c.Round) {
						out = append(out, nil)
					}
					out[c.Round-1] = append(out[c.Round-1], int(c.Client))
				}
			}
			return out
		}
		if got := slices.EqualFunc(sel(avg), sel(eba), slices.Equal[[]int]); got != tt.same {
			t.Errorf("%q: fedavg and fedeba selected the same clients: %v; want %v (%v, %v)", tt.streams, got, tt.same, sel(avg), sel(eba))
		}
		if got := slices.Equal(models(snap, avg), models(snap, prox)); got != tt.same {
			t.Errorf("%q: fedprox μ = 0 is fedavg bit for bit: %v; want %v", tt.streams, got, tt.same)
		}
		if !tt.same {
			continue
		}
		wa, we := globals(t, e, plan.Name, avg, 5), globals(t, e, plan.Name, eba, 5)
		for r := range wa {
			worst := 0.0
			for j := range wa[r] {
				worst = math.Max(worst, math.Abs(float64(wa[r][j])-float64(we[r][j])))
			}
			// 1e−5: float32 weights of size ~1 after a few rounds, summed in
			// another order and with weights 1/m·(1 ± 1e−9).
			if worst > 1e-5 {
				t.Errorf("round %d: fedeba τ = 10⁹ differs from fedavg by %g; want ≤ 1e-5", r+1, worst)
			}
		}
	}
}

// TestLegacyStreamsReplan: a sweep stored by a build before the streams
// option (its points keyed by the point) is re-planned, from the same spec,
// as it was: the same point IDs, and a resumed run computes the rounds the
// old build computed.
func TestLegacyStreamsReplan(t *testing.T) {
	ctx := context.Background()
	spec := []byte(streamsSpec)
	// What the old build computed: the spec with streams: point, under the
	// IDs the old build gave it (ParseLegacyStreams).
	old := New(store.New(memblob.OpenBucket(nil)), &Options{Workers: 2})
	in := steps.PlanSweepInput{File: "t.yaml", Spec: append([]byte("streams: point\n"), spec...)}
	if _, err := old.RunSweep(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	oldPlan, err := old.PlanSweep(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := take(t, old, oldPlan)

	// A bucket holding the old sweep planned but not run: re-planned from
	// the spec without streams, it keeps the old points and computes their
	// rows.
	e := New(store.New(memblob.OpenBucket(nil)), &Options{Workers: 2})
	if _, err := e.PlanSweep(ctx, in); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Hash != oldPlan.Hash {
		t.Fatalf("re-planned hash %s; want the stored sweep's %s", plan.Hash, oldPlan.Hash)
	}
	if _, err := e.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: spec}, nil); err != nil {
		t.Fatal(err)
	}
	got := take(t, e, plan)
	for i := range want.Results {
		if got.Results[i].ModelSHA256 != want.Results[i].ModelSHA256 {
			t.Errorf("point %s: model %s; want the old build's %s", plan.Points[i].Label, got.Results[i].ModelSHA256, want.Results[i].ModelSHA256)
		}
	}
	// A new sweep of the same spec has common streams and other IDs.
	fresh := New(store.New(memblob.OpenBucket(nil)), &Options{Workers: 2})
	np, err := fresh.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if np.Hash == oldPlan.Hash {
		t.Error("a new sweep of the spec got the legacy points; want common streams")
	}
}
