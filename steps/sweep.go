package steps

import (
	"fmt"
	"strings"
)

// After a point: what a sweep does when one of its points fails. This is
// the one statement of it; the sweep workflow (workflows.SweepWorkflow)
// and the in-process runner (engine.RunSweep) both follow it. A failed
// point does not stop the others: every point that can run, runs, and the
// sweep then ends with a PointsFailed error that names the failed points
// (the first MaxFailuresNamed of them) and how to go on. Only a
// cancellation (Ctrl-C, `starter sweep cancel`) or a stop signal ends a
// sweep's running points early.

// MaxFailuresNamed bounds how many failed points a sweep's error names.
const MaxFailuresNamed = 10

// FailedPoint is a point that ended with an error.
type FailedPoint struct {
	ID, Label string
	Error     string
}

// PointsFailed is the error a sweep ends with when Failed of its Total
// points failed. Err is the first failed point's error in plan order (so
// its kind, errkind.Of, is the sweep's), First the failed points in plan
// order that the runner kept (the message names up to MaxFailuresNamed),
// and Resume the command that runs what is left.
type PointsFailed struct {
	Sweep         string
	Failed, Total int
	First         []FailedPoint
	Resume        string
	Err           error
}

func (e *PointsFailed) Error() string {
	// Sprintf, not Fprintf into a builder: the sweep workflow calls it,
	// and workflowcheck takes every io.Writer for a side effect.
	named := make([]string, 0, min(len(e.First), MaxFailuresNamed))
	for _, p := range e.First[:min(len(e.First), MaxFailuresNamed)] {
		named = append(named, fmt.Sprintf("%s (%s): %s", p.ID, p.Label, p.Error))
	}
	return fmt.Sprintf("%d of %d points failed; fix the cause and run %s; the first: [%s]", e.Failed, e.Total, e.Resume, strings.Join(named, " "))
}

func (e *PointsFailed) Unwrap() error { return e.Err }
