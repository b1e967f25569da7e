package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// RoundWorkflow runs one round of a point: the round protocol of
// steps.Round (plan, query, select, broadcast, train, inspect, aggregate,
// evaluate, commit), each step an activity. Server steps (select, commit)
// are local activities; the others run on the training queue, fan-outs in
// parallel. Each step writes to keys derived from (sweep, point, round,
// client), so a retry of any step overwrites what an earlier attempt wrote.
func RoundWorkflow(ctx workflow.Context, in RoundInput) (steps.RoundSummary, error) {
	return steps.Round(roundExec{ctx: ctx, queue: in.TrainQueue}, in.RoundInput)
}

// roundExec runs a round's steps as activities and shows its phase in the
// workflow's current details.
type roundExec struct {
	ctx   workflow.Context
	queue string
}

func (x roundExec) Run(s steps.Info, in, out any) error {
	return start(x.ctx, s, x.queue, in).Get(x.ctx, out)
}

// RunAll starts every call, then waits for them in order: the first error
// in input order is returned.
func (x roundExec) RunAll(s steps.Info, ins, outs []any) error {
	futures := make([]workflow.Future, len(ins))
	for i, in := range ins {
		futures[i] = start(x.ctx, s, x.queue, in)
	}
	for i, f := range futures {
		if err := f.Get(x.ctx, outs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (x roundExec) Status(msg string) { workflow.SetCurrentDetails(x.ctx, msg) }
