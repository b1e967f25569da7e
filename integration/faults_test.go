package integration

// Fault tests (docs/architecture.md, "Faults"): several workers, workers
// killed at random moments, the Temporal server and the blob store stopped
// and started again mid-sweep, a checkpoint damaged on disk. Each sweep
// must end with the same models and rows as the undisturbed run
// (straightRun); the times to recover are logged as figures.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store/miniotest"
	"github.com/flsweep/flsweep/trainer"
	"github.com/flsweep/flsweep/workflows"
)

// proc is a worker process.
type proc struct {
	pid  int
	stop func(kill bool)
}

// startWorker starts the worker binary bin (a file of binDir) with e's
// flags.
func (e *env) startWorker(bin string) proc {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, bin), e.flags()...)
	cmd.Env = append(os.Environ(), e.environ...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	stop := func(kill bool) {
		once.Do(func() {
			if kill {
				_ = cmd.Process.Kill()
			} else {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			_ = cmd.Wait()
			if e.t.Failed() {
				e.t.Logf("%s worker %d log:\n%s", bin, cmd.Process.Pid, log.String())
			}
		})
	}
	e.t.Cleanup(func() { stop(false) })
	return proc{pid: cmd.Process.Pid, stop: stop}
}

var (
	otherOnce sync.Once
	otherErr  error
)

// otherBuild builds the worker as another build (conf.Version other-build)
// into binDir/worker-other.
func otherBuild(t *testing.T) string {
	otherOnce.Do(func() {
		out, err := exec.Command("go", "build", "-ldflags", "-X github.com/flsweep/flsweep/conf.Version=other-build",
			"-o", filepath.Join(binDir, "worker-other"), "../worker").CombinedOutput()
		if err != nil {
			otherErr = fmt.Errorf("build worker-other: %v\n%s", err, out)
		}
	})
	if otherErr != nil {
		t.Fatal(otherErr)
	}
	return "worker-other"
}

// dial connects to e's Temporal server.
func (e *env) dial() client.Client {
	e.t.Helper()
	c, err := client.Dial(client.Options{HostPort: e.flags()[1], Logger: quiet{}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

// wait waits for sweep to complete.
func (e *env) wait(c client.Client, sweep string, timeout time.Duration) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res workflows.SweepResult
	if err := c.GetWorkflow(ctx, workflows.SweepID(sweep), "").Get(ctx, &res); err != nil {
		e.t.Fatalf("sweep %s: %v", sweep, err)
	}
}

// commits counts the committed rounds of sweep's points in the bucket
// directory root (a local bucket, or MinIO's data directory of the bucket,
// where an object is a directory).
func commits(root, sweep string) int {
	m, _ := filepath.Glob(filepath.Join(root, "sweeps", sweep, "*", "rounds", "*", "COMMITTED.json"))
	return len(m)
}

// untilCommits waits until sweep has more than n committed rounds and
// returns how long that took.
func untilCommits(t *testing.T, root, sweep string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for commits(root, sweep) <= n {
		if time.Since(start) > timeout {
			t.Fatalf("no round of %s committed within %v (still %d)", sweep, timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// idle reports whether workflow id runs with no child workflow and no
// activity in flight: a paused point between rounds.
func idle(t *testing.T, c client.Client, id string) bool {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING &&
		len(d.GetPendingChildren()) == 0 && len(d.GetPendingActivities()) == 0
}

// pointWorkflows returns the workflow IDs of sweep's points by point ID,
// as the sweep's status query names them: every point's for a sweep of at
// most steps.MaxListed points (the starter reads them so too).
func pointWorkflows(c client.Client, sweep string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, workflows.SweepID(sweep), "", workflows.StatusQuery, workflows.StatusRequest{Limit: workflows.MaxStatusLimit})
	if err != nil {
		return nil, err
	}
	var st workflows.SweepStatus
	if err := v.Get(&st); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, p := range st.Points {
		if p.WorkflowID != "" {
			ids[p.ID] = p.WorkflowID
		}
	}
	return ids, nil
}

// roundActivity returns which point of sweep runs a RunRound activity
// whose heartbeat names round from or later ("" if none): a round in
// progress where no update reaches the blob store (a round run whole in one
// activity keeps its updates in memory, engine/transient.go).
func roundActivity(c client.Client, sweep string, from int) string {
	points, _ := pointWorkflows(c, sweep)
	for point, id := range points {
		d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil {
			continue // not started yet
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetActivityType().GetName() != steps.RunRound.Name || a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED || a.GetHeartbeatDetails() == nil {
				continue
			}
			var rp steps.RoundPhase
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &rp); err == nil && rp.Round >= from {
				return fmt.Sprintf("%s round %d (%s)", point, rp.Round, rp.Phase)
			}
		}
	}
	return ""
}

// midRound waits until some point of sweep has stored a client update of
// round from or later that is not committed yet: a round in progress.
func midRound(t *testing.T, root, sweep, from string) string {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ups, _ := filepath.Glob(filepath.Join(root, "sweeps", sweep, "*", "rounds", "*", "updates", "*"))
		for _, u := range ups {
			round := filepath.Dir(filepath.Dir(u))
			if filepath.Base(round) >= from {
				if _, err := os.Stat(filepath.Join(round, "COMMITTED.json")); os.IsNotExist(err) {
					return round
				}
			}
		}
	}
	t.Fatal("never saw a round in progress")
	return ""
}

// TestWorkersOfOtherBuildAndBucket: three workers on one task queue, one of
// the sweep's bucket and build, one of another build (conf.Version) on the
// same bucket, one of the same build on another bucket. The sweep's points
// run on the queue routed by its identity, so only the matching worker
// computes them: every workflow and activity task of every round was
// started by it, the other bucket holds nothing but its marker, and the
// results equal the single-worker run.
func TestWorkersOfOtherBuildAndBucket(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	other := otherBuild(t)
	e := newEnv(t)
	match := e.startWorker("worker")
	if out, err := e.starter("sweep", "start", "-f", e.spec("identity")); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(e.blob, "sweeps", "identity", "IDENTITY.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweep was never planned")
		}
	}
	otherBuildW := e.startWorker(other)
	ob := *e
	ob.blob = t.TempDir()
	ob.blobURL = conf.DirURL(ob.blob)
	otherBucketW := ob.startWorker("worker")
	c := e.dial()
	e.wait(c, "identity", 10*time.Minute)
	sameResults(t, "three workers, one matching, vs straight", e.results("identity"), want)

	files, _ := filepath.Glob(filepath.Join(ob.blob, "*"))
	if len(files) != 1 || filepath.Base(files[0]) != "flsweep-bucket.json" {
		t.Errorf("the other bucket holds %v; want only its identity marker", files)
	}
	ctx := context.Background()
	var status workflows.SweepStatus
	q, err := c.QueryWorkflow(ctx, workflows.SweepID("identity"), "", workflows.StatusQuery)
	if err == nil {
		err = q.Get(&status)
	}
	if err != nil {
		t.Fatal(err)
	}
	desc, err := c.DescribeWorkflowExecution(ctx, status.Points[0].WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	queue := desc.ExecutionConfig.GetTaskQueue().GetName()
	// The workers record their build as conf.Version ("dev") followed by
	// the numerics of their kernel choice, which they read from the
	// environment they share with this test process (both built by go with
	// the same settings, on this CPU).
	kernels, err := trainer.KernelChoiceFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if build := "dev" + kernels.Numerics(); !strings.HasPrefix(queue, e.queue+"@"+build+"@") {
		t.Errorf("point workflow on task queue %q; want %s@%s@<bucket>", queue, e.queue, build)
	}
	t.Logf("points ran on %s; workers: matching %d, other build %d, other bucket %d", queue, match.pid, otherBuildW.pid, otherBucketW.pid)
	mine := fmt.Sprintf("%d@", match.pid)
	tasks := 0
	for _, p := range status.Points {
		for r := 1; r <= p.Rounds; r++ {
			it := c.GetWorkflowHistory(ctx, workflows.RoundID(p.WorkflowID, r), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				id := ""
				switch {
				case ev.GetActivityTaskStartedEventAttributes() != nil:
					id = ev.GetActivityTaskStartedEventAttributes().GetIdentity()
				case ev.GetWorkflowTaskStartedEventAttributes() != nil:
					id = ev.GetWorkflowTaskStartedEventAttributes().GetIdentity()
				default:
					continue
				}
				tasks++
				if !strings.HasPrefix(id, mine) {
					t.Errorf("round %d of %s: a task started by %q, not the matching worker %d", r, p.ID, id, match.pid)
				}
			}
		}
	}
	if tasks == 0 {
		t.Error("no task found in the rounds' histories")
	}
}

// TestTwoWorkersOneKilled: two workers serve one sweep; one is killed with
// SIGKILL three times at random moments (seeded) and started again; at the
// end both are killed at once and restarted. The sweep completes with the
// undisturbed run's models and rows. Logged: the wall time, and the time
// from the kill of every worker to the next committed round (the time to
// recover: the killed workers' activities time out on their heartbeats).
func TestTwoWorkersOneKilled(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	e := newEnv(t)
	start := time.Now()
	steady := e.startWorker("worker")
	victim := e.startWorker("worker")
	if out, err := e.starter("sweep", "start", "-f", e.spec("two")); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	// The kills fall 5 to 30 s apart (seeded), while rounds are running.
	rng := rand.New(rand.NewPCG(14, 2))
	for i := 0; i < 3; i++ {
		time.Sleep(time.Duration((5 + 25*rng.Float64()) * float64(time.Second)))
		if commits(e.blob, "two") >= 20 {
			break // near the end: the last phase kills both
		}
		victim.stop(true)
		t.Logf("kill %d at %v (%d rounds committed)", i+1, time.Since(start).Round(time.Millisecond), commits(e.blob, "two"))
		time.Sleep(time.Second)
		victim = e.startWorker("worker")
	}
	if commits(e.blob, "two") < 20 {
		midRound(t, e.blob, "two", "000001")
		n := commits(e.blob, "two")
		steady.stop(true)
		victim.stop(true)
		t.Logf("both workers killed at %v (%d rounds committed)", time.Since(start).Round(time.Millisecond), n)
		e.startWorker("worker")
		e.startWorker("worker")
		t.Logf("next round committed %v after the kill", untilCommits(t, e.blob, "two", n, 3*time.Minute).Round(time.Millisecond))
	}
	e.wait(e.dial(), "two", 10*time.Minute)
	t.Logf("sweep done in %v", time.Since(start).Round(time.Millisecond))
	sameResults(t, "two workers, one killed three times, vs straight", e.results("two"), want)
}

// TestWorkersWallTime runs the integration sweep undisturbed with one worker
// and with two on this machine and logs both wall times (a figure, not an
// assertion).
func TestWorkersWallTime(t *testing.T) {
	requireEnv(t)
	if os.Getenv("FLSWEEP_FAULT_FIGURES") == "" {
		t.Skip("a figure: set FLSWEEP_FAULT_FIGURES=1")
	}
	want := straightRun(t)
	for _, n := range []int{1, 2} {
		e := newEnv(t)
		for i := 0; i < n; i++ {
			e.startWorker("worker")
		}
		name := fmt.Sprintf("wall%d", n)
		start := time.Now()
		if out, err := e.starter("sweep", "start", "-f", e.spec(name), "--wait"); err != nil {
			t.Fatalf("sweep: %v\n%s", err, out)
		}
		t.Logf("%d worker(s): %v", n, time.Since(start).Round(time.Millisecond))
		sameResults(t, name, e.results(name), want)
	}
}

// devServer starts a dev server of its own on hostPort with its database in
// db (the same arguments as the shared one's), with the Temporal UI on
// uiPort (none when uiPort is "").
func devServer(t *testing.T, hostPort, db, uiPort string) *testsuite.DevServer {
	t.Helper()
	s, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{
		ExistingPath:     os.Getenv("TEMPORAL_CLI"),
		DBFilename:       db,
		EnableUI:         uiPort != "",
		UIPort:           uiPort,
		SearchAttributes: searchAttributes(),
		ExtraArgs:        []string{"--dynamic-config-value", "system.enableActivityEagerExecution=true"},
		ClientOptions:    &client.Options{HostPort: hostPort, Logger: quiet{}},
	})
	if err != nil {
		t.Fatalf("start dev server on %s: %v", hostPort, err)
	}
	return s
}

// TestServerRestart: the Temporal server (a dev server of the test's own,
// on a fixed port and database file) is stopped in the middle of a round
// and started again on the same port and file; the worker, which stays up,
// reconnects, and the sweep completes, identical to the undisturbed run.
// Logged: the time from the restart to the next committed round.
func TestServerRestart(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	hostPort := "127.0.0.1:" + miniotest.FreePort(t)
	db := filepath.Join(t.TempDir(), "temporal.db")
	srv := devServer(t, hostPort, db, "")
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Stop()
		}
	})
	e := newEnv(t)
	e.address = hostPort
	e.startWorker("worker")
	if out, err := e.starter("sweep", "start", "-f", e.spec("restart")); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	round := midRound(t, e.blob, "restart", "000002")
	n := commits(e.blob, "restart")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	t.Logf("server stopped during %s (%d rounds committed)", strings.TrimPrefix(round, e.blob), n)
	time.Sleep(5 * time.Second)
	restarted := time.Now()
	srv = devServer(t, hostPort, db, "")
	stopped = false
	up := time.Since(restarted)
	if m := commits(e.blob, "restart"); m < 20 {
		t.Logf("server up again in %v; next round committed %v after the restart", up.Round(time.Millisecond),
			(up + untilCommits(t, e.blob, "restart", m, 5*time.Minute)).Round(time.Millisecond))
	}
	e.wait(e.dial(), "restart", 10*time.Minute)
	t.Logf("sweep done %v after the restart", time.Since(restarted).Round(time.Millisecond))
	sameResults(t, "server restarted vs straight", e.results("restart"), want)
}

// TestBlobStoreOutage: the blob store (MinIO) is killed in the middle of a
// round and started again on the same port and data directory 5 s later;
// the steps that failed meanwhile retry, and the sweep completes, identical
// to the undisturbed run (on a local directory).
func TestBlobStoreOutage(t *testing.T) {
	requireEnv(t)
	srv := miniotest.Start(t)
	want := straightRun(t)
	e := newEnv(t)
	e.blob = ""
	e.blobURL = srv.BlobURL
	e.environ = srv.Environ()
	e.startWorker("worker")
	if out, err := e.starter("sweep", "start", "-f", e.spec("outage")); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	root := filepath.Join(srv.Dir(), miniotest.Bucket)
	round := midRound(t, root, "outage", "000002")
	n := commits(root, "outage")
	srv.Stop()
	t.Logf("MinIO stopped during %s (%d rounds committed)", strings.TrimPrefix(round, root), n)
	time.Sleep(5 * time.Second)
	restarted := time.Now()
	srv.Restart(t)
	if m := commits(root, "outage"); m < 20 {
		t.Logf("MinIO up again in %v; next round committed %v after the restart", time.Since(restarted).Round(time.Millisecond),
			(time.Since(restarted) + untilCommits(t, root, "outage", m, 5*time.Minute)).Round(time.Millisecond))
	}
	e.wait(e.dial(), "outage", 10*time.Minute)
	sameResults(t, "blob store restarted vs straight", e.results("outage"), want)
}

// TestDamagedCheckpoint: with the sweep paused, bytes are flipped in the
// latest committed model of a running point (a real file of the bucket);
// unpaused, the next round finds the damage by its checksum and fails
// without using it; the point starts again from its last checkpoint that
// verifies (withdrawing the later rounds), recomputes, and the sweep ends
// identical to the undisturbed run.
func TestDamagedCheckpoint(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	e := newEnv(t)
	e.startWorker("worker")
	const name = "damaged"
	if out, err := e.starter("sweep", "start", "-f", e.spec(name)); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	untilCommits(t, e.blob, name, 4, 3*time.Minute)
	if out, err := e.starter("sweep", "pause", name); err != nil {
		t.Fatalf("sweep pause: %v\n%s", err, out)
	}
	// Paused: the rounds in flight finish, then no point starts another.
	// The point to damage must have nothing in flight (no round, no
	// step): its next round then reads the damaged checkpoint for sure. (A
	// fixed quiet period was not enough on a loaded machine: a slow round
	// that had read the checkpoint before it was damaged committed after,
	// and nothing read the damaged file again.)
	c := e.dial()
	ids, err := pointWorkflows(c, name)
	if err != nil {
		t.Fatal(err)
	}
	var damagedKey string
	deadline := time.Now().Add(3 * time.Minute)
	for damagedKey == "" {
		if time.Now().After(deadline) {
			t.Fatal("no paused point with two committed rounds and nothing in flight to damage")
		}
		time.Sleep(200 * time.Millisecond)
		points, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", name, "p*"))
		for _, p := range points {
			if _, err := os.Stat(filepath.Join(p, "DONE.json")); err == nil {
				continue
			}
			cs, _ := filepath.Glob(filepath.Join(p, "rounds", "*", "COMMITTED.json"))
			if len(cs) < 2 || !idle(t, c, ids[filepath.Base(p)]) {
				continue
			}
			// Committed rounds only change while a round is in flight.
			if now, _ := filepath.Glob(filepath.Join(p, "rounds", "*", "COMMITTED.json")); len(now) != len(cs) {
				continue
			}
			last := filepath.Join(filepath.Dir(cs[len(cs)-1]), "global.bin")
			b, err := os.ReadFile(last)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x20
			if err := os.WriteFile(last, b, 0o644); err != nil {
				t.Fatal(err)
			}
			damagedKey = strings.TrimPrefix(last, e.blob+"/")
			break
		}
	}
	t.Logf("damaged %s", damagedKey)
	if out, err := e.starter("sweep", "unpause", name); err != nil {
		t.Fatalf("sweep unpause: %v\n%s", err, out)
	}
	e.wait(c, name, 10*time.Minute)
	sameResults(t, "damaged and recovered vs straight", e.results(name), want)

	// The recovery is in the point's history: a step failed with the
	// damage (type Corrupt) and a later PreparePoint withdrew rounds.
	point := strings.Split(damagedKey, "/")[2]
	id := ids[point]
	resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id)})
	if err != nil {
		t.Fatal(err)
	}
	var recovered []string
	for _, ex := range resp.Executions {
		it := c.GetWorkflowHistory(context.Background(), id, ex.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			a := ev.GetActivityTaskCompletedEventAttributes()
			if a == nil {
				continue
			}
			var out steps.PrepareOutput
			var raw json.RawMessage
			if converter.GetDefaultDataConverter().FromPayloads(a.GetResult(), &raw) == nil && json.Unmarshal(raw, &out) == nil && out.Recovered != "" {
				recovered = append(recovered, out.Recovered)
			}
		}
	}
	if len(recovered) == 0 || !strings.Contains(strings.Join(recovered, " "), "withdrawn") {
		t.Errorf("no PreparePoint of %s reports a recovery: %q", id, recovered)
	}
	t.Logf("recovery: %s", strings.Join(recovered, "; "))
	for _, f := range []string{"DAMAGE.json"} {
		if _, err := os.Stat(filepath.Join(e.blob, "sweeps", name, point, f)); err == nil {
			t.Errorf("%s left after the recovery", f)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", name, point, "rounds", "*", "SUPERSEDED.json")); len(left) > 0 {
		t.Errorf("superseded manifests left after their rounds were recomputed: %v", left)
	}
}
