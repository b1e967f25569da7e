package engine

import (
	"context"
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// Progress reports a point's progress in the in-process runner.
type Progress struct {
	Point   steps.PointInfo
	Round   int
	Rounds  int
	TestAcc float64 // latest evaluation
	Done    bool
	Status  string
}

// RunSweep plans a sweep and runs its points one after another in this
// process, without Temporal: the same steps as the orchestrated path, in a
// plain loop. Points already done are skipped; a point interrupted earlier
// resumes from its highest committed round.
func (e *Engine) RunSweep(ctx context.Context, in steps.PlanSweepInput, progress func(Progress)) ([]steps.PointResult, error) {
	plan, err := e.PlanSweep(ctx, in)
	if err != nil {
		return nil, err
	}
	var results []steps.PointResult
	for _, p := range plan.Points {
		res, err := e.RunPoint(ctx, steps.PointRef{Sweep: plan.Name, Point: p.ID}, plan.KeepUpdates, func(pr Progress) {
			if progress != nil {
				pr.Point = p
				progress(pr)
			}
		})
		if err != nil {
			return results, fmt.Errorf("point %s (%s): %w", p.ID, p.Label, err)
		}
		results = append(results, res)
	}
	return results, nil
}

// RunPoint runs one point to its end in this process.
func (e *Engine) RunPoint(ctx context.Context, ref steps.PointRef, keepUpdates bool, progress func(Progress)) (steps.PointResult, error) {
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil {
		return steps.PointResult{}, err
	}
	report := func(r int, acc float64, done bool, status string) {
		if progress != nil {
			progress(Progress{Round: r, Rounds: prep.Rounds, TestAcc: acc, Done: done, Status: status})
		}
	}
	if prep.Done {
		report(prep.LastCommitted, prep.TestAcc, true, prep.Status)
		return e.FinishPoint(ctx, steps.FinishInput{PointRef: ref, Status: prep.Status, KeepUpdates: keepUpdates})
	}
	acc := prep.TestAcc
	report(prep.LastCommitted, acc, false, steps.StatusRunning)
	status := steps.StatusDone
	for r := prep.LastCommitted + 1; r <= prep.Rounds; r++ {
		rr := steps.RoundRef{PointRef: ref, Round: r, DataDigest: prep.DataDigest}
		sum, err := e.RunRound(ctx, rr, steps.ShouldEval(r, prep.EvalEvery, prep.Rounds), keepUpdates)
		if IsDiverged(err) {
			status = steps.StatusDiverged
			break
		}
		if err != nil {
			return steps.PointResult{}, err
		}
		if sum.Eval != nil {
			acc = sum.Eval.TestAcc
		}
		report(r, acc, false, steps.StatusRunning)
	}
	res, err := e.FinishPoint(ctx, steps.FinishInput{PointRef: ref, Status: status, KeepUpdates: keepUpdates})
	if err == nil {
		report(res.RoundsDone, res.TestAcc, true, res.Status)
	}
	return res, err
}

// RunRound runs one round in this process: select, train the clients in
// parallel (each from its own stream, so the order of completion does not
// matter), aggregate in client order, evaluate if asked, commit.
func (e *Engine) RunRound(ctx context.Context, in steps.RoundRef, eval, keepUpdates bool) (steps.RoundSummary, error) {
	env, err := e.roundEnv(ctx, in)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	sel, err := env.selectClients(in.Round)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	deltas := make([][]float32, len(sel.Clients))
	sums := make([]fl.ClientSummary, len(sel.Clients))
	err = e.parallel(len(sel.Clients), func(i int) error {
		var err error
		deltas[i], sums[i], err = e.trainClient(ctx, env, global, in.Round, sel.Clients[i], nil)
		if err == nil && keepUpdates {
			_, err = e.putUpdate(ctx, env, in.Round, sel.Clients[i], deltas[i], sums[i])
		}
		return err
	})
	if err != nil {
		return steps.RoundSummary{}, err
	}
	next, err := env.aggregate(global, sel, sums, func(i, _ int) ([]float32, error) { return deltas[i], nil })
	if err != nil {
		return steps.RoundSummary{}, err
	}
	sha, err := e.saveGlobal(ctx, env, in.Round, next)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	if !eval {
		return e.commit(ctx, env, in.Round, sel, sums, sha, nil, nil, keepUpdates)
	}
	ev, per, err := e.evaluate(ctx, env, next)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	return e.commit(ctx, env, in.Round, sel, sums, sha, &ev, &per, keepUpdates)
}
