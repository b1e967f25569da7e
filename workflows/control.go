package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// signals receives the control signals (pause, unpause, stop). A goroutine
// hands each to handle as it comes, so that a workflow.Await sees its
// effect while the workflow waits; drain hands over the ones that reached
// the workflow in the current workflow task but that the goroutine has not
// received yet. A workflow drains before it continues as new or decides
// to stop, so that no signal is lost.
type signals struct {
	chans  [len(signalNames)]workflow.ReceiveChannel
	handle func(ctx workflow.Context, signal string, c Control)
}

// signalNames is the order in which the signals of one workflow task are
// handled: the SDK does not tell their arrival order across channels.
var signalNames = [...]string{PauseSignal, UnpauseSignal, StopSignal}

// listen starts receiving the control signals. handle gets each signal's
// name and its payload decoded as a Control (zero without a payload).
func listen(ctx workflow.Context, handle func(ctx workflow.Context, signal string, c Control)) *signals {
	s := &signals{handle: handle}
	for i, name := range signalNames {
		s.chans[i] = workflow.GetSignalChannel(ctx, name)
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		sel := workflow.NewSelector(ctx)
		for i, name := range signalNames {
			sel.AddReceive(s.chans[i], func(ch workflow.ReceiveChannel, _ bool) {
				var c Control
				ch.Receive(ctx, &c)
				s.handle(ctx, name, c)
			})
		}
		for {
			sel.Select(ctx)
		}
	})
	return s
}

// drain handles every signal already received but not yet handled. It
// first yields once: a signal that reaches the workflow while the
// receiving goroutine waits in its selector is handed to that goroutine,
// not left in the channel, so ReceiveAsync cannot see it, and the goroutine
// handles it only when it next runs. Without the yield a point that
// decided to continue as new in the workflow task that brought an unpause
// carried "paused" into its next run, and waited there for ever
// (TestDamagedCheckpoint). The yield adds no command: histories replay
// unchanged.
func (s *signals) drain(ctx workflow.Context) {
	yielded := false
	workflow.Go(ctx, func(workflow.Context) { yielded = true })
	_ = workflow.Await(ctx, func() bool { return yielded })
	for i, ch := range s.chans {
		for {
			var c Control
			if !ch.ReceiveAsync(&c) {
				break
			}
			s.handle(ctx, signalNames[i], c)
		}
	}
}
