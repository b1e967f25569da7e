package main

import (
	"context"
	"encoding/json"
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
	Label   string
	ID      string
	Status  string
	Round   int
	Rounds  int
	TestAcc float64
	HasAcc  bool
	Error   string
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

func (r *renderer) draw(title string, pts []pointLine, final bool) {
	var b strings.Builder
	done := 0
	for _, p := range pts {
		if p.Status == steps.StatusDone || p.Status == steps.StatusDiverged || p.Status == steps.StatusFailed {
			done++
		}
	}
	fmt.Fprintf(&b, "%s %s %d/%d points\n", title, bar(done, len(pts), 20), done, len(pts))
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
			if pr, err := queryPoint(ctx, c, p.WorkflowID); err == nil {
				l.Round, l.Rounds, l.TestAcc, l.HasAcc = pr.Round, pr.Rounds, pr.TestAcc, true
			}
		}
		lines[i] = l
	}
	return st, lines, nil
}

// watch redraws a sweep's progress until its workflow closes.
func watch(ctx context.Context, g *globals, c client.Client, id string) error {
	r := newRenderer(g.out)
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
			r.draw("sweep "+st.Name, lines, closed)
		}
		if closed {
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(g.out, "\nstopped watching; the sweep goes on (`starter sweep status %s`)\n", st.Name)
			return ctx.Err()
		case <-t.C:
		}
	}
}

// showStatus prints a sweep's status once, from Temporal when it answers,
// else from blob storage.
func showStatus(ctx context.Context, g *globals, name string, asJSON bool) error {
	c, err := dial(g)
	if err == nil {
		defer c.Close()
		id := workflows.SweepID(name)
		desc, derr := c.DescribeWorkflowExecution(ctx, id, "")
		st, lines, qerr := sweepLines(ctx, c, id)
		if derr == nil && qerr == nil {
			if asJSON {
				return json.NewEncoder(g.out).Encode(struct {
					Workflow string                `json:"workflow_status"`
					Sweep    workflows.SweepStatus `json:"sweep"`
				}{desc.GetWorkflowExecutionInfo().GetStatus().String(), st})
			}
			fmt.Fprintf(g.out, "workflow %s: %s\n  %s\n", id, desc.GetWorkflowExecutionInfo().GetStatus(), uiLink(g, id))
			r := &renderer{w: g.out}
			r.draw("sweep "+st.Name, lines, true)
			return nil
		}
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
