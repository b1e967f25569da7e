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

// RunRound runs one round in this process: Round on the stored global model,
// then the same save, evaluate and commit steps as the orchestrated path.
func (e *Engine) RunRound(ctx context.Context, in steps.RoundRef, eval, keepUpdates bool) (steps.RoundSummary, error) {
	env, err := e.roundEnv(ctx, in)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	res, err := e.round(ctx, env, global, in.Round)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	if keepUpdates {
		err := e.parallel(len(res.Selection.Clients), func(i int) error {
			_, err := e.putUpdate(ctx, env, in.Round, res.Selection.Clients[i], res.Deltas[i], res.Clients[i])
			return err
		})
		if err != nil {
			return steps.RoundSummary{}, err
		}
	}
	sha, err := e.saveGlobal(ctx, env, in.Round, res.Global)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	if !eval {
		return e.commit(ctx, env, in.Round, res.Selection, res.Clients, sha, nil, nil, keepUpdates)
	}
	ev, per, err := e.evaluate(ctx, env, res.Global)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	return e.commit(ctx, env, in.Round, res.Selection, res.Clients, sha, &ev, &per, keepUpdates)
}

// RoundResult is one round computed in memory.
type RoundResult struct {
	Global    []float32          // θ^{t}: the model after the round
	Selection fl.Selection       // S_t and ω_k(S_t)
	Clients   []fl.ClientSummary // per selected client, in Selection order
	Deltas    [][]float32        // Δ_k = θ_k − θ^{t−1}, in Selection order
}

// Round computes round r of a point as a pure function of the previous
// global model, the point's configuration (seed, sampler, rule, data,
// partition) and r: select, train the clients in parallel (each from its own
// stream, so the order of completion does not matter), aggregate in client
// order. It reads and writes no storage. The orchestrated path runs the same
// three functions as separate activities with blob storage between them.
func (e *Engine) Round(ctx context.Context, ref steps.PointRef, global []float32, r int) (RoundResult, error) {
	env, err := e.roundEnv(ctx, steps.RoundRef{PointRef: ref, Round: r})
	if err != nil {
		return RoundResult{}, err
	}
	return e.round(ctx, env, global, r)
}

func (e *Engine) round(ctx context.Context, env *pointEnv, global []float32, r int) (RoundResult, error) {
	if len(global) != env.net.NumParams() {
		return RoundResult{}, fmt.Errorf("round %d: global model has %d values; %s has %d: %w", r, len(global), env.net.Key(), env.net.NumParams(), fl.ErrInvalid)
	}
	sel, err := env.selectClients(r)
	if err != nil {
		return RoundResult{}, err
	}
	res := RoundResult{Selection: sel, Clients: make([]fl.ClientSummary, len(sel.Clients)), Deltas: make([][]float32, len(sel.Clients))}
	err = e.parallel(len(sel.Clients), func(i int) error {
		var err error
		res.Deltas[i], res.Clients[i], err = e.trainClient(ctx, env, global, r, sel.Clients[i], nil)
		return err
	})
	if err != nil {
		return RoundResult{}, err
	}
	res.Global, err = env.aggregate(global, sel, res.Clients, func(i, _ int) ([]float32, error) { return res.Deltas[i], nil })
	return res, err
}
