package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// spec is a small sweep on the synthetic dataset: 2 points, 5 rounds.
const spec = `
name: t
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 5
clients_per_round: 4
eval_every: 2
checkpoint_every: 2
seeds: [3]
grid:
  sampler: [uniform, md]
`

func newEngine(t *testing.T) *Engine {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	return New(store.New(b), &Options{Workers: 3})
}

// restartedWorker is another process over e's store, registry and data,
// with another worker count: it holds none of the vectors e wrote or read
// (vectorcache.go).
func restartedWorker(e *Engine) *Engine {
	other := New(e.Store, &Options{Workers: 2, Registry: e.Reg})
	other.Data = e.Data
	return other
}

// snapshot is everything a run leaves that must be reproducible.
type snapshot struct {
	Results    []steps.PointResult
	Rounds     []store.RoundRow
	Clients    []store.ClientRow
	Partitions []store.PartitionRow
	Points     []store.PointRow
	Attacks    []store.AttackRow
}

func take(t *testing.T, e *Engine, plan steps.PlanSweepOutput) snapshot {
	t.Helper()
	ctx := context.Background()
	var s snapshot
	sk, _ := store.SweepKeys(plan.Name)
	for _, p := range plan.Points {
		pk, _ := sk.Point(p.ID)
		var done steps.PointResult
		if err := e.Store.GetJSON(ctx, pk.Done(), &done); err != nil {
			t.Fatalf("point %s: %v", p.ID, err)
		}
		s.Results = append(s.Results, done)
		rounds, err := store.ReadTable(ctx, e.Store, pk, store.TableRounds, roundOf, lessRound)
		if err != nil {
			t.Fatal(err)
		}
		clients, err := store.ReadTable(ctx, e.Store, pk, store.TableClients, clientRound, lessClient)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := store.ReadRows[store.PartitionRow](ctx, e.Store, pk.Compacted(store.TablePartitions))
		if err != nil {
			t.Fatal(err)
		}
		points, err := store.ReadRows[store.PointRow](ctx, e.Store, pk.Compacted(store.TablePoints))
		if err != nil {
			t.Fatal(err)
		}
		s.Rounds = append(s.Rounds, rounds...)
		s.Clients = append(s.Clients, clients...)
		s.Partitions = append(s.Partitions, parts...)
		s.Points = append(s.Points, points...)
		attacks, err := store.ReadTable(ctx, e.Store, pk, store.TableAttacks, attackRound, lessAttack)
		if err != nil {
			t.Fatal(err)
		}
		s.Attacks = append(s.Attacks, attacks...)
	}
	return s
}

func runLocal(t *testing.T, e *Engine) (steps.PlanSweepOutput, snapshot) {
	t.Helper()
	in := steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)}
	if _, err := e.RunSweep(context.Background(), in, nil); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanSweep(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return plan, take(t, e, plan)
}

func compare(t *testing.T, what string, got, want snapshot) {
	t.Helper()
	v1, v2 := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < v1.NumField(); i++ {
		if !reflect.DeepEqual(v1.Field(i).Interface(), v2.Field(i).Interface()) {
			t.Errorf("%s: %s differ:\n got %+v\nwant %+v", what, v1.Type().Field(i).Name, v1.Field(i).Interface(), v2.Field(i).Interface())
		}
	}
}

func TestLocalRunIsDeterministic(t *testing.T) {
	_, a := runLocal(t, newEngine(t))
	_, b := runLocal(t, newEngine(t))
	compare(t, "two runs", b, a)
	if a.Results[0].ModelSHA256 == a.Results[1].ModelSHA256 {
		t.Error("the uniform and md points ended with the same model")
	}
}

// isMD selects the md point of spec.
func isMD(p steps.PointInfo) bool { return strings.Contains(p.Label, "sampler=md") }

// runMDFirst runs spec's md point alone in a fresh engine and returns it
// with the spec's input and plan.
func runMDFirst(t *testing.T) (*Engine, steps.PlanSweepInput, steps.PlanSweepOutput) {
	t.Helper()
	e := newEngine(t)
	in := steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)}
	res, err := e.RunPoints(context.Background(), in, isMD, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("ran %d points; want the md point alone", len(res))
	}
	plan, err := e.PlanSweep(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return e, in, plan
}

// checkPoints fails for each point of plan whose keys under prefix in e's
// store exist where want says they should not, or are missing where it
// says they should be.
func checkPoints(t *testing.T, e *Engine, plan steps.PlanSweepOutput, prefix func(store.PointKeys) string, want func(steps.PointInfo) bool, what string) {
	t.Helper()
	sk, _ := store.SweepKeys(plan.Name)
	for _, p := range plan.Points {
		pk, _ := sk.Point(p.ID)
		keys, err := e.Store.List(context.Background(), prefix(pk))
		if err != nil {
			t.Fatal(err)
		}
		if (len(keys) > 0) != want(p) {
			t.Errorf("point %s: %d keys under %s; want %s only for %v", p.Label, len(keys), prefix(pk), what, want(p))
		}
	}
}

// TestRunPoints runs the sweep's points in two parts, the md point first
// and then the rest: after the first part the uniform point has not started
// (no DONE.json), and after both the sweep's tables and results are bit for
// bit those of a run straight through.
func TestRunPoints(t *testing.T) {
	_, straight := runLocal(t, newEngine(t))
	e, in, plan := runMDFirst(t)
	checkPoints(t, e, plan, store.PointKeys.Done, isMD, "DONE.json")
	if _, err := e.RunPoints(context.Background(), in, func(p steps.PointInfo) bool { return !isMD(p) }, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, "two parts against straight through", take(t, e, plan), straight)
}

// TestRunAfterArchive continues a sweep on another machine from its
// archive: the md point runs in one bucket and is archived
// (results.Archive: tables, DONE.json, config.json, spec.json, no
// checkpoint); a fresh bucket gets the archive's files and runs the whole
// sweep. The md point is not run again (no round files), the uniform point
// runs (its config.json, which the archive lacks, is written on
// re-planning), and the sweep ends bit for bit as a run straight through.
func TestRunAfterArchive(t *testing.T) {
	_, straight := runLocal(t, newEngine(t))
	ctx := context.Background()
	first, in, plan := runMDFirst(t)
	archive := newEngine(t).Store
	st, err := results.Archive(ctx, first.Store, archive, []string{plan.Name}, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Points != 1 {
		t.Fatalf("archived %d points; want the md point", st.Points)
	}
	second := newEngine(t)
	keys, err := archive.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		b, err := archive.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := second.Store.Put(ctx, k, b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := second.RunSweep(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, "archive, then the rest", take(t, second, plan), straight)
	checkPoints(t, second, plan, func(pk store.PointKeys) string { return pk.Rounds() }, func(p steps.PointInfo) bool { return !isMD(p) }, "round files")
}

// TestRows checks the rows a run writes against the spec.
func TestRows(t *testing.T) {
	plan, s := runLocal(t, newEngine(t))
	const rounds, clients, m = 5, 12, 4
	if len(s.Rounds) != 2*(rounds+1) {
		t.Fatalf("%d rounds rows; want %d (rounds 0..5 for 2 points)", len(s.Rounds), 2*(rounds+1))
	}
	for _, r := range s.Rounds {
		wantEval := r.Round == 0 || r.Round%2 == 0 || r.Round == rounds
		if r.Evaluated != wantEval || (r.TestAcc != nil) != wantEval {
			t.Errorf("point %s round %d: evaluated %v; want %v", r.Point, r.Round, r.Evaluated, wantEval)
		}
		if r.Round > 0 && (r.Draws != m || r.BatchLoss == nil || r.ModelSHA256 == "") {
			t.Errorf("round %d row = %+v; want %d draws, a train loss and a model checksum", r.Round, r, m)
		}
	}
	perRound := map[string]int{}
	for _, c := range s.Clients {
		perRound[fmt.Sprintf("%s/%d", c.Point, c.Round)]++
		if c.Selected != (c.BatchLoss != nil) || (c.Selected && c.Weight <= 0) {
			t.Errorf("client row %+v: selected rows carry a weight and a train loss, others none", c)
		}
	}
	for _, p := range plan.Points {
		for r := 0; r <= rounds; r++ {
			got := perRound[fmt.Sprintf("%s/%d", p.ID, r)]
			if r%2 == 0 || r == rounds {
				if got != clients {
					t.Errorf("point %s round %d: %d client rows; want all %d on evaluation rounds", p.ID, r, got, clients)
				}
			} else if got < 1 || got > m {
				t.Errorf("point %s round %d: %d client rows; want the 1..%d trained", p.ID, r, got, m)
			}
		}
	}
	if len(s.Partitions) != 2*clients {
		t.Errorf("%d partition rows; want %d", len(s.Partitions), 2*clients)
	}
	total := 0
	for _, p := range s.Partitions[:clients] {
		total += int(p.Train)
	}
	if total != 2000 { // the synthetic dataset's train split (dataset.SyntheticOptions default)
		t.Errorf("partition rows hold %d training samples; want 2000", total)
	}
	for _, p := range s.Points {
		if p.Status != steps.StatusDone || p.RoundsDone != rounds || p.FinalTestAcc == nil || p.FinalModelSHA256 == "" {
			t.Errorf("points row = %+v; want done after %d rounds with a final accuracy", p, rounds)
		}
		sampler := "uniform"
		if strings.Contains(p.Label, "sampler=md") {
			sampler = "md"
		}
		if want := `{"aggregator/fedavg":1,"algorithm/fedavg":1,"sampler/` + sampler + `":1}`; p.MethodRevisions != want {
			t.Errorf("points row %s: method_revisions %s; want %s", p.Label, p.MethodRevisions, want)
		}
	}
	// The final rounds row and DONE.json agree.
	for i, res := range s.Results {
		last := s.Rounds[(i+1)*(rounds+1)-1]
		if res.ModelSHA256 != last.ModelSHA256 || res.TestAcc != *last.TestAcc {
			t.Errorf("DONE %+v disagrees with the last rounds row %+v", res, last)
		}
	}
}

// TestActivityStepsEqualLocal runs each point's rounds as the Temporal
// workflows do, one activity per client (separate steps with blob storage
// between them), and compares with the in-process runner, which trains the
// clients in chunks.
func TestActivityStepsEqualLocal(t *testing.T) {
	_, want := runLocal(t, newEngine(t))
	e := newEngine(t)
	ctx := context.Background()
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan.Points {
		runSteps(t, e, steps.PointRef{Sweep: plan.Name, Point: p.ID}, 0, "")
	}
	compare(t, "activity steps vs local", take(t, e, plan), want)
}

// crashExec runs the steps of a round like a worker that is killed: when
// step crash is called in round crashAt, a fan-out fails after its first
// half ran (some clients trained, their files written), a single step after
// it ran.
type crashExec struct {
	steps.Exec
	round   int
	crashAt int
	crash   string
}

var errKilled = errors.New("worker killed")

func (x crashExec) RunAll(s steps.Info, ins, outs []any) error {
	if x.round != x.crashAt || s.Name != x.crash {
		return x.Exec.RunAll(s, ins, outs)
	}
	half := (len(ins) + 1) / 2
	if err := x.Exec.RunAll(s, ins[:half], outs[:half]); err != nil {
		return err
	}
	return errKilled
}

// Run crashes after the step did its work and before its caller learns of
// it: its files are written, its result lost.
func (x crashExec) Run(s steps.Info, in, out any) error {
	err := x.Exec.Run(s, in, out)
	if err == nil && x.round == x.crashAt && s.Name == x.crash {
		return errKilled
	}
	return err
}

// runSteps drives one point through its rounds with steps.Round, one
// activity per client; with crashAt > 0 it stops in round crashAt when step
// crash runs, as a killed worker would, and returns.
func runSteps(t *testing.T, e *Engine, ref steps.PointRef, crashAt int, crash string) {
	t.Helper()
	ctx := context.Background()
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for r := prep.LastCommitted + 1; r <= prep.Rounds; r++ {
		in := steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: r, DataDigest: prep.DataDigest},
			Eval: steps.ShouldEval(r, prep.EvalEvery, prep.Rounds), ClientsPerActivity: 1, Phases: prep.Phases}
		_, err := steps.Round(crashExec{Exec: e.exec(ctx, nil), round: r, crashAt: crashAt, crash: crash}, in)
		if errors.Is(err, errKilled) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if r == 2 { // a retried round after its commit changes nothing
			sk, _ := store.SweepKeys(ref.Sweep)
			pk, _ := sk.Point(ref.Point)
			var c store.Commit
			if err := e.Store.GetJSON(ctx, pk.Committed(r), &c); err != nil {
				t.Fatal(err)
			}
			in := steps.CommitInput{RoundRef: in.RoundRef, Selection: fl.Selection{Clients: c.Clients, Weights: make([]float64, len(c.Clients)), Draws: make([]int, len(c.Clients))},
				Clients: make([]fl.ClientSummary, len(c.Clients)), Model: steps.AggregateOutput{ModelSHA256: c.GlobalSHA256}}
			if _, err := e.CommitRound(ctx, in); err != nil {
				t.Fatalf("second commit of round %d: %v", r, err)
			}
		}
	}
	if _, err := e.FinishPoint(ctx, steps.FinishInput{PointRef: ref, Status: steps.StatusDone}); err != nil {
		t.Fatal(err)
	}
}

// TestCrashAndResume: a point interrupted in round 3 (some clients trained,
// nothing aggregated or committed) and resumed by a fresh engine, as after a
// worker is killed and restarted, ends exactly like an uninterrupted run.
func TestCrashAndResume(t *testing.T) {
	_, want := runLocal(t, newEngine(t))
	crashAndResume(t, spec, want, nil)
}

// crashAndResume runs every point of spec step by step up to a crash in
// round 3 (in training, after aggregating, after committing, in a query or
// while inspecting,
// for successive points), resumes them all with a fresh engine on the same
// store, and compares with want.
func crashAndResume(t *testing.T, specText string, want snapshot, reg *methods.Registry) {
	t.Helper()
	e := newEngine(t)
	if reg != nil {
		e.Reg = reg
	}
	ctx := context.Background()
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(specText)})
	if err != nil {
		t.Fatal(err)
	}
	crashes := []string{steps.TrainClients.Name, steps.Aggregate.Name, steps.CommitRound.Name, steps.QueryClients.Name, steps.InspectUpdates.Name}
	for i, p := range plan.Points {
		runSteps(t, e, steps.PointRef{Sweep: plan.Name, Point: p.ID}, 3, crashes[i%len(crashes)])
	}
	restarted := restartedWorker(e)
	if _, err := restarted.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(specText)}, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, "crashed and resumed", take(t, restarted, plan), want)
}

func TestRetention(t *testing.T) {
	e := newEngine(t)
	plan, _ := runLocal(t, e)
	ctx := context.Background()
	sk, _ := store.SweepKeys(plan.Name)
	pk, _ := sk.Point(plan.Points[0].ID)
	keys, err := e.Store.List(ctx, pk.Rounds())
	if err != nil {
		t.Fatal(err)
	}
	var globals []string
	for _, k := range keys {
		if strings.Contains(k, "/updates/") || strings.HasSuffix(k, "eval.json") {
			t.Errorf("transient file %s left behind", k)
		}
		if strings.HasSuffix(k, "global.bin") {
			globals = append(globals, strings.TrimPrefix(k, pk.Rounds()))
		}
	}
	// checkpoint_every 2, 5 rounds: keep 0, 2, 4 and the last, 5.
	want := []string{"000000/global.bin", "000002/global.bin", "000004/global.bin", "000005/global.bin"}
	if !reflect.DeepEqual(globals, want) {
		t.Errorf("retained models %v; want %v", globals, want)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		give string
		want string
	}{
		{"missing data files", strings.Replace(spec, "{name: synthetic}", "{name: fmnist, root: /nonexistent/fmnist}", 1), "starter data fetch fmnist"},
		{"clients exceed samples", strings.Replace(spec, "clients: 12", "clients: 5000", 1), "clients"},
		{"unknown sampler", strings.Replace(spec, "[uniform, md]", "[uniform, hics-typo]", 1), "hics-typo"},
		{"malformed yaml", "name: t\nrounds: [", "t.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t)
			_, err := e.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(tt.give)}, nil)
			if !IsBadInput(err) {
				t.Fatalf("RunSweep error = %v; want a bad-input error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q; want it to mention %q", err, tt.want)
			}
			// Nothing is committed for a point that could not start.
			keys, _ := e.Store.List(ctx, "sweeps/")
			for _, k := range keys {
				if strings.Contains(k, "COMMITTED") || strings.Contains(k, "DONE") {
					t.Errorf("bad input left %s", k)
				}
			}
		})
	}
}

func TestSpecConflict(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	if _, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)}); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(spec, "rounds: 5", "rounds: 6", 1)
	_, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(other)})
	if !IsBadInput(err) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("re-planning sweep t with other points: error = %v; want a bad-input error saying it exists", err)
	}
}

func TestDiverged(t *testing.T) {
	e := newEngine(t)
	diverging := strings.Replace(spec, "lr: 0.1", "lr: 1e30", 1)
	res, err := e.RunSweep(context.Background(), steps.PlanSweepInput{File: "t.yaml", Spec: []byte(diverging)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != steps.StatusDiverged || r.RoundsDone != 0 {
			t.Errorf("result %+v; want diverged in round 1 (0 rounds done)", r)
		}
	}
}

// TestKeepUpdates: with run.keep_updates every trained client's update stays
// in storage, also in the in-process runner.
func TestKeepUpdates(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	keep := spec + "run: {keep_updates: true}\n"
	if _, err := e.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(keep)}, nil); err != nil {
		t.Fatal(err)
	}
	plan, _ := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(keep)})
	sk, _ := store.SweepKeys(plan.Name)
	pk, _ := sk.Point(plan.Points[0].ID)
	rows, err := store.ReadTable(ctx, e.Store, pk, store.TableClients, clientRound, lessClient)
	if err != nil {
		t.Fatal(err)
	}
	trained := 0
	for _, row := range rows {
		if !row.Selected {
			continue
		}
		trained++
		f, err := e.Store.GetFile(ctx, pk.Update(int(row.Round), int(row.Client)))
		if err != nil {
			t.Errorf("round %d client %d: %v", row.Round, row.Client, err)
			continue
		}
		if f.Kind != "update" || f.Round != int(row.Round) || f.Client != int(row.Client) {
			t.Errorf("update header %+v", f.Header)
		}
	}
	if trained == 0 {
		t.Error("no trained clients")
	}
}

// TestRunSweepConcurrency: the in-process runner runs run.concurrency
// points at once (two here, the default), with the results of one at a
// time.
func TestRunSweepConcurrency(t *testing.T) {
	one := spec + "run: {concurrency: 1}\n"
	for _, tt := range []struct {
		spec string
		want int
	}{{spec, 2}, {one, 1}} {
		var mu sync.Mutex
		running, most := map[string]bool{}, 0
		e := newEngine(t)
		in := steps.PlanSweepInput{File: "t.yaml", Spec: []byte(tt.spec)}
		if _, err := e.RunSweep(context.Background(), in, func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			running[p.Point.ID] = !p.Done
			n := 0
			for _, r := range running {
				if r {
					n++
				}
			}
			most = max(most, n)
		}); err != nil {
			t.Fatal(err)
		}
		if most != tt.want {
			t.Errorf("at most %d points ran at once; want %d", most, tt.want)
		}
		plan, err := e.PlanSweep(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == 1 {
			_, want := runLocal(t, newEngine(t))
			got := take(t, e, plan)
			for i := range got.Results {
				if got.Results[i].ModelSHA256 != want.Results[i].ModelSHA256 {
					t.Errorf("point %d: model %s one at a time, %s two at once", i, got.Results[i].ModelSHA256, want.Results[i].ModelSHA256)
				}
			}
			compare(t, "one at a time vs two at once (rows)", snapshot{Rounds: got.Rounds, Clients: got.Clients}, snapshot{Rounds: want.Rounds, Clients: want.Clients})
		}
	}
}

// TestResumeReportsLatestAccuracy: a point stopped after a round without an
// evaluation resumes showing the latest evaluated round's test accuracy,
// not 0 (the progress bar and the workflow's details start from it).
func TestResumeReportsLatestAccuracy(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)})
	if err != nil {
		t.Fatal(err)
	}
	ref := steps.PointRef{Sweep: plan.Name, Point: plan.Points[0].ID}
	runSteps(t, e, ref, 4, steps.TrainClients.Name) // rounds 1-3 committed; eval_every 2
	sk, _ := store.SweepKeys(ref.Sweep)
	pk, _ := sk.Point(ref.Point)
	var c2, c3 store.Commit
	if err := e.Store.GetJSON(ctx, pk.Committed(2), &c2); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.GetJSON(ctx, pk.Committed(3), &c3); err != nil {
		t.Fatal(err)
	}
	if !c2.Evaluated || c2.TestAcc <= 0 || c3.Evaluated {
		t.Fatalf("round 2 evaluated %v at %v, round 3 evaluated %v; the test needs round 2 evaluated and round 3 not", c2.Evaluated, c2.TestAcc, c3.Evaluated)
	}
	prep, err := restartedWorker(e).PreparePoint(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if prep.LastCommitted != 3 || prep.TestAcc != c2.TestAcc {
		t.Errorf("resumed after round %d with test accuracy %v; want round 3 with round 2's %v", prep.LastCommitted, prep.TestAcc, c2.TestAcc)
	}
}
