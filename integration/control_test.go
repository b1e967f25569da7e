package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/workflows"
)

// committed counts the sweep's committed rounds in the bucket.
func (e *env) committed(sweep string) int {
	m, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", sweep, "*", "rounds", "*", "COMMITTED.json"))
	return len(m)
}

// TestPauseStopResume drives a sweep through the starter's control commands
// on the real dev server: paused, it commits no round; unpaused, it goes on;
// one point stopped ends with its rows kept and queryable (compacted, no
// DONE.json); the search attributes find the points by label, status, method
// and accuracy; and `sweep resume` continues the stopped point to the models
// and rows of the undisturbed run.
func TestPauseStopResume(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	e := newEnv(t)
	e.worker()
	const name = "control"
	if out, err := e.starter("sweep", "start", "-f", e.spec(name)); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	c, err := client.Dial(client.Options{HostPort: server.FrontendHostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Pause once the first round after round 0 committed.
	waitFor("a round", func() bool {
		m, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", name, "*", "rounds", "000001", "COMMITTED.json"))
		return len(m) > 0
	})
	if out, err := e.starter("sweep", "pause", name); err != nil || !strings.Contains(out, "pause requested") {
		t.Fatalf("sweep pause: %v\n%s", err, out)
	}
	// The rounds in flight finish: every running point waits with no round
	// workflow and no activity open. Then nothing commits.
	waitFor("the rounds in flight to finish", func() bool {
		st, err := querySweepStatus(ctx, c, name)
		if err != nil || !st.Paused {
			return false
		}
		for _, p := range st.Points {
			if p.Status != steps.StatusRunning {
				continue
			}
			d, err := c.DescribeWorkflowExecution(ctx, p.WorkflowID, "")
			if err != nil || len(d.PendingChildren) > 0 || len(d.PendingActivities) > 0 {
				return false
			}
			v, err := c.QueryWorkflow(ctx, p.WorkflowID, "", workflows.ProgressQuery)
			var pr workflows.PointProgress
			if err != nil || v.Get(&pr) != nil || pr.Status != steps.StatusPaused {
				return false
			}
		}
		return true
	})
	stable := e.committed(name)
	time.Sleep(4 * time.Second)
	if n := e.committed(name); n != stable {
		t.Fatalf("%d rounds committed while paused (%d before)", n-stable, stable)
	}
	// On a loaded machine (CI runs the test packages two at a time on 2
	// cores) the sweep's query can take longer than the starter's 10 s, and
	// the starter then shows what blob storage holds, which knows nothing
	// of pausing: ask again for up to a minute.
	var out string
	for deadline := time.Now().Add(time.Minute); ; {
		out, err = e.starter("sweep", "status", name)
		if err == nil && strings.Contains(out, "(paused)") {
			break
		}
		if time.Now().After(deadline) || !strings.Contains(out, "Temporal did not answer") {
			t.Fatalf("sweep status of a paused sweep: %v\n%s", err, out)
		}
		t.Logf("sweep status: Temporal did not answer in time; asking again")
	}
	t.Logf("paused with %d rounds committed:\n%s", stable, out)
	total := 4 * 6
	if stable >= total {
		t.Fatal("the sweep finished before the pause took effect")
	}

	st, err := querySweepStatus(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	stopped := st.Points[0]
	if stopped.Status != steps.StatusRunning {
		t.Fatalf("point 0 is %s; want it running (paused) when stopped", stopped.Status)
	}
	if out, err := e.starter("sweep", "unpause", name); err != nil {
		t.Fatalf("sweep unpause: %v\n%s", err, out)
	}
	if out, err := e.starter("sweep", "stop", name, "--point", stopped.ID); err != nil || !strings.Contains(out, "stop requested") {
		t.Fatalf("sweep stop --point: %v\n%s", err, out)
	}
	var res workflows.SweepResult
	if err := c.GetWorkflow(ctx, workflows.SweepID(name), "").Get(ctx, &res); err != nil {
		t.Fatalf("sweep after stop: %v", err)
	}
	var rounds int
	for _, p := range res.Points {
		wantStatus := steps.StatusDone
		if p.ID == stopped.ID {
			wantStatus = steps.StatusStopped
		}
		if p.Status != wantStatus || p.Result == nil {
			t.Fatalf("point %s (%s): %s, %+v; want %s", p.ID, p.Label, p.Status, p.Result, wantStatus)
		}
		if p.ID == stopped.ID {
			rounds = p.Result.RoundsDone
		}
	}
	if rounds >= 5 {
		t.Fatalf("the stopped point ran all %d rounds", rounds)
	}
	t.Logf("point %s stopped after round %d", stopped.ID, rounds)

	// The stopped point's rows: compacted like a finished point's, no
	// DONE.json, and queryable.
	pdir := filepath.Join(e.blob, "sweeps", name, stopped.ID)
	if _, err := os.Stat(filepath.Join(pdir, "DONE.json")); !os.IsNotExist(err) {
		t.Errorf("a stopped point has DONE.json (%v)", err)
	}
	if parts, _ := filepath.Glob(filepath.Join(pdir, "metrics", "rounds", "r*.parquet")); len(parts) != 0 {
		t.Errorf("a stopped point kept part files %v", parts)
	}
	out, err = e.starter("sweep", "query", name, fmt.Sprintf(`SELECT (SELECT count(*) FROM rounds WHERE point = '%s') AS r,
		(SELECT status FROM points WHERE point = '%s') AS s`, stopped.ID, stopped.ID))
	if f := strings.Fields(out); err != nil || len(f) < 4 || f[len(f)-2] != fmt.Sprint(rounds+1) || f[len(f)-1] != "stopped" {
		t.Errorf("query of the stopped point: %v\n%s\nwant %d rounds rows and status stopped", err, out, rounds+1)
	}
	if out, err := e.starter("sweep", "results", name); err != nil || !strings.Contains(out, "stopped") {
		t.Errorf("sweep results: %v\n%s", err, out)
	}

	// The search attributes: the label, the status, and the README's filter.
	list := func(query string) string {
		out, err := exec.Command(os.Getenv("TEMPORAL_CLI"), "workflow", "list", "--address", server.FrontendHostPort(),
			"--query", query, "--output", "json").CombinedOutput()
		if err != nil {
			t.Fatalf("temporal workflow list --query %q: %v\n%s", query, err, out)
		}
		return string(out)
	}
	waitFor("the stopped point in the visibility store", func() bool {
		return strings.Contains(list(fmt.Sprintf(`FLSweep=%q AND FLStatus="stopped"`, name)), stopped.WorkflowID)
	})
	if out := list(fmt.Sprintf(`FLSweep=%q AND FLLabel=%q`, name, stopped.Label)); !strings.Contains(out, stopped.WorkflowID) {
		t.Errorf("FLLabel=%q did not find %s:\n%s", stopped.Label, stopped.WorkflowID, out)
	}
	if out := list(fmt.Sprintf(`FLSweep=%q AND FLAlgorithm="scaffold" AND FLAccuracy > 0.1 AND FLStatus="done"`, name)); strings.Count(out, `"workflowId"`) < 1 {
		t.Errorf("the README's filter found nothing:\n%s", out)
	}
	if dir := os.Getenv("FLSWEEP_RECORD_HISTORIES"); dir != "" {
		if err := recordHistories(server.FrontendHostPort(), dir, name, "control-"); err != nil {
			t.Fatal(err)
		}
	}

	out, err = e.starter("sweep", "resume", name, "--wait")
	if err != nil {
		t.Fatalf("sweep resume: %v\n%s", err, out)
	}
	sameResults(t, "stopped and resumed vs straight", e.results(name), want)
}

func querySweepStatus(ctx context.Context, c client.Client, name string) (workflows.SweepStatus, error) {
	var st workflows.SweepStatus
	v, err := c.QueryWorkflow(ctx, workflows.SweepID(name), "", workflows.StatusQuery)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}
