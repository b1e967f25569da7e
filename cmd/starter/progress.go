package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/workflows"
)

// pointLine is one point's progress as the CLI shows it.
type pointLine struct {
	Label   string  `json:"label"`
	ID      string  `json:"id"`
	Status  string  `json:"status"` // the sweep's view, or the running point's own (running, paused, stopping)
	Round   int     `json:"round"`
	Rounds  int     `json:"rounds"`
	TestAcc float64 `json:"test_acc"`
	HasAcc  bool    `json:"has_acc"`
	Error   string  `json:"error,omitempty"`
}

// bar renders a progress bar of the given width.
func bar(done, total, width int) string {
	if total <= 0 {
		total = 1
	}
	n := min(width, done*width/total)
	return "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "]"
}

// renderer draws a block of progress lines: redrawn in place on a terminal,
// printed when something changed (at most every few seconds) otherwise.
type renderer struct {
	w       io.Writer
	tty     bool
	lines   int
	last    string
	lastOut time.Time
}

func newRenderer(w io.Writer) *renderer {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &renderer{w: w, tty: tty}
}

// draw renders a sweep's points: a header with the counts by status and, if
// given, the ETA, then one line per point.
func (r *renderer) draw(title string, pts []pointLine, eta string, final bool) {
	var b strings.Builder
	counts := map[string]int{}
	ended := 0
	for _, p := range pts {
		counts[p.Status]++
		if ends(p.Status) {
			ended++
		}
	}
	fmt.Fprintf(&b, "%s %s %d/%d points\n", title, bar(ended, len(pts), 20), ended, len(pts))
	fmt.Fprintf(&b, "  %d done, %d running, %d paused, %d stopped, %d failed", counts[steps.StatusDone],
		counts[steps.StatusRunning]+counts[workflows.StatusStopping], counts[steps.StatusPaused], counts[steps.StatusStopped], counts[steps.StatusFailed])
	for _, st := range []string{steps.StatusDiverged, steps.StatusPending} {
		if counts[st] > 0 {
			fmt.Fprintf(&b, ", %d %s", counts[st], st)
		}
	}
	if eta != "" {
		fmt.Fprintf(&b, "; %s", eta)
	}
	b.WriteByte('\n')
	width := 0
	for _, p := range pts {
		width = max(width, len(p.Label))
	}
	for _, p := range pts {
		acc := "      "
		if p.HasAcc {
			acc = fmt.Sprintf("%.4f", p.TestAcc)
		}
		fmt.Fprintf(&b, "  %-*s %s %4d/%-4d acc %s  %s", width, p.Label, bar(p.Round, p.Rounds, 24), p.Round, p.Rounds, acc, p.Status)
		if p.Error != "" {
			fmt.Fprintf(&b, ": %s", firstLine(p.Error))
		}
		b.WriteByte('\n')
	}
	s := b.String()
	if r.tty {
		if r.lines > 0 {
			fmt.Fprintf(r.w, "\x1b[%dA\x1b[J", r.lines)
		}
		fmt.Fprint(r.w, s)
		r.lines = strings.Count(s, "\n")
		return
	}
	if s != r.last && (final || time.Since(r.lastOut) > 5*time.Second) {
		fmt.Fprint(r.w, s)
		r.last, r.lastOut = s, time.Now()
	}
}

// ends reports whether a point with this status has ended.
func ends(status string) bool {
	switch status {
	case steps.StatusDone, steps.StatusDiverged, steps.StatusFailed, steps.StatusStopped:
		return true
	}
	return false
}

// etaClock estimates when a sweep ends from the rounds its points complete
// while it is watched: the rate is the rounds completed (all points
// together, so the sweep's concurrency is in it) over the time since the
// first sample, and the work left is the rounds of every point that has not
// ended. It gives no estimate ("ETA —") until a round completes while
// watching, nor while the sweep or all its running points are paused; a
// pause restarts the measurement, so that the time spent paused does not
// count.
type etaClock struct {
	since  time.Time // first sample since watching or since the last pause
	rounds int       // rounds done then
}

func (e *etaClock) update(now time.Time, pts []pointLine, paused bool) string {
	done, left, active := 0, 0, 0
	for _, p := range pts {
		done += p.Round
		if !ends(p.Status) {
			left += max(0, p.Rounds-p.Round)
		}
		if p.Status == steps.StatusRunning || p.Status == workflows.StatusStopping {
			active++
		}
	}
	if paused || active == 0 && left > 0 {
		e.since = time.Time{}
		return "ETA — (paused)"
	}
	if e.since.IsZero() {
		e.since, e.rounds = now, done
	}
	elapsed := now.Sub(e.since)
	if done <= e.rounds || elapsed <= 0 {
		return "ETA —"
	}
	perRound := elapsed / time.Duration(done-e.rounds)
	return fmt.Sprintf("ETA %s (%.1f rounds/min)", (perRound * time.Duration(left)).Round(time.Second), float64(time.Minute)/float64(perRound))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// sweepLines queries a sweep and its running points.
func sweepLines(ctx context.Context, c client.Client, id string) (workflows.SweepStatus, []pointLine, error) {
	st, err := querySweep(ctx, c, id)
	if err != nil {
		return st, nil, err
	}
	lines := make([]pointLine, len(st.Points))
	for i, p := range st.Points {
		l := pointLine{Label: p.Label, ID: p.ID, Status: p.Status, Rounds: p.Rounds, Error: p.Error}
		switch {
		case p.Result != nil:
			l.Round, l.TestAcc, l.HasAcc = p.Result.RoundsDone, p.Result.TestAcc, true
		case p.Status == steps.StatusRunning:
			// The point knows whether it is paused or stopping (a signal
			// may have gone to it directly).
			if pr, err := queryPoint(ctx, c, p.WorkflowID); err == nil {
				l.Round, l.Rounds, l.TestAcc, l.HasAcc = pr.Round, pr.Rounds, pr.TestAcc, true
				if !ends(pr.Status) {
					l.Status = pr.Status
				}
			}
		}
		lines[i] = l
	}
	return st, lines, nil
}

// sweepTitle is the header of a sweep's progress.
func sweepTitle(st workflows.SweepStatus) string {
	switch {
	case st.Stopping:
		return "sweep " + st.Name + " (stopping)"
	case st.Paused:
		return "sweep " + st.Name + " (paused)"
	}
	return "sweep " + st.Name
}

// watch redraws a sweep's progress, with an ETA, until its workflow
// closes. A cancelled ctx (Ctrl-C) stops the watching, not the sweep.
func watch(ctx context.Context, g *globals, c client.Client, id string) error {
	r := newRenderer(g.out)
	var eta etaClock
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		st, lines, qerr := sweepLines(ctx, c, id)
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return fmt.Errorf("describe %s: %w", id, err)
		}
		closed := desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		if qerr == nil {
			e := ""
			if !closed {
				e = eta.update(time.Now(), lines, st.Paused)
			}
			r.draw(sweepTitle(st), lines, e, closed)
		}
		if closed {
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(g.out, "\nstopped watching; the sweep goes on (`starter sweep status %s`)\n", strings.TrimPrefix(id, workflows.SweepID("")))
			return ctx.Err()
		case <-t.C:
		}
	}
}

// showStatus prints a sweep's status once, from Temporal when it answers,
// else from blob storage; with watch, it redraws it until the sweep ends.
func showStatus(ctx context.Context, g *globals, name string, asJSON, watching bool) error {
	c, err := dial(g)
	if err == nil {
		defer c.Close()
		id := workflows.SweepID(name)
		desc, derr := c.DescribeWorkflowExecution(ctx, id, "")
		if derr == nil && watching {
			fmt.Fprintf(g.out, "workflow %s\n  %s\n", id, uiLink(g, id))
			if err := watch(ctx, g, c, id); err != nil {
				if errors.Is(err, context.Canceled) {
					return nil
				}
				return err
			}
			desc, derr = c.DescribeWorkflowExecution(ctx, id, "")
			if derr == nil {
				fmt.Fprintf(g.out, "workflow %s: %s\n", id, desc.GetWorkflowExecutionInfo().GetStatus())
			}
			return nil
		}
		st, lines, qerr := sweepLines(ctx, c, id)
		if derr == nil && qerr == nil {
			if asJSON {
				return json.NewEncoder(g.out).Encode(struct {
					Workflow string                `json:"workflow_status"`
					Sweep    workflows.SweepStatus `json:"sweep"`
					Points   []pointLine           `json:"points"`
				}{desc.GetWorkflowExecutionInfo().GetStatus().String(), st, lines})
			}
			fmt.Fprintf(g.out, "workflow %s: %s\n  %s\n", id, desc.GetWorkflowExecutionInfo().GetStatus(), uiLink(g, id))
			r := &renderer{w: g.out}
			r.draw(sweepTitle(st), lines, "", true)
			return nil
		}
	}
	if watching {
		return fmt.Errorf("sweep %s: Temporal did not answer (%v); `starter sweep status %s` shows what blob storage holds", name, err, name)
	}
	fmt.Fprintf(g.out, "(Temporal did not answer for sweep %s; showing what blob storage holds)\n", name)
	return printResults(ctx, g, name, asJSON, nil)
}

// quietLogger drops the SDK's client logs, which would garble the progress display.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
