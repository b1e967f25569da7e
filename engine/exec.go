package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// handler is a step's in-process implementation, on JSON payloads: the
// in-process runner passes every payload through the encoding Temporal
// uses, so both runners hand the steps the same values.
type handler func(ctx context.Context, in []byte) ([]byte, error)

// bind adapts f to a handler. Its signature must match the step's payload
// types, which the compiler checks.
func bind[In, Out any](_ steps.Step[In, Out], f func(context.Context, In) (Out, error)) handler {
	return func(ctx context.Context, b []byte) ([]byte, error) {
		var in In
		if err := json.Unmarshal(b, &in); err != nil {
			return nil, fmt.Errorf("decode input: %w", err)
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// handlers maps every step (steps.All) to its implementation.
func (e *Engine) handlers() map[string]handler {
	return map[string]handler{
		steps.PlanSweep.Name:     bind(steps.PlanSweep, e.PlanSweep),
		steps.ReadPlan.Name:      bind(steps.ReadPlan, e.ReadPlan),
		steps.PreparePoint.Name:  bind(steps.PreparePoint, e.PreparePoint),
		steps.FinishPoint.Name:   bind(steps.FinishPoint, e.FinishPoint),
		steps.SelectClients.Name: bind(steps.SelectClients, e.SelectClients),
		steps.QueryClients.Name:  bind(steps.QueryClients, e.QueryClients),
		steps.Broadcast.Name:     bind(steps.Broadcast, e.Broadcast),
		steps.TrainClients.Name: bind(steps.TrainClients, func(ctx context.Context, in steps.TrainInput) ([]fl.ClientSummary, error) {
			return e.TrainClients(ctx, in, nil)
		}),
		steps.InspectUpdates.Name: bind(steps.InspectUpdates, e.InspectUpdates),
		steps.RefineUpdates.Name:  bind(steps.RefineUpdates, e.RefineUpdates),
		steps.Aggregate.Name:      bind(steps.Aggregate, e.Aggregate),
		steps.Evaluate.Name:       bind(steps.Evaluate, e.Evaluate),
		steps.CommitRound.Name:    bind(steps.CommitRound, e.CommitRound),
		steps.RunRound.Name: bind(steps.RunRound, func(ctx context.Context, in steps.RoundInput) (steps.RoundOutput, error) {
			return e.RunRoundInOne(ctx, in, nil)
		}),
	}
}

// exec is the in-process steps.Exec: it calls the engine's handlers, the
// calls of a fan-out concurrently (the engine's slots bound the work).
type exec struct {
	ctx      context.Context
	handlers map[string]handler
	status   func(string)
	clock    *stepClock
}

var _ steps.Exec = exec{}

func (e *Engine) exec(ctx context.Context, status func(string)) exec {
	e.handlersOnce.Do(func() { e.steps = e.handlers() })
	return exec{ctx: ctx, handlers: e.steps, status: status, clock: &e.clock}
}

func (x exec) Run(s steps.Info, in, out any) error {
	h, ok := x.handlers[s.Name]
	if !ok {
		return fmt.Errorf("engine: no implementation of step %s", s.Name)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: encode input: %w", s.Name, err)
	}
	start := time.Now()
	res, err := h(x.ctx, b)
	x.clock.add(s.Name, time.Since(start))
	if err != nil {
		return err
	}
	return json.Unmarshal(res, out)
}

func (x exec) RunAll(s steps.Info, ins, outs []any) error {
	errs := make([]error, len(ins))
	var wg sync.WaitGroup
	for i := range ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = x.Run(s, ins[i], outs[i])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (x exec) Status(msg string) {
	if x.status != nil {
		x.status(msg)
	}
}
