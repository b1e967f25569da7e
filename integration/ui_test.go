package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/flsweep/flsweep/internal/browsertest"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store/miniotest"
	"github.com/flsweep/flsweep/workflows"
)

// listRows is the Temporal UI's (2.42.1) row of a workflow in its list.
const listRows = `tr[data-testid="workflows-summary-configurable-table-row"]`

// TestUIListShowsPoints: a researcher who opens the Temporal UI's workflow
// list, its columns as they come, sees what each point is and its status.
// A sweep of three points (testdata/ui.yaml, the third diverging) runs
// through a dev server of its own with the UI, a real worker and the
// starter; headless Chromium opens the list. Each point's row shows its
// workflow ID, which holds its label (workflows.PointWorkflowID), and
// Temporal's status, Completed (a diverged point too: an outcome, not a
// failed workflow; the point's own status is FLStatus, a column users add);
// its rounds' rows carry the same label; its link opens its page, which
// shows the sweep's summary of it. The checks read the DOM's text;
// the screenshot goes to FLSWEEP_UI_SCREENSHOT, or to the test's temporary
// directory, and its path is logged. Without Chromium (`make chromium`
// installs it) the test skips, unless FLSWEEP_INTEGRATION=1 asks for every
// test to run. With FLSWEEP_RECORD_HISTORIES set it records the sweep's
// histories as labelled-*.json for the replay test.
func TestUIListShowsPoints(t *testing.T) {
	requireEnv(t)
	browsertest.Require(t, "the Temporal UI is not opened in a browser")
	dir := t.TempDir()
	hostPort := "127.0.0.1:" + miniotest.FreePort(t)
	uiPort := miniotest.FreePort(t)
	srv := devServer(t, hostPort, filepath.Join(dir, "temporal.db"), uiPort)
	t.Cleanup(func() { _ = srv.Stop() })
	e := newEnv(t)
	e.address = hostPort
	e.worker()
	const name = "ui"
	if out, err := e.starter("sweep", "start", "-f", "testdata/ui.yaml", "--wait"); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	// The sweep names each point's workflow by its label.
	v, err := c.QueryWorkflow(ctx, workflows.SweepID(name), "", workflows.StatusQuery)
	if err != nil {
		t.Fatal(err)
	}
	var st workflows.SweepStatus
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"train.lr=0.1 seed=1":   steps.StatusDone,
		"train.lr=0.05 seed=1":  steps.StatusDone,
		"train.lr=1e+30 seed=1": steps.StatusDiverged,
	}
	if len(st.Points) != len(want) {
		t.Fatalf("the sweep lists %d points; want %d", len(st.Points), len(want))
	}
	for _, p := range st.Points {
		if s, ok := want[p.Label]; !ok || p.Status != s {
			t.Errorf("point %s (%s) is %s; want one of %v with its status", p.ID, p.Label, p.Status, want)
		}
		if w := "sweep/" + name + "/" + p.Label + "/" + p.ID; p.WorkflowID != w {
			t.Errorf("point %s: workflow ID %q; want %q", p.ID, p.WorkflowID, w)
		}
	}

	// Every workflow is visible and closed before the list is opened.
	var total int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		all, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		closed, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus != 'Running'"})
		if err != nil {
			t.Fatal(err)
		}
		// The sweep, its points and at least a round each.
		if total = len(all.Executions); total >= 1+2*len(want) && len(closed.Executions) == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workflows, %d closed: the list would not show the finished sweep", len(all.Executions), len(closed.Executions))
		}
	}

	bctx := browsertest.Start(t, dir, 1600, 900, nil)
	tctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	list := "http://127.0.0.1:" + uiPort + "/namespaces/default/workflows"
	if err := chromedp.Do(tctx, chromedp.Navigate(list)); err != nil {
		t.Fatalf("open %s: %v", list, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](fmt.Sprintf(`document.querySelectorAll(%q).length >= %d`, listRows, total),
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		t.Fatalf("wait for the list's %d rows: %v", total, err)
	}
	browsertest.Screenshot(t, tctx, "FLSWEEP_UI_SCREENSHOT", filepath.Join(dir, "ui-list.png"))

	// The columns are the list's own, and each row's text is its cells'.
	headers, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('thead th')).map(h => h.innerText.trim()).filter(h => h)`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("columns: %q", headers)
	for _, h := range []string{"Status", "Workflow ID"} {
		if !slices.Contains(headers, h) {
			t.Errorf("the list has columns %q; want its default ones, with %q", headers, h)
		}
	}
	rows, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(r => Array.from(r.cells).map(c => c.innerText.trim()).join(" | "))`, listRows)))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Points {
		row := slices.IndexFunc(rows, func(r string) bool { return strings.Contains(r, "| "+p.WorkflowID+" |") })
		if row < 0 {
			t.Errorf("no row of the list shows point %s's workflow %q; rows:\n%s", p.ID, p.WorkflowID, strings.Join(rows, "\n"))
			continue
		}
		// Temporal's status: Completed, for the diverged point too.
		if r := rows[row]; !strings.Contains(r, p.Label) || !strings.Contains(r, "Completed |") || !strings.Contains(r, "| PointWorkflow |") {
			t.Errorf("point %s (%s, %s): its row reads %q; want its label, status Completed and type PointWorkflow", p.ID, p.Label, p.Status, r)
		}
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "| "+workflows.RoundID(p.WorkflowID, 1)+" |") }) {
			t.Errorf("no row shows point %s's round 1, %q", p.ID, workflows.RoundID(p.WorkflowID, 1))
		}
	}
	if t.Failed() {
		t.Logf("the list's rows:\n%s", strings.Join(rows, "\n"))
	}

	// A point's link (its ID holds spaces and '=') opens its page, which
	// shows the static summary the sweep sets, "<sweep>: <label>".
	p := st.Points[0]
	href, err := chromedp.Run(tctx, chromedp.Evaluate[string](fmt.Sprintf(`(Array.from(document.querySelectorAll('%s a')).find(a => a.innerText.trim() === %q) || {}).href || ""`, listRows, p.WorkflowID)))
	if err != nil || href == "" {
		t.Fatalf("no link to point %s's workflow in the list (%v)", p.ID, err)
	}
	summary := name + ": " + p.Label
	if err := chromedp.Do(tctx, chromedp.Navigate(href)); err != nil {
		t.Fatalf("open %s: %v", href, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](fmt.Sprintf(`document.body.innerText.includes(%q) && document.body.innerText.includes(%q)`, p.WorkflowID, summary),
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		text, _ := chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Errorf("point %s's page (%s) does not show its workflow ID and summary %q: %v\n%s", p.ID, href, summary, err, text)
	}

	if dir := os.Getenv("FLSWEEP_RECORD_HISTORIES"); dir != "" {
		if err := recordHistories(hostPort, dir, name, "labelled-"); err != nil {
			t.Fatal(err)
		}
	}
}
