package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// Timeouts and retries come from each step's steps.Info
// (docs/architecture.md, "Temporal"): every step has a start-to-close timeout
// and a bounded number of attempts; bad input and divergence are never
// retried.
func retry(attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        time.Minute,
		MaximumAttempts:        attempts,
		NonRetryableErrorTypes: []string{steps.ErrTypeInvalid, steps.ErrTypeDiverged},
	}
}

// HeartbeatTimeout is the heartbeat timeout of every regular activity. The
// activities heartbeat every few seconds (training also after every local
// step), so a killed worker's activities are retried elsewhere within this
// time.
const HeartbeatTimeout = 20 * time.Second

// options returns ctx with the options of step s: a local activity for
// Server steps, an activity on queue (the workflow's own when empty) for
// Worker steps, labelled summary in the UI.
func options(ctx workflow.Context, s steps.Info, queue, summary string) workflow.Context {
	if s.Where == steps.Server {
		return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: s.Timeout,
			RetryPolicy:         retry(s.Attempts),
		})
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: s.Timeout,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         retry(s.Attempts),
		Summary:             summary,
	})
}

// start starts step s with input in.
func start(ctx workflow.Context, s steps.Info, queue string, in any) workflow.Future {
	summary := ""
	if l, ok := in.(steps.Labeled); ok {
		summary = l.Label()
	}
	ctx = options(ctx, s, queue, summary)
	if s.Where == steps.Server {
		return workflow.ExecuteLocalActivity(ctx, s.Name, in)
	}
	return workflow.ExecuteActivity(ctx, s.Name, in)
}

// call runs step s with in on queue and returns its result.
func call[In, Out any](ctx workflow.Context, s steps.Step[In, Out], queue string, in In) (Out, error) {
	var out Out
	err := start(ctx, s.Info, queue, in).Get(ctx, &out)
	return out, err
}

// isType reports whether err carries an application error of the given type
// anywhere in its chain (activity → child workflow → parent).
func isType(err error, typ string) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == typ
}
