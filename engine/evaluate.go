package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fairness"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/trainer"
)

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
	if rep, ok := env.alg.(algorithm.Reporter); ok {
		st, err := e.loadFullState(ctx, env, in.Round)
		if err != nil {
			return steps.EvalSummary{}, err
		}
		if w, err = rep.Reported(w, st.Algorithm); err != nil {
			return steps.EvalSummary{}, fmt.Errorf("round %d: %s: reported model: %w", in.Round, env.cfg.AlgorithmName(), err)
		}
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

// ClientEvals are per-client evaluation results, indexed by client: the
// local test set's size, loss sum and hits, and L_k(θ) on the client's full
// training set (nil when not measured).
type ClientEvals struct {
	N         []int     `json:"n"`
	LossSum   []float64 `json:"loss_sum"`
	Correct   []int     `json:"correct"`
	TrainLoss []float64 `json:"train_loss,omitempty"`
}

// evaluate scores w on the whole test split, on each client's local test
// set and, when the point measures it, on every client's full training set
// (the global training loss Σ_k p_k L_k(θ)). Sums run in sample and client
// order, so results are reproducible.
func (e *Engine) evaluate(ctx context.Context, env *pointEnv, w []float32) (steps.EvalSummary, ClientEvals, error) {
	sum, per, err := e.evaluateTest(ctx, env, w)
	if err != nil || !env.cfg.Metrics.WantGlobalTrainLoss() {
		return sum, per, err
	}
	n := env.pop.N()
	per.TrainLoss = make([]float64, n)
	if err := e.parallel(n, func(k int) error {
		l, err := e.clientLoss(ctx, env, w, k)
		per.TrainLoss[k] = l
		return err
	}); err != nil {
		return steps.EvalSummary{}, ClientEvals{}, fmt.Errorf("evaluate: global training loss: %w", err)
	}
	g := 0.0
	for k, l := range per.TrainLoss {
		g += env.pop.P[k] * l
	}
	sum.GlobalTrainLoss = &g
	return sum, per, nil
}

// evaluateTest scores w on the whole test split and on each client's local
// test set.
func (e *Engine) evaluateTest(ctx context.Context, env *pointEnv, w []float32) (steps.EvalSummary, ClientEvals, error) {
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
		if err := clientAccuracy(&sum, accs); err != nil {
			return steps.EvalSummary{}, ClientEvals{}, err
		}
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
	if err := clientAccuracy(&sum, accs); err != nil {
		return steps.EvalSummary{}, ClientEvals{}, err
	}
	return sum, per, nil
}

// clientAccuracy sets sum's client-accuracy metrics from accs, the local
// test accuracies (fractions) of the clients with a local test set, in
// client order: FedEBA+'s fairness metrics (Wang et al., arXiv 2301.12407,
// §3.4), over every client, not only the round's. Clients without a test
// set are left out; without any, the metrics stay 0 and nil.
func clientAccuracy(sum *steps.EvalSummary, accs []float64) error {
	if len(accs) == 0 {
		return nil
	}
	f, err := fairness.Measure(accs)
	if err != nil {
		return fmt.Errorf("evaluate: client accuracies: %w", err)
	}
	sum.ClientAccMean, sum.ClientAccVar, sum.ClientAccWorst, sum.ClientAccBest = f.Mean, f.Var, f.Worst5, f.Best5
	sum.ClientAccVarPct2, sum.ClientAccStd = ptr(1e4*f.Var), ptr(f.Std)
	sum.ClientAccWorst10, sum.ClientAccBest10 = ptr(f.Worst10), ptr(f.Best10)
	sum.ClientAccCV, sum.ClientAccAngle, sum.ClientAccKL = ptr(f.CV), ptr(f.Angle), ptr(f.KL)
	return nil
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
