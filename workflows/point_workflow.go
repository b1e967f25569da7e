package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// PointWorkflow runs the rounds of one point. On every start (the first, a
// Continue-As-New, or a new run after a failure) it asks PreparePoint for the
// highest committed round and continues after it, so no committed round is
// ever computed twice. It continues as new every ContinueAsNewEvery rounds or
// when the server suggests it, always between rounds.
func PointWorkflow(ctx workflow.Context, in PointInput) (steps.PointResult, error) {
	logger := workflow.GetLogger(ctx)
	progress := PointProgress{Rounds: in.Info.Rounds, Status: steps.StatusRunning}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (PointProgress, error) { return progress, nil }); err != nil {
		return steps.PointResult{}, err
	}
	prep, err := call(ctx, steps.PreparePoint, in.TrainQueue, in.PointRef)
	if err != nil {
		return steps.PointResult{}, err
	}
	progress.Round, progress.Rounds, progress.TestAcc = prep.LastCommitted, prep.Rounds, prep.TestAcc
	if prep.Done {
		progress.Status = prep.Status
		return call(ctx, steps.FinishPoint, in.TrainQueue, steps.FinishInput{PointRef: in.PointRef, Status: prep.Status, KeepUpdates: in.KeepUpdates})
	}

	status := steps.StatusDone
	start := prep.LastCommitted + 1
	for r := start; r <= prep.Rounds; r++ {
		if r > start && (r-start >= in.ContinueAsNewEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			logger.Info("continuing as new", "round", r)
			return steps.PointResult{}, workflow.NewContinueAsNewError(ctx, PointWorkflowName, in)
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("round %d of %d, test accuracy %.4f", r, prep.Rounds, progress.TestAcc))
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:    RoundID(in.Sweep, in.Point, r),
			StaticSummary: fmt.Sprintf("%s round %d/%d", in.Info.Label, r, prep.Rounds),
		})
		var sum steps.RoundSummary
		err := workflow.ExecuteChildWorkflow(cctx, RoundWorkflowName, RoundInput{
			RoundInput: steps.RoundInput{
				RoundRef:           steps.RoundRef{PointRef: in.PointRef, Round: r, DataDigest: prep.DataDigest},
				Eval:               steps.ShouldEval(r, prep.EvalEvery, prep.Rounds),
				KeepUpdates:        in.KeepUpdates,
				ClientsPerActivity: in.ClientsPerActivity,
				Phases:             prep.Phases,
			},
			TrainQueue: in.TrainQueue,
		}).Get(ctx, &sum)
		if isType(err, steps.ErrTypeDiverged) {
			logger.Warn("point diverged", "round", r, "error", err)
			status = steps.StatusDiverged
			break
		}
		if err != nil {
			return steps.PointResult{}, err
		}
		progress.Round = r
		attrs := []temporal.SearchAttributeUpdate{SARound.ValueSet(int64(r))}
		if sum.Eval != nil {
			progress.TestAcc = sum.Eval.TestAcc
			attrs = append(attrs, SAAccuracy.ValueSet(sum.Eval.TestAcc))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, attrs...); err != nil {
			return steps.PointResult{}, err
		}
	}
	res, err := call(ctx, steps.FinishPoint, in.TrainQueue, steps.FinishInput{PointRef: in.PointRef, Status: status, KeepUpdates: in.KeepUpdates})
	if err != nil {
		return steps.PointResult{}, err
	}
	progress.Status = res.Status
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("%s after %d rounds, test accuracy %.4f", res.Status, res.RoundsDone, res.TestAcc))
	return res, nil
}
