// Package activities adapts the engine's steps to Temporal activities. Each
// activity validates nothing and computes nothing itself: it passes its
// input to the engine, reports progress as heartbeats, and turns the
// engine's error classes into Temporal errors, in one place (toTemporal).
package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// Activities are the steps of a sweep as Temporal activities.
type Activities struct {
	Engine *engine.Engine
	// HeartbeatEvery is how often activities without step-level progress
	// heartbeat (default 5 s); it must be well under the heartbeat timeout.
	HeartbeatEvery time.Duration
}

// Register registers every activity under its name in package steps.
func (a *Activities) Register(r interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}) {
	for name, fn := range map[string]any{
		steps.PlanSweep:     a.PlanSweep,
		steps.PreparePoint:  a.PreparePoint,
		steps.SelectClients: a.SelectClients,
		steps.TrainClient:   a.TrainClient,
		steps.TrainClients:  a.TrainClients,
		steps.Aggregate:     a.Aggregate,
		steps.Evaluate:      a.Evaluate,
		steps.CommitRound:   a.CommitRound,
		steps.FinishPoint:   a.FinishPoint,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// PlanSweep records a sweep's spec and points.
func (a *Activities) PlanSweep(ctx context.Context, in steps.PlanSweepInput) (steps.PlanSweepOutput, error) {
	return heartbeating(ctx, a.every(), func() (steps.PlanSweepOutput, error) { return a.Engine.PlanSweep(ctx, in) })
}

// PreparePoint readies a point and reports where it resumes.
func (a *Activities) PreparePoint(ctx context.Context, in steps.PointRef) (steps.PrepareOutput, error) {
	return heartbeating(ctx, a.every(), func() (steps.PrepareOutput, error) { return a.Engine.PreparePoint(ctx, in) })
}

// SelectClients draws a round's clients (run as a local activity).
func (a *Activities) SelectClients(ctx context.Context, in steps.RoundRef) (fl.Selection, error) {
	out, err := a.Engine.SelectClients(ctx, in)
	return out, toTemporal(err)
}

// TrainClient trains one client; it heartbeats after every local step.
func (a *Activities) TrainClient(ctx context.Context, in steps.TrainClientInput) (steps.TrainClientOutput, error) {
	out, err := a.Engine.TrainClient(ctx, in, func(h steps.Heartbeat) { activity.RecordHeartbeat(ctx, h) })
	return out, toTemporal(err)
}

// TrainClients trains a chunk of clients; it heartbeats with the progress of
// the client that reported last.
func (a *Activities) TrainClients(ctx context.Context, in steps.TrainClientsInput) ([]steps.TrainClientOutput, error) {
	var mu sync.Mutex
	out, err := a.Engine.TrainClients(ctx, in, func(h steps.Heartbeat) {
		mu.Lock()
		defer mu.Unlock()
		activity.RecordHeartbeat(ctx, h)
	})
	return out, toTemporal(err)
}

// Aggregate builds a round's new global model.
func (a *Activities) Aggregate(ctx context.Context, in steps.AggregateInput) (steps.AggregateOutput, error) {
	return heartbeating(ctx, a.every(), func() (steps.AggregateOutput, error) { return a.Engine.Aggregate(ctx, in) })
}

// Evaluate scores a round's global model.
func (a *Activities) Evaluate(ctx context.Context, in steps.RoundRef) (steps.EvalSummary, error) {
	return heartbeating(ctx, a.every(), func() (steps.EvalSummary, error) { return a.Engine.Evaluate(ctx, in) })
}

// CommitRound closes a round (run as a local activity).
func (a *Activities) CommitRound(ctx context.Context, in steps.CommitInput) (steps.RoundSummary, error) {
	out, err := a.Engine.CommitRound(ctx, in)
	return out, toTemporal(err)
}

// FinishPoint closes a point.
func (a *Activities) FinishPoint(ctx context.Context, in steps.FinishInput) (steps.PointResult, error) {
	return heartbeating(ctx, a.every(), func() (steps.PointResult, error) { return a.Engine.FinishPoint(ctx, in) })
}

func (a *Activities) every() time.Duration {
	if a.HeartbeatEvery > 0 {
		return a.HeartbeatEvery
	}
	return 5 * time.Second
}

// heartbeating runs f while heartbeating every interval, so that a worker
// that dies during f is noticed within the heartbeat timeout. These steps are
// short and bounded by their start-to-close timeout, which catches a hang.
func heartbeating[O any](ctx context.Context, every time.Duration, f func() (O, error)) (O, error) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	out, err := f()
	return out, toTemporal(err)
}

// toTemporal classifies an engine error once: bad input and divergence become
// non-retryable application errors whose type the workflows match; anything
// else is returned as is and retried with bounded backoff.
func toTemporal(err error) error {
	switch {
	case err == nil:
		return nil
	case engine.IsDiverged(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), steps.ErrTypeDiverged, err)
	case engine.IsBadInput(err):
		return temporal.NewNonRetryableApplicationError(err.Error(), steps.ErrTypeInvalid, err)
	}
	return err
}
