package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
	"github.com/flsweep/flsweep/workflows"
)

func sweepCommand() *command {
	var file, trainQueue string
	var pageSize int
	var wait, asJSON, watching bool
	var view statusView
	var statuses string
	waitFlag := func(fs *flag.FlagSet) {
		fs.BoolVar(&wait, "wait", false, "show progress until the sweep ends, then print the results")
		fs.IntVar(&pageSize, "plan-page", 0, fmt.Sprintf("points in a page of the plan in blob storage, and the most the sweep's workflow starts before it continues as new (default %d, at most %d)", steps.DefaultPageSize, steps.MaxPageSize))
	}
	return &command{name: "sweep", summary: "start, watch, pause, stop, resume and cancel sweeps on Temporal", subs: []*command{
		{
			name: "start", summary: "start a sweep (or attach to it if it is already running)",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&file, "f", "", "sweep spec (YAML)")
				fs.StringVar(&trainQueue, "train-queue", "", "task queue for training activities (overrides run.train_queue)")
				waitFlag(fs)
			},
			run: func(ctx context.Context, g *globals, args []string) error {
				if file == "" || len(args) > 0 {
					return fmt.Errorf("sweep start needs -f SPEC.yaml and no arguments: %w", errUsage)
				}
				return startSweep(ctx, g, file, nil, trainQueue, wait, pageSize)
			},
		},
		{
			name: "status", args: "NAME", summary: "show a sweep's counts by status and its running and failed points (every point of a small sweep; --watch: until it ends, with an ETA)",
			flags: func(fs *flag.FlagSet) {
				fs.BoolVar(&asJSON, "json", false, "print JSON")
				fs.BoolVar(&watching, "watch", false, "redraw every second until the sweep ends (Ctrl-C stops watching, not the sweep)")
				fs.BoolVar(&view.all, "all", false, "list every point")
				fs.IntVar(&view.page, "page", 0, fmt.Sprintf("list page N (from 1) of the points, %d a page", pageLines))
				fs.StringVar(&statuses, "status", "", "list only the points with these statuses (comma-separated: pending, running, done, diverged, stopped, failed)")
			},
			run: func(ctx context.Context, g *globals, args []string) error {
				if err := needArgs(args, 1, "NAME"); err != nil {
					return err
				}
				if asJSON && watching {
					return fmt.Errorf("--json and --watch do not go together: %w", errUsage)
				}
				if view.page < 0 || view.all && view.page > 0 {
					return fmt.Errorf("--page wants a page number from 1, and does not go with --all: %w", errUsage)
				}
				if statuses != "" {
					for s := range strings.SplitSeq(statuses, ",") {
						if workflows.StatusOfCode(workflows.StatusCode(s)) != s {
							return fmt.Errorf("--status %q: %q is not a point status (pending, running, done, diverged, stopped, failed): %w", statuses, s, errUsage)
						}
						view.status = append(view.status, s)
					}
				}
				return showStatus(ctx, g, args[0], asJSON, watching, view)
			},
		},
		signalCommand(workflows.PauseSignal, "pause a running sweep or one point: running points finish the round in flight, then start no other; "+
			"a paused sweep starts no new point (`sweep unpause` continues)"),
		signalCommand(workflows.UnpauseSignal, "continue a paused sweep or point (not `sweep resume`, which restarts a cancelled, failed or stopped sweep)"),
		signalCommand(workflows.StopSignal, "stop a running sweep or one point after the round in flight, keeping its rounds and metrics "+
			"(status stopped; `sweep resume` continues it later)"),
		{
			name: "resume", args: "NAME", summary: "run a cancelled, failed or stopped sweep again from its committed rounds",
			flags: waitFlag,
			run: func(ctx context.Context, g *globals, args []string) error {
				if err := needArgs(args, 1, "NAME"); err != nil {
					return err
				}
				if err := refuseOlderBuild(ctx, g, args[0]); err != nil {
					return err
				}
				file, data, err := storedSpec(ctx, g, args[0])
				if err != nil {
					return err
				}
				return resumeSweep(ctx, g, file, data, wait, pageSize)
			},
		},
		{
			name: "cancel", args: "NAME", summary: "cancel a running sweep (committed rounds are kept; resume continues)",
			run: func(ctx context.Context, g *globals, args []string) error {
				if err := needArgs(args, 1, "NAME"); err != nil {
					return err
				}
				c, err := dial(g)
				if err != nil {
					return err
				}
				defer c.Close()
				if err := c.CancelWorkflow(ctx, workflows.SweepID(args[0]), ""); err != nil {
					return fmt.Errorf("cancel sweep %s: %w", args[0], err)
				}
				fmt.Fprintf(g.out, "cancellation requested for sweep %s; `starter sweep resume %s` continues it later\n", args[0], args[0])
				return nil
			},
		},
		queryCommand(),
		{
			name: "results", args: "NAME", summary: "print the final accuracy of each point, from blob storage",
			flags: func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") },
			run: func(ctx context.Context, g *globals, args []string) error {
				if err := needArgs(args, 1, "NAME"); err != nil {
					return err
				}
				return printResults(ctx, g, args[0], asJSON, nil)
			},
		},
		archiveCommand(),
	}}
}

// signalCommand is `sweep pause|unpause|stop NAME [--point ID]`: it signals
// the sweep's workflow, or one point's (workflows.PauseSignal).
func signalCommand(signal, summary string) *command {
	var point string
	return &command{
		name: signal, args: "NAME", summary: summary,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&point, "point", "", "only this point (its ID, as `sweep status` lists them)")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if err := needArgs(args, 1, "NAME"); err != nil {
				return err
			}
			return signalSweep(ctx, g, args[0], point, signal)
		},
	}
}

// signalSweep sends signal to a running sweep, or with point to that point:
// to its workflow if it runs, through the sweep's workflow (which keeps it
// for the point) if it has not started yet.
func signalSweep(ctx context.Context, g *globals, name, point, signal string) error {
	if err := sweep.ValidName(name); err != nil {
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	c, err := dial(g)
	if err != nil {
		return err
	}
	defer c.Close()
	id := workflows.SweepID(name)
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Errorf("sweep %s: %w", name, err)
	}
	if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("sweep %s is not running (%s); only a running sweep can be paused, unpaused or stopped (`starter sweep resume %s` runs it again)", name, s, name)
	}
	what, target, payload := "sweep "+name, id, any(nil)
	if point != "" {
		infos := specInfos(ctx, g, name)
		if infos == nil {
			return fmt.Errorf("sweep %s: its spec is neither in its workflow's history nor in %s, so point %q cannot be found; signal the whole sweep instead", name, g.blob, point)
		}
		i := slices.IndexFunc(infos, func(p steps.PointInfo) bool { return p.ID == point })
		if i < 0 {
			return fmt.Errorf("sweep %s has no point %q (`starter sweep status %s --all` lists them): %w", name, point, name, errUsage)
		}
		// A query waits for a worker to run the sweep's workflow task; on
		// workers whose cores are busy training that can take longer than
		// the query's 10 s, so a query that timed out is asked again.
		var st workflows.SweepStatus
		var err error
		for attempt := 1; ; attempt++ {
			st, err = querySweep(ctx, c, id, workflows.StatusRequest{Offset: i, Limit: 1})
			if err == nil || attempt == 3 || ctx.Err() != nil || !timedOut(err) {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("sweep %s: status: %w", name, err)
		}
		if len(st.Codes) != len(infos) {
			return fmt.Errorf("sweep %s runs %d points, its spec lists %d; is it running another spec?", name, len(st.Codes), len(infos))
		}
		p := infos[i]
		what = fmt.Sprintf("point %s (%s)", p.ID, p.Label)
		switch status := workflows.StatusOfCode(st.Codes[i]); status {
		case steps.StatusPending:
			payload = workflows.Control{Point: p.ID}
		case steps.StatusRunning:
			// The sweep names the workflow of each point it runs (its ID
			// scheme is the sweep's: workflows.PointWorkflowID).
			if len(st.Points) != 1 || st.Points[0].ID != p.ID || st.Points[0].WorkflowID == "" {
				return fmt.Errorf("sweep %s did not name the workflow of running point %s; signal the whole sweep instead", name, p.ID)
			}
			target = st.Points[0].WorkflowID
		default:
			return fmt.Errorf("%s is %s already; nothing to %s", what, status, signal)
		}
	}
	if err := c.SignalWorkflow(ctx, target, "", signal, payload); err != nil {
		return fmt.Errorf("signal %s to %s: %w", signal, target, err)
	}
	pointFlag := ""
	if point != "" {
		pointFlag = " --point " + point
	}
	switch signal {
	case workflows.PauseSignal:
		fmt.Fprintf(g.out, "pause requested for %s: the round in flight finishes, then no new round starts; `starter sweep unpause %s%s` continues\n", what, name, pointFlag)
	case workflows.UnpauseSignal:
		fmt.Fprintf(g.out, "unpause requested for %s: rounds start again\n", what)
	case workflows.StopSignal:
		fmt.Fprintf(g.out, "stop requested for %s: it ends after the round in flight, its rounds and metrics kept; `starter sweep resume %s` continues it once the sweep has ended\n", what, name)
	}
	return nil
}

// loadSpec parses and validates a spec: data, or the file's contents when
// data is nil. It returns the spec's bytes too.
func loadSpec(file string, data []byte) (*sweep.Sweep, []byte, error) {
	if data == nil {
		var err error
		if data, err = readSpec(file); err != nil {
			return nil, nil, err
		}
	}
	sw, err := sweep.Parse(file, data)
	if err != nil {
		return nil, nil, err
	}
	if err := sw.Validate(methods.Builtin()); err != nil {
		return nil, nil, fmt.Errorf("%s:\n%w", file, err)
	}
	return sw, data, nil
}

// readSpec reads a spec file, at most one byte past sweep.MaxSpecBytes
// (enough for Parse to refuse it), whatever its size.
func readSpec(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, sweep.MaxSpecBytes+1))
}

func dial(g *globals) (client.Client, error) {
	return g.temporal.Dial(context.Background(), quietLogger{})
}

// startSweep validates a spec (data, or the file's contents when data is
// nil) and starts its sweep workflow, or attaches to the running one. The
// workflow ID is derived from the sweep name, so starting twice never
// duplicates a sweep.
func startSweep(ctx context.Context, g *globals, file string, data []byte, trainQueue string, wait bool, pageSize int) error {
	return runSweep(ctx, g, file, data, trainQueue, wait, pageSize, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
}

// resumeSweep starts a sweep again from its committed rounds: after a
// failure or a cancellation, and also after it completed with stopped points
// (a completed sweep with nothing left to run prints its results).
func resumeSweep(ctx context.Context, g *globals, file string, data []byte, wait bool, pageSize int) error {
	reuse := enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	if sw, _, err := loadSpec(file, data); err == nil && unfinished(ctx, g, sw.Name) > 0 {
		reuse = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	return runSweep(ctx, g, file, data, "", wait, pageSize, reuse)
}

// warnBuild says so when a sweep is pinned to another build than the
// starter's: only workers of that build compute its points (the sweep's
// IDENTITY.json, docs/architecture.md "Several workers"), so with workers of
// this build alone it would wait.
func warnBuild(ctx context.Context, g *globals, name string) {
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		return
	}
	defer st.Close()
	id, ok, err := engine.RecordedSweepIdentity(ctx, st, name)
	if err != nil || !ok || id.Build == g.build() {
		return
	}
	fmt.Fprintf(g.out, "note: sweep %s runs on build %q (recorded when it was first planned); this starter is build %q. "+
		"Only workers of build %q compute its points: start one (a worker's first log line names its build), or run the spec under a new name to compute it with this build.\n",
		name, id.Build, g.build(), id.Build)
}

// unfinished returns the number of points of a sweep whose last workflow
// run completed without finishing them (stopped, or never started because
// the sweep was stopped); 0 if the sweep did not complete.
func unfinished(ctx context.Context, g *globals, name string) int {
	c, err := dial(g)
	if err != nil {
		return 0
	}
	defer c.Close()
	id := workflows.SweepID(name)
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return 0
	}
	var res workflows.SweepResult
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		return 0
	}
	if res.Counts != nil {
		return res.Counts[steps.StatusStopped] + res.Counts[steps.StatusPending]
	}
	n := 0
	for _, p := range res.Points {
		if p.Status == steps.StatusStopped || p.Status == steps.StatusPending {
			n++
		}
	}
	return n
}

// runSweep starts (or attaches to) a sweep's workflow with the given reuse
// policy for a closed one.
func runSweep(ctx context.Context, g *globals, file string, data []byte, trainQueue string, wait bool, pageSize int, reuse enumspb.WorkflowIdReusePolicy) error {
	if pageSize < 0 || pageSize > steps.MaxPageSize {
		return fmt.Errorf("--plan-page %d: want 1 to %d (0: the default, %d): %w", pageSize, steps.MaxPageSize, steps.DefaultPageSize, errUsage)
	}
	sw, data, err := loadSpec(file, data)
	if err != nil {
		return err
	}
	c, err := dial(g)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := ensureSearchAttributes(ctx, c, g.temporal.Namespace); err != nil {
		return err
	}
	warnBuild(ctx, g, sw.Name)
	id := workflows.SweepID(sw.Name)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                g.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
		StaticSummary:            fmt.Sprintf("sweep %s: %d points", sw.Name, len(sw.Points)),
		StaticDetails:            sw.Description,
	}, workflows.SweepWorkflowName, workflows.SweepInput{File: file, Spec: data, TrainQueue: trainQueue, PageSize: pageSize})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		fmt.Fprintf(g.out, "sweep %s already completed; its results:\n\n", sw.Name)
		if err := printResults(ctx, g, sw.Name, false, nil); err != nil {
			return err
		}
		fmt.Fprintf(g.out, "Temporal UI: %s\n", uiLink(g, id))
		if n := unfinished(ctx, g, sw.Name); n > 0 {
			fmt.Fprintf(g.out, "%d points were stopped; `starter sweep resume %s` continues them\n", n, sw.Name)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("start sweep %s: %w", sw.Name, err)
	}
	st, qerr := querySweep(ctx, c, id, workflows.StatusRequest{Limit: 1})
	if qerr == nil && st.Hash != "" && st.Hash != sw.Hash() {
		// The SDK hands back the existing run, also a closed one. A closed
		// run with other points (an edited spec, or points renamed by another
		// build) is no conflict for Temporal: start a new run, whose PlanSweep
		// checks the spec against what the bucket holds under this name.
		d, derr := c.DescribeWorkflowExecution(ctx, id, "")
		if derr != nil || d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return fmt.Errorf("sweep %s is already running with other points; wait for it, cancel it (`starter sweep cancel %s`), or rename this spec: %w", sw.Name, sw.Name, errUsage)
		}
		if run, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:                       id,
			TaskQueue:                g.queue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			StaticSummary:            fmt.Sprintf("sweep %s: %d points", sw.Name, len(sw.Points)),
			StaticDetails:            sw.Description,
		}, workflows.SweepWorkflowName, workflows.SweepInput{File: file, Spec: data, TrainQueue: trainQueue, PageSize: pageSize}); err != nil {
			return fmt.Errorf("start sweep %s: %w", sw.Name, err)
		}
	}
	fmt.Fprintf(g.out, "sweep %s: %d points; workflow %s (run %s)\n  %s\n", sw.Name, len(sw.Points), id, run.GetRunID(), uiLink(g, id))
	if !wait {
		fmt.Fprintf(g.out, "watch it with `starter sweep status %s`\n", sw.Name)
		return nil
	}
	infos := engine.PlanOutput(sw).Points
	if err := watch(ctx, g, c, id, statusView{}, &pointInfos{v: infos, loaded: true}); err != nil {
		return err
	}
	var res workflows.SweepResult
	werr := c.GetWorkflow(ctx, id, "").Get(ctx, &res)
	live := map[string]workflows.PointStatus{}
	if st, err := querySweep(ctx, c, id, workflows.StatusRequest{Status: []string{steps.StatusFailed}, Limit: workflows.MaxStatusLimit}); err == nil {
		for _, p := range st.Points {
			if p.ID == "" && p.Index < len(infos) {
				p.PointInfo = infos[p.Index]
			}
			live[p.ID] = p
		}
	}
	fmt.Fprintln(g.out)
	if len(sw.Points) <= steps.MaxListed {
		if perr := printResults(ctx, g, sw.Name, false, live); perr != nil {
			return perr
		}
	} else {
		for _, p := range live {
			fmt.Fprintf(g.out, "point %s (%s) failed: %s\n", p.ID, p.Label, p.Error)
		}
		fmt.Fprintf(g.out, "%d points: `starter sweep results %s` lists each point's result, `starter sweep query %s` queries them\n", len(sw.Points), sw.Name, sw.Name)
	}
	fmt.Fprintf(g.out, "Temporal UI: %s\n", uiLink(g, id))
	if werr != nil {
		return fmt.Errorf("sweep %s did not finish cleanly; fix the cause above, then `starter sweep resume %s`", sw.Name, sw.Name)
	}
	return nil
}

// ensureSearchAttributes registers the project's search attributes in the
// namespace if any is missing (a fresh server, or one not started by make up).
func ensureSearchAttributes(ctx context.Context, c client.Client, ns string) error {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range workflows.SearchAttributes {
		if _, ok := resp.CustomAttributes[name]; !ok {
			missing[name] = indexedType(typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: ns, SearchAttributes: missing})
	if err != nil {
		return fmt.Errorf("register search attributes %v: %w", keys(missing), err)
	}
	return nil
}

func indexedType(t string) enumspb.IndexedValueType {
	switch t {
	case "Int":
		return enumspb.INDEXED_VALUE_TYPE_INT
	case "Double":
		return enumspb.INDEXED_VALUE_TYPE_DOUBLE
	}
	return enumspb.INDEXED_VALUE_TYPE_KEYWORD
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// querySweep asks a sweep's workflow for its status: its counts and the
// page req asks for.
func querySweep(ctx context.Context, c client.Client, id string, req workflows.StatusRequest) (workflows.SweepStatus, error) {
	return query[workflows.SweepStatus](ctx, c, id, workflows.StatusQuery, 10*time.Second, req)
}

func queryPoint(ctx context.Context, c client.Client, id string) (workflows.PointProgress, error) {
	return query[workflows.PointProgress](ctx, c, id, workflows.ProgressQuery, 5*time.Second)
}

// timedOut reports whether err is a deadline that passed, the context's or
// the frontend's.
func timedOut(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// query asks a workflow's latest run a query, within timeout.
func query[T any](ctx context.Context, c client.Client, id, name string, timeout time.Duration, args ...any) (T, error) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out T
	v, err := c.QueryWorkflow(qctx, id, "", name, args...)
	if err != nil {
		return out, err
	}
	return out, v.Get(&out)
}

// storedSpec finds the spec a sweep was started with: first in the input of
// its last workflow run, then in blob storage.
func storedSpec(ctx context.Context, g *globals, name string) (string, []byte, error) {
	if err := sweep.ValidName(name); err != nil {
		return "", nil, fmt.Errorf("%v: %w", err, errUsage)
	}
	if c, err := dial(g); err == nil {
		defer c.Close()
		it := c.GetWorkflowHistory(ctx, workflows.SweepID(name), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		if it.HasNext() {
			if ev, err := it.Next(); err == nil {
				if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil && len(a.GetInput().GetPayloads()) == 1 {
					var in workflows.SweepInput
					if json.Unmarshal(a.GetInput().GetPayloads()[0].GetData(), &in) == nil && len(in.Spec) > 0 {
						return in.File, in.Spec, nil
					}
				}
			}
		}
	}
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		return "", nil, err
	}
	defer st.Close()
	sk, err := store.SweepKeys(name)
	if err != nil {
		return "", nil, err
	}
	var ss engine.StoredSweep
	if err := st.GetJSON(ctx, sk.Spec(), &ss); err != nil {
		return "", nil, fmt.Errorf("sweep %s: no workflow history and no stored spec (%w); start it with `starter sweep start -f SPEC.yaml`", name, err)
	}
	return ss.File, []byte(ss.YAML), nil
}

// refuseOlderBuild reports a sweep whose stored spec was planned by a build
// before 128-bit point IDs: this build cannot continue it (engine.PlanSweep
// refuses it too; this says so before anything starts). A bucket that cannot
// be read is left to the workflow.
func refuseOlderBuild(ctx context.Context, g *globals, name string) error {
	sk, err := store.SweepKeys(name)
	if err != nil {
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		return nil
	}
	defer st.Close()
	var ss engine.StoredSweep
	if st.GetJSON(ctx, sk.Spec(), &ss) != nil || ss.Sweep == nil || len(ss.Sweep.Points) == 0 {
		return nil
	}
	if id := ss.Sweep.Points[0].ID; sweep.LegacyPointID(id) {
		return sweep.ErrOlderBuild(fmt.Sprintf("sweep %q (%s)", name, sk.Spec()), id)
	}
	return nil
}

func uiLink(g *globals, workflowID string) string {
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s", g.ui, url.PathEscape(g.temporal.Namespace), url.PathEscape(workflowID))
}
