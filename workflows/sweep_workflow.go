package workflows

import (
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// SweepWorkflow plans a sweep and runs one child PointWorkflow per point,
// at most Concurrency at a time, in spec order. A point already done returns
// at once (its PreparePoint finds DONE.json), so running a sweep again only
// computes what is missing. The status query reports every point.
//
// Signals (see PauseSignal) without a point apply to the whole sweep: they
// are forwarded to every running point, and a paused sweep starts no new
// point, a stopped one none at all (its points not started are stopped).
// With a point (Control.Point), they go to that point if it runs, and are
// kept for it if it has not started yet.
func SweepWorkflow(ctx workflow.Context, in SweepInput) (SweepResult, error) {
	logger := workflow.GetLogger(ctx)
	plan, err := call(ctx, steps.PlanSweep, "", steps.PlanSweepInput{File: in.File, Spec: in.Spec})
	if err != nil {
		return SweepResult{}, err
	}
	queue := plan.TrainQueue
	if in.TrainQueue != "" {
		queue = in.TrainQueue
	}
	// A sweep's points run only on workers of its bucket and build
	// (plan.Identity): their workflows, local activities and activities go
	// to queues routed by it, which only such workers poll.
	pointQueue := steps.Routed(workflow.GetInfo(ctx).TaskQueueName, plan.Identity)
	queue = steps.Routed(queue, plan.Identity)
	status := SweepStatus{Name: plan.Name, Hash: plan.Hash}
	for _, p := range plan.Points {
		status.Points = append(status.Points, PointStatus{PointInfo: p, WorkflowID: PointID(plan.Name, p.ID), Status: steps.StatusPending})
	}
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (SweepStatus, error) { return status, nil }); err != nil {
		return SweepResult{}, err
	}

	children := make([]workflow.ChildWorkflowFuture, len(status.Points))
	held := map[string]string{} // a point not started yet → the last signal for it alone
	// forward signals point i's workflow once it has started; a point that
	// ended meanwhile is no error.
	forward := func(ctx workflow.Context, i int, signal string) {
		f := children[i]
		workflow.Go(ctx, func(ctx workflow.Context) {
			if err := f.SignalChildWorkflow(ctx, signal, nil).Get(ctx, nil); err != nil {
				logger.Info("signal not delivered", "point", status.Points[i].ID, "signal", signal, "error", err)
			}
		})
	}
	sig := listen(ctx, func(ctx workflow.Context, signal string, c Control) {
		logger.Info("signal", "signal", signal, "point", c.Point)
		for i := range status.Points {
			p := &status.Points[i]
			if c.Point != "" && c.Point != p.ID {
				continue
			}
			switch {
			case p.Status == steps.StatusPending && c.Point != "":
				held[p.ID] = signal
			case p.Status == steps.StatusPending:
				delete(held, p.ID)
			case children[i] != nil && !isFinal(p.Status):
				forward(ctx, i, signal)
			}
		}
		if c.Point != "" {
			return
		}
		switch signal {
		case PauseSignal:
			status.Paused = true
		case UnpauseSignal:
			status.Paused = false
		case StopSignal:
			status.Stopping = true
		}
	})

	running := 0
	finished := 0
	ready := func() bool { return status.Stopping || (!status.Paused && running < plan.Concurrency) }
	for i := range status.Points {
		// Signals that came with this workflow task count before the next
		// point starts.
		for sig.drain(ctx); !ready(); sig.drain(ctx) {
			if err := workflow.Await(ctx, ready); err != nil {
				return SweepResult{}, err
			}
		}
		p := &status.Points[i]
		if status.Stopping || held[p.ID] == StopSignal {
			p.Status = steps.StatusStopped
			finished++
			continue
		}
		paused := held[p.ID] == PauseSignal
		delete(held, p.ID)
		pointStatus := steps.StatusRunning
		if paused {
			pointStatus = steps.StatusPaused
		}
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            p.WorkflowID,
			TaskQueue:             pointQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			StaticSummary:         fmt.Sprintf("%s: %s", plan.Name, p.Label),
			TypedSearchAttributes: temporal.NewSearchAttributes(
				SASweep.ValueSet(plan.Name), SAPoint.ValueSet(p.ID), SADataset.ValueSet(p.Dataset),
				SAAlgorithm.ValueSet(p.Algorithm), SASampler.ValueSet(p.Sampler), SASeed.ValueSet(int64(p.Seed)),
				SARound.ValueSet(0), SALabel.ValueSet(Keyword(p.Label)), SAStatus.ValueSet(pointStatus),
			),
		})
		f := workflow.ExecuteChildWorkflow(cctx, PointWorkflowName, PointInput{
			PointRef:           steps.PointRef{Sweep: plan.Name, Point: p.ID},
			Info:               p.PointInfo,
			TrainQueue:         queue,
			ContinueAsNewEvery: plan.ContinueAsNewEvery,
			KeepUpdates:        plan.KeepUpdates,
			ClientsPerActivity: plan.ClientsPerActivity,
			Paused:             paused,
		})
		children[i] = f
		p.Status = steps.StatusRunning
		running++
		workflow.Go(ctx, func(gctx workflow.Context) {
			var res steps.PointResult
			if err := f.Get(gctx, &res); err != nil {
				p.Status, p.Error = steps.StatusFailed, rootCause(err)
			} else {
				p.Status, p.Result = res.Status, &res
			}
			running--
			finished++
		})
	}
	if err := workflow.Await(ctx, func() bool { return finished == len(status.Points) }); err != nil {
		return SweepResult{}, err
	}
	status.Done = true
	var failed []string
	for _, p := range status.Points {
		if p.Status == steps.StatusFailed {
			failed = append(failed, fmt.Sprintf("%s (%s): %s", p.ID, p.Label, p.Error))
		}
	}
	res := SweepResult{Name: plan.Name, Points: status.Points}
	if len(failed) > 0 {
		return res, temporal.NewApplicationError(fmt.Sprintf("%d of %d points failed; fix the cause and run `starter sweep resume %s`: %v",
			len(failed), len(status.Points), plan.Name, failed), "PointsFailed")
	}
	return res, nil
}

// isFinal reports whether a point's status is one it ends with.
func isFinal(status string) bool {
	switch status {
	case steps.StatusDone, steps.StatusDiverged, steps.StatusStopped, steps.StatusFailed:
		return true
	}
	return false
}

// rootCause returns the message of the first application error in a chain
// (child workflow → activity → application error): the part that says what
// to fix, without the wrappers.
func rootCause(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return err.Error()
}
