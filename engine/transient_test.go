package engine

import (
	"context"
	"testing"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// TestTransientUpdates: a round run whole in one process keeps its updates
// in memory (engine/transient.go), and ends with the same rows and models
// as rounds whose steps run as separate activities, through the store; the
// store sees one write fewer per trained client.
func TestTransientUpdates(t *testing.T) {
	ctx := context.Background()
	inMemory := newEngine(t)
	_, want := runLocal(t, inMemory)

	e := newEngine(t)
	plan := runPoints(t, e, func(ref steps.PointRef, prep steps.PrepareOutput) {
		for r := 1; r <= prep.Rounds; r++ {
			// The workflow's path: every step a call of its own, each with
			// a context of its own, as activities have.
			in := steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: r, DataDigest: prep.DataDigest},
				Eval: steps.ShouldEval(r, prep.EvalEvery, prep.Rounds), ClientsPerActivity: 2, Phases: prep.Phases}
			if _, err := steps.Round(e.exec(ctx, nil), in); err != nil {
				t.Fatal(err)
			}
		}
	})
	compare(t, "updates in memory vs through the store", want, take(t, e, plan))
	trained := 0 // clients trained, each round counted (md sampling draws with replacement)
	for _, c := range want.Clients {
		if c.Steps != nil {
			trained++
		}
	}
	stored, held := e.Store.Traffic(), inMemory.Store.Traffic()
	if d := stored.Puts - held.Puts; d < int64(trained) {
		t.Errorf("the store saw %d writes through activities and %d in one process: %d fewer; want at least one fewer per trained client (%d)",
			stored.Puts, held.Puts, d, trained)
	}
	t.Logf("writes: %d through activities, %d in one process (%d clients trained); bytes %d and %d",
		stored.Puts, held.Puts, trained, stored.Written, held.Written)
}

// TestTransientCap: past transientCap bytes a round's updates go to the
// store; reads find them in either place, and a reader changing what it
// read changes nothing another reads.
func TestTransientCap(t *testing.T) {
	e := newEngine(t)
	ctx := roundContext(context.Background(), steps.RoundInput{})
	f := store.NewFile("update", "mlp", 1, 0).AddF32("delta", make([]float32, 100))
	defer func(c int) { transientCap = c }(transientCap)
	transientCap = 2*400 + 1 // two deltas of 100 float32
	for _, key := range []string{"u/0", "u/1", "u/2"} {
		if err := e.putTransient(ctx, key, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.putTransient(ctx, "u/1", f); err != nil { // a rewrite within the cap
		t.Fatal(err)
	}
	f.F32["delta"][0] = 1 // the writer's later change is not seen
	for i, key := range []string{"u/0", "u/1", "u/2"} {
		stored, err := e.Store.Exists(ctx, key)
		if err != nil || stored != (i == 2) {
			t.Errorf("%s in the store: %v, %v; want %v", key, stored, err, i == 2)
		}
		g, err := e.getFile(ctx, key)
		if err != nil || len(g.F32["delta"]) != 100 || g.F32["delta"][0] != 0 {
			t.Fatalf("getFile(%s) = %v, %v; want the delta as written", key, g, err)
		}
		g.F32["delta"][0] = 2
		if g, _ := e.getFile(ctx, key); g.F32["delta"][0] != 0 {
			t.Errorf("%s: a reader's change was seen by the next reader", key)
		}
	}
}
