package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/workflows"
)

// The production stack's tests (infra/prod/stack.sh: PostgreSQL, the
// Temporal server built from go.temporal.io/server, MinIO, workers) run with
// FLSWEEP_PROD=1, which `make test` sets after building bin/temporal-server
// and installing PostgreSQL; they need TEMPORAL_SERVER_BIN,
// TEMPORAL_SQL_TOOL and MINIO_BIN.

// prodStack is one private production stack: its own directory and ports.
type prodStack struct {
	t      *testing.T
	dir    string
	offset int
	extra  []string // extra environment of stack.sh
}

// requireProd skips without FLSWEEP_PROD=1 and fails when it is set but a
// binary is missing.
func requireProd(t *testing.T) {
	t.Helper()
	if os.Getenv("FLSWEEP_PROD") != "1" {
		t.Skip("FLSWEEP_PROD=1 runs the production stack's tests (`make test` sets it)")
	}
	for _, v := range []string{"TEMPORAL_SERVER_BIN", "TEMPORAL_SQL_TOOL", "MINIO_BIN", "TEMPORAL_CLI"} {
		if p := os.Getenv(v); p == "" {
			t.Fatalf("FLSWEEP_PROD=1 but %s is unset; `make test` builds and sets it", v)
		} else if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v; `make bin/temporal-server bin/minio bin/temporal` builds it", v, err)
		}
	}
}

// newProdStack prepares (does not start) a stack in a new directory that the
// postgres user can enter, on ports free at the moment.
func newProdStack(t *testing.T, extra ...string) *prodStack {
	t.Helper()
	requireProd(t)
	dir, err := os.MkdirTemp("", "flsweep-prod-")
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL runs as the postgres user: it must reach its data directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &prodStack{t: t, dir: dir, offset: freeOffset(t), extra: extra}
	t.Cleanup(func() {
		if out, err := s.sh("down"); err != nil {
			t.Errorf("stack down: %v\n%s", err, out)
		}
		if t.Failed() {
			for _, f := range []string{"server.log", "worker1.log", "worker2.log", "schema.log", "init.log", "postgres.log"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
					t.Logf("%s (tail):\n%s", f, tail(string(b), 3000))
				}
			}
		}
		_ = os.RemoveAll(dir)
	})
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// freeOffset picks a port offset such that every port of the stack is free.
func freeOffset(t *testing.T) int {
	t.Helper()
	base := []int{5432, 6933, 6934, 6935, 6936, 6939, 7233, 7234, 7235, 7236, 7239, 7243, 7246, 9000, 9001}
	for range 200 {
		// Membership ports (6933..6939 + offset) must stay below 32768:
		// the server stores them in a PostgreSQL smallint.
		off := 11000 + rand.IntN(14000)
		ok := true
		for _, p := range base {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+off))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return off
		}
	}
	t.Fatal("no free port offset for the stack")
	return 0
}

// environ is the environment of stack.sh.
func (s *prodStack) environ() []string {
	return append(os.Environ(), append([]string{
		"STACK_DIR=" + s.dir,
		"STACK_PORT_OFFSET=" + strconv.Itoa(s.offset),
		"SERVER_BIN=" + os.Getenv("TEMPORAL_SERVER_BIN"),
		"SQL_TOOL=" + os.Getenv("TEMPORAL_SQL_TOOL"),
		"WORKER_BIN=" + filepath.Join(binDir, "worker"),
		"STARTER_BIN=" + filepath.Join(binDir, "starter"),
		"FLSWEEP_DATA_DIR=" + dataDir,
		"FLSWEEP_QUEUE=prod",
	}, s.extra...)...)
}

// sh runs infra/prod/stack.sh with args and returns its combined output.
func (s *prodStack) sh(args ...string) (string, error) {
	cmd := exec.Command("../infra/prod/stack.sh", args...)
	cmd.Env = s.environ()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *prodStack) mustSh(args ...string) string {
	s.t.Helper()
	out, err := s.sh(args...)
	if err != nil {
		s.t.Fatalf("stack.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// clientEnv is the stack's client environment (stack.sh env), as KEY=VALUE.
func (s *prodStack) clientEnv() map[string]string {
	s.t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(s.mustSh("env"), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if ok {
			m[k] = strings.Trim(v, "'")
		}
	}
	return m
}

func (s *prodStack) address() string { return "127.0.0.1:" + strconv.Itoa(7233+s.offset) }

// env returns an integration env whose bucket is the stack's.
func (s *prodStack) env() *env {
	ce := s.clientEnv()
	return &env{t: s.t, queue: ce["FLSWEEP_QUEUE"], blobURL: ce["FLSWEEP_BLOB"],
		environ: []string{"AWS_ACCESS_KEY_ID=" + ce["AWS_ACCESS_KEY_ID"], "AWS_SECRET_ACCESS_KEY=" + ce["AWS_SECRET_ACCESS_KEY"]}}
}

// starter runs the starter against the stack with its client environment.
func (s *prodStack) starter(extraEnv []string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "starter"), args...)
	cmd.Env = os.Environ()
	for k, v := range s.clientEnv() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// committedRounds counts the sweep's committed rounds in the stack's bucket.
func committedRounds(t *testing.T, e *env, sweep string) int {
	t.Helper()
	for _, kv := range e.environ {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, e.blobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sk, _ := store.SweepKeys(sweep)
	keys, err := st.List(ctx, sk.Prefix())
	if err != nil {
		return 0
	}
	n := 0
	for _, k := range keys {
		if strings.HasSuffix(k, "/COMMITTED.json") {
			n++
		}
	}
	return n
}

// TestProdStack runs the integration sweep on the production stack (the
// Temporal server on PostgreSQL, MinIO, two workers) and checks that its
// models and rows equal the dev server's; then runs it again, stops the
// Temporal server in the middle and starts it again, and checks the sweep
// completes, identical. It reports wall times and the time to recover.
func TestProdStack(t *testing.T) {
	requireEnv(t)
	requireProd(t)
	// The reference: the dev server's run. With FLSWEEP_PROD_BENCH=1, a run
	// of its own with two workers (2 slots each, as the stack's), timed for
	// the comparison; otherwise the straight run the other tests share.
	var want results
	var devWall time.Duration
	if os.Getenv("FLSWEEP_PROD_BENCH") == "1" {
		dev := newEnv(t)
		dev.worker()
		dev.worker()
		t0 := time.Now()
		if out, err := dev.starter("sweep", "start", "-f", dev.spec("dev"), "--wait"); err != nil {
			t.Fatalf("sweep on the dev server: %v\n%s", err, out)
		}
		devWall = time.Since(t0)
		want = dev.results("dev")
	} else {
		want = straightRun(t)
	}

	s := newProdStack(t, "STACK_WORKER_SLOTS=2")
	t0 := time.Now()
	t.Log(s.mustSh("up"))
	t.Logf("FIGURE stack up (PostgreSQL initdb, schema, server, MinIO, 2 workers): %v", time.Since(t0).Round(time.Millisecond))
	e := s.env()

	t0 = time.Now()
	if out, err := s.starter(nil, "sweep", "start", "-f", e.spec("prod"), "--wait"); err != nil {
		t.Fatalf("sweep on the stack: %v\n%s", err, out)
	}
	prodWall := time.Since(t0)
	sameResults(t, "production stack vs dev server", e.results("prod"), want)
	if devWall > 0 {
		t.Logf("FIGURE sweep wall time (4 points, 2 workers x 2 slots): dev server %v, production stack %v",
			devWall.Round(time.Millisecond), prodWall.Round(time.Millisecond))
	} else {
		t.Logf("FIGURE sweep wall time on the production stack (4 points, 2 workers x 2 slots): %v (FLSWEEP_PROD_BENCH=1 times the dev server too)",
			prodWall.Round(time.Millisecond))
	}

	// Server restart mid-sweep.
	const name = "prod-restart"
	spec := e.spec(name)
	if out, err := s.starter(nil, "sweep", "start", "-f", spec); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for committedRounds(t, e, name) < 4 {
		if time.Now().After(deadline) {
			t.Fatal("no 4 committed rounds in 5 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := committedRounds(t, e, name)
	stopAt := time.Now()
	t.Log(s.mustSh("stop-server"))
	down := committedRounds(t, e, name)
	time.Sleep(5 * time.Second) // the workers keep polling a server that is gone
	startAt := time.Now()
	t.Log(s.mustSh("start-server"))
	upAt := time.Now()
	atUp := committedRounds(t, e, name)
	for committedRounds(t, e, name) <= atUp {
		if time.Since(upAt) > 5*time.Minute {
			t.Fatal("no round committed within 5 minutes of the server's restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
	recovered := time.Since(upAt)
	t.Logf("FIGURE server restart: %d rounds committed before the stop, %d when it stopped, %d when it was up again; "+
		"server start (to healthy) %v; first new committed round %v after the server was healthy (%v after the stop, 5 s of it down on purpose)",
		before, down, atUp, upAt.Sub(startAt).Round(time.Millisecond), recovered.Round(time.Millisecond),
		time.Since(stopAt).Round(time.Millisecond))
	// Attach to the running sweep (the workflow ID is the sweep's) and wait.
	if out, err := s.starter(nil, "sweep", "start", "-f", spec, "--wait"); err != nil {
		t.Fatalf("sweep after the server restart: %v\n%s", err, out)
	}
	sameResults(t, "production stack, server restarted mid-sweep, vs dev server", e.results(name), want)
	if out, err := s.sh("status"); err != nil {
		t.Errorf("stack status after the restart: %v\n%s", err, out)
	}
	if out, err := s.sh("up"); err != nil || !strings.Contains(out, "already running") {
		t.Errorf("stack up again is not idempotent: %v\n%s", err, out)
	}
	fmt.Fprintln(os.Stderr, "TestProdStack: see the FIGURE lines with -v")
}

// TestStackSearchAttributes: the attributes infra/server/init.sh registers on
// a production server are workflows.SearchAttributes.
func TestStackSearchAttributes(t *testing.T) {
	b, err := os.ReadFile("../infra/server/init.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), `ATTRS="`)
	if !ok {
		t.Fatal(`init.sh has no ATTRS="..." line`)
	}
	list, _, _ := strings.Cut(rest, `"`)
	got := map[string]string{}
	for _, a := range strings.Fields(list) {
		k, v, _ := strings.Cut(a, "=")
		got[k] = v
	}
	if !reflect.DeepEqual(got, workflows.SearchAttributes) {
		t.Errorf("infra/server/init.sh registers %v, want workflows.SearchAttributes = %v", got, workflows.SearchAttributes)
	}
}
