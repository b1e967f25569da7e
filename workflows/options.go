package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// Timeouts and retries of each step (specs/temporal-design.md §2.2). Every
// step has a start-to-close timeout and a bounded number of attempts; bad
// input and divergence are never retried.
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
// training loop heartbeats after every local step and the other activities
// every few seconds, so a killed worker's activities are retried elsewhere
// within this time.
const HeartbeatTimeout = 20 * time.Second

func activityOptions(ctx workflow.Context, queue string, startToClose time.Duration, attempts int32) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    HeartbeatTimeout,
		RetryPolicy:         retry(attempts),
	})
}

func localOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         retry(5),
	})
}

// run executes the named activity and decodes its result.
func run[O any](ctx workflow.Context, name string, in any) (O, error) {
	var out O
	err := workflow.ExecuteActivity(ctx, name, in).Get(ctx, &out)
	return out, err
}

// runLocal executes the named local activity and decodes its result.
func runLocal[O any](ctx workflow.Context, name string, in any) (O, error) {
	var out O
	err := workflow.ExecuteLocalActivity(ctx, name, in).Get(ctx, &out)
	return out, err
}

// isType reports whether err carries an application error of the given type
// anywhere in its chain (activity → child workflow → parent).
func isType(err error, typ string) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == typ
}
