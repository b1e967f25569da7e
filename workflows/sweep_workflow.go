package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/steps"
)

// SweepWorkflow plans a sweep and runs one child PointWorkflow per point,
// at most Concurrency at a time, in spec order. A point already done returns
// at once (its PreparePoint finds DONE.json), so running a sweep again only
// computes what is missing.
//
// The plan lives in blob storage: PlanSweep writes the points in pages of
// in.PageSize and returns a summary, and the workflow reads the page it
// needs (ReadPlan). After starting a page's points (or earlier, when the
// server suggests it), it stops starting points, waits for the running ones
// to end, and continues as new with a SweepState: a cursor, one status
// letter per point, the pause and stop state and the held signals
// (docs/architecture.md, "Temporal"). The status query answers a page of
// points with the whole sweep's counts (StatusRequest).
//
// Signals (see PauseSignal) without a point apply to the whole sweep: they
// are forwarded to every running point, and a paused sweep starts no new
// point, a stopped one none at all (its points not started are stopped).
// With a point (Control.Point), they go to that point if it runs, and are
// kept for it if it has not started yet.
func SweepWorkflow(ctx workflow.Context, in SweepInput) (SweepResult, error) {
	// Histories recorded before the plan was paged run the whole plan in
	// one payload and one run.
	if workflow.GetVersion(ctx, "paged-plan", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return sweepUnpaged(ctx, in)
	}
	return sweepPaged(ctx, in)
}

// sweepUnpaged is SweepWorkflow before the plan was paged: every point in
// one PlanSweep result and in memory, one run. It stays for the runs
// recorded with it (workflows/testdata/histories).
func sweepUnpaged(ctx workflow.Context, in SweepInput) (SweepResult, error) {
	logger := workflow.GetLogger(ctx)
	plan, err := call(ctx, steps.PlanSweep, "", steps.PlanSweepInput{File: in.File, Spec: in.Spec})
	if err != nil {
		return SweepResult{}, err
	}
	queue := plan.TrainQueue
	if in.TrainQueue != "" {
		queue = in.TrainQueue
	}
	// A sweep's points run only on workers of its bucket and build
	// (plan.Identity): their workflows, local activities and activities go
	// to queues routed by it, which only such workers poll.
	pointQueue := steps.Routed(workflow.GetInfo(ctx).TaskQueueName, plan.Identity)
	queue = steps.Routed(queue, plan.Identity)
	status := SweepStatus{Name: plan.Name, Hash: plan.Hash}
	for _, p := range plan.Points {
		status.Points = append(status.Points, PointStatus{PointInfo: p, WorkflowID: UnlabelledPointWorkflowID(plan.Name, p.ID), Status: steps.StatusPending})
	}
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func(req StatusRequest) (SweepStatus, error) {
		codes := make([]byte, len(status.Points))
		for i, p := range status.Points {
			codes[i] = StatusCode(p.Status)
		}
		return answer(status, string(codes), req, func(i int) PointStatus { return status.Points[i] }), nil
	}); err != nil {
		return SweepResult{}, err
	}

	children := make([]workflow.ChildWorkflowFuture, len(status.Points))
	held := map[string]string{} // a point not started yet → the last signal for it alone
	// forward signals point i's workflow once it has started; a point that
	// ended meanwhile is no error.
	forward := func(ctx workflow.Context, i int, signal string) {
		f := children[i]
		workflow.Go(ctx, func(ctx workflow.Context) {
			if err := f.SignalChildWorkflow(ctx, signal, nil).Get(ctx, nil); err != nil {
				logger.Info("signal not delivered", "point", status.Points[i].ID, "signal", signal, "error", err)
			}
		})
	}
	sig := listen(ctx, func(ctx workflow.Context, signal string, c Control) {
		logger.Info("signal", "signal", signal, "point", c.Point)
		for i := range status.Points {
			p := &status.Points[i]
			if c.Point != "" && c.Point != p.ID {
				continue
			}
			switch {
			case p.Status == steps.StatusPending && c.Point != "":
				held[p.ID] = signal
			case p.Status == steps.StatusPending:
				delete(held, p.ID)
			case children[i] != nil && !isFinal(p.Status):
				forward(ctx, i, signal)
			}
		}
		if c.Point != "" {
			return
		}
		switch signal {
		case PauseSignal:
			status.Paused = true
		case UnpauseSignal:
			status.Paused = false
		case StopSignal:
			status.Stopping = true
		}
	})

	running := 0
	finished := 0
	ready := func() bool { return status.Stopping || (!status.Paused && running < plan.Concurrency) }
	for i := range status.Points {
		// Signals that came with this workflow task count before the next
		// point starts.
		for sig.drain(ctx); !ready(); sig.drain(ctx) {
			if err := workflow.Await(ctx, ready); err != nil {
				return SweepResult{}, err
			}
		}
		p := &status.Points[i]
		if status.Stopping || held[p.ID] == StopSignal {
			p.Status = steps.StatusStopped
			finished++
			continue
		}
		paused := held[p.ID] == PauseSignal
		delete(held, p.ID)
		f := startPoint(ctx, plan, pointQueue, queue, *p, paused)
		children[i] = f
		p.Status = steps.StatusRunning
		running++
		workflow.Go(ctx, func(gctx workflow.Context) {
			var res steps.PointResult
			if err := f.Get(gctx, &res); err != nil {
				p.Status, p.Error = steps.StatusFailed, rootCause(err)
			} else {
				p.Status, p.Result = res.Status, &res
			}
			running--
			finished++
		})
	}
	if err := workflow.Await(ctx, func() bool { return finished == len(status.Points) }); err != nil {
		return SweepResult{}, err
	}
	status.Done = true
	var failed []string
	for _, p := range status.Points {
		if p.Status == steps.StatusFailed {
			failed = append(failed, fmt.Sprintf("%s (%s): %s", p.ID, p.Label, p.Error))
		}
	}
	res := SweepResult{Name: plan.Name, Points: status.Points}
	if len(failed) > 0 {
		return res, temporal.NewApplicationError(fmt.Sprintf("%d of %d points failed; fix the cause and run `starter sweep resume %s`: %v",
			len(failed), len(status.Points), plan.Name, failed), "PointsFailed")
	}
	return res, nil
}

// isFinal reports whether a point's status is one it ends with.
func isFinal(status string) bool {
	switch status {
	case steps.StatusDone, steps.StatusDiverged, steps.StatusStopped, steps.StatusFailed:
		return true
	}
	return false
}

// rootCause returns the message of the first application error in a chain
// (child workflow → activity → application error): the part that says what
// to fix, without the wrappers.
func rootCause(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return err.Error()
}

// running is a point started by this run of the workflow.
type running struct {
	PointStatus
	f workflow.ChildWorkflowFuture
}

// sweepPaged is SweepWorkflow with its plan in blob storage and
// Continue-As-New after each page (see SweepWorkflow).
func sweepPaged(ctx workflow.Context, in SweepInput) (SweepResult, error) {
	logger := workflow.GetLogger(ctx)
	st := in.State
	var codes []byte
	var window []*running // in start order
	done := false
	// The query answers from the start: with no points while the sweep plans.
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func(req StatusRequest) (SweepStatus, error) {
		if codes == nil {
			return SweepStatus{Counts: map[string]int{}, Points: []PointStatus{}}, nil
		}
		known := map[int]PointStatus{}
		for _, p := range st.Failed {
			known[p.Index] = p
		}
		for _, r := range window {
			known[r.Index] = r.PointStatus
		}
		base := SweepStatus{Name: st.Plan.Name, Hash: st.Plan.Hash, Done: done, Paused: st.Paused, Stopping: st.Stopping, Run: st.Run}
		return answer(base, string(codes), req, func(i int) PointStatus {
			if st.Listed != nil {
				return st.Listed[i]
			}
			if p, ok := known[i]; ok {
				return p
			}
			return PointStatus{PointInfo: steps.PointInfo{Index: i}, Status: StatusOfCode(codes[i])}
		}), nil
	}); err != nil {
		return SweepResult{}, err
	}
	if st == nil {
		size := in.PageSize
		if size == 0 {
			size = steps.DefaultPageSize
		}
		plan, err := call(ctx, steps.PlanSweep, "", steps.PlanSweepInput{File: in.File, Spec: in.Spec, PageSize: size})
		if err != nil {
			return SweepResult{}, err
		}
		st = &SweepState{Plan: plan, Codes: strings.Repeat(string(StatusCode(steps.StatusPending)), plan.Count), Run: 1}
		// A sweep keeps the ID scheme of its first run for life (its
		// later runs read it from the state): histories recorded before
		// labelled IDs, and sweeps that planned before them, replay
		// without the marker and keep unlabelled IDs.
		st.LabelIDs = workflow.GetVersion(ctx, "labelled-ids", workflow.DefaultVersion, 1) == 1
		for _, p := range plan.Points {
			st.Listed = append(st.Listed, PointStatus{PointInfo: p, WorkflowID: st.pointWorkflowID(p), Status: steps.StatusPending})
		}
		st.Plan.Points = nil
	} else {
		st.Run++
	}
	plan := st.Plan
	if plan.PageSize < 1 || len(st.Codes) != plan.Count || st.Next < 0 || st.Next > plan.Count {
		return SweepResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("sweep state: page size %d, %d status letters for %d points, next point %d: want a page size >= 1, one letter per point and 0 <= next <= points",
			plan.PageSize, len(st.Codes), plan.Count, st.Next), steps.ErrTypeInvalid, nil)
	}
	queue := plan.TrainQueue
	if in.TrainQueue != "" {
		queue = in.TrainQueue
	}
	// Points run only on workers of the sweep's bucket and build, as in
	// sweepUnpaged.
	pointQueue := steps.Routed(workflow.GetInfo(ctx).TaskQueueName, plan.Identity)
	queue = steps.Routed(queue, plan.Identity)
	codes = []byte(st.Codes)
	// set records point i's status (and its line when the sweep lists every point).
	set := func(i int, ps PointStatus) {
		codes[i] = StatusCode(ps.Status)
		if st.Listed != nil {
			st.Listed[i].Status, st.Listed[i].Result, st.Listed[i].Error = ps.Status, ps.Result, ps.Error
		}
		if ps.Status == steps.StatusFailed && len(st.Failed) < MaxFailedKept {
			ps.Error = firstBytes(ps.Error, 1000)
			st.Failed = append(st.Failed, ps)
		}
	}

	var page steps.PlanPage
	pageNo := -1
	forward := func(ctx workflow.Context, r *running, signal string) {
		workflow.Go(ctx, func(ctx workflow.Context) {
			if err := r.f.SignalChildWorkflow(ctx, signal, nil).Get(ctx, nil); err != nil {
				logger.Info("signal not delivered", "point", r.ID, "signal", signal, "error", err)
			}
		})
	}
	sig := listen(ctx, func(ctx workflow.Context, signal string, c Control) {
		logger.Info("signal", "signal", signal, "point", c.Point)
		if c.Point != "" {
			for _, r := range window {
				if r.ID == c.Point {
					forward(ctx, r, signal)
					return
				}
			}
			// A point of the loaded page before the cursor has ended.
			if i := slices.IndexFunc(page.Points, func(p steps.PointInfo) bool { return p.ID == c.Point }); i >= 0 && page.Points[i].Index < st.Next {
				return
			}
			if st.Held == nil {
				st.Held = map[string]string{}
			}
			st.Held[c.Point] = signal
			return
		}
		for _, r := range window {
			forward(ctx, r, signal)
		}
		st.Held = nil // a sweep-wide signal replaces what points not started kept
		switch signal {
		case PauseSignal:
			st.Paused = true
		case UnpauseSignal:
			st.Paused = false
		case StopSignal:
			st.Stopping = true
		}
	})

	ready := func() bool { return st.Stopping || (!st.Paused && len(window) < plan.Concurrency) }
	started := 0
	for st.Next < plan.Count {
		// Signals that came with this workflow task count before the next
		// point starts.
		for sig.drain(ctx); !ready(); sig.drain(ctx) {
			if err := workflow.Await(ctx, ready); err != nil {
				return SweepResult{}, err
			}
		}
		if st.Stopping {
			for i := st.Next; i < plan.Count; i++ {
				set(i, PointStatus{Status: steps.StatusStopped})
			}
			st.Next = plan.Count
			break
		}
		i := st.Next
		if started > 0 && (i%plan.PageSize == 0 || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			break // continue as new once the window has drained
		}
		var p steps.PointInfo
		ended := ""
		if st.Listed != nil {
			p = st.Listed[i].PointInfo
		} else {
			if n := i / plan.PageSize; n != pageNo {
				var err error
				if page, err = call(ctx, steps.ReadPlan, "", steps.PlanPageInput{Sweep: plan.Name, PageSize: plan.PageSize, Page: n}); err != nil {
					return SweepResult{}, err
				}
				pageNo = n
			}
			j := i - pageNo*plan.PageSize
			if j >= len(page.Points) || page.Points[j].Index != i || len(page.Ended) != len(page.Points) {
				return SweepResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("plan page %d of sweep %s holds %d points, not point %d; plan the sweep again",
					pageNo, plan.Name, len(page.Points), i), steps.ErrTypeInvalid, nil)
			}
			p, ended = page.Points[j], page.Ended[j]
		}
		held := st.Held[p.ID]
		delete(st.Held, p.ID)
		st.Next++
		if ended != "" {
			// Over for good (DONE.json): no workflow to start.
			set(i, PointStatus{PointInfo: p, Status: ended})
			continue
		}
		if held == StopSignal {
			set(i, PointStatus{PointInfo: p, Status: steps.StatusStopped})
			continue
		}
		r := &running{PointStatus: PointStatus{PointInfo: p, WorkflowID: st.pointWorkflowID(p), Status: steps.StatusRunning}}
		r.f = startPoint(ctx, plan, pointQueue, queue, r.PointStatus, held == PauseSignal)
		window = append(window, r)
		set(i, r.PointStatus)
		started++
		workflow.Go(ctx, func(gctx workflow.Context) {
			var res steps.PointResult
			if err := r.f.Get(gctx, &res); err != nil {
				r.Status, r.Error = steps.StatusFailed, rootCause(err)
			} else {
				r.Status, r.Result = res.Status, &res
			}
			window = slices.DeleteFunc(window, func(x *running) bool { return x == r })
			set(r.Index, r.PointStatus)
		})
	}
	if err := workflow.Await(ctx, func() bool { return len(window) == 0 }); err != nil {
		return SweepResult{}, err
	}
	st.Codes = string(codes)
	if st.Next < plan.Count {
		sig.drain(ctx)
		logger.Info("continuing as new", "next", st.Next, "points", plan.Count, "run", st.Run)
		return SweepResult{}, workflow.NewContinueAsNewError(ctx, SweepWorkflowName, SweepInput{
			File: in.File, Spec: in.Spec, TrainQueue: in.TrainQueue, PageSize: in.PageSize, State: st,
		})
	}
	done = true
	counts := Counts(st.Codes)
	res := SweepResult{Name: plan.Name, Total: plan.Count, Counts: counts, Failed: st.Failed, Points: st.Listed}
	if n := counts[steps.StatusFailed]; n > 0 {
		// The sweep ends so once every point that could run has run
		// (steps.PointsFailed).
		pf := &steps.PointsFailed{Sweep: plan.Name, Failed: n, Total: plan.Count, Resume: fmt.Sprintf("`starter sweep resume %s`", plan.Name)}
		for _, p := range st.Failed {
			pf.First = append(pf.First, steps.FailedPoint{ID: p.ID, Label: p.Label, Error: p.Error})
		}
		return res, temporal.NewApplicationError(pf.Error(), "PointsFailed")
	}
	return res, nil
}

// pointWorkflowID returns the workflow ID of point p in the sweep's ID
// scheme (LabelIDs).
func (st *SweepState) pointWorkflowID(p steps.PointInfo) string {
	if st.LabelIDs {
		return PointWorkflowID(st.Plan.Name, p)
	}
	return UnlabelledPointWorkflowID(st.Plan.Name, p.ID)
}

// startPoint starts point p's PointWorkflow (paused if asked) on pointQueue;
// its activities go to queue.
func startPoint(ctx workflow.Context, plan steps.PlanSweepOutput, pointQueue, queue string, p PointStatus, paused bool) workflow.ChildWorkflowFuture {
	pointStatus := steps.StatusRunning
	if paused {
		pointStatus = steps.StatusPaused
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            p.WorkflowID,
		TaskQueue:             pointQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:         fmt.Sprintf("%s: %s", plan.Name, p.Label),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SASweep.ValueSet(plan.Name), SAPoint.ValueSet(p.ID), SADataset.ValueSet(p.Dataset),
			SAAlgorithm.ValueSet(p.Algorithm), SASampler.ValueSet(p.Sampler), SASeed.ValueSet(int64(p.Seed)),
			SARound.ValueSet(0), SALabel.ValueSet(Keyword(p.Label)), SAStatus.ValueSet(pointStatus),
		),
	})
	return workflow.ExecuteChildWorkflow(cctx, PointWorkflowName, PointInput{
		PointRef:           steps.PointRef{Sweep: plan.Name, Point: p.ID},
		Info:               p.PointInfo,
		TrainQueue:         queue,
		ContinueAsNewEvery: plan.ContinueAsNewEvery,
		KeepUpdates:        plan.KeepUpdates,
		ClientsPerActivity: plan.ClientsPerActivity,
		Paused:             paused,
	})
}

// firstBytes cuts s to at most n bytes at a rune boundary.
func firstBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
