package engine

import (
	"context"
	"testing"

	"github.com/flsweep/flsweep/steps"
)

// TestRunRoundInOne runs every point's rounds as RunRound does, in batches,
// runs committed rounds again as a retried activity would, and checks that
// the rows and models are the in-process runner's; a round whose training
// needs two activities is refused with its fan-out.
func TestRunRoundInOne(t *testing.T) {
	_, want := runLocal(t, newEngine(t))
	ctx := context.Background()
	e := newEngine(t)
	plan := runPoints(t, e, func(ref steps.PointRef, prep steps.PrepareOutput) {
		if prep.ClientsPerRound != 4 {
			t.Fatalf("ClientsPerRound = %d, want the spec's 4", prep.ClientsPerRound)
		}
		round := func(r, perActivity int) steps.RoundInput {
			return steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: r, DataDigest: prep.DataDigest},
				Eval: steps.ShouldEval(r, prep.EvalEvery, prep.Rounds), ClientsPerActivity: perActivity,
				Phases: prep.Phases, Until: prep.Rounds}
		}
		out, err := e.RunRoundInOne(ctx, round(1, 2), nil)
		if err != nil || out.FanOut != 2 || len(out.Rounds) != 0 {
			t.Fatalf("4 clients in activities of 2: %+v, %v; want a fan-out of 2", out, err)
		}
		var sums []steps.RoundSummary
		var phases []string
		for r := 1; r <= prep.Rounds; {
			out, err := e.RunRoundInOne(ctx, round(r, 4), func(_ int, s string) { phases = append(phases, s) })
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range out.Rounds {
				if s.Round != r+i {
					t.Fatalf("batch from round %d: summary %d is round %d", r, i, s.Round)
				}
				if (s.Eval != nil) != steps.ShouldEval(s.Round, prep.EvalEvery, prep.Rounds) {
					t.Fatalf("round %d evaluated: %v", s.Round, s.Eval != nil)
				}
			}
			sums = append(sums, out.Rounds...)
			r += len(out.Rounds)
		}
		if len(phases) == 0 {
			t.Error("no phase reported")
		}
		// A retry after the commits: the committed rounds are not run
		// again (their checkpoints of the round before may be gone).
		again, err := e.RunRoundInOne(ctx, round(3, 4), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Rounds) == 0 || again.Rounds[0].ModelSHA256 != sums[2].ModelSHA256 || again.Rounds[0].Round != 3 {
			t.Fatalf("round 3 again: %+v, want %+v", again.Rounds, sums[2])
		}
	})
	compare(t, "RunRound vs in-process", take(t, e, plan), want)
}

// runPoints plans the test spec on e and, for each point, prepares it,
// calls rounds to run its rounds, and finishes it as done.
func runPoints(t *testing.T, e *Engine, rounds func(steps.PointRef, steps.PrepareOutput)) steps.PlanSweepOutput {
	t.Helper()
	ctx := context.Background()
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan.Points {
		ref := steps.PointRef{Sweep: plan.Name, Point: p.ID}
		prep, err := e.PreparePoint(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		rounds(ref, prep)
		if _, err := e.FinishPoint(ctx, steps.FinishInput{PointRef: ref, Status: steps.StatusDone}); err != nil {
			t.Fatal(err)
		}
	}
	return plan
}
