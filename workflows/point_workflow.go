package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// PointWorkflow runs the rounds of one point. On every start (the first, a
// Continue-As-New, or a new run after a failure) it asks PreparePoint for the
// highest committed round and continues after it, so no committed round is
// ever computed twice. It continues as new every ContinueAsNewEvery rounds or
// when the server suggests it, always between rounds.
//
// Signals (see PauseSignal) act between rounds: while paused no round
// starts, and the pause is carried across Continue-As-New in PointInput;
// after a stop the point ends with status stopped, its committed rounds
// kept (FinishPoint records it without DONE.json, so a later run continues).
func PointWorkflow(ctx workflow.Context, in PointInput) (steps.PointResult, error) {
	logger := workflow.GetLogger(ctx)
	progress := PointProgress{Rounds: in.Info.Rounds, Status: steps.StatusRunning}
	paused, stop, finished := in.Paused, in.Stopping, false
	// state is the point's status while it runs: what the progress query
	// and the FLStatus search attribute show.
	state := func() string {
		switch {
		case finished:
			return progress.Status
		case stop:
			return StatusStopping
		case paused:
			return steps.StatusPaused
		}
		return steps.StatusRunning
	}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (PointProgress, error) {
		p := progress
		p.Status = state()
		return p, nil
	}); err != nil {
		return steps.PointResult{}, err
	}
	sig := listen(ctx, func(ctx workflow.Context, signal string, _ Control) {
		before := state()
		switch signal {
		case PauseSignal:
			paused = true
		case UnpauseSignal:
			paused = false
		case StopSignal:
			stop = true
		}
		logger.Info("signal", "signal", signal, "paused", paused, "stop", stop)
		if after := state(); after != before && !finished {
			if err := workflow.UpsertTypedSearchAttributes(ctx, SAStatus.ValueSet(after)); err != nil {
				logger.Warn("upsert FLStatus", "error", err)
			}
		}
	})
	finish := func(status string) (steps.PointResult, error) {
		res, err := call(ctx, steps.FinishPoint, in.TrainQueue, steps.FinishInput{PointRef: in.PointRef, Status: status, KeepUpdates: in.KeepUpdates})
		if err != nil {
			return steps.PointResult{}, err
		}
		progress.Status, finished = res.Status, true
		// Histories recorded before FLStatus existed end without this upsert.
		if workflow.GetVersion(ctx, "fl-status", workflow.DefaultVersion, 1) == 1 {
			if err := workflow.UpsertTypedSearchAttributes(ctx, SAStatus.ValueSet(res.Status)); err != nil {
				return steps.PointResult{}, err
			}
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("%s after %d rounds, test accuracy %.4f", res.Status, res.RoundsDone, res.TestAcc))
		return res, nil
	}

	prep, err := call(ctx, steps.PreparePoint, in.TrainQueue, in.PointRef)
	if err != nil {
		return steps.PointResult{}, err
	}
	progress.Round, progress.Rounds, progress.TestAcc = prep.LastCommitted, prep.Rounds, prep.TestAcc
	if prep.Recovered != "" {
		logger.Warn("recovered from damage", "recovered", prep.Recovered)
	}
	if prep.Done {
		return finish(prep.Status)
	}

	status := steps.StatusDone
	start := prep.LastCommitted + 1
	for r := start; r <= prep.Rounds; r++ {
		sig.drain(ctx)
		if stop {
			status = steps.StatusStopped
			break
		}
		if r > start && (r-start >= in.ContinueAsNewEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			logger.Info("continuing as new", "round", r, "paused", paused)
			in.Paused = paused
			return steps.PointResult{}, workflow.NewContinueAsNewError(ctx, PointWorkflowName, in)
		}
		if paused {
			workflow.SetCurrentDetails(ctx, fmt.Sprintf("paused before round %d of %d, test accuracy %.4f; signal %q to continue",
				r, prep.Rounds, progress.TestAcc, UnpauseSignal))
			if err := workflow.Await(ctx, func() bool { return !paused || stop }); err != nil {
				return steps.PointResult{}, err
			}
			if stop {
				status = steps.StatusStopped
				break
			}
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("round %d of %d, test accuracy %.4f", r, prep.Rounds, progress.TestAcc))
		// A batch of small rounds may end before the point's next
		// Continue-As-New, never after it.
		until := min(prep.Rounds, start+in.ContinueAsNewEvery-1)
		sums, err := runRounds(ctx, in, prep, r, until)
		next := steps.AfterRound(err, isType(err, steps.ErrTypeDiverged), isType(err, steps.ErrTypeCorrupt), in.Recoveries)
		if next == steps.EndDiverged {
			logger.Warn("point diverged", "round", r, "error", err)
			status = steps.StatusDiverged
			break
		}
		// A damaged checkpoint: the next start (PreparePoint) resumes
		// from the last one that verifies and recomputes the rest.
		if next == steps.Recover && workflow.GetVersion(ctx, "recover-damage", workflow.DefaultVersion, 1) == 1 {
			logger.Warn("damaged checkpoint: restarting from the last good one", "round", r, "error", err)
			// A signal that came in the workflow task that delivered the
			// failure is not handled yet (the SDK runs this coroutine
			// first): without this drain an unpause sent then was lost and
			// the next run waited paused for ever.
			sig.drain(ctx)
			in.Paused, in.Stopping, in.Recoveries = paused, stop, in.Recoveries+1
			return steps.PointResult{}, workflow.NewContinueAsNewError(ctx, PointWorkflowName, in)
		}
		if err != nil {
			return steps.PointResult{}, err
		}
		last := sums[len(sums)-1]
		r = last.Round
		progress.Round = r
		attrs := []temporal.SearchAttributeUpdate{SARound.ValueSet(int64(r))}
		if ev := latestEval(sums); ev != nil {
			progress.TestAcc = ev.TestAcc
			attrs = append(attrs, SAAccuracy.ValueSet(ev.TestAcc))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
			return steps.PointResult{}, err
		}
	}
	return finish(status)
}

// runRounds runs round r of a point, and possibly more rounds up to until:
// the committed rounds' summaries, in order.
//
// A round whose fan-outs each fit in one activity (the point selects at
// most ClientsPerActivity clients, and the round trains no attack probes)
// runs as a RunRound activity on the training queue: the whole round
// protocol in one worker, as the in-process runner runs it, and the rounds
// after it up to until while they take less than steps.RunRoundBatch in
// all. So a round costs at most one activity's round trip instead of a
// child workflow and an activity or local activity per step
// (docs/architecture.md, "The cost of a round"). Other rounds, and a small
// round whose selection or query turns out larger than expected (binomial
// and poisson sampling), run as a child RoundWorkflow with their fan-outs.
// Histories recorded before RunRound replay with child workflows only.
func runRounds(ctx workflow.Context, in PointInput, prep steps.PrepareOutput, r, until int) ([]steps.RoundSummary, error) {
	rin := steps.RoundInput{
		RoundRef:           steps.RoundRef{PointRef: in.PointRef, Round: r, DataDigest: prep.DataDigest},
		Eval:               steps.ShouldEval(r, prep.EvalEvery, prep.Rounds),
		KeepUpdates:        in.KeepUpdates,
		ClientsPerActivity: in.ClientsPerActivity,
		Phases:             prep.Phases,
	}
	_, probe := slices.BinarySearch(prep.Phases.Probe, r)
	small := prep.ClientsPerRound > 0 && prep.ClientsPerRound <= in.ClientsPerActivity && !probe
	if small && workflow.GetVersion(ctx, "run-round", workflow.DefaultVersion, 1) == 1 {
		// The batch stops before the next round that trains probes.
		batch := rin
		batch.Until = until
		for _, q := range prep.Phases.Probe {
			if q > r {
				batch.Until = min(batch.Until, q-1)
				break
			}
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           in.TrainQueue,
			StartToCloseTimeout: steps.RunRound.Timeout,
			HeartbeatTimeout:    HeartbeatTimeout,
			RetryPolicy:         retry(steps.RunRound.Attempts),
			Summary:             fmt.Sprintf("%s round %d/%d", in.Info.Label, r, prep.Rounds),
		})
		var out steps.RoundOutput
		if err := workflow.ExecuteActivity(actx, steps.RunRound.Name, batch).Get(ctx, &out); err != nil {
			return nil, err
		}
		if len(out.Rounds) > 0 {
			return out.Rounds, nil
		}
		workflow.GetLogger(ctx).Info("round fans out", "round", r, "activities", out.FanOut)
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:    RoundID(workflow.GetInfo(ctx).WorkflowExecution.ID, r),
		StaticSummary: fmt.Sprintf("%s round %d/%d", in.Info.Label, r, prep.Rounds),
	})
	var sum steps.RoundSummary
	err := workflow.ExecuteChildWorkflow(cctx, RoundWorkflowName, RoundInput{RoundInput: rin, TrainQueue: in.TrainQueue}).Get(ctx, &sum)
	return []steps.RoundSummary{sum}, err
}

// latestEval returns the evaluation of the last evaluated round of sums, or
// nil.
func latestEval(sums []steps.RoundSummary) *steps.EvalSummary {
	for i := len(sums) - 1; i >= 0; i-- {
		if sums[i].Eval != nil {
			return sums[i].Eval
		}
	}
	return nil
}
