package steps

import (
	"fmt"
	"time"
)

// Where says where a step runs.
type Where int

const (
	// Server steps are cheap decisions on small state (which clients, whether a
	// round is done): local activities in the workflow worker.
	Server Where = iota
	// Worker steps read and write models: activities on the training queue.
	Worker
)

// Info describes a step: the activity name it is registered under, where it
// runs, and its timeout and attempts (docs/architecture.md, "Temporal": every step has a
// start-to-close timeout and a bounded number of attempts; bad input and
// divergence are never retried).
type Info struct {
	Name     string
	Where    Where
	Timeout  time.Duration
	Attempts int32
}

// Step pairs a step's Info with its payload types, so that a workflow calling
// it and an engine implementing it cannot disagree on them: Call and CallAll
// take a Step[In, Out] and an In and return an Out, and the engine and the
// activities bind their functions to the same value.
type Step[In, Out any] struct{ Info }

// Exec runs steps. The RoundWorkflow's Exec runs them as Temporal activities;
// the engine's runs them in-process. Both run the same Round.
type Exec interface {
	// Run runs step s once and decodes its result into out (a pointer).
	Run(s Info, in, out any) error
	// RunAll runs step s once per input, concurrently, and decodes the i-th
	// result into outs[i] (pointers); the first error wins.
	RunAll(s Info, ins, outs []any) error
	// Status reports what the round is doing now (the Temporal UI's current
	// details of the round's workflow).
	Status(msg string)
}

// Call runs s with in through x.
func Call[In, Out any](x Exec, s Step[In, Out], in In) (Out, error) {
	var out Out
	err := x.Run(s.Info, in, &out)
	return out, err
}

// CallAll runs s once per input through x, concurrently, and returns the
// results in input order.
func CallAll[In, Out any](x Exec, s Step[In, Out], ins []In) ([]Out, error) {
	outs := make([]Out, len(ins))
	anyIns, anyOuts := make([]any, len(ins)), make([]any, len(ins))
	for i := range ins {
		anyIns[i], anyOuts[i] = ins[i], &outs[i]
	}
	if err := x.RunAll(s.Info, anyIns, anyOuts); err != nil {
		return nil, err
	}
	return outs, nil
}

// Labeled is implemented by inputs that name themselves in the Temporal UI
// (an activity's summary).
type Labeled interface{ Label() string }

// chunks splits clients into consecutive chunks of at most size (at least 1).
func chunks(clients []int, size int) [][]int {
	size = max(size, 1)
	var out [][]int
	for lo := 0; lo < len(clients); lo += size {
		out = append(out, clients[lo:min(lo+size, len(clients)):min(lo+size, len(clients))])
	}
	return out
}

func label(what string, clients []int, round int) string {
	if len(clients) == 1 {
		return fmt.Sprintf("%s client %d, round %d", what, clients[0], round)
	}
	return fmt.Sprintf("%s clients %v, round %d", what, clients, round)
}
