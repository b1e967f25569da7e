package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// SelectClients draws round r's clients (DESIGN.md §3, "select").
func (e *Engine) SelectClients(ctx context.Context, in steps.RoundRef) (fl.Selection, error) {
	env, err := e.roundEnv(ctx, in)
	if err != nil {
		return fl.Selection{}, err
	}
	return env.selectClients(in.Round)
}

func (env *pointEnv) selectClients(r int) (fl.Selection, error) {
	rng := fl.Stream(fl.Key{Seed: env.cfg.Seed, Point: env.point.ID, Round: r, Client: fl.Server, Purpose: fl.PurposeSample})
	sel, err := env.sampler.Sample(r, env.pop, rng)
	if err != nil {
		return fl.Selection{}, fmt.Errorf("round %d: sample: %w", r, err)
	}
	return sel, nil
}

// TrainClient trains one client from the global model of round r−1 and
// stores its update Δ_k = θ_k − θ. progress, if not nil, is called after
// every local step.
func (e *Engine) TrainClient(ctx context.Context, in steps.TrainClientInput, progress func(steps.Heartbeat)) (steps.TrainClientOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.TrainClientOutput{}, err
	}
	if in.Client < 0 || in.Client >= env.pop.N() {
		return steps.TrainClientOutput{}, fmt.Errorf("client %d out of [0, %d): %w", in.Client, env.pop.N(), fl.ErrInvalid)
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.TrainClientOutput{}, err
	}
	delta, sum, err := e.trainClient(ctx, env, global, in.Round, in.Client, progress)
	if err != nil {
		return steps.TrainClientOutput{}, err
	}
	key, err := e.putUpdate(ctx, env, in.Round, in.Client, delta, sum)
	return steps.TrainClientOutput{ClientSummary: sum, Key: key}, err
}

// TrainClients trains several clients of one round, in parallel on the
// engine's workers, and stores their updates; results are in input order.
// progress, if not nil, may be called from several goroutines at once.
func (e *Engine) TrainClients(ctx context.Context, in steps.TrainClientsInput, progress func(steps.Heartbeat)) ([]steps.TrainClientOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return nil, err
	}
	for _, k := range in.Clients {
		if k < 0 || k >= env.pop.N() {
			return nil, fmt.Errorf("client %d out of [0, %d): %w", k, env.pop.N(), fl.ErrInvalid)
		}
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return nil, err
	}
	out := make([]steps.TrainClientOutput, len(in.Clients))
	err = e.parallel(len(in.Clients), func(i int) error {
		k := in.Clients[i]
		delta, sum, err := e.trainClient(ctx, env, global, in.Round, k, progress)
		if err != nil {
			return err
		}
		key, err := e.putUpdate(ctx, env, in.Round, k, delta, sum)
		out[i] = steps.TrainClientOutput{ClientSummary: sum, Key: key}
		return err
	})
	return out, err
}

// parallel runs f(0..n-1) on at most the engine's workers at once and
// returns the errors joined.
func (e *Engine) parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, e.workers())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// putUpdate stores client k's update of round r and returns its key.
func (e *Engine) putUpdate(ctx context.Context, env *pointEnv, r, k int, delta []float32, sum fl.ClientSummary) (string, error) {
	f, err := store.NewFile("update", env.net.Key(), r, k).AddF32("delta", delta).AddJSON("summary", sum)
	if err != nil {
		return "", err
	}
	key := env.keys.Update(r, k)
	_, err = e.Store.PutFile(ctx, key, f)
	return key, err
}

// trainClient runs client k's local training in round r from global and
// returns its delta. It is the one implementation used by both engines.
func (e *Engine) trainClient(ctx context.Context, env *pointEnv, global []float32, r, k int, progress func(steps.Heartbeat)) ([]float32, fl.ClientSummary, error) {
	w := slices.Clone(global)
	rng := fl.Stream(fl.Key{Seed: env.cfg.Seed, Point: env.point.ID, Round: r, Client: k, Purpose: fl.PurposeTrain})
	var report func(trainer.Progress)
	if progress != nil {
		report = func(p trainer.Progress) {
			progress(steps.Heartbeat{Client: k, Step: p.Step, Steps: p.Steps, Loss: p.Loss})
		}
	}
	hp := env.hyper
	hp.LR = env.cfg.RoundLR(r) // the per-round decay lr·lr_decay^(r−1)
	res, err := e.Trainer.Train(ctx, env.net, w, env.examples(k), hp, rng, report)
	if err != nil {
		return nil, fl.ClientSummary{}, fmt.Errorf("round %d client %d: train: %w", r, k, err)
	}
	for j := range w {
		w[j] -= global[j]
		if math.IsNaN(float64(w[j])) || math.IsInf(float64(w[j]), 0) {
			return nil, fl.ClientSummary{}, fmt.Errorf("round %d client %d: update has %v at parameter %d: %w", r, k, w[j], j, fl.ErrDiverged)
		}
	}
	sum := fl.ClientSummary{Client: k, NumExamples: len(env.part.Train[k]), Samples: res.Samples, Steps: res.Steps, Loss: res.MeanLoss}
	return w, sum, nil
}

// Aggregate combines round r's stored updates into the new global model and
// server state.
func (e *Engine) Aggregate(ctx context.Context, in steps.AggregateInput) (steps.AggregateOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	next, err := env.aggregate(global, in.Selection, in.Clients, func(i, k int) ([]float32, error) {
		f, err := e.Store.GetFile(ctx, env.keys.Update(in.Round, k))
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("round %d: update of client %d is missing (was it trained?): %w", in.Round, k, errMissing)
		}
		if err != nil {
			return nil, err
		}
		if f.Kind != "update" || f.Arch != env.net.Key() || f.Round != in.Round || f.Client != k {
			return nil, fmt.Errorf("%s: header says %s/%s round %d client %d: %w", env.keys.Update(in.Round, k), f.Kind, f.Arch, f.Round, f.Client, store.ErrCorrupt)
		}
		return f.Vector("delta", env.net.NumParams())
	})
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	sha, err := e.saveGlobal(ctx, env, in.Round, next)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	return steps.AggregateOutput{ModelSHA256: sha}, nil
}

// aggregate applies the point's rule to the deltas of sel's clients, read in
// ascending client order through delta.
func (env *pointEnv) aggregate(global []float32, sel fl.Selection, sums []fl.ClientSummary, delta func(i, k int) ([]float32, error)) ([]float32, error) {
	if len(sums) != len(sel.Clients) {
		return nil, fmt.Errorf("aggregate: %d summaries for %d clients: %w", len(sums), len(sel.Clients), fl.ErrInvalid)
	}
	agg, err := env.rule.Begin(global, sel, sums)
	if err != nil {
		return nil, err
	}
	for i, k := range sel.Clients {
		d, err := delta(i, k)
		if err != nil {
			return nil, err
		}
		if err := agg.Add(k, d); err != nil {
			return nil, err
		}
	}
	next := make([]float32, len(global))
	if err := agg.Finish(next); err != nil {
		return nil, err
	}
	return next, nil
}

// Evaluate scores round r's global model on the test split and on every
// client's local test set; the per-client results go to blob storage.
func (e *Engine) Evaluate(ctx context.Context, in steps.RoundRef) (steps.EvalSummary, error) {
	env, err := e.roundEnv(ctx, in)
	if err != nil {
		return steps.EvalSummary{}, err
	}
	w, err := e.loadGlobal(ctx, env, in.Round)
	if err != nil {
		return steps.EvalSummary{}, err
	}
	sum, per, err := e.evaluate(ctx, env, w)
	if err != nil {
		return steps.EvalSummary{}, err
	}
	if err := e.Store.PutJSON(ctx, env.keys.Eval(in.Round), per); err != nil {
		return steps.EvalSummary{}, err
	}
	return sum, nil
}

// ClientEvals are per-client evaluation results, indexed by client.
type ClientEvals struct {
	N       []int     `json:"n"`
	LossSum []float64 `json:"loss_sum"`
	Correct []int     `json:"correct"`
}

// evaluate scores w on the whole test split and on each client's local
// test set. Sums run in sample order, so results are reproducible.
func (e *Engine) evaluate(ctx context.Context, env *pointEnv, w []float32) (steps.EvalSummary, ClientEvals, error) {
	test := env.data.Test
	all := make([]int, test.N)
	for i := range all {
		all[i] = i
	}
	loss, correct, err := e.predict(ctx, env, w, env.data.Test.X, env.data.Test.Y, all)
	if err != nil {
		return steps.EvalSummary{}, ClientEvals{}, err
	}
	var sum steps.EvalSummary
	lossSum, hits := 0.0, 0
	for i := range loss {
		lossSum += float64(loss[i])
		if correct[i] {
			hits++
		}
	}
	sum.TestLoss = lossSum / float64(max(test.N, 1))
	sum.TestAcc = float64(hits) / float64(max(test.N, 1))

	// With feature noise every client is scored on its own noisy copy of its
	// test set (partition.Noise); the test split above stays clean.
	if env.noise.Active() {
		per, err := e.evaluateNoisyClients(ctx, env, w)
		if err != nil {
			return steps.EvalSummary{}, ClientEvals{}, err
		}
		var accs []float64
		for k, n := range per.N {
			if n > 0 {
				accs = append(accs, float64(per.Correct[k])/float64(n))
			}
		}
		sum.ClientAccMean, sum.ClientAccVar, sum.ClientAccWorst, sum.ClientAccBest = accuracyStats(accs)
		return sum, per, nil
	}
	// Per-client: reuse the test-split predictions, or predict the held-out
	// training samples once.
	pos := func(i int) int { return i }
	if env.part.TestFrom == partition.SourceTrain {
		var union []int
		for _, idx := range env.part.Test {
			union = append(union, idx...)
		}
		slices.Sort(union)
		union = slices.Compact(union)
		split := env.testSplit()
		if loss, correct, err = e.predict(ctx, env, w, split.X, split.Y, union); err != nil {
			return steps.EvalSummary{}, ClientEvals{}, err
		}
		at := make(map[int]int, len(union))
		for p, i := range union {
			at[i] = p
		}
		pos = func(i int) int { return at[i] }
	}
	n := env.pop.N()
	per := ClientEvals{N: make([]int, n), LossSum: make([]float64, n), Correct: make([]int, n)}
	var accs []float64
	for k := 0; k < n; k++ {
		var idx []int
		if k < len(env.part.Test) {
			idx = env.part.Test[k]
		}
		for _, i := range idx {
			p := pos(i)
			per.LossSum[k] += float64(loss[p])
			if correct[p] {
				per.Correct[k]++
			}
		}
		per.N[k] = len(idx)
		if per.N[k] > 0 {
			accs = append(accs, float64(per.Correct[k])/float64(per.N[k]))
		}
	}
	sum.ClientAccMean, sum.ClientAccVar, sum.ClientAccWorst, sum.ClientAccBest = accuracyStats(accs)
	return sum, per, nil
}

// accuracyStats returns the mean, the population variance, and the mean of
// the worst and best 5% (at least one client) of a set of client accuracies
// (the fairness metrics of FedEBA+, specs/fedeba.md §3.4).
func accuracyStats(accs []float64) (mean, variance, worst, best float64) {
	if len(accs) == 0 {
		return 0, 0, 0, 0
	}
	for _, a := range accs {
		mean += a
	}
	mean /= float64(len(accs))
	for _, a := range accs {
		variance += (a - mean) * (a - mean)
	}
	variance /= float64(len(accs))
	s := slices.Clone(accs)
	sort.Float64s(s)
	m := max(1, int(math.Ceil(0.05*float64(len(s)))))
	for i := 0; i < m; i++ {
		worst += s[i]
		best += s[len(s)-1-i]
	}
	return mean, variance, worst / float64(m), best / float64(m)
}

// predict runs the model on samples idx of (x, y), split into chunks across
// the engine's workers. Each sample's result is independent of the split.
func (e *Engine) predict(ctx context.Context, env *pointEnv, w []float32, x []float32, y []uint8, idx []int) ([]float32, []bool, error) {
	loss := make([]float32, len(idx))
	correct := make([]bool, len(idx))
	const minChunk = 1000
	chunks := min(e.workers(), max(1, len(idx)/minChunk))
	size := (len(idx) + chunks - 1) / chunks
	err := e.parallel(chunks, func(c int) error {
		lo, hi := c*size, min((c+1)*size, len(idx))
		if lo >= hi {
			return nil
		}
		ex := trainer.Examples{X: x, Y: y, Dim: env.data.Dim(), Idx: idx[lo:hi]}
		return e.Trainer.Predict(ctx, env.net, w, ex, loss[lo:hi], correct[lo:hi])
	})
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate: %w", err)
	}
	return loss, correct, nil
}

// loadGlobal reads and verifies the global model after round r.
func (e *Engine) loadGlobal(ctx context.Context, env *pointEnv, r int) ([]float32, error) {
	key := env.keys.Global(r)
	f, err := e.Store.GetFile(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("global model of round %d (%s) is missing; the point can resume only from a retained checkpoint: %w", r, key, errMissing)
	}
	if err != nil {
		return nil, err
	}
	if f.Kind != "global" || f.Arch != env.net.Key() || f.Round != r {
		return nil, fmt.Errorf("%s: header says %s for %s round %d; want a global model for %s round %d: %w", key, f.Kind, f.Arch, f.Round, env.net.Key(), r, store.ErrCorrupt)
	}
	return f.Vector("weights", env.net.NumParams())
}

// serverState is what the server remembers between rounds. The built-in
// samplers and rules are stateless; methods with memory add fields.
type serverState struct {
	Round int `json:"round"`
}

// saveGlobal writes the global model and server state after round r and
// returns the model's checksum.
func (e *Engine) saveGlobal(ctx context.Context, env *pointEnv, r int, w []float32) (string, error) {
	f := store.NewFile("global", env.net.Key(), r, fl.Server).AddF32("weights", w)
	if _, err := e.Store.PutFile(ctx, env.keys.Global(r), f); err != nil {
		return "", err
	}
	st, err := store.NewFile("state", env.net.Key(), r, fl.Server).AddJSON("meta", serverState{Round: r})
	if err != nil {
		return "", err
	}
	if _, err := e.Store.PutFile(ctx, env.keys.State(r), st); err != nil {
		return "", err
	}
	return store.Checksum(w), nil
}

// roundEnv returns the point's environment after checking that this worker
// holds the data the point runs on.
func (e *Engine) roundEnv(ctx context.Context, in steps.RoundRef) (*pointEnv, error) {
	env, err := e.env(ctx, in.PointRef)
	if err != nil {
		return nil, err
	}
	if in.Round < 1 || in.Round > env.cfg.Rounds {
		return nil, fmt.Errorf("round %d out of [1, %d]: %w", in.Round, env.cfg.Rounds, fl.ErrInvalid)
	}
	if in.DataDigest != "" && in.DataDigest != env.data.Digest {
		return nil, fmt.Errorf("this worker's %s data (digest %.12s) differs from the data the point started with (%.12s); point the worker's --data-dir at the same files: %w",
			env.data.Name, env.data.Digest, in.DataDigest, fl.ErrInvalid)
	}
	return env, nil
}
