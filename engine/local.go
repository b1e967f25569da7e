package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
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

// RunSweep plans a sweep and runs its points in this process, without
// Temporal: the same steps as the orchestrated path, in a plain loop, up
// to the spec's run.concurrency points at once, as the sweep workflow runs
// them (a point's results do not depend on what runs beside it). Points
// already done are skipped; a point interrupted earlier resumes from its
// highest committed round. progress may be called from several goroutines
// at once; a point that fails reports StatusFailed. As in the sweep
// workflow, a failed point does not stop the others (steps.PointsFailed):
// when every point that could run has run, the error is a
// *steps.PointsFailed naming the failed ones, which wraps the first's
// error. A cancelled ctx stops every point and returns ctx's error. The
// results are those of the points that ended.
func (e *Engine) RunSweep(ctx context.Context, in steps.PlanSweepInput, progress func(Progress)) ([]steps.PointResult, error) {
	return e.RunPoints(ctx, in, nil, progress)
}

// RunPoints is RunSweep for the points only selects (nil: every point).
// The whole sweep is planned, so the points run are the sweep's own, with
// their IDs and streams, and a later run of the others (or of all) completes
// the same sweep.
func (e *Engine) RunPoints(ctx context.Context, in steps.PlanSweepInput, only func(steps.PointInfo) bool, progress func(Progress)) ([]steps.PointResult, error) {
	plan, err := e.PlanSweep(ctx, in)
	if err != nil {
		return nil, err
	}
	if only != nil {
		plan.Points = slices.DeleteFunc(plan.Points, func(p steps.PointInfo) bool { return !only(p) })
	}
	results := make([]*steps.PointResult, len(plan.Points))
	errs := make([]error, len(plan.Points))
	slots := make(chan struct{}, max(1, plan.Concurrency))
	var wg sync.WaitGroup
	for i, p := range plan.Points {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			report := func(pr Progress) {
				if progress != nil {
					pr.Point = p
					progress(pr)
				}
			}
			res, err := e.RunPoint(ctx, steps.PointRef{Sweep: plan.Name, Point: p.ID}, plan.KeepUpdates, report)
			if err != nil {
				errs[i] = err
				if ctx.Err() == nil {
					report(Progress{Done: true, Status: steps.StatusFailed})
				}
				return
			}
			results[i] = &res
		}()
	}
	wg.Wait()
	var done []steps.PointResult
	for _, r := range results {
		if r != nil {
			done = append(done, *r)
		}
	}
	if err := ctx.Err(); err != nil {
		return done, err
	}
	pf := &steps.PointsFailed{Sweep: plan.Name, Total: len(plan.Points), Resume: fmt.Sprintf("`starter run --local -f %s` again", in.File)}
	for i, err := range errs {
		if err == nil {
			continue
		}
		p := plan.Points[i]
		if pf.Err == nil {
			pf.Err = fmt.Errorf("point %s (%s): %w", p.ID, p.Label, err)
		}
		pf.Failed++
		pf.First = append(pf.First, steps.FailedPoint{ID: p.ID, Label: p.Label, Error: err.Error()})
	}
	if pf.Failed > 0 {
		return done, pf
	}
	return done, nil
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
	recoveries := 0
rounds:
	for r := prep.LastCommitted + 1; r <= prep.Rounds; r++ {
		sum, err := e.RunRound(ctx, steps.RoundInput{
			RoundRef: steps.RoundRef{PointRef: ref, Round: r, DataDigest: prep.DataDigest},
			Eval:     steps.ShouldEval(r, prep.EvalEvery, prep.Rounds),
			// One call per fan-out: the engine trains its clients in
			// parallel on its slots (chunking never changes results).
			KeepUpdates: keepUpdates, ClientsPerActivity: math.MaxInt32, Phases: prep.Phases,
		})
		switch steps.AfterRound(err, IsDiverged(err), IsDamaged(err), recoveries) {
		case steps.EndDiverged:
			status = steps.StatusDiverged
			break rounds
		case steps.Recover:
			// As the point workflow does: start again from the last good
			// checkpoint (engine/recover.go).
			recoveries++
			if prep, err = e.PreparePoint(ctx, ref); err != nil {
				return steps.PointResult{}, err
			}
			r = prep.LastCommitted
			continue
		case steps.Fail:
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

// RunRound runs one round in this process: the round protocol (steps.Round)
// with the engine's steps called directly, on the same blob keys as the
// orchestrated path.
func (e *Engine) RunRound(ctx context.Context, in steps.RoundInput) (steps.RoundSummary, error) {
	return steps.Round(e.exec(roundContext(ctx, in), nil), in)
}

// RunRoundInOne runs round in.Round in this process as one step (RunRound,
// the point workflow's path for small rounds): the round protocol with the
// engine's steps called directly, as RunRound does, but only while each
// fan-out fits in one activity (at most in.ClientsPerActivity clients, so
// the fanned-out round would have run it as one activity too). At the first
// fan-out that does not fit it stops and returns its activities in FanOut;
// what it wrote by then (the round's query answers and broadcast) the
// fanned-out run overwrites with the same bytes.
//
// With in.Until > in.Round it goes on with the next rounds, up to Until,
// while the rounds it ran took less than steps.RunRoundBatch: a batch of
// rounds costs the workflow one activity. A later round that fails or fans
// out ends the batch without error; the next RunRound starts with it and
// reports it.
//
// A round already committed (a retry after the worker died between the
// commit and the report) is not run again: its checkpoint of the round
// before may be gone. Its summary is rebuilt from its manifest, whose
// evaluation carries the test accuracy and loss only. status, when not nil,
// receives each round's phase as it changes.
func (e *Engine) RunRoundInOne(ctx context.Context, in steps.RoundInput, status func(round int, phase string)) (steps.RoundOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.RoundOutput{}, err
	}
	start := time.Now()
	var out steps.RoundOutput
	for r := in.Round; r == in.Round || (r <= in.Until && time.Since(start) < steps.RunRoundBatch); r++ {
		rin := in
		rin.Round, rin.Until = r, 0
		if r > in.Round {
			rin.Eval = steps.ShouldEval(r, env.cfg.EvalEvery, env.cfg.Rounds)
		}
		var phase func(string)
		if status != nil {
			phase = func(msg string) { status(r, msg) }
		}
		sum, fanOut, err := e.runOne(ctx, rin, phase)
		if r > in.Round && (err != nil || fanOut > 0) {
			break
		}
		if err != nil || fanOut > 0 {
			return steps.RoundOutput{FanOut: fanOut}, err
		}
		out.Rounds = append(out.Rounds, sum)
	}
	return out, nil
}

// runOne is one round of RunRoundInOne: its summary, or the activities of
// the fan-out that did not fit.
func (e *Engine) runOne(ctx context.Context, in steps.RoundInput, status func(string)) (steps.RoundSummary, int, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.RoundSummary{}, 0, err
	}
	var c store.Commit
	switch err := e.Store.GetJSON(ctx, env.keys.Committed(in.Round), &c); {
	case err == nil:
		var ev *steps.EvalSummary
		if c.Evaluated {
			ev = &steps.EvalSummary{TestAcc: c.TestAcc, TestLoss: c.TestLoss}
		}
		return summaryOf(c, ev), 0, nil
	case !errors.Is(err, store.ErrNotFound):
		return steps.RoundSummary{}, 0, err
	}
	x := oneActivity{exec: e.exec(roundContext(ctx, in), status)}
	sum, err := steps.Round(&x, in)
	if errors.Is(err, errFanOut) {
		return steps.RoundSummary{}, x.fanOut, nil
	}
	return sum, 0, err
}

// errFanOut stops a round run by RunRoundInOne at a fan-out of more than
// one activity.
var errFanOut = errors.New("engine: the round's fan-out needs more than one activity")

// oneActivity is the in-process Exec of RunRoundInOne: it refuses a fan-out
// of more than one call (steps.Round chunks every fan-out by the round's
// ClientsPerActivity), remembering its calls in fanOut.
type oneActivity struct {
	exec
	fanOut int
}

func (x *oneActivity) RunAll(s steps.Info, ins, outs []any) error {
	if len(ins) > 1 {
		x.fanOut = len(ins)
		return fmt.Errorf("%s in %d activities: %w", s.Name, len(ins), errFanOut)
	}
	return x.exec.RunAll(s, ins, outs)
}
