package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// fairServerSpec runs the fairness baselines whose servers reweigh clients (q-FFL,
// TERM, AFL with both reports, FedMGDA+) on the synthetic dataset: 5 points,
// 6 rounds, 12 clients, 4 per round. Client losses are off, so only the
// algorithms that need them (LossUser) measure them.
const fairServerSpec = `
name: fair
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 6
clients_per_round: 4
eval_every: 2
checkpoint_every: 3
seeds: [3]
metrics: {client_losses: false}
grid:
  algorithm:
    - qffl
    - {name: term, t: 1}
    - afl
    - {name: afl, report: last}
    - fedmgda+
`

var (
	fairOnce sync.Once
	fairRun  struct {
		e    *Engine
		plan steps.PlanSweepOutput
		snap snapshot
	}
)

// fairSnapshot runs fairServerSpec once for the tests that read it.
func fairSnapshot(t *testing.T) (*Engine, steps.PlanSweepOutput, snapshot) {
	t.Helper()
	fairOnce.Do(func() {
		fairRun.e, fairRun.plan, fairRun.snap = runSpec(t, fairServerSpec, nil)
	})
	if fairRun.e == nil {
		t.Fatal("the fairness sweep failed in an earlier test")
	}
	return fairRun.e, fairRun.plan, fairRun.snap
}

// algorithmOf returns the algorithm part of a point's label
// ("algorithm=afl(report=last)").
func algorithmOf(label string) string { return strings.Fields(label)[0] }

// fairPoint returns the ID of the point whose algorithm is exactly label.
func fairPoint(t *testing.T, plan steps.PlanSweepOutput, label string) string {
	t.Helper()
	for _, p := range plan.Points {
		if algorithmOf(p.Label) == label {
			return p.ID
		}
	}
	var labels []string
	for _, p := range plan.Points {
		labels = append(labels, p.Label)
	}
	t.Fatalf("no point labelled %q (labels: %q)", label, labels)
	return ""
}

// TestFairServerDeterministic: the four baselines give bit-identical models
// and rows run twice, run step by step one client per activity, and crashed
// mid-round and resumed (AFL's λ and average, kept in its server state,
// included).
func TestFairServerDeterministic(t *testing.T) {
	_, plan, want := fairSnapshot(t)
	if len(plan.Points) != 5 {
		t.Fatalf("%d points; want 5", len(plan.Points))
	}
	checkDeterministic(t, fairServerSpec, plan, want)
}

// TestFairServerRows: TERM, AFL and FedMGDA+ record each trained client's
// aggregation weight, summing to 1 per round, and the weights' entropy;
// q-FFL (whose weights do not sum to 1) records none. The LossUsers record
// F_k(θ^t) with metrics.client_losses off; FedMGDA+, which needs no loss,
// does not; and none measures F_k(θ_k) after training, which none reads.
func TestFairServerRows(t *testing.T) {
	_, plan, s := fairSnapshot(t)
	weighted := map[string]bool{}
	losses := map[string]bool{}
	for _, p := range plan.Points {
		weighted[p.ID] = algorithmOf(p.Label) != "algorithm=qffl"
		losses[p.ID] = algorithmOf(p.Label) != "algorithm=fedmgda+"
	}
	sums := map[string]float64{}
	for _, c := range s.Clients {
		if !c.Selected {
			continue
		}
		key := fmt.Sprintf("%s/%d", c.Point, c.Round)
		if (c.AggWeight != nil) != weighted[c.Point] {
			t.Errorf("point %s round %d client %d: agg_weight %v; want one: %v", c.Point, c.Round, c.Client, c.AggWeight, weighted[c.Point])
		}
		if c.AggWeight != nil {
			sums[key] += *c.AggWeight
		}
		if (c.TrainLossBefore != nil) != losses[c.Point] {
			t.Errorf("point %s round %d client %d: train_loss_before %v; want one: %v", c.Point, c.Round, c.Client, c.TrainLossBefore, losses[c.Point])
		}
		if c.TrainLossAfter != nil {
			t.Errorf("point %s round %d client %d: train_loss_after %v; want none (no server here reads F_k(θ_k), and client_losses is off)", c.Point, c.Round, c.Client, *c.TrainLossAfter)
		}
	}
	rounds := 0
	for _, r := range s.Rounds {
		if r.Round == 0 {
			continue
		}
		if (r.AggEntropy != nil) != weighted[r.Point] {
			t.Errorf("point %s round %d: agg_entropy %v; want one: %v", r.Point, r.Round, r.AggEntropy, weighted[r.Point])
		}
		if !weighted[r.Point] {
			continue
		}
		rounds++
		if sum := sums[fmt.Sprintf("%s/%d", r.Point, r.Round)]; math.Abs(sum-1) > 1e-9 {
			t.Errorf("point %s round %d: agg_weight sums to %v; want 1", r.Point, r.Round, sum)
		}
	}
	if rounds != 4*6 {
		t.Errorf("%d rounds with weights; want 24 (4 points, 6 rounds)", rounds)
	}
}

// TestAFLEvaluatesAverage: an AFL point's recorded test loss is that of the
// running average in its server state, not of the iterate; with report
// last it is the iterate's.
func TestAFLEvaluatesAverage(t *testing.T) {
	e, plan, s := fairSnapshot(t)
	ctx := context.Background()
	const round = 6 // the last round: its model and state are kept
	for _, tt := range []struct {
		label   string
		average bool
	}{{"algorithm=afl", true}, {"algorithm=afl(report=last)", false}} {
		id := fairPoint(t, plan, tt.label)
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: id})
		if err != nil {
			t.Fatal(err)
		}
		iterate, err := e.loadGlobal(ctx, env, round)
		if err != nil {
			t.Fatal(err)
		}
		st, err := e.loadFullState(ctx, env, round)
		if err != nil {
			t.Fatal(err)
		}
		avg, hasAvg := st.Algorithm.Vectors["average"]
		if hasAvg != tt.average {
			t.Fatalf("%s: state holds an average: %v; want %v", tt.label, hasAvg, tt.average)
		}
		var row *store.RoundRow
		for i := range s.Rounds {
			if s.Rounds[i].Point == id && s.Rounds[i].Round == round {
				row = &s.Rounds[i]
			}
		}
		if row == nil || row.TestLoss == nil {
			t.Fatalf("%s: no evaluated row for round %d", tt.label, round)
		}
		it, _, err := e.evaluate(ctx, env, iterate)
		if err != nil {
			t.Fatal(err)
		}
		if !tt.average {
			if it.TestLoss != *row.TestLoss {
				t.Errorf("%s: recorded test loss %v; want the iterate's %v", tt.label, *row.TestLoss, it.TestLoss)
			}
			continue
		}
		av, _, err := e.evaluate(ctx, env, avg)
		if err != nil {
			t.Fatal(err)
		}
		if av.TestLoss != *row.TestLoss || av.TestLoss == it.TestLoss {
			t.Errorf("%s: recorded test loss %v; want the average's %v, not the iterate's %v", tt.label, *row.TestLoss, av.TestLoss, it.TestLoss)
		}
	}
}
