package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// everyOptimizer runs every built-in server optimiser (and none) on one
// tiny federation, with FedAvg and with SCAFFOLD, whose server state sits
// beside the optimiser's in state.bin.
const everyOptimizer = `
name: every-opt
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 7
clients_per_round: 3
eval_every: 7
checkpoint_every: 2
seeds: [1]
grid:
  algorithm: [fedavg, scaffold]
  server_optimizer:
    - {name: sgd, lr: 0.7}
    - {name: fedavgm, lr: 1}
    - {name: fedadagrad, lr: 0.1}
    - {name: fedyogi, lr: 0.03}
    - {name: fedadam, lr: 0.03}
`

// optimizerOf returns the server optimiser named in a points row's config.
func optimizerOf(t *testing.T, row store.PointRow) string {
	t.Helper()
	var c struct {
		Opt struct {
			Name string `json:"name"`
		} `json:"server_optimizer"`
	}
	if err := json.Unmarshal([]byte(row.Config), &c); err != nil {
		t.Fatal(err)
	}
	return c.Opt.Name
}

// TestEveryServerOptimizerResumes: for every built-in server optimiser
// (the spec must name them all), a point crashed in round 5, in one of its
// phases, and resumed ends with the same models and rows as an
// uninterrupted run: the optimiser's moments come back from state.bin.
func TestEveryServerOptimizerResumes(t *testing.T) {
	_, plan, want := runSpec(t, everyOptimizer, nil)
	var ran []string
	for _, p := range want.Points {
		if name := optimizerOf(t, p); !slices.Contains(ran, name) {
			ran = append(ran, name)
		}
	}
	slices.Sort(ran)
	if all := methods.Builtin().ServerOptimizers(); !slices.Equal(ran, all) {
		t.Fatalf("the spec runs server optimizers %v; add the missing ones of %v", ran, all)
	}
	seen := map[string]bool{}
	for _, r := range want.Results {
		if seen[r.ModelSHA256] {
			t.Errorf("two points ended with model %s: an optimiser had no effect", r.ModelSHA256)
		}
		seen[r.ModelSHA256] = true
	}
	e := newEngine(t)
	ctx := context.Background()
	if _, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(everyOptimizer)}); err != nil {
		t.Fatal(err)
	}
	crashes := []string{steps.Aggregate.Name, steps.CommitRound.Name, steps.TrainClients.Name, steps.SelectClients.Name}
	sk, _ := store.SweepKeys(plan.Name)
	for i, p := range want.Points {
		runSteps(t, e, steps.PointRef{Sweep: plan.Name, Point: p.Point}, 5, crashes[i%len(crashes)])
		pk, _ := sk.Point(p.Point)
		if ok, err := e.Store.Exists(ctx, pk.Committed(7)); err != nil || ok {
			t.Fatalf("%s: did not crash in round 5 (round 7 committed: %v, %v)", p.Label, ok, err)
		}
	}
	restarted := restartedWorker(e)
	if _, err := restarted.RunSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(everyOptimizer)}, nil); err != nil {
		t.Fatal(err)
	}
	compare(t, "crashed in round 5 and resumed", take(t, restarted, plan), want)
	// The moments are server memory: in server.bin, read by aggregation,
	// not in the state.bin every other step reads.
	for _, p := range want.Points {
		if optimizerOf(t, p) != "fedadam" {
			continue
		}
		env, err := restarted.env(ctx, steps.PointRef{Sweep: plan.Name, Point: p.Point})
		if err != nil {
			t.Fatal(err)
		}
		part, err := restarted.loadState(ctx, env, 7)
		if err != nil {
			t.Fatal(err)
		}
		full, err := restarted.loadFullState(ctx, env, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(part.Optimizer.Vectors) != 0 || len(full.Optimizer.Vectors) != 2 {
			t.Errorf("%s: state.bin holds moments %v, server.bin %v; want none and m, v", p.Label, part.Optimizer.Names(), full.Optimizer.Names())
		}
	}
}

// TestServerSGDIsTheAlgorithmsStep: server_optimizer sgd at lr 1 (its
// defaults) leaves every round's model of FedAvg and of SCAFFOLD bit for
// bit as without a server optimiser; the two points share their draws
// (common random numbers).
func TestServerSGDIsTheAlgorithmsStep(t *testing.T) {
	const spec = `
name: sgd-one
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, momentum: 0.9, batch_size: 16, local_steps: 3}
rounds: 6
clients_per_round: 3
eval_every: 3
seeds: [1, 2]
grid:
  algorithm: [fedavg, scaffold]
  server_optimizer: [sgd, {name: fedadam, lr: 0.01}]
`
	plain := strings.Replace(spec, "  server_optimizer: [sgd, {name: fedadam, lr: 0.01}]\n", "", 1)
	_, _, with := runSpec(t, spec, nil)
	_, _, without := runSpec(t, plain, nil)
	models := func(s snapshot, opt string) map[string][]string { // label without the optimiser → round checksums
		labels := map[string]string{}
		for _, p := range s.Points {
			labels[p.Point] = p.Label
		}
		out := map[string][]string{}
		for _, r := range s.Rounds {
			label := strings.Replace(labels[r.Point], " server_optimizer="+opt, "", 1)
			if opt != "" && label == labels[r.Point] {
				continue
			}
			out[label] = append(out[label], r.ModelSHA256)
		}
		return out
	}
	got, want, adam := models(with, "sgd"), models(without, ""), models(with, "fedadam(lr=0.01)")
	if len(got) != 4 || len(want) != 4 || len(adam) != 4 {
		t.Fatalf("%d, %d and %d points; want 4 of each (labels %v)", len(got), len(want), len(adam), keys(got))
	}
	for label, sums := range want {
		if !slices.Equal(got[label], sums) {
			t.Errorf("%s: server sgd at lr 1 gave models %v; without it %v", label, got[label], sums)
		}
		if slices.Equal(adam[label], sums) {
			t.Errorf("%s: fedadam's models equal the algorithm's", label)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// memorySpec is a one-point sweep of the state-vector tests: 8 synthetic
// clients, 3 a round, checkpoints every 2 rounds, methods the spec lines
// that choose the algorithm (and server optimiser).
func memorySpec(name string, rounds int, methods string) string {
	return fmt.Sprintf(`
name: %s
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.5}
model: {arch: mlp, hidden: [8]}
train: {lr: 0.1, batch_size: 16, local_steps: 2}
rounds: %d
clients_per_round: 3
eval_every: %d
checkpoint_every: 2
seeds: [1]
%s
`, name, rounds, rounds, methods)
}

// TestServerMemoryDamage: FedDyn's h, which its clients are not sent, is
// server memory (its own file per round it changes): a damaged one is
// damage (the point recovers from an earlier checkpoint), found by the
// aggregation that reads it and by the checkpoint's verification, and a
// run resumed after it ends with the uninterrupted run's models.
func TestServerMemoryDamage(t *testing.T) {
	spec := memorySpec("dyn", 6, "algorithm: {name: feddyn, alpha: 0.01}")
	_, _, want := runSpec(t, spec, nil)
	e := newEngine(t)
	ctx := context.Background()
	plan, ref, _ := interruptedSpec(t, e, spec, 5) // rounds 0–4 committed; round 4 is kept
	env, err := e.env(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.loadState(ctx, env, 4)
	if err != nil || len(st.Algorithm.Vectors) != 0 || st.Held["algorithm/h"] != 4 {
		t.Fatalf("state.bin of round 4 holds algorithm vectors %v and server memory %v (%v); want h in round 4's file only", st.Algorithm.Names(), st.Held, err)
	}
	h4 := mustVectorKey(t, env, "algorithm/h", 4)
	flip(t, e, h4)
	// e holds h as it wrote it (vectorcache.go); a restarted worker reads it.
	e = restartedWorker(e)
	_, err = e.Aggregate(ctx, steps.AggregateInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 5}, Selection: fl.Selection{}})
	if !IsDamaged(err) || !strings.Contains(err.Error(), h4) {
		t.Fatalf("aggregating from a damaged h: %v; want damage naming %s", err, h4)
	}
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if prep.LastCommitted != 2 {
		t.Errorf("PreparePoint resumes from round %d; want 2, the checkpoint before the damaged one", prep.LastCommitted)
	}
	resumeAllSpec(t, e, spec, "resumed after a damaged h", plan, want)
}

// TestServerMemorySharedDamage: a FedFV update is written once, in the
// round its client trained, and named by every later state whose window
// holds it, kept checkpoints included; when that one file is damaged, no
// checkpoint that names it verifies, the point resumes from the latest
// one that does not, and ends with the uninterrupted run's models.
func TestServerMemorySharedDamage(t *testing.T) {
	spec := memorySpec("fv", 7, "algorithm: {name: fedfv, tau: 4}")
	_, _, want := runSpec(t, spec, nil)
	e := newEngine(t)
	ctx := context.Background()
	plan, ref, _ := interruptedSpec(t, e, spec, 6) // rounds 0–5 committed; 2 and 4 are kept
	env, err := e.env(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	// The oldest update named by the states of rounds 4 and 5 alike (its
	// client did not train in 5): every kept checkpoint from the round
	// it was written on names it.
	st4, err := e.loadState(ctx, env, 4)
	if err != nil {
		t.Fatal(err)
	}
	st5, err := e.loadState(ctx, env, 5)
	if err != nil {
		t.Fatal(err)
	}
	section, v := "", 6
	for _, sec := range keys(st4.Held) {
		if w, ok := st5.Held[sec]; ok && w == st4.Held[sec] && w < v {
			section, v = sec, w
		}
	}
	if section == "" || v > 4 {
		t.Fatalf("no update is held by both rounds 4 (%v) and 5 (%v); the test needs one", st4.Held, st5.Held)
	}
	resume := (v - 1) / 2 * 2 // the last kept checkpoint (0, 2, 4) before round v
	key := mustVectorKey(t, env, section, v)
	flip(t, e, key)
	e = restartedWorker(e) // e holds the update as it wrote it (vectorcache.go)
	in := steps.AggregateInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 6}, Selection: fl.Selection{}}
	if _, err := e.Aggregate(ctx, in); !IsDamaged(err) || !strings.Contains(err.Error(), key) {
		t.Fatalf("aggregating round 6: %v; want damage naming %s", err, key)
	}
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if prep.LastCommitted != resume {
		t.Errorf("PreparePoint resumes from round %d; want %d, the last checkpoint that does not name %s", prep.LastCommitted, resume, key)
	}
	resumeAllSpec(t, e, spec, "resumed after a damaged shared update", plan, want)
}

// TestServerMemoryOldLayout: a point begun before per-vector files (the
// algorithm's sent vectors in state.bin, the rest in the round's
// server.bin) continues under this build: the next round reads that
// layout, writes per-vector files from then on, and the point ends with the
// models of a run that never had the old layout. FedFV with FedAdam keeps
// server memory only; SCAFFOLD's c is sent to its clients.
func TestServerMemoryOldLayout(t *testing.T) {
	for _, method := range []string{"algorithm: {name: fedfv, tau: 2}\nserver_optimizer: {name: fedadam, lr: 0.01}", "algorithm: scaffold"} {
		spec := memorySpec("old", 5, method)
		_, _, want := runSpec(t, spec, nil)
		e := newEngine(t)
		ctx := context.Background()
		plan, ref, _ := interruptedSpec(t, e, spec, 4) // rounds 0–3 committed
		env, err := e.env(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		// state.bin holds no vector of the algorithm or the optimiser:
		// selection reads none.
		f, err := e.Store.GetFile(ctx, env.keys.State(3))
		if err != nil {
			t.Fatal(err)
		}
		if vs := f.VectorsWith(""); len(vs) != 0 {
			t.Errorf("%s: state.bin of round 3 holds vectors %v; want none", method, keys(vs))
		}
		// Rewrite round 3's state as the build before per-vector files wrote it.
		st, err := e.loadFullState(ctx, env, 3)
		if err != nil {
			t.Fatal(err)
		}
		sent, private := map[string][]float32{}, map[string][]float32{}
		for section, v := range sections(st) {
			if name, ok := strings.CutPrefix(section, ownAlgorithm); ok && slices.Contains(env.alg.Sends(), name) {
				sent[name] = v
			} else {
				private[section] = v
			}
		}
		if len(private)+len(sent) < 1 {
			t.Fatalf("%s: round 3 keeps no vectors", method)
		}
		meta := stateMeta{Round: 3, Sampler: env.cfg.Sampler.Name, Algorithm: env.cfg.AlgorithmName(),
			SamplerMeta: st.Sampler.Meta, AlgorithmMeta: st.Algorithm.Meta, ServerOptimizer: env.cfg.ServerOptimizer.Name,
			Versions: st.Versions, Memory: st.Memory}
		if len(private) > 0 {
			meta.Private = keys(private)
			if _, err := e.Store.PutFile(ctx, env.keys.ServerMemory(3), store.NewFile("server", env.net.Key(), 3, fl.Server).AddVectors("", private)); err != nil {
				t.Fatal(err)
			}
		}
		old, err := store.NewFile("state", env.net.Key(), 3, fl.Server).AddJSON("meta", meta)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.PutFile(ctx, env.keys.State(3), old.AddVectors(ownSampler, st.Sampler.Vectors).AddVectors(ownAlgorithm, sent)); err != nil {
			t.Fatal(err)
		}
		if err := e.Store.DeletePrefix(ctx, env.keys.ServerVectors()); err != nil {
			t.Fatal(err)
		}
		if got, err := e.loadState(ctx, env, 3); err != nil || got.Held != nil || len(got.Algorithm.Vectors) != len(sent) {
			t.Fatalf("%s: the rewritten state of round 3 holds %v and sent vectors %v (%v); want the old layout with %v", method, got.Held, got.Algorithm.Names(), err, keys(sent))
		}
		resumeAllSpec(t, e, spec, method+": continued from the old layout", plan, want)
		if last, err := e.loadState(ctx, env, 5); err != nil || len(last.Held) == 0 {
			t.Errorf("%s: round 5's state holds %v (%v); want per-vector files", method, last.Held, err)
		}
	}
}
