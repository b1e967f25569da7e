package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/sweep"
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
	counts := map[string]int{}
	for _, p := range pts {
		counts[p.Status]++
	}
	r.drawCounts(title, counts, len(pts), pts, "", eta, final)
}

// drawCounts renders a header with the counts by status of total points
// and, if given, the ETA, then one line per point of pts (some of them),
// then note.
func (r *renderer) drawCounts(title string, counts map[string]int, total int, pts []pointLine, note, eta string, final bool) {
	var b strings.Builder
	ended := 0
	for st, n := range counts {
		if ends(st) {
			ended += n
		}
	}
	fmt.Fprintf(&b, "%s %s %d/%d points\n", title, bar(ended, total, 20), ended, total)
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
	if note != "" {
		fmt.Fprintf(&b, "  %s\n", note)
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

// work is a sweep's rounds: done (by its points that ended done or
// diverged, and by the running ones), left (by the points that have not
// ended), and its number of running points.
type work struct {
	done, left, active int
}

// linesWork sums the work of the points' lines.
func linesWork(pts []pointLine) work {
	var w work
	for _, p := range pts {
		w.add(p)
	}
	return w
}

func (w *work) add(p pointLine) {
	w.done += p.Round
	if !ends(p.Status) {
		w.left += max(0, p.Rounds-p.Round)
	}
	if p.Status == steps.StatusRunning || p.Status == workflows.StatusStopping {
		w.active++
	}
}

func (e *etaClock) update(now time.Time, w work, paused bool) string {
	if paused || w.active == 0 && w.left > 0 {
		e.since = time.Time{}
		return "ETA — (paused)"
	}
	if e.since.IsZero() {
		e.since, e.rounds = now, w.done
	}
	elapsed := now.Sub(e.since)
	if w.done <= e.rounds || elapsed <= 0 {
		return "ETA —"
	}
	perRound := elapsed / time.Duration(w.done-e.rounds)
	return fmt.Sprintf("ETA %s (%.1f rounds/min)", (perRound * time.Duration(w.left)).Round(time.Second), float64(time.Minute)/float64(perRound))
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

// statusView says which points `sweep status` lists: by default every
// point of a sweep of at most steps.MaxListed points, and only the running
// and failed points of a larger one; all lists every point, page one page
// of pageLines points (from 1), status only the points with these statuses.
type statusView struct {
	all    bool
	page   int
	status []string
}

// pageLines is the number of points of a `sweep status --page`.
const pageLines = 100

// sweepView is what `sweep status` shows of a sweep: its status (counts for
// every point), the lines of the points listed, and a note on the others.
type sweepView struct {
	st    workflows.SweepStatus
	lines []pointLine
	note  string
	work  work
}

// pointInfos are a sweep's points in spec order, loaded on first use (the
// spec of a large sweep takes seconds to parse): they name the points the
// workflow answers by index only, and give every point's rounds for the ETA.
type pointInfos struct {
	load   func() []steps.PointInfo
	loaded bool
	v      []steps.PointInfo
}

func (p *pointInfos) get() []steps.PointInfo {
	if !p.loaded && p.load != nil {
		p.v, p.loaded = p.load(), true
	}
	return p.v
}

// sweepLines queries a sweep's status (by pages) and its running points;
// with eta, the sweep's rounds done and left too (from its spec).
func sweepLines(ctx context.Context, c client.Client, id string, view statusView, pi *pointInfos, eta bool) (sweepView, error) {
	var v sweepView
	req := workflows.StatusRequest{Limit: workflows.MaxStatusLimit, Status: view.status}
	if !view.all && len(view.status) == 0 {
		req.Limit = steps.MaxListed // every point of a small sweep; for a larger one, a second query
	}
	if view.page > 0 {
		req.Offset, req.Limit = (view.page-1)*pageLines, pageLines
	}
	st, err := querySweep(ctx, c, id, req)
	if err != nil {
		return v, err
	}
	pts := st.Points
	listAll := view.all || (view.page == 0 && len(view.status) == 0 && st.Total <= steps.MaxListed)
	switch {
	case view.page > 0:
		v.note = fmt.Sprintf("page %d of %d (%d points a page; %d points match)", view.page, max(1, (st.Matched+pageLines-1)/pageLines), pageLines, st.Matched)
	case listAll:
		req.Limit = workflows.MaxStatusLimit
		for len(pts) < st.Matched {
			req.Offset = len(pts)
			next, err := querySweep(ctx, c, id, req)
			if err != nil {
				return v, err
			}
			if len(next.Points) == 0 {
				break
			}
			pts = append(pts, next.Points...)
			st = next
		}
	case len(view.status) == 0:
		// The running and failed points only.
		req.Status, req.Limit = []string{steps.StatusRunning, steps.StatusFailed}, workflows.MaxStatusLimit
		if st, err = querySweep(ctx, c, id, req); err != nil {
			return v, err
		}
		pts = st.Points
		if n := st.Total - len(pts); n > 0 {
			v.note = fmt.Sprintf("(%d points not listed: `--all` lists every point, `--page N` %d at a time, `--status S` those with status S)", n, pageLines)
		}
	}
	if !listAll && view.page == 0 && st.Matched > len(pts) {
		v.note = fmt.Sprintf("(the first %d of %d points listed; `--page N` shows the others)", len(pts), st.Matched)
	}
	v.st = st
	var infos []steps.PointInfo
	if eta || slices.ContainsFunc(pts, func(p workflows.PointStatus) bool { return p.ID == "" }) {
		infos = pi.get()
	}
	listed := map[int]bool{}
	for _, p := range pts {
		if p.ID == "" && p.Index >= 0 && p.Index < len(infos) {
			p.PointInfo = infos[p.Index]
		}
		l := pointLine{Label: p.Label, ID: p.ID, Status: p.Status, Rounds: p.Rounds, Error: p.Error}
		switch {
		case p.Result != nil:
			l.Round, l.TestAcc, l.HasAcc = p.Result.RoundsDone, p.Result.TestAcc, true
		case p.Status == steps.StatusRunning && p.WorkflowID != "":
			// The point knows whether it is paused or stopping (a signal
			// may have gone to it directly). The sweep names the workflow
			// of every point it runs.
			if pr, err := queryPoint(ctx, c, p.WorkflowID); err == nil {
				l.Round, l.Rounds, l.TestAcc, l.HasAcc = pr.Round, pr.Rounds, pr.TestAcc, true
				if !ends(pr.Status) {
					l.Status = pr.Status
				}
			}
		}
		if p.Status == steps.StatusRunning || len(infos) != len(st.Codes) {
			v.work.add(l)
			listed[p.Index] = true
		}
		v.lines = append(v.lines, l)
	}
	// The other points' rounds, from the spec.
	if len(infos) == len(st.Codes) {
		for i := range len(st.Codes) {
			if listed[i] {
				continue
			}
			switch workflows.StatusOfCode(st.Codes[i]) {
			case steps.StatusDone, steps.StatusDiverged:
				v.work.done += infos[i].Rounds
			case steps.StatusPending:
				v.work.left += infos[i].Rounds
			}
		}
	}
	return v, nil
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

// counts are the sweep's counts by status, with its running points split
// by their own state (running, paused, stopping) as their lines show it.
func (v sweepView) counts() map[string]int {
	c := maps.Clone(v.st.Counts)
	if c == nil {
		c = map[string]int{}
	}
	for _, l := range v.lines {
		if v.st.Total > 0 && l.Status != steps.StatusRunning && !ends(l.Status) && l.Status != steps.StatusPending {
			c[steps.StatusRunning]--
			c[l.Status]++
		}
	}
	return c
}

// specInfos returns a sweep's points from its spec (workflow history or
// blob storage), or nil when it cannot be found.
func specInfos(ctx context.Context, g *globals, name string) []steps.PointInfo {
	file, data, err := storedSpec(ctx, g, name)
	if err != nil {
		return nil
	}
	sw, err := sweep.Parse(file, data)
	if err != nil {
		return nil
	}
	return engine.PlanOutput(sw).Points
}

// watch redraws a sweep's progress, with an ETA, until its workflow
// closes. A cancelled ctx (Ctrl-C) stops the watching, not the sweep. It
// redraws every second, and at once when the workflow closes: a long poll
// on the workflow's result (which follows continue-as-new) wakes it, so
// `sweep start --wait` returns as soon as the sweep ends.
func watch(ctx context.Context, g *globals, c client.Client, id string, view statusView, pi *pointInfos) error {
	r := newRenderer(g.out)
	var eta etaClock
	t := time.NewTicker(time.Second)
	defer t.Stop()
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_ = c.GetWorkflow(pollCtx, id, "").Get(pollCtx, nil) // its outcome is read below
	}()
	for {
		v, qerr := sweepLines(ctx, c, id, view, pi, true)
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return fmt.Errorf("describe %s: %w", id, err)
		}
		closed := desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		if qerr == nil {
			e := ""
			if !closed {
				e = eta.update(time.Now(), v.work, v.st.Paused)
			}
			r.drawCounts(sweepTitle(v.st), v.counts(), v.st.Total, v.lines, v.note, e, closed)
		}
		if closed {
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(g.out, "\nstopped watching; the sweep goes on (`starter sweep status %s`)\n", strings.TrimPrefix(id, workflows.SweepID("")))
			return ctx.Err()
		case <-t.C:
		case <-ended:
			ended = nil // a closed run is described on the next pass; a nil channel never fires again
		}
	}
}

// showStatus prints a sweep's status once, from Temporal when it answers,
// else from blob storage; with watch, it redraws it until the sweep ends.
func showStatus(ctx context.Context, g *globals, name string, asJSON, watching bool, view statusView) error {
	c, err := dial(g)
	if err == nil {
		defer c.Close()
		id := workflows.SweepID(name)
		pi := &pointInfos{load: func() []steps.PointInfo { return specInfos(ctx, g, name) }}
		desc, derr := c.DescribeWorkflowExecution(ctx, id, "")
		if derr == nil && watching {
			fmt.Fprintf(g.out, "workflow %s\n  %s\n", id, uiLink(g, id))
			if err := watch(ctx, g, c, id, view, pi); err != nil {
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
		v, qerr := sweepLines(ctx, c, id, view, pi, false)
		if derr == nil && qerr == nil {
			if asJSON {
				v.st.Points = nil
				return json.NewEncoder(g.out).Encode(struct {
					Workflow string                `json:"workflow_status"`
					Sweep    workflows.SweepStatus `json:"sweep"`
					Points   []pointLine           `json:"points"`
				}{desc.GetWorkflowExecutionInfo().GetStatus().String(), v.st, v.lines})
			}
			fmt.Fprintf(g.out, "workflow %s: %s\n  %s\n", id, desc.GetWorkflowExecutionInfo().GetStatus(), uiLink(g, id))
			r := &renderer{w: g.out}
			r.drawCounts(sweepTitle(v.st), v.counts(), v.st.Total, v.lines, v.note, "", true)
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
