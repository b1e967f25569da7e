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
func SweepWorkflow(ctx workflow.Context, in SweepInput) (SweepResult, error) {
	plan, err := call(ctx, steps.PlanSweep, "", steps.PlanSweepInput{File: in.File, Spec: in.Spec})
	if err != nil {
		return SweepResult{}, err
	}
	queue := plan.TrainQueue
	if in.TrainQueue != "" {
		queue = in.TrainQueue
	}
	status := SweepStatus{Name: plan.Name, Hash: plan.Hash}
	for _, p := range plan.Points {
		status.Points = append(status.Points, PointStatus{PointInfo: p, WorkflowID: PointID(plan.Name, p.ID), Status: steps.StatusPending})
	}
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (SweepStatus, error) { return status, nil }); err != nil {
		return SweepResult{}, err
	}

	running := 0
	finished := 0
	for i := range status.Points {
		if err := workflow.Await(ctx, func() bool { return running < plan.Concurrency }); err != nil {
			return SweepResult{}, err
		}
		p := &status.Points[i]
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            p.WorkflowID,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			StaticSummary:         fmt.Sprintf("%s: %s", plan.Name, p.Label),
			TypedSearchAttributes: temporal.NewSearchAttributes(
				SASweep.ValueSet(plan.Name), SAPoint.ValueSet(p.ID), SADataset.ValueSet(p.Dataset),
				SAAlgorithm.ValueSet(p.Algorithm), SASampler.ValueSet(p.Sampler), SASeed.ValueSet(int64(p.Seed)),
				SARound.ValueSet(0),
			),
		})
		f := workflow.ExecuteChildWorkflow(cctx, PointWorkflowName, PointInput{
			PointRef:           steps.PointRef{Sweep: plan.Name, Point: p.ID},
			Info:               p.PointInfo,
			TrainQueue:         queue,
			ContinueAsNewEvery: plan.ContinueAsNewEvery,
			KeepUpdates:        plan.KeepUpdates,
			ClientsPerActivity: plan.ClientsPerActivity,
		})
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
