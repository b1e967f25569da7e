package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/methods/methodstest"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"gocloud.dev/blob/memblob"
)

// methodsSpec runs every algorithm with memory, and pow-d, on the synthetic
// dataset: 9 points, 6 rounds, 12 clients, 4 per round.
const methodsSpec = `
name: m
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 6
clients_per_round: 4
eval_every: 2
checkpoint_every: 3
seeds: [3]
grid:
  algorithm:
    - fedavg
    - {name: fedprox, mu: 0}
    - {name: fedprox, mu: 0.1}
    - scaffold
    - {name: feddyn, alpha: 0.1}
    - {name: moon, mu: 1}
    - fednova
    - feddc
    - {name: feddc, drift_mean: all}
  sampler: [uniform, {name: pow-d, d: 8}]
`

// runSpec runs spec in-process on a fresh engine with reg (nil: built-in).
// The engine's bucket outlives the test, for tests that share a run.
func runSpec(t *testing.T, specText string, reg *methods.Registry) (*Engine, steps.PlanSweepOutput, snapshot) {
	t.Helper()
	e := New(store.New(memblob.OpenBucket(nil)), &Options{Workers: 3, Registry: reg})
	plan, snap := runOn(t, e, specText)
	return e, plan, snap
}

// fmnistDir returns the directory holding the fetched Fashion-MNIST
// ($FLSWEEP_DATA_DIR/fmnist, or the main checkout's .data/datasets); tb
// skips without it.
func fmnistDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("FLSWEEP_DATA_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".data", "datasets") // the checkout's, as make data fetches it
	}
	if _, err := os.Stat(filepath.Join(dir, "fmnist", "MANIFEST.json")); err != nil {
		tb.Skipf("no Fashion-MNIST under %s (set FLSWEEP_DATA_DIR to a directory holding fmnist/MANIFEST.json; `make test` fetches it)", dir)
	}
	return dir
}

// runOn runs spec in-process on e, every point to the end.
func runOn(t *testing.T, e *Engine, specText string) (steps.PlanSweepOutput, snapshot) {
	t.Helper()
	in := steps.PlanSweepInput{File: "t.yaml", Spec: []byte(specText)}
	res, err := e.RunSweep(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != steps.StatusDone {
			t.Fatalf("point %s: %s", r.Point, r.Status)
		}
	}
	plan, err := e.PlanSweep(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return plan, take(t, e, plan)
}

var (
	methodsOnce sync.Once
	methodsRun  struct {
		e    *Engine
		plan steps.PlanSweepOutput
		snap snapshot
	}
)

// methodsSnapshot runs methodsSpec once for the tests that read it.
func methodsSnapshot(t *testing.T) (*Engine, steps.PlanSweepOutput, snapshot) {
	t.Helper()
	methodsOnce.Do(func() {
		methodsRun.e, methodsRun.plan, methodsRun.snap = runSpec(t, methodsSpec, nil)
	})
	if methodsRun.e == nil {
		t.Fatal("the methods sweep failed in an earlier test")
	}
	return methodsRun.e, methodsRun.plan, methodsRun.snap
}

// pointByLabel returns the ID of the point whose label has every part.
func pointByLabel(t *testing.T, plan steps.PlanSweepOutput, parts ...string) string {
	t.Helper()
	for _, p := range plan.Points {
		ok := true
		for _, s := range parts {
			ok = ok && strings.Contains(p.Label, s)
		}
		if ok {
			return p.ID
		}
	}
	t.Fatalf("no point labelled %v", parts)
	return ""
}

// models returns a point's per-round model checksums.
func models(s snapshot, point string) []string {
	var out []string
	for _, r := range s.Rounds {
		if r.Point == point {
			out = append(out, r.ModelSHA256)
		}
	}
	return out
}

// TestMethodsDeterministic: every algorithm and pow-d give bit-identical
// models and rows run twice, run step by step one client per activity, and
// crashed mid-round (in training, after aggregating, after committing, in a
// query) and resumed.
func TestMethodsDeterministic(t *testing.T) {
	_, plan, want := methodsSnapshot(t)
	if len(plan.Points) != 18 {
		t.Fatalf("%d points; want 18", len(plan.Points))
	}
	checkDeterministic(t, methodsSpec, plan, want)
}

// checkDeterministic checks that specText's sweep, whose in-process run
// gave want, gives bit-identical models and rows run again, run step by
// step one client per activity, and crashed mid-round (in training, after
// aggregating, after committing, in a query) and resumed; and that no two
// of its points end with the same model.
func checkDeterministic(t *testing.T, specText string, plan steps.PlanSweepOutput, want snapshot) {
	t.Helper()
	_, _, again := runSpec(t, specText, nil)
	compare(t, "two in-process runs", again, want)
	e := newEngine(t)
	plan2, err := e.PlanSweep(context.Background(), steps.PlanSweepInput{File: "t.yaml", Spec: []byte(specText)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan2.Points {
		runSteps(t, e, steps.PointRef{Sweep: plan2.Name, Point: p.ID}, 0, "")
	}
	compare(t, "one activity per client", take(t, e, plan2), want)
	crashAndResume(t, specText, want, nil)
	// With common random numbers, points that compute the same thing end
	// with the same model, and the others differ.
	byClass := map[string]string{}
	byModel := map[string]string{}
	for _, p := range plan.Points {
		last := models(want, p.ID)
		m, c := last[len(last)-1], sameClass(p.Label)
		if other, dup := byModel[m]; dup && sameClass(other) != c {
			t.Errorf("points %s and %s end with the same model", p.Label, other)
		}
		if other, ok := byClass[c]; ok && byModel[m] == "" {
			t.Errorf("points %s and %s compute the same thing on the same draws but end with different models", p.Label, other)
		}
		byModel[m], byClass[c] = p.Label, p.Label
	}
}

// sameClass returns a point's label with every method that computes
// another's models bit for bit replaced by that method: FedProx with μ = 0
// and FedNova with equal local steps are FedAvg; AFL reporting its last
// iterate has the iterates of AFL reporting the average.
func sameClass(label string) string {
	for _, r := range []struct{ from, to string }{
		{"algorithm=fedprox(mu=0)", "algorithm=fedavg"},
		{"algorithm=fednova", "algorithm=fedavg"},
		{"algorithm=afl(report=last)", "algorithm=afl"},
	} {
		label = strings.Replace(label, r.from, r.to, 1)
	}
	return label
}

// TestFedProxZeroAndFedNovaAreFedAvg: FedProx with μ = 0, and FedNova when
// every client takes the same number of steps (a_k = τ), compute FedAvg's
// models and rows bit for bit. The points keep FedAvg's IDs (and so its
// random streams): the registry maps "fedavg" to the other algorithm.
func TestFedProxZeroAndFedNovaAreFedAvg(t *testing.T) {
	const spec = `
name: same
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 12, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 4
clients_per_round: 4
eval_every: 2
seeds: [3]
grid:
  sampler: [uniform, md, {name: pow-d, d: 8}]
`
	_, _, want := runSpec(t, spec, nil)
	for name, alg := range map[string]methods.AlgorithmFactory{
		"fedprox μ=0": func(fl.Options) (algorithm.Algorithm, error) { return algorithm.FedProx{Mu: 0}, nil },
		"fednova":     func(fl.Options) (algorithm.Algorithm, error) { return algorithm.FedNova{}, nil },
	} {
		reg := methods.New()
		for _, n := range []string{"uniform", "md", "pow-d"} {
			s := n
			reg.AddSampler(s, func(m int, o fl.Options) (fl.Planner, error) { return methods.Builtin().Sampler(s, m, o) })
		}
		reg.AddRule("fedavg", aggregate.NewWeightedDelta)
		reg.AddAlgorithm("fedavg", alg)
		_, _, got := runSpec(t, spec, reg)
		if name == "fednova" { // FedNova uploads a_k besides Δ_k: one more value per client
			for i := range got.Rounds {
				if d := got.Rounds[i].UpFloats - want.Rounds[i].UpFloats; d != int64(got.Rounds[i].Clients) {
					t.Errorf("fednova round %d uploads %d values more than fedavg; want a_k of its %d clients", got.Rounds[i].Round, d, got.Rounds[i].Clients)
				}
				got.Rounds[i].UpFloats = want.Rounds[i].UpFloats
			}
		}
		for i := range got.Points { // the recorded options are the replacement's
			got.Points[i].Methods = want.Points[i].Methods
		}
		compare(t, name+" vs fedavg", got, want)
	}
	_, plan, s := methodsSnapshot(t)
	fedavg := models(s, pointByLabel(t, plan, "algorithm=fedavg", "sampler=uniform"))
	if prox := models(s, pointByLabel(t, plan, "fedprox(mu=0.1)", "sampler=uniform")); prox[len(prox)-1] == fedavg[len(fedavg)-1] {
		t.Errorf("FedProx with μ = 0.1 ends with FedAvg's model")
	}
}

// TestSCAFFOLDControlVariateIsMean: after every kept round, the server's c
// is the mean over all N clients of their current c_i (the paper's
// invariant: c ← c + (1/N)·Σ Δc_i), clients never trained counting 0.
func TestSCAFFOLDControlVariateIsMean(t *testing.T) {
	e, plan, _ := methodsSnapshot(t)
	ctx := context.Background()
	for _, sampler := range []string{"sampler=uniform", "pow-d"} {
		id := pointByLabel(t, plan, "algorithm=scaffold", sampler)
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: id})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []int{3, 6} { // the kept checkpoints after round 0
			st, err := e.loadFullState(ctx, env, q)
			if err != nil {
				t.Fatal(err)
			}
			c, err := st.Algorithm.Vector("c", env.net.NumParams())
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Versions) == 0 {
				t.Fatalf("round %d: no client has state", q)
			}
			mean := make([]float64, len(c))
			for k, v := range st.Versions {
				cs, err := e.loadClientState(ctx, env, k, v)
				if err != nil {
					t.Fatal(err)
				}
				ci, _ := cs.Vector("c_i", len(c))
				for j, x := range ci {
					mean[j] += float64(x) / float64(env.pop.N())
				}
			}
			worst := 0.0
			for j := range c {
				worst = math.Max(worst, math.Abs(float64(c[j])-mean[j])/(1e-3+math.Abs(mean[j])))
			}
			if worst > 1e-4 { // float32 storage of c and each c_i
				t.Errorf("%s round %d: c differs from the mean of the c_i by %.2g (relative); want equal", sampler, q, worst)
			}
		}
	}
}

// TestClientStateRetention: after a point ends, the client-state versions
// in storage are exactly those its kept checkpoints name.
func TestClientStateRetention(t *testing.T) {
	e, plan, _ := methodsSnapshot(t)
	ctx := context.Background()
	for _, alg := range []string{"scaffold", "moon", "feddc"} {
		id := pointByLabel(t, plan, alg, "sampler=uniform")
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: id})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, q := range []int{0, 3, 6} {
			st, err := e.loadFullState(ctx, env, q)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range st.Versions {
				want[env.keys.ClientState(k, v)] = true
			}
		}
		got, err := e.Store.List(ctx, env.keys.Clients())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || len(got) != len(want) {
			t.Errorf("%s: %d client-state files; want the %d the kept checkpoints name", alg, len(got), len(want))
		}
		for _, k := range got {
			if !want[k] {
				t.Errorf("%s: %s is kept but no kept checkpoint names it", alg, k)
			}
		}
	}
}

// TestPowDSelectsHighestLoss: every round of a pow-d point asks 8
// candidates and trains the 4 whose global-model loss is highest; the loss
// each trained client reports before training is its answer.
func TestPowDSelectsHighestLoss(t *testing.T) {
	_, plan, s := methodsSnapshot(t)
	id := pointByLabel(t, plan, "algorithm=fedavg", "pow-d")
	byRound := map[int32][]store.ClientRow{}
	for _, c := range s.Clients {
		if c.Point == id {
			byRound[c.Round] = append(byRound[c.Round], c)
		}
	}
	for r := int32(1); r <= 6; r++ {
		var asked []store.ClientRow
		trained := 0
		for _, c := range byRound[r] {
			if c.QueryLoss != nil {
				asked = append(asked, c)
			}
			if c.Selected {
				trained++
				if c.QueryLoss == nil || c.TrainLossBefore == nil || *c.TrainLossBefore != *c.QueryLoss {
					t.Errorf("round %d client %d: trained without an answer, or its loss before training differs", r, c.Client)
				}
				if c.Weight != 0.25 {
					t.Errorf("round %d client %d: weight %v; want 1/m = 0.25", r, c.Client, c.Weight)
				}
			}
		}
		if len(asked) != 8 || trained != 4 {
			t.Fatalf("round %d: %d asked, %d trained; want 8 and 4", r, len(asked), trained)
		}
		slices.SortFunc(asked, func(a, b store.ClientRow) int {
			return cmp.Or(cmp.Compare(*b.QueryLoss, *a.QueryLoss), cmp.Compare(a.Client, b.Client))
		})
		for i, c := range asked {
			if c.Selected != (i < 4) {
				t.Errorf("round %d: candidate %d (loss %v, rank %d) selected = %v", r, c.Client, *c.QueryLoss, i, c.Selected)
			}
		}
	}
	for _, row := range s.Rounds {
		if row.Point == id && row.Round > 0 && (row.Queried != 8 || row.RoundTrips != 2) {
			t.Errorf("round %d: queried %d, round trips %d; want 8 and 2", row.Round, row.Queried, row.RoundTrips)
		}
	}
}

// TestGlobalTrainLoss: rounds.global_train_loss is Σ_k p_k L_k(θ) over every
// client's full training set, computed here directly from the stored model;
// and the loss a client reports before training in round t+1 is, bit for
// bit, the L_k(θ^t) of round t's evaluation.
func TestGlobalTrainLoss(t *testing.T) {
	e, plan, s := methodsSnapshot(t)
	ctx := context.Background()
	id := pointByLabel(t, plan, "algorithm=scaffold", "sampler=uniform")
	env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: id})
	if err != nil {
		t.Fatal(err)
	}
	w, err := e.loadGlobal(ctx, env, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for k := range env.pop.N() {
		res, err := e.Trainer.Evaluate(ctx, env.net, w, env.examples(k))
		if err != nil {
			t.Fatal(err)
		}
		want += env.pop.P[k] * res.LossSum / float64(res.N)
	}
	for _, r := range s.Rounds {
		if r.Point == id && r.Round == 6 && (r.GlobalTrainLoss == nil || math.Abs(*r.GlobalTrainLoss-want) > 1e-12*want) {
			t.Errorf("round 6 global_train_loss = %v; want Σ p_k L_k = %v", r.GlobalTrainLoss, want)
		}
	}
	evalLoss := map[string]float64{}
	for _, c := range s.Clients {
		if c.Point == id && c.EvalTrainLoss != nil {
			evalLoss[fmt.Sprint(c.Round, c.Client)] = *c.EvalTrainLoss
		}
	}
	checked := 0
	for _, c := range s.Clients {
		if l, ok := evalLoss[fmt.Sprint(c.Round-1, c.Client)]; ok && c.Point == id && c.Selected {
			checked++
			if *c.TrainLossBefore != l {
				t.Errorf("round %d client %d: loss before training %v; round %d evaluated %v", c.Round, c.Client, *c.TrainLossBefore, c.Round-1, l)
			}
		}
	}
	if checked == 0 {
		t.Error("no trained client follows an evaluated round")
	}
}

// TestProtocolMechanisms runs the methods that exercise what no built-in
// method uses yet: a sampler with memory (cycle), a broadcast phase that
// asks the selected clients for their gradients (align), and an inspector
// (record). Runs are deterministic, survive crashes, and each mechanism does
// what it says.
func TestProtocolMechanisms(t *testing.T) {
	const spec = `
name: mech
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 5
clients_per_round: 3
eval_every: 5
checkpoint_every: 4
sampler: cycle
inspect: [record]
seeds: [1]
grid:
  algorithm: [fedavg, {name: align, alpha: 1}]
run: {keep_updates: true}
`
	rec := &methodstest.Recorder{}
	reg := methodstest.Registry(rec)
	e, plan, want := runSpec(t, spec, reg)
	crashAndResume(t, spec, want, methodstest.Registry(&methodstest.Recorder{}))
	ctx := context.Background()

	// cycle: round t selects clients 3(t−1) .. 3(t−1)+2 (mod 10), which
	// needs the sampler's memory of round t−1.
	for _, c := range want.Clients {
		if c.Selected {
			first := (3 * (int(c.Round) - 1)) % 10
			if d := (int(c.Client) - first + 10) % 10; d > 2 {
				t.Errorf("round %d: client %d selected; cycle selects %d..%d", c.Round, c.Client, first, first+2)
			}
		}
	}
	// cycle's per-client memory: a selected client recalls the round it
	// last trained in (0 the first time), and the store keeps, per client,
	// the current memory and the versions a retained checkpoint names.
	ctx0 := context.Background()
	sk0, _ := store.SweepKeys(plan.Name)
	for _, p := range plan.Points {
		var rounds map[int][]int = map[int][]int{} // client → rounds trained, ascending
		for _, c := range want.Clients {           // sorted by round
			if c.Point != p.ID || !c.Selected {
				continue
			}
			ks := rounds[int(c.Client)]
			last := 0
			if len(ks) > 0 {
				last = ks[len(ks)-1]
			}
			if c.EntropyEst == nil || int(*c.EntropyEst) != last {
				t.Errorf("%s round %d client %d: recalled round %v; want %d", p.Label, c.Round, c.Client, c.EntropyEst, last)
			}
			rounds[int(c.Client)] = append(ks, int(c.Round))
		}
		pk, _ := sk0.Point(p.ID)
		keys, err := e.Store.List(ctx0, pk.Memory())
		if err != nil {
			t.Fatal(err)
		}
		var wantKeys []string
		for k := range 10 {
			ks := rounds[k]
			for i, v := range ks {
				keep := i == len(ks)-1
				for q := v; !keep && q < ks[i+1]; q++ {
					keep = q%4 == 0 || q == 5 // checkpoint_every: 4, rounds: 5
				}
				if keep {
					wantKeys = append(wantKeys, pk.ClientMemory(k, v))
				}
			}
		}
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("%s: memory files %v; want %v", p.Label, keys, wantKeys)
		}
	}
	// record: every trained client's update, as stored, was inspected once
	// in its round, and its finding is in its row.
	sk, _ := store.SweepKeys(plan.Name)
	inspected := map[string]int{}
	for _, s := range rec.Seen() {
		inspected[fmt.Sprint(s.Round, s.Client, s.Delta, s.SummaryClient, s.Steps)]++
	}
	trained := 0
	for _, c := range want.Clients {
		if !c.Selected {
			continue
		}
		trained++
		pk, _ := sk.Point(c.Point)
		f, err := e.Store.GetFile(ctx, pk.Update(int(c.Round), int(c.Client)))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := f.Vector("delta", -1)
		// Once, with its own update and its own summary (the round hands
		// TrainClients' summaries on to InspectUpdates).
		if n := inspected[fmt.Sprint(c.Round, c.Client, store.Checksum(d), c.Client, *c.Steps)]; n != 1 {
			t.Errorf("round %d client %d: update and summary (%d steps) inspected %d times; want once", c.Round, c.Client, *c.Steps, n)
		}
		if !strings.HasPrefix(c.Findings, `{"record":{"norm":`) {
			t.Errorf("round %d client %d: findings %q; want the recorder's", c.Round, c.Client, c.Findings)
		}
	}
	if trained != 2*5*3 || len(rec.Seen()) != trained {
		t.Errorf("%d trained, %d inspected; want 30 and 30", trained, len(rec.Seen()))
	}
	// align with α = 1: every client steps along the broadcast g̃ alone,
	// g̃ the mean of the selected clients' full gradients at θ^t, so each
	// client's update is −η·K·g̃ (rounded per step) and all are equal.
	id := pointByLabel(t, plan, "align")
	env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: id})
	if err != nil {
		t.Fatal(err)
	}
	w0, err := e.loadGlobal(ctx, env, 0)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := sk.Point(id)
	mean := make([]float64, len(w0))
	for _, k := range []int{0, 1, 2} { // cycle's round-1 clients
		g := make([]float32, len(w0))
		if _, err := e.Trainer.Gradient(ctx, env.net, w0, env.examples(k), env.hyper.BatchSize, g); err != nil {
			t.Fatal(err)
		}
		for j, v := range g {
			mean[j] += float64(v) / 3
		}
	}
	for _, k := range []int{0, 1, 2} {
		f, err := e.Store.GetFile(ctx, pk.Update(1, k))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := f.Vector("delta", len(w0))
		for j := range d {
			if want := -0.1 * 3 * mean[j]; math.Abs(float64(d[j])-want) > 1e-5+1e-4*math.Abs(want) {
				t.Fatalf("client %d parameter %d: update %v; want −η·K·g̃ = %v", k, j, d[j], want)
			}
		}
	}
	for _, r := range want.Rounds {
		if r.Point == id && r.Round > 0 && (r.RoundTrips != 2 || r.Queried != 3) {
			t.Errorf("align round %d: %d round trips, %d answers; want 2 (gradient query; training with the broadcast) and 3", r.Round, r.RoundTrips, r.Queried)
		}
	}
}

// TestMethodsBadInput: unknown algorithms and options, incompatible
// combinations, and a spec's methods that the registry rejects fail before
// anything is written, naming the field.
func TestMethodsBadInput(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{"unknown algorithm", "algorithm: scafold", `algorithm.name = "scafold" is unknown`},
		{"unknown option", "algorithm: {name: scaffold, corection: after_step}", "corection"},
		{"bad option value", "algorithm: {name: scaffold, correction: later}", "algorithm.correction"},
		{"fedprox without mu", "algorithm: fedprox", "algorithm.mu is required"},
		{"moon on logreg", "algorithm: moon\nmodel: {arch: logreg}", "model.arch = logreg"},
		{"fednova with adam", "algorithm: fednova\ntrain: {optimizer: adam, lr: 0.01, batch_size: 16, local_steps: 4}", "train.optimizer = adam"},
		{"fednova with nesterov", "algorithm: fednova\ntrain: {lr: 0.01, momentum: 0.9, nesterov: true, batch_size: 16, local_steps: 4}", "train.nesterov"},
		{"pow-d d below m", "sampler: {name: pow-d, d: 2}", "sampler.d = 2"},
		{"unknown inspector", "inspect: [rlu-typo]", `inspect.name = "rlu-typo"`},
	}
	base := strings.Replace(strings.Replace(spec, "grid:\n  sampler: [uniform, md]\n", "", 1), "model: {arch: mlp, hidden: [16]}\n", "", 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t)
			give := base + tt.give + "\n"
			if !strings.Contains(tt.give, "model:") {
				give += "model: {arch: mlp, hidden: [16]}\n"
			}
			if strings.Contains(tt.give, "train:") {
				give = strings.Replace(give, "train: {lr: 0.1, batch_size: 16, local_steps: 4}\n", "", 1)
			}
			_, err := e.RunSweep(context.Background(), steps.PlanSweepInput{File: "t.yaml", Spec: []byte(give)}, nil)
			if !IsBadInput(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("RunSweep error = %v; want a bad-input error mentioning %q", err, tt.want)
			}
			if keys, _ := e.Store.List(context.Background(), ""); len(keys) != 0 {
				t.Errorf("bad input wrote %v", keys)
			}
		})
	}
}

// TestForeignState: a state file of another method or architecture, and a
// missing client-state version, are clear, non-retryable errors naming the
// file, and the round writes nothing it would commit.
func TestForeignState(t *testing.T) {
	const two = `
name: fs
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.5}
train: {lr: 0.1, batch_size: 16, local_steps: 2}
rounds: 4
clients_per_round: 8
eval_every: 4
checkpoint_every: 4
seeds: [1]
grid:
  algorithm: [scaffold, feddyn]
  model: [{arch: mlp, hidden: [16]}, {arch: mlp, hidden: [8]}]
`
	e := newEngine(t)
	ctx := context.Background()
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(two)})
	if err != nil {
		t.Fatal(err)
	}
	sk, _ := store.SweepKeys(plan.Name)
	keys := map[string]store.PointKeys{}
	for _, p := range plan.Points {
		runSteps(t, e, steps.PointRef{Sweep: plan.Name, Point: p.ID}, 3, steps.TrainClients.Name) // rounds 0..2 committed
		keys[p.Label], _ = sk.Point(p.ID)
	}
	scaffold := keys[`algorithm=scaffold model={"arch":"mlp","hidden":[16]} seed=1`]
	tests := []struct {
		name   string
		damage func() error
		want   string
	}{
		{"state of another method", func() error {
			return copyKey(e, keys[`algorithm=feddyn model={"arch":"mlp","hidden":[16]} seed=1`].State(2), scaffold.State(2))
		}, `was written by algorithm "feddyn"`},
		{"state of another architecture", func() error {
			return copyKey(e, keys[`algorithm=scaffold model={"arch":"mlp","hidden":[8]} seed=1`].State(2), scaffold.State(2))
		}, "header says state for mlp"},
		{"missing client state", func() error { return e.Store.Delete(ctx, scaffold.ClientState(3, 2)) }, "client 3's state version 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved, err := e.Store.Get(ctx, scaffold.State(2))
			if err != nil {
				t.Fatal(err)
			}
			savedCS, err := e.Store.Get(ctx, scaffold.ClientState(3, 2))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = e.Store.Put(ctx, scaffold.State(2), saved)
				_ = e.Store.Put(ctx, scaffold.ClientState(3, 2), savedCS)
			}()
			if err := tt.damage(); err != nil {
				t.Fatal(err)
			}
			ref := steps.PointRef{Sweep: plan.Name, Point: strings.TrimSuffix(strings.TrimPrefix(scaffold.Prefix(), sk.Prefix()), "/")}
			prep, err := e.PreparePoint(ctx, ref)
			if err == nil {
				_, err = e.RunRound(ctx, steps.RoundInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 3, DataDigest: prep.DataDigest}, ClientsPerActivity: 8})
			}
			if !IsBadInput(err) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "sweeps/fs/") {
				t.Fatalf("error = %v; want a bad-input error naming the file and saying %q", err, tt.want)
			}
			if ok, _ := e.Store.Exists(ctx, scaffold.Committed(3)); ok {
				t.Error("round 3 was committed")
			}
			if ok, _ := e.Store.Exists(ctx, scaffold.Global(3)); ok {
				t.Error("round 3's model was written")
			}
		})
	}
}

func copyKey(e *Engine, from, to string) error {
	b, err := e.Store.Get(context.Background(), from)
	if err != nil {
		return err
	}
	return e.Store.Put(context.Background(), to, b)
}
