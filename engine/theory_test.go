package engine

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/sampling"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// emptySpec samples 1 of 12 clients a round with binomial and poisson
// sampling, so about a third of the rounds select nobody ((11/12)^12 = 0.35
// for binomial); feddyn and scaffold have server state, and feddyn's server
// step would move θ even without clients. Every checkpoint is kept.
const emptySpec = `
name: empty
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 8
clients_per_round: 1
eval_every: 1
checkpoint_every: 1
seeds: [3]
grid:
  algorithm: [fedavg, {name: feddyn, alpha: 0.1}, scaffold]
  sampler: [binomial, poisson]
`

// TestEmptyRoundIsNoOp: a round whose sampler selects nobody keeps θ and the
// server state (sampler, algorithm, client versions) exactly, and still
// writes its rows (specs/sampling-theory.md §4.8); such runs are as
// deterministic as any: straight, one client per activity and crashed and
// resumed give the same rows.
func TestEmptyRoundIsNoOp(t *testing.T) {
	e, plan, snap := runSpec(t, emptySpec, nil)
	ctx := context.Background()
	empty := 0
	for _, p := range plan.Points {
		var rows []store.RoundRow
		for _, r := range snap.Rounds {
			if r.Point == p.ID {
				rows = append(rows, r)
			}
		}
		if len(rows) != 9 {
			t.Fatalf("point %s: %d rounds rows; want 9 (rounds 0..8)", p.Label, len(rows))
		}
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(rows); i++ {
			r := rows[i]
			if r.Clients != 0 {
				continue
			}
			empty++
			if r.ModelSHA256 != rows[i-1].ModelSHA256 {
				t.Errorf("%s round %d selected nobody but its model %.12s is not round %d's %.12s", p.Label, r.Round, r.ModelSHA256, r.Round-1, rows[i-1].ModelSHA256)
			}
			if r.WeightSum != 0 || r.Draws != 0 || r.BatchLoss != nil || r.TrainSamples != 0 || r.UpFloats != 0 || !r.Evaluated || r.GlobalTrainLoss == nil {
				t.Errorf("%s round %d selected nobody: row %+v; want no training and an evaluation", p.Label, r.Round, r)
			}
			if *r.GlobalTrainLoss != *rows[i-1].GlobalTrainLoss {
				t.Errorf("%s round %d: global train loss %v; want round %d's %v (same model)", p.Label, r.Round, *r.GlobalTrainLoss, r.Round-1, *rows[i-1].GlobalTrainLoss)
			}
			before, err := e.loadFullState(ctx, env, int(r.Round)-1)
			if err != nil {
				t.Fatal(err)
			}
			after, err := e.loadFullState(ctx, env, int(r.Round))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Errorf("%s round %d selected nobody but the server state changed:\n before %+v\n after  %+v", p.Label, r.Round, before, after)
			}
		}
	}
	t.Logf("%d empty rounds", empty)
	if empty < 3 {
		t.Fatalf("%d empty rounds over %d points; the test needs some (change the seed or rounds)", empty, len(plan.Points))
	}
	crashAndResume(t, emptySpec, snap, nil)
}

// theorySpec runs every built-in sampler on unbalanced clients for one round.
const theorySpec = `
name: closed
dataset: {name: synthetic}
partition: {scheme: unbalanced, clients: 6, sizes: [20, 20, 40, 40, 80, 100]}
model: {arch: mlp, hidden: [8]}
train: {lr: 0.1, batch_size: 16, local_steps: 2}
rounds: 1
clients_per_round: 2
seeds: [1]
grid:
  sampler: [uniform, md, binomial, poisson, clustered, random, pow-d]
`

// TestPointsClosedForms: the points table records each sampler's closed
// forms for the point's importances (sampling_sigma, _alpha, _var_sum,
// _gamma, _expected_clients), and null for samplers without them.
func TestPointsClosedForms(t *testing.T) {
	_, _, snap := runSpec(t, theorySpec, nil)
	if len(snap.Points) != 7 {
		t.Fatalf("%d points rows; want 7", len(snap.Points))
	}
	reg := methods.Builtin()
	for _, row := range snap.Points {
		var p []float64
		for _, pr := range snap.Partitions {
			if pr.Point == row.Point {
				p = append(p, pr.Importance)
			}
		}
		cols := []*float64{row.SamplingSigma, row.SamplingAlpha, row.SamplingVarSum, row.SamplingGamma, row.SamplingExpectedClients}
		pl, err := reg.Sampler(row.Sampler, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := fl.Unplanned(pl)
		cf, ok := s.(sampling.ClosedForm)
		if !ok {
			for i, c := range cols {
				if c != nil {
					t.Errorf("%s: column %d = %v; want null (no closed form)", row.Sampler, i, *c)
				}
			}
			continue
		}
		want, err := cf.Closed(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range []float64{want.Sigma, want.Alpha, want.VarSum, want.Gamma, want.MeanN} {
			if cols[i] == nil || math.Abs(*cols[i]-w) > 1e-12 {
				t.Errorf("%s: column %d = %v; want %v", row.Sampler, i, cols[i], w)
			}
		}
	}
}
