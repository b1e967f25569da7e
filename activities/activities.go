// Package activities adapts the engine's steps to Temporal activities. Each
// activity validates nothing and computes nothing itself: it passes its
// input to the engine, heartbeats, and turns the engine's error classes into
// Temporal errors, in one place (toTemporal).
package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/errkind"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// Activities are the steps of a sweep as Temporal activities.
type Activities struct {
	Engine *engine.Engine
	// HeartbeatEvery is how often activities heartbeat while they wait or
	// compute (default 5 s); it must be well under the heartbeat timeout.
	HeartbeatEvery time.Duration
}

// Registrar is what a worker (or a test environment) registers activities on.
type Registrar interface {
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}

// register registers f as step s's activity. f's signature must match the
// step's payload types, which the compiler checks.
func register[In, Out any](r Registrar, s steps.Step[In, Out], f func(context.Context, In) (Out, error)) {
	r.RegisterActivityWithOptions(f, activity.RegisterOptions{Name: s.Name})
}

// Register registers every step of steps.All as an activity.
func (a *Activities) Register(r Registrar) {
	register(r, steps.PlanSweep, a.PlanSweep)
	register(r, steps.ReadPlan, a.ReadPlan)
	register(r, steps.PreparePoint, a.PreparePoint)
	register(r, steps.FinishPoint, a.FinishPoint)
	register(r, steps.SelectClients, a.SelectClients)
	register(r, steps.QueryClients, a.QueryClients)
	register(r, steps.Broadcast, a.Broadcast)
	register(r, steps.TrainClients, a.TrainClients)
	register(r, steps.InspectUpdates, a.InspectUpdates)
	register(r, steps.RefineUpdates, a.RefineUpdates)
	register(r, steps.Aggregate, a.Aggregate)
	register(r, steps.Evaluate, a.Evaluate)
	register(r, steps.CommitRound, a.CommitRound)
	register(r, steps.RunRound, a.RunRound)
}

// PlanSweep records a sweep's spec and points, and the identity (bucket and
// build) its points run with: the one recorded when the sweep was first
// planned, else this worker's (docs/architecture.md, "Several workers").
func (a *Activities) PlanSweep(ctx context.Context, in steps.PlanSweepInput) (steps.PlanSweepOutput, error) {
	return heartbeating(ctx, a, func() (steps.PlanSweepOutput, error) {
		out, err := a.Engine.PlanSweep(ctx, in)
		if err != nil {
			return out, err
		}
		id, err := a.Engine.SweepIdentity(ctx, out.Name)
		out.Identity = id.String()
		return out, err
	})
}

// ReadPlan reads one page of a planned sweep's points.
func (a *Activities) ReadPlan(ctx context.Context, in steps.PlanPageInput) (steps.PlanPage, error) {
	out, err := a.Engine.ReadPlan(ctx, in)
	return out, toTemporal(err)
}

// PreparePoint readies a point and reports where it resumes.
func (a *Activities) PreparePoint(ctx context.Context, in steps.PointRef) (steps.PrepareOutput, error) {
	return heartbeating(ctx, a, func() (steps.PrepareOutput, error) { return a.Engine.PreparePoint(ctx, in) })
}

// FinishPoint closes a point.
func (a *Activities) FinishPoint(ctx context.Context, in steps.FinishInput) (steps.PointResult, error) {
	return heartbeating(ctx, a, func() (steps.PointResult, error) { return a.Engine.FinishPoint(ctx, in) })
}

// SelectClients asks the sampler for a round's decision (a local activity).
func (a *Activities) SelectClients(ctx context.Context, in steps.SelectInput) (fl.Plan, error) {
	if err := a.refuse(ctx); err != nil {
		return fl.Plan{}, err
	}
	out, err := a.Engine.SelectClients(ctx, in)
	return out, toTemporal(err)
}

// QueryClients answers a round's question for a chunk of clients.
func (a *Activities) QueryClients(ctx context.Context, in steps.QueryInput) ([]fl.Answer, error) {
	return heartbeating(ctx, a, func() ([]fl.Answer, error) { return a.Engine.QueryClients(ctx, in) })
}

// Broadcast computes the vector a round's clients train with.
func (a *Activities) Broadcast(ctx context.Context, in steps.BroadcastInput) (steps.BroadcastOutput, error) {
	return heartbeating(ctx, a, func() (steps.BroadcastOutput, error) { return a.Engine.Broadcast(ctx, in) })
}

// TrainClients trains a chunk of clients; it heartbeats with the progress
// of the client that reported last, also while it waits for a core.
func (a *Activities) TrainClients(ctx context.Context, in steps.TrainInput) ([]fl.ClientSummary, error) {
	var last progress
	return heartbeatingWith(ctx, a, &last, func() ([]fl.ClientSummary, error) {
		return a.Engine.TrainClients(ctx, in, func(h steps.Heartbeat) {
			last.set(h)
			activity.RecordHeartbeat(ctx, h) // the SDK throttles these
		})
	})
}

// progress is the latest heartbeat detail of an activity.
type progress struct {
	mu   sync.Mutex
	last any
}

func (p *progress) set(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = v
}

func (p *progress) details() []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return nil
	}
	return []any{p.last}
}

// InspectUpdates runs the inspectors over a chunk of a round's updates.
func (a *Activities) InspectUpdates(ctx context.Context, in steps.InspectInput) ([]steps.Finding, error) {
	return heartbeating(ctx, a, func() ([]steps.Finding, error) { return a.Engine.InspectUpdates(ctx, in) })
}

// RefineUpdates runs the algorithm's refine phase over a round's updates.
func (a *Activities) RefineUpdates(ctx context.Context, in steps.RefineInput) (steps.RefineOutput, error) {
	return heartbeating(ctx, a, func() (steps.RefineOutput, error) { return a.Engine.RefineUpdates(ctx, in) })
}

// Aggregate builds a round's new global model and server state.
func (a *Activities) Aggregate(ctx context.Context, in steps.AggregateInput) (steps.AggregateOutput, error) {
	return heartbeating(ctx, a, func() (steps.AggregateOutput, error) { return a.Engine.Aggregate(ctx, in) })
}

// Evaluate scores a round's global model.
func (a *Activities) Evaluate(ctx context.Context, in steps.RoundRef) (steps.EvalSummary, error) {
	return heartbeating(ctx, a, func() (steps.EvalSummary, error) { return a.Engine.Evaluate(ctx, in) })
}

// CommitRound closes a round (a local activity).
func (a *Activities) CommitRound(ctx context.Context, in steps.CommitInput) (steps.RoundSummary, error) {
	if err := a.refuse(ctx); err != nil {
		return steps.RoundSummary{}, err
	}
	out, err := a.Engine.CommitRound(ctx, in)
	return out, toTemporal(err)
}

// RunRound runs a whole small round (select to commit) in this worker; it
// heartbeats with the round's phase (steps.RoundPhase).
func (a *Activities) RunRound(ctx context.Context, in steps.RoundInput) (steps.RoundOutput, error) {
	var last progress
	return heartbeatingWith(ctx, a, &last, func() (steps.RoundOutput, error) {
		return a.Engine.RunRoundInOne(ctx, in, func(round int, phase string) {
			last.set(steps.RoundPhase{Round: round, Phase: phase})
			activity.RecordHeartbeat(ctx, last.details()...) // the SDK throttles these
		})
	})
}

// RefusalDelay is how long a refused task waits before it is offered again.
const RefusalDelay = 10 * time.Second

// refuse returns a retryable error of type steps.ErrTypeRefused when this
// worker must not run the current task: its task queue is routed to another
// bucket or build (steps.Routed). Workers poll only the queues routed to
// their own identity, so this catches a worker started by hand on another
// identity's queue; the refusal is logged and shown in the task's failure.
func (a *Activities) refuse(ctx context.Context) error {
	info := activity.GetInfo(ctx)
	want, ok := engine.QueueIdentity(info.TaskQueue)
	if !ok {
		return nil
	}
	err := a.Engine.Refuses(ctx, want)
	if err == nil {
		return nil
	}
	if !engine.IsRefused(err) {
		return err // the bucket's marker cannot be read: retried
	}
	msg := fmt.Sprintf("%s %s of %s on queue %s: %v", info.ActivityType.Name, info.ActivityID, info.WorkflowExecution.ID, info.TaskQueue, err)
	activity.GetLogger(ctx).Warn("refusing task", "activity", info.ActivityType.Name, "workflow", info.WorkflowExecution.ID,
		"queue", info.TaskQueue, "reason", err.Error())
	if !info.IsLocalActivity {
		activity.RecordHeartbeat(ctx, msg)
	}
	return temporal.NewApplicationErrorWithOptions(msg, steps.ErrTypeRefused,
		temporal.ApplicationErrorOptions{NextRetryDelay: RefusalDelay, Cause: err})
}

func (a *Activities) every() time.Duration {
	if a.HeartbeatEvery > 0 {
		return a.HeartbeatEvery
	}
	return 5 * time.Second
}

// heartbeating runs f while heartbeating every interval, so that a worker
// that dies during f is noticed within the heartbeat timeout, and so is a
// hang: the start-to-close timeout bounds f.
func heartbeating[O any](ctx context.Context, a *Activities, f func() (O, error)) (O, error) {
	return heartbeatingWith(ctx, a, &progress{}, f)
}

// heartbeatingWith is heartbeating with p's latest detail in every beat.
// A task this worker refuses (refuse) is not run.
func heartbeatingWith[O any](ctx context.Context, a *Activities, p *progress, f func() (O, error)) (O, error) {
	if err := a.refuse(ctx); err != nil {
		var zero O
		return zero, err
	}
	every := a.every()
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
				activity.RecordHeartbeat(ctx, p.details()...)
			}
		}
	}()
	out, err := f()
	return out, toTemporal(err)
}

// toTemporal classifies an engine error once, by its kind (package
// errkind): divergence, damage and bad input become non-retryable
// application errors whose type the workflows match; anything else is
// returned as is and retried with bounded backoff.
func toTemporal(err error) error {
	if err == nil {
		return nil
	}
	if typ, ok := errTypes[errkind.Of(err)]; ok {
		return temporal.NewNonRetryableApplicationError(err.Error(), typ, err)
	}
	return err
}

// errTypes are the Temporal error types of the kinds that are never
// retried (steps.ErrType*).
var errTypes = map[errkind.Kind]string{
	errkind.Invalid:  steps.ErrTypeInvalid,
	errkind.Damaged:  steps.ErrTypeCorrupt,
	errkind.Diverged: steps.ErrTypeDiverged,
}
