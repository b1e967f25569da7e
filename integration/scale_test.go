package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/workflows"
)

// envInt reads a positive integer from the environment, def when unset.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestScaleSweep: a sweep of many points (FLSWEEP_SCALE_POINTS, 240 by
// default so that `make test` stays within minutes on 2 cores; 20,000 for
// the README's figures) of a workload that trains in milliseconds
// (testdata/scale.yaml) plans into pages of FLSWEEP_SCALE_PAGE points (30:
// eight runs of the workflow), runs through the dev server continuing as
// new after each page, answers the status query by pages with the whole
// sweep's counts, survives a SIGKILLed worker and a cancellation, and
// resumes to every point done, each with its DONE.json.
func TestScaleSweep(t *testing.T) {
	requireEnv(t)
	points := envInt(t, "FLSWEEP_SCALE_POINTS", 240)
	pageSize := envInt(t, "FLSWEEP_SCALE_PAGE", 30)
	e := newEnv(t)
	name := "scale"
	seeds := make([]string, points)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i)
	}
	b, err := os.ReadFile("testdata/scale.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.NewReplacer("SWEEPNAME", name, "SEEDS", "["+strings.Join(seeds, ", ")+"]").Replace(string(b)))
	spec := filepath.Join(t.TempDir(), "scale.yaml")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: server.FrontendHostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	id := workflows.SweepID(name)

	stop := e.worker()
	t0 := time.Now()
	if out, err := e.starter("sweep", "start", "-f", spec, "--plan-page", strconv.Itoa(pageSize)); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	t.Logf("sweep start (validation of %d points, workflow start): %s", points, time.Since(t0).Round(time.Millisecond))

	// status asks for one page and checks that the counts cover the sweep.
	var queryTimes []time.Duration
	// A query needs a live worker: after a worker's death it fails until
	// another takes the workflow over, so the polls retry.
	tryStatus := func(req workflows.StatusRequest) (workflows.SweepStatus, error) {
		var st workflows.SweepStatus
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		q0 := time.Now()
		v, err := c.QueryWorkflow(qctx, id, "", workflows.StatusQuery, req)
		if err != nil {
			return st, err
		}
		queryTimes = append(queryTimes, time.Since(q0))
		return st, v.Get(&st)
	}
	// check checks an answer: its counts cover the sweep, its page fits.
	check := func(req workflows.StatusRequest, st workflows.SweepStatus) {
		t.Helper()
		sum := 0
		for _, n := range st.Counts {
			sum += n
		}
		if st.Total != 0 && (st.Total != points || sum != points || len(st.Codes) != points) {
			t.Fatalf("status: total %d, counts %v (sum %d), %d letters; want %d points", st.Total, st.Counts, sum, len(st.Codes), points)
		}
		if len(st.Points) > max(req.Limit, workflows.DefaultStatusLimit) {
			t.Fatalf("status: %d points in a page of %d", len(st.Points), req.Limit)
		}
	}
	status := func(req workflows.StatusRequest) workflows.SweepStatus {
		t.Helper()
		st, err := tryStatus(req)
		if err != nil {
			t.Fatalf("status query: %v", err)
		}
		check(req, st)
		return st
	}
	// waitFor polls the status until cond holds.
	waitFor := func(what string, limit time.Duration, cond func(workflows.SweepStatus) bool) workflows.SweepStatus {
		t.Helper()
		deadline := time.Now().Add(limit)
		for {
			req := workflows.StatusRequest{Status: []string{steps.StatusRunning}}
			st, err := tryStatus(req)
			if err == nil && st.Total > 0 {
				check(req, st)
				if cond(st) {
					return st
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s; last status: run %d, counts %v", what, limit, st.Run, st.Counts)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// A stage's limit grows with the sweep: a point of the fixture costs
	// about 0.2 s on the dev server, with the spec's 8 at once.
	stage := max(20*time.Minute, time.Duration(points)*150*time.Millisecond)
	planned := waitFor("planned", 5*time.Minute, func(workflows.SweepStatus) bool { return true })
	t.Logf("planned and started: %s after the start", time.Since(t0).Round(time.Millisecond))
	if planned.Counts[steps.StatusRunning] > 8 {
		t.Errorf("%d points running; the spec's concurrency is 8", planned.Counts[steps.StatusRunning])
	}

	// A worker killed in the middle of the first third; another takes over.
	third := points / 3
	waitFor("a sixth done", stage, func(st workflows.SweepStatus) bool { return st.Counts[steps.StatusDone] >= third/2 })
	stop(true)
	t.Logf("worker killed at %s", time.Since(t0).Round(time.Millisecond))
	e.worker()

	st := waitFor("a third done and three continue-as-new", stage, func(st workflows.SweepStatus) bool {
		return st.Counts[steps.StatusDone] >= third && st.Run >= 4
	})
	t.Logf("a third done, run %d: %s", st.Run, time.Since(t0).Round(time.Millisecond))
	// A page by offset: the points before the cursor have ended.
	pg := status(workflows.StatusRequest{Offset: 10, Limit: 5})
	if pg.Offset != 10 || len(pg.Points) != 5 || pg.Points[0].Index != 10 || pg.Points[0].Status != steps.StatusDone {
		t.Errorf("status page at offset 10: offset %d, %d points, first %+v; want points 10..14, done", pg.Offset, len(pg.Points), pg.Points)
	}
	done := status(workflows.StatusRequest{Status: []string{steps.StatusDone}, Limit: 3})
	if done.Matched != done.Counts[steps.StatusDone] || len(done.Points) != 3 {
		t.Errorf("status filtered by done: matched %d, %d listed; want %d matched, 3 listed", done.Matched, len(done.Points), done.Counts[steps.StatusDone])
	}
	// The CLI shows counts and the running points, not every point.
	out, err := e.starter("sweep", "status", name)
	if err != nil {
		t.Fatalf("sweep status: %v\n%s", err, out)
	}
	if n := strings.Count(out, "\n"); n > 30 || !strings.Contains(out, "points not listed") {
		t.Errorf("sweep status printed %d lines; want the counts and the running points:\n%s", n, out)
	}
	if points > 100 {
		last := min(points, 200) - 1
		out, err = e.starter("sweep", "status", name, "--page", "2")
		if err != nil || !strings.Contains(out, "seed=100 ") || !strings.Contains(out, fmt.Sprintf("seed=%d ", last)) ||
			strings.Contains(out, "seed=99 ") || strings.Contains(out, fmt.Sprintf("seed=%d ", last+1)) {
			t.Errorf("sweep status --page 2: want the points seed=100 to seed=%d: %v\n%s", last, err, out)
		}
	}

	// Cancelled at two thirds, then resumed to the end.
	waitFor("two thirds done", stage, func(st workflows.SweepStatus) bool { return st.Counts[steps.StatusDone] >= 2*third })
	if out, err := e.starter("sweep", "cancel", name); err != nil {
		t.Fatalf("sweep cancel: %v\n%s", err, out)
	}
	for {
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		if s := d.GetWorkflowExecutionInfo().GetStatus(); s == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			break
		} else if s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Fatalf("sweep after cancel: %v; want Canceled", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("cancelled at %s", time.Since(t0).Round(time.Millisecond))
	r0 := time.Now()
	out, err = e.starter("sweep", "resume", name, "--wait", "--plan-page", strconv.Itoa(pageSize))
	if err != nil {
		t.Fatalf("sweep resume: %v\n%s", err, out)
	}
	t.Logf("resumed to the end in %s; total %s", time.Since(r0).Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	// The last redraw: the counts, not a line per point.
	if i := strings.LastIndex(out, "sweep "+name+" ["); i < 0 || strings.Count(out[i:], "\n") > 30 {
		t.Errorf("sweep resume --wait: want a last redraw of the counts, not a line per point:\n%s", out[max(0, len(out)-3000):])
	}
	var res workflows.SweepResult
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Total != points || res.Counts[steps.StatusDone] != points {
		t.Errorf("result: %d points, counts %v; want %d done", res.Total, res.Counts, points)
	}
	dones, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", name, "*", "DONE.json"))
	if len(dones) != points {
		t.Errorf("%d points have DONE.json; want %d", len(dones), points)
	}
	var sorted []time.Duration
	sorted = append(sorted, queryTimes...)
	slices.Sort(sorted)
	t.Logf("%d status queries: median %s, max %s", len(sorted), sorted[len(sorted)/2], sorted[len(sorted)-1])
	fmt.Fprintf(os.Stderr, "scale: %d points, page %d: %s\n", points, pageSize, time.Since(t0).Round(time.Second))
}

// TestScaleStatus measures, through the dev server, planning a sweep and
// its status query at the sizes in FLSWEEP_SCALE_STATUS (comma-separated
// point counts; 1000 by default, "1000,10000,20000" for the README's
// figures): each sweep is paused as it starts, so no point runs, queried
// 20 times for its default view (counts, running and failed points) and 20
// times for a page of 100 from the middle, then cancelled.
func TestScaleStatus(t *testing.T) {
	requireEnv(t)
	sizes := os.Getenv("FLSWEEP_SCALE_STATUS")
	if sizes == "" {
		sizes = "1000"
	}
	e := newEnv(t)
	e.worker()
	c, err := client.Dial(client.Options{HostPort: server.FrontendHostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for s := range strings.SplitSeq(sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("FLSWEEP_SCALE_STATUS=%q: want point counts", sizes)
		}
		name := fmt.Sprintf("status%d", n)
		seeds := make([]string, n)
		for i := range seeds {
			seeds[i] = strconv.Itoa(i)
		}
		b, err := os.ReadFile("testdata/scale.yaml")
		if err != nil {
			t.Fatal(err)
		}
		spec := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(spec, []byte(strings.NewReplacer("SWEEPNAME", name, "SEEDS", "["+strings.Join(seeds, ", ")+"]").Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if out, err := e.starter("sweep", "start", "-f", spec); err != nil {
			t.Fatalf("sweep start: %v\n%s", err, out)
		}
		started := time.Since(t0)
		if out, err := e.starter("sweep", "pause", name); err != nil {
			t.Fatalf("sweep pause: %v\n%s", err, out)
		}
		id := workflows.SweepID(name)
		query := func(req workflows.StatusRequest) (workflows.SweepStatus, time.Duration, error) {
			var st workflows.SweepStatus
			q0 := time.Now()
			v, err := c.QueryWorkflow(ctx, id, "", workflows.StatusQuery, req)
			if err != nil {
				return st, 0, err
			}
			d := time.Since(q0)
			return st, d, v.Get(&st)
		}
		for {
			st, _, err := query(workflows.StatusRequest{})
			if err == nil && st.Total == n {
				break
			}
			if time.Since(t0) > 5*time.Minute {
				t.Fatalf("%d points: not planned within 5 minutes (%v)", n, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		planned := time.Since(t0)
		median := func(req workflows.StatusRequest, check func(workflows.SweepStatus) bool) time.Duration {
			var ds []time.Duration
			for range 20 {
				st, d, err := query(req)
				if err != nil || !check(st) {
					t.Fatalf("%d points: status %+v: %v", n, req, err)
				}
				ds = append(ds, d)
			}
			slices.Sort(ds)
			return ds[len(ds)/2]
		}
		def := median(workflows.StatusRequest{Status: []string{steps.StatusRunning, steps.StatusFailed}, Limit: workflows.MaxStatusLimit},
			func(st workflows.SweepStatus) bool {
				return st.Total == n && st.Counts[steps.StatusPending] == n && len(st.Codes) == n
			})
		page := median(workflows.StatusRequest{Offset: n / 2, Limit: 100},
			func(st workflows.SweepStatus) bool {
				return len(st.Points) == min(100, n-n/2) && st.Points[0].Index == n/2
			})
		c0 := time.Now()
		out, err := e.starter("sweep", "status", name)
		if err != nil {
			t.Fatalf("sweep status: %v\n%s", err, out)
		}
		cli := time.Since(c0)
		t.Logf("%d points: start %s, planned %s after the start; status query (counts, running, failed) median %s, a page of 100 median %s; `starter sweep status` %s",
			n, started.Round(time.Millisecond), planned.Round(time.Millisecond), def.Round(time.Microsecond), page.Round(time.Microsecond), cli.Round(time.Millisecond))
		if out, err := e.starter("sweep", "cancel", name); err != nil {
			t.Fatalf("sweep cancel: %v\n%s", err, out)
		}
	}
}
