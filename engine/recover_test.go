package engine

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// newFileEngine returns an engine over a real file bucket in a fresh
// directory (damage is done to files as a disk or a hand would do it).
func newFileEngine(t *testing.T, version string) *Engine {
	t.Helper()
	b, err := fileblob.OpenBucket(t.TempDir(), &fileblob.Options{NoTempDir: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return New(store.New(b), &Options{Workers: 3, Version: version})
}

// flip damages one byte in the middle of the object at key.
func flip(t *testing.T, e *Engine, key string) {
	t.Helper()
	ctx := context.Background()
	b, err := e.Store.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x20
	if err := e.Store.Put(ctx, key, b); err != nil {
		t.Fatal(err)
	}
}

// interrupted plans the test sweep on e and runs its first point until a
// crash in round crashAt (rounds 0..crashAt−1 committed).
func interrupted(t *testing.T, e *Engine, crashAt int) (steps.PlanSweepOutput, steps.PointRef, store.PointKeys) {
	t.Helper()
	return interruptedSpec(t, e, spec, crashAt)
}

// interruptedSpec is interrupted for the sweep specText.
func interruptedSpec(t *testing.T, e *Engine, specText string, crashAt int) (steps.PlanSweepOutput, steps.PointRef, store.PointKeys) {
	t.Helper()
	plan, err := e.PlanSweep(context.Background(), steps.PlanSweepInput{File: "t.yaml", Spec: []byte(specText)})
	if err != nil {
		t.Fatal(err)
	}
	ref := steps.PointRef{Sweep: plan.Name, Point: plan.Points[0].ID}
	runSteps(t, e, ref, crashAt, steps.TrainClients.Name)
	sk, _ := store.SweepKeys(plan.Name)
	pk, _ := sk.Point(ref.Point)
	return plan, ref, pk
}

// resumeAll runs the sweep to its end on e and compares with want.
func resumeAll(t *testing.T, e *Engine, plan steps.PlanSweepOutput, want snapshot) {
	t.Helper()
	resumeAllSpec(t, e, spec, "recovered", plan, want)
}

// resumeAllSpec is resumeAll for the sweep specText; what names the run.
func resumeAllSpec(t *testing.T, e *Engine, specText, what string, plan steps.PlanSweepOutput, want snapshot) {
	t.Helper()
	if _, err := e.RunSweep(context.Background(), steps.PlanSweepInput{File: "t.yaml", Spec: []byte(specText)}, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, what, take(t, e, plan), want)
}

// TestRecoverDamagedCheckpoint: a point whose checkpoints were damaged
// between runs (bytes flipped in files of a real file bucket) never loads
// them: PreparePoint resumes from the latest checkpoint that verifies,
// withdraws the later commits, and the recomputed point ends bit-identical
// to an undisturbed run.
func TestRecoverDamagedCheckpoint(t *testing.T) {
	_, want := runLocal(t, newEngine(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		damage  func(pk store.PointKeys) []string // keys to damage
		resumed int                               // the round PreparePoint resumes from
	}{
		// rounds 0..3 committed; retained: 0, 2 and the latest, 3
		{"last model", func(pk store.PointKeys) []string { return []string{pk.Global(3)} }, 2},
		{"last state", func(pk store.PointKeys) []string { return []string{pk.State(3)} }, 2},
		{"two checkpoints", func(pk store.PointKeys) []string { return []string{pk.Global(3), pk.State(2)} }, 0},
		{"every checkpoint", func(pk store.PointKeys) []string { return []string{pk.Global(3), pk.Global(2), pk.Global(0)} }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFileEngine(t, "")
			plan, ref, pk := interrupted(t, e, 4)
			for _, k := range tc.damage(pk) {
				flip(t, e, k)
			}
			prep, err := e.PreparePoint(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if prep.LastCommitted != tc.resumed || !strings.Contains(prep.Recovered, "withdrawn") {
				t.Errorf("PreparePoint resumes from round %d (%q); want round %d, withdrawn rounds said", prep.LastCommitted, prep.Recovered, tc.resumed)
			}
			for r := tc.resumed + 1; r <= 3; r++ {
				if ok, _ := e.Store.Exists(ctx, pk.Committed(r)); ok {
					t.Errorf("round %d still committed after recovery to round %d", r, tc.resumed)
				}
			}
			resumeAll(t, e, plan, want)
			for r := 0; r <= 3; r++ {
				if ok, _ := e.Store.Exists(ctx, supersededKey(&pointEnv{keys: pk}, r)); ok {
					t.Errorf("round %d's superseded manifest left after its recomputation", r)
				}
			}
		})
	}
}

// TestRecoverDamageFoundInRound: a round that reads a damaged checkpoint
// fails with a damage error (never retried as is, never computing from it)
// and records it; the point's next start recovers, and the in-process
// runner does so by itself.
func TestRecoverDamageFoundInRound(t *testing.T) {
	_, want := runLocal(t, newEngine(t))
	ctx := context.Background()
	e := newFileEngine(t, "")
	plan, ref, pk := interrupted(t, e, 4)
	flip(t, e, pk.Global(3))
	_, err := e.RunRound(ctx, steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 4}})
	if !IsDamaged(err) || !errors.Is(err, store.ErrCorrupt) || !strings.Contains(err.Error(), pk.Global(3)) {
		t.Fatalf("round 4 from a damaged model: error = %v; want a damage error naming %s", err, pk.Global(3))
	}
	var d damage
	if err := e.Store.GetJSON(ctx, pk.Prefix()+"DAMAGE.json", &d); err != nil || d.Key != pk.Global(3) {
		t.Errorf("DAMAGE.json = %+v, %v; want the damaged key %s", d, err, pk.Global(3))
	}
	// RunSweep's RunPoint: PreparePoint sees the model damaged, resumes
	// from round 2.
	resumeAll(t, e, plan, want)
	if ok, _ := e.Store.Exists(ctx, pk.Prefix()+"DAMAGE.json"); ok {
		t.Error("DAMAGE.json left after the recovery")
	}
}

// TestRecoverDeep: a damaged file that only a deep check finds (a client's
// state, read by the next round) is recorded by the round that reads it;
// the next start verifies the named client states too and goes back to a
// checkpoint that does not name the damaged version.
func TestRecoverDeep(t *testing.T) {
	const scaffold = `
name: t
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 6, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 5
clients_per_round: 6
eval_every: 2
checkpoint_every: 2
seeds: [3]
algorithm: scaffold
`
	ctx := context.Background()
	run := func(e *Engine) steps.PlanSweepOutput {
		t.Helper()
		plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(scaffold)})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	ref0 := newEngine(t)
	plan := run(ref0)
	if _, err := ref0.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(scaffold)}, nil); err != nil {
		t.Fatal(err)
	}
	want := take(t, ref0, plan)

	e := newFileEngine(t, "")
	run(e)
	ref := steps.PointRef{Sweep: plan.Name, Point: plan.Points[0].ID}
	runSteps(t, e, ref, 4, steps.TrainClients.Name)
	sk, _ := store.SweepKeys(plan.Name)
	pk, _ := sk.Point(ref.Point)
	// Every client trains every round: client 0's state of round 3.
	flip(t, e, pk.ClientState(0, 3))
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil || prep.LastCommitted != 3 {
		t.Fatalf("PreparePoint = %d, %v; want round 3 (the shallow check passes)", prep.LastCommitted, err)
	}
	_, err = e.RunRound(ctx, steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 4}, Phases: prep.Phases, ClientsPerActivity: 100})
	if !IsDamaged(err) || !strings.Contains(err.Error(), pk.ClientState(0, 3)) {
		t.Fatalf("round 4 with a damaged client state: error = %v; want a damage error naming %s", err, pk.ClientState(0, 3))
	}
	if prep, err = e.PreparePoint(ctx, ref); err != nil || prep.LastCommitted != 2 {
		t.Fatalf("PreparePoint after the damage = %d, %v; want round 2, whose state names client 0's version 2", prep.LastCommitted, err)
	}
	if _, err := e.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(scaffold)}, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, "recovered", take(t, e, plan), want)
}

// TestRecomputedMustMatch: a withdrawn round recomputed to another model
// than it first committed (the determinism contract broken, here by editing
// the superseded manifest) is not committed: the point stops with an error.
func TestRecomputedMustMatch(t *testing.T) {
	ctx := context.Background()
	e := newFileEngine(t, "")
	_, ref, pk := interrupted(t, e, 4)
	flip(t, e, pk.Global(3))
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil || prep.LastCommitted != 2 {
		t.Fatalf("PreparePoint = %d, %v; want round 2", prep.LastCommitted, err)
	}
	key := pk.Round(3) + "SUPERSEDED.json"
	var m store.Commit
	if err := e.Store.GetJSON(ctx, key, &m); err != nil {
		t.Fatal(err)
	}
	m.GlobalSHA256 = strings.Repeat("0", 64)
	if err := e.Store.PutJSON(ctx, key, m); err != nil {
		t.Fatal(err)
	}
	_, err = e.RunRound(ctx, steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 3, DataDigest: prep.DataDigest},
		Eval: steps.ShouldEval(3, prep.EvalEvery, prep.Rounds), Phases: prep.Phases, ClientsPerActivity: 100})
	if err == nil || !strings.Contains(err.Error(), "determinism contract") {
		t.Fatalf("recomputed round 3 with another model: error = %v; want the determinism contract named", err)
	}
	if ok, _ := e.Store.Exists(ctx, pk.Committed(3)); ok {
		t.Error("round 3 committed with a model other than the one it first committed")
	}
}

// TestIdentity: a bucket's identity is written once and shared by every
// engine on it; a sweep keeps the identity it was first planned with; an
// engine of another bucket or build refuses it; a point whose rounds were
// computed by another build is not continued.
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	a := newFileEngine(t, "v1")
	b := New(a.Store, &Options{Version: "v1+openblas"})
	other := newFileEngine(t, "v1")
	ida, err := a.BucketID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idb, _ := b.BucketID(ctx)
	ido, _ := other.BucketID(ctx)
	if ida != idb || ida == ido || len(ida) != 32 {
		t.Errorf("bucket ids %q, %q (same bucket), %q (another); want equal, then different, 32 hex digits", ida, idb, ido)
	}
	plan, ref, pk := interrupted(t, a, 3)
	sid, err := a.SweepIdentity(ctx, plan.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := b.SweepIdentity(ctx, plan.Name); got != sid || sid.Build != "v1" {
		t.Errorf("sweep identity seen by another build %+v; want the first %+v, build v1", got, sid)
	}
	q := steps.Routed("fl", sid.String())
	want, ok := QueueIdentity(q)
	if !ok || want.Build != "v1" || !strings.HasPrefix(ida, want.Bucket) {
		t.Fatalf("QueueIdentity(%q) = %+v, %v", q, want, ok)
	}
	if err := a.Refuses(ctx, want); err != nil {
		t.Errorf("the sweep's own worker refuses: %v", err)
	}
	for name, e := range map[string]*Engine{"build": b, "bucket": other} {
		err := e.Refuses(ctx, want)
		if !IsRefused(err) || IsBadInput(err) || !strings.Contains(err.Error(), "; start ") {
			t.Errorf("a worker of another %s: Refuses = %v; want a refusal (not bad input) saying what to start", name, err)
		}
	}
	if _, ok := QueueIdentity("fl"); ok {
		t.Error("an unrouted queue has an identity")
	}
	before, _ := b.Store.List(ctx, pk.Prefix())
	_, err = b.PreparePoint(ctx, ref)
	if !IsBadInput(err) || !strings.Contains(err.Error(), `build "v1"`) {
		t.Errorf("another build continues a point of build v1: error = %v; want bad input naming build v1", err)
	}
	after, _ := b.Store.List(ctx, pk.Prefix())
	if strings.Join(before, " ") != strings.Join(after, " ") {
		t.Errorf("the refused PreparePoint changed the store:\nbefore %v\nafter  %v", before, after)
	}
}

// TestRunSweepRunsPastAFailedPoint: as the sweep workflow does
// (steps.PointsFailed), the in-process runner runs every point it can when
// one fails, here one whose rounds another build computed: the other point
// ends done and identical to an undisturbed run, the failed one reports
// StatusFailed, and the sweep's error names it, says how to go on and keeps
// its kind (bad input).
func TestRunSweepRunsPastAFailedPoint(t *testing.T) {
	ctx := context.Background()
	_, want := runLocal(t, newEngine(t))
	a := newFileEngine(t, "v1")
	plan, ref, _ := interrupted(t, a, 3)
	one := spec + "run: {concurrency: 1}\n" // the failed point first, then the other
	b := New(a.Store, &Options{Workers: 3, Version: "v2"})
	var mu sync.Mutex
	status := map[string]string{}
	res, err := b.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(one)}, func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		status[p.Point.ID] = p.Status
	})
	var pf *steps.PointsFailed
	if !errors.As(err, &pf) || pf.Failed != 1 || pf.Total != 2 || len(pf.First) != 1 || pf.First[0].ID != ref.Point {
		t.Fatalf("RunSweep error = %#v; want PointsFailed naming point %s of 2", err, ref.Point)
	}
	if !IsBadInput(err) || !strings.Contains(err.Error(), `build "v1"`) || !strings.Contains(err.Error(), "`starter run --local -f t.yaml` again") {
		t.Errorf("error %q: want bad input naming build v1 and how to go on", err)
	}
	other := plan.Points[1].ID
	if status[ref.Point] != steps.StatusFailed || status[other] != steps.StatusDone {
		t.Errorf("statuses %v; want %s failed and %s done", status, ref.Point, other)
	}
	if len(res) != 1 || res[0].Point != other || res[0].Status != steps.StatusDone {
		t.Fatalf("results %+v; want point %s done", res, other)
	}
	if !reflect.DeepEqual(res[0], want.Results[1]) {
		t.Errorf("the point that ran: %+v; an undisturbed run: %+v", res[0], want.Results[1])
	}
}
