package trainer

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// Options configures a Trainer. The zero value gives the defaults.
type Options struct {
	// EvalBatch is the largest batch size of Predict and Evaluate. If 0,
	// it is 500. Nets with large activations use smaller batches, so that
	// an evaluation graph holds at most about 32 MiB of activations (the
	// HiCS CNN on 1×28×28 evaluates 125 samples at a time).
	EvalBatch int
	// MaxIdleSessions bounds the compiled graphs kept between calls; the
	// least recently used are dropped first. If 0, it is 32.
	MaxIdleSessions int
	// Kernels chooses among kernels that round differently; the zero
	// value is the default set (KernelChoice).
	Kernels KernelChoice
}

const (
	defaultEvalBatch = 500
	defaultMaxIdle   = 32
	evalActBudget    = 8 << 20 // floats of activations per evaluation graph (32 MiB)
)

// Trainer trains and evaluates nets. It keeps a pool of compiled gorgonia
// graphs, one per (net, batch size, mode), and lends them to calls, so a
// graph is built once and reused. It is safe for concurrent use: each call
// borrows its own sessions.
type Trainer struct {
	evalBatch int
	maxIdle   int
	choice    KernelChoice
	kern      kernels // choice resolved

	mu    sync.Mutex
	idle  []*session[float32] // least recently returned first
	built int                 // sessions compiled so far (for tests)
}

// New returns a Trainer; nil opts means the defaults.
func New(opts *Options) *Trainer {
	t := &Trainer{evalBatch: defaultEvalBatch, maxIdle: defaultMaxIdle}
	if opts != nil {
		if opts.EvalBatch > 0 {
			t.evalBatch = opts.EvalBatch
		}
		if opts.MaxIdleSessions > 0 {
			t.maxIdle = opts.MaxIdleSessions
		}
		t.choice = opts.Kernels
	}
	t.kern = t.choice.resolve()
	return t
}

// Numerics names what, besides the build, decides the bits this Trainer's
// models train to (KernelChoice.Numerics of its Options.Kernels).
func (t *Trainer) Numerics() string { return t.choice.Numerics() }

// borrow lends a session for (n, batch, train), compiling one if none is idle.
func (t *Trainer) borrow(n *Net, batch int, train bool) (*session[float32], error) {
	key := sessionKey{net: n.key, batch: batch, train: train}
	t.mu.Lock()
	for i := len(t.idle) - 1; i >= 0; i-- {
		if s := t.idle[i]; s.key == key {
			t.idle = append(t.idle[:i], t.idle[i+1:]...)
			t.mu.Unlock()
			return s, nil
		}
	}
	t.built++
	t.mu.Unlock()
	return newSession[float32](n, t.kern, batch, train)
}

// giveBack returns a session to the pool, dropping the least recently used
// idle session if the pool is full.
func (t *Trainer) giveBack(s *session[float32]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.idle = append(t.idle, s)
	if over := len(t.idle) - t.maxIdle; over > 0 {
		clear(t.idle[:over])
		t.idle = append(t.idle[:0], t.idle[over:]...)
	}
}

// lease holds the sessions one call borrowed: at most two, one for the full
// batch size and one for a last partial batch.
type lease struct {
	t     *Trainer
	n     *Net
	train bool
	held  []*session[float32]
	cur   *session[float32]
}

// use makes the session for batch size b current. The first session is
// loaded from w; a later one takes over the state of the current one.
func (l *lease) use(b int, w []float32) (*session[float32], error) {
	if l.cur != nil && l.cur.key.batch == b {
		return l.cur, nil
	}
	var s *session[float32]
	for _, h := range l.held {
		if h.key.batch == b {
			s = h
		}
	}
	if s == nil {
		var err error
		if s, err = l.t.borrow(l.n, b, l.train); err != nil {
			return nil, err
		}
		l.held = append(l.held, s)
	}
	if l.cur == nil {
		loadWeights(s, w)
	} else {
		moveState(s, l.cur)
	}
	l.cur = s
	return s, nil
}

func (l *lease) release() {
	for _, s := range l.held {
		l.t.giveBack(s)
	}
	l.held, l.cur = nil, nil
}

// Train runs local training of net n from the weights w on the examples ex
// and leaves the trained weights, BatchNorm running statistics included, in
// w. It minimises the plain mean cross-entropy with a fresh optimiser; it is
// TrainObjective with the zero Objective. On error w is unchanged.
//
// The schedule, the minibatches and the dropout masks come from r alone (see
// the package documentation); equal arguments and an equal r state give
// bit-identical weights. progress, if not nil, is called after every step.
// ctx is checked between steps.
//
// Errors: invalid arguments wrap ErrInvalid; a NaN or ±Inf loss or weight
// wraps ErrDiverged and names the step (step 0 means the initial weights);
// cancellation returns ctx.Err() wrapped.
func (t *Trainer) Train(ctx context.Context, n *Net, w []float32, ex Examples, hp Hyper, r *rand.Rand, progress func(Progress)) (TrainResult, error) {
	return t.TrainObjective(ctx, n, w, ex, hp, Objective{}, r, progress)
}

// TrainObjective is Train with the local objective obj of an FL algorithm
// (FedProx, SCAFFOLD, FedDyn, FedEBA+, MOON, FNR-FL; see Objective).
// obj's vectors are read during the call and must not change meanwhile;
// obj.State and obj.FeatureNorm.Loss, if not nil, are written on success.
func (t *Trainer) TrainObjective(ctx context.Context, n *Net, w []float32, ex Examples, hp Hyper, obj Objective, r *rand.Rand, progress func(Progress)) (TrainResult, error) {
	var res TrainResult
	if err := checkModel(n, w); err != nil {
		return res, fmt.Errorf("train: %w", err)
	}
	if err := hp.Validate(); err != nil {
		return res, fmt.Errorf("train: %w", err)
	}
	if err := ex.check(n); err != nil {
		return res, fmt.Errorf("train: %w", err)
	}
	if err := obj.Validate(n, len(ex.Idx)); err != nil {
		return res, fmt.Errorf("train: %w", err)
	}
	if r == nil {
		return res, fmt.Errorf("train: nil *rand.Rand; pass a seeded stream: %w", ErrInvalid)
	}
	for _, p := range n.params {
		ws := w[p.Offset : p.Offset+p.Len]
		if allFinite([]span{{0, len(ws)}}, ws) { // vectorised: a tenth of the scalar loop's time
			continue
		}
		for j, v := range ws {
			if !finite(float64(v)) {
				return res, fmt.Errorf("train: step 0: initial weight %s[%d] = %v (net %s): %w", p.Name, j, v, n.key, ErrDiverged)
			}
		}
	}

	total := numSteps(len(ex.Idx), hp)
	l := &lease{t: t, n: n, train: true}
	defer l.release()
	// w is not written before the end, so it is the proximal anchor w⁰.
	anchor := obj.Anchor
	if anchor == nil {
		anchor = w
	}
	terms := obj.Prox != 0 || obj.Linear != nil || obj.Align != 0
	custom := terms || obj.AfterStep != nil
	// Plain SGD runs inside the linear layers' gemms (see fusedSGD).
	fuse := hp.Optimizer == OptimizerSGD && hp.Momentum == 0 && hp.WeightDecay == 0 && !custom
	batchIdx := make([]int, 0, min(hp.BatchSize, len(ex.Idx)))
	res.LabelCounts = make([]int, n.Classes())

	var lossSum, penaltySum float64
	gain := newMomentumGain(hp) // TrainResult.MomentumLRSum's γ_s
	step := func(pos []int) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("train: before step %d of %d: %w", res.Steps+1, total, err)
		}
		s, err := l.use(len(pos), w)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if res.Steps == 0 {
			s.opt.reset(n.size, hp, obj.State)
		}
		batchIdx = batchIdx[:0]
		for _, p := range pos {
			batchIdx = append(batchIdx, ex.Idx[p])
			res.LabelCounts[ex.Y[ex.Idx[p]]]++
		}
		s.setBatch(ex, batchIdx)
		s.drawMasks(r)
		s.setContrast(obj.Contrast, n.Embedding(), pos)
		s.setFeatureNorm(obj.FeatureNorm)
		s.xent.scale, s.xent.propFair = 1-obj.Align, obj.PropFair
		lr := hp.lrAt(res.Steps, total)
		s.fuse.on, s.fuse.eta = fuse, float32(lr)
		if err := s.run(); err != nil {
			return fmt.Errorf("train: step %d of %d: %w", res.Steps+1, total, err)
		}
		loss := s.xent.mean
		if !finite(loss) {
			return fmt.Errorf("train: step %d of %d: minibatch loss is %v: %w", res.Steps+1, total, loss, ErrDiverged)
		}
		if terms {
			applyObjective(s.spans, s.w, s.g, &obj, anchor)
		}
		spans := s.spans
		if fuse {
			// The linear weights were updated inside the graph.
			spans = s.rest
		}
		// Weights updated inside the graph are checked at the end: a NaN
		// or ±Inf among them makes the next step's loss NaN or ±Inf.
		if !optimize(spans, s.w, s.g, &s.opt, hp, lr) {
			return fmt.Errorf("train: step %d of %d: %s: %w", res.Steps+1, total, badWeight(n, s.w), ErrDiverged)
		}
		if obj.AfterStep != nil && !afterStep(s.w, obj.AfterStep, lr) {
			return fmt.Errorf("train: step %d of %d: %s: %w", res.Steps+1, total, badWeight(n, s.w), ErrDiverged)
		}
		if res.Steps == 0 && obj.FirstStep != nil {
			storeWeights(s, obj.FirstStep)
		}
		res.Steps++
		res.Samples += len(pos)
		res.LRSum += lr
		res.MomentumLRSum += lr * gain.next()
		lossSum += loss
		if s.fnorm.on {
			penaltySum += s.fnorm.lambda * s.fnorm.j
		}
		if progress != nil {
			progress(Progress{Step: res.Steps, Steps: total, Loss: loss})
		}
		return nil
	}

	if err := forEachBatch(len(ex.Idx), hp, r, step); err != nil {
		return TrainResult{}, err
	}
	if fuse && !allFinite(l.cur.fused, l.cur.w) {
		return TrainResult{}, fmt.Errorf("train: step %d of %d: %s: %w", res.Steps, total, badWeight(n, l.cur.w), ErrDiverged)
	}
	if bad := l.cur.badBuffer(); bad != "" {
		return TrainResult{}, fmt.Errorf("train: step %d of %d: buffer %s is NaN or ±Inf: %w", res.Steps, total, bad, ErrDiverged)
	}
	storeWeights(l.cur, w)
	if obj.State != nil {
		l.cur.opt.save(obj.State)
	}
	if fp := obj.FeatureNorm; fp != nil && fp.Loss != nil {
		*fp.Loss = penaltySum
	}
	res.MeanLoss = lossSum / float64(res.Steps)
	return res, nil
}

// badWeight names the first trainable weight of w that is NaN or ±Inf.
func badWeight(n *Net, w []float32) string {
	for _, p := range n.params {
		for j, v := range w[p.Offset : p.Offset+p.Len] {
			if !finite(float64(v)) {
				return fmt.Sprintf("weight %s[%d] is %v after the update", p.Name, j, v)
			}
		}
	}
	return "a weight is NaN or ±Inf after the update"
}

// numSteps is the number of optimiser steps of a schedule over n samples.
// NumSteps returns the number of optimiser steps Train takes on n samples
// with hp: LocalSteps, or LocalEpochs·⌈n/BatchSize⌉.
func NumSteps(n int, hp Hyper) int { return numSteps(n, hp) }

func numSteps(n int, hp Hyper) int {
	if hp.LocalEpochs > 0 {
		return hp.LocalEpochs * ((n + hp.BatchSize - 1) / hp.BatchSize)
	}
	return hp.LocalSteps
}

// forEachBatch calls fn with the minibatches of hp's schedule over the n
// positions 0..n−1 of a client's samples (see the package documentation),
// drawing from r; it stops at fn's first error. The batch slice is only
// valid during the call.
//
//   - Steps: a partial Fisher–Yates shuffle of a running permutation makes
//     its first B entries a uniform random B-subset; with n ≤ B every
//     batch is all positions in order and nothing is drawn.
//   - Epochs: a full Fisher–Yates shuffle of the running permutation, then
//     consecutive batches of B, the last one partial. With hp.InOrder
//     there is no shuffle and nothing is drawn: every epoch is 0..n−1.
func forEachBatch(n int, hp Hyper, r *rand.Rand, fn func(batch []int) error) error {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if hp.LocalSteps > 0 {
		b := min(hp.BatchSize, n)
		for range hp.LocalSteps {
			if n > b {
				for i := 0; i < b; i++ {
					j := i + r.IntN(n-i)
					order[i], order[j] = order[j], order[i]
				}
			}
			if err := fn(order[:b]); err != nil {
				return err
			}
		}
		return nil
	}
	for range hp.LocalEpochs {
		for i := n - 1; i > 0 && !hp.InOrder; i-- {
			j := r.IntN(i + 1)
			order[i], order[j] = order[j], order[i]
		}
		for lo := 0; lo < n; lo += hp.BatchSize {
			if err := fn(order[lo:min(lo+hp.BatchSize, n)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Gradient writes into dst the gradient of the mean cross-entropy of the
// model w over all of ex, and returns that mean loss: ∇F_i(w) of a client,
// as FedEBA+'s gradient alignment needs it at the global model
// (specs/fedeba.md §1.5). It runs training graphs over ex.Idx in order, in
// batches of batch samples (the last one partial), and weights each batch's
// gradient by its size: exact for nets without BatchNorm, which otherwise
// normalises each batch with its own statistics. Dropout is off, and the
// running statistics and w are not changed. dst has NumParams entries;
// buffer entries are 0.
func (t *Trainer) Gradient(ctx context.Context, n *Net, w []float32, ex Examples, batch int, dst []float32) (float64, error) {
	if err := checkModel(n, w); err != nil {
		return 0, fmt.Errorf("gradient: %w", err)
	}
	if err := ex.check(n); err != nil {
		return 0, fmt.Errorf("gradient: %w", err)
	}
	if batch <= 0 {
		return 0, fmt.Errorf("gradient: batch = %d; it must be > 0: %w", batch, ErrInvalid)
	}
	if len(dst) != n.size {
		return 0, fmt.Errorf("gradient: dst has length %d; net %s has %d parameters: %w", len(dst), n.key, n.size, ErrInvalid)
	}
	acc := make([]float64, n.size)
	var lossSum float64
	l := &lease{t: t, n: n, train: true}
	defer l.release()
	for lo := 0; lo < len(ex.Idx); lo += batch {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("gradient: %w", err)
		}
		idx := ex.Idx[lo:min(lo+batch, len(ex.Idx))]
		s, err := l.use(len(idx), w)
		if err != nil {
			return 0, fmt.Errorf("gradient: %w", err)
		}
		// Each batch starts from w: training-mode BatchNorm would move the
		// running statistics.
		loadWeights(s, w)
		s.setBatch(ex, idx)
		s.keepAll()
		s.fuse.on = false
		s.setContrast(nil, 0, nil)
		s.setFeatureNorm(nil)
		s.xent.scale, s.xent.propFair = 1, nil
		if err := s.run(); err != nil {
			return 0, fmt.Errorf("gradient: %w", err)
		}
		k := float64(len(idx))
		lossSum += s.xent.mean * k
		for _, sp := range s.spans {
			for j := sp.lo; j < sp.hi; j++ {
				acc[j] += float64(s.g[j]) * k
			}
		}
	}
	m := float64(len(ex.Idx))
	for j := range dst {
		dst[j] = float32(acc[j] / m)
	}
	return lossSum / m, nil
}

// Predict writes, for each sample ex.Idx[i], the cross-entropy loss of the
// model w into loss[i] and whether its arg-max prediction is the label into
// correct[i]. It runs in eval mode: BatchNorm uses its running statistics
// and there is no dropout. Either output may be nil; otherwise its length
// must be len(ex.Idx). A model with NaN weights yields NaN losses, not an
// error.
func (t *Trainer) Predict(ctx context.Context, n *Net, w []float32, ex Examples, loss []float32, correct []bool) error {
	if loss != nil && len(loss) != len(ex.Idx) {
		return fmt.Errorf("predict: len(loss) = %d; want len(examples.idx) = %d: %w", len(loss), len(ex.Idx), ErrInvalid)
	}
	if correct != nil && len(correct) != len(ex.Idx) {
		return fmt.Errorf("predict: len(correct) = %d; want len(examples.idx) = %d: %w", len(correct), len(ex.Idx), ErrInvalid)
	}
	return t.predict(ctx, n, w, ex, func(i int, s *session[float32], row int) {
		if loss != nil {
			loss[i] = float32(s.xent.loss[row])
		}
		if correct != nil {
			correct[i] = s.xent.correct[row]
		}
	})
}

// Forward writes, for each sample ex.Idx[i], the embedding that feeds the
// output layer into emb[i·L:(i+1)·L] (L = n.Embedding(); for logreg the
// input itself) and the logits into logits[i·C:(i+1)·C] (C = n.Classes()),
// in eval mode like Predict. Either output may be nil. MOON's contrastive
// term takes its global and previous-model embeddings from here; FNR-FL's
// feature norms and the label-recovery attacks read them too.
func (t *Trainer) Forward(ctx context.Context, n *Net, w []float32, ex Examples, emb, logits []float32) error {
	le, c := n.Embedding(), n.classes
	if emb != nil && len(emb) != len(ex.Idx)*le {
		return fmt.Errorf("forward: len(emb) = %d; want len(examples.idx)·embedding = %d·%d: %w", len(emb), len(ex.Idx), le, ErrInvalid)
	}
	if logits != nil && len(logits) != len(ex.Idx)*c {
		return fmt.Errorf("forward: len(logits) = %d; want len(examples.idx)·classes = %d·%d: %w", len(logits), len(ex.Idx), c, ErrInvalid)
	}
	return t.predict(ctx, n, w, ex, func(i int, s *session[float32], row int) {
		if emb != nil {
			src := s.x[row*n.Dim() : (row+1)*n.Dim()]
			if s.embed != nil {
				src = s.embed.y.data[row*le : (row+1)*le]
			}
			copy(emb[i*le:(i+1)*le], src)
		}
		if logits != nil {
			copy(logits[i*c:(i+1)*c], s.xent.logits[row*c:(row+1)*c])
		}
	})
}

// Evaluate sums Predict's per-sample results; LossSum is summed in float64
// in the order of ex.Idx.
func (t *Trainer) Evaluate(ctx context.Context, n *Net, w []float32, ex Examples) (EvalResult, error) {
	var res EvalResult
	err := t.predict(ctx, n, w, ex, func(_ int, s *session[float32], row int) {
		res.N++
		res.LossSum += s.xent.loss[row]
		if s.xent.correct[row] {
			res.Correct++
		}
	})
	if err != nil {
		return EvalResult{}, err
	}
	return res, nil
}

// padBelow: predict pads a rest of fewer samples to the next power of two
// rather than running it in smaller pieces.
const padBelow = 8

// evalBatchFor is the evaluation batch size for n: EvalBatch, lowered to fit
// the activation budget.
func (t *Trainer) evalBatchFor(n *Net) int {
	return max(1, min(t.evalBatch, evalActBudget/max(1, n.act)))
}

// predict runs the eval graph over ex in batches of evalBatchFor(n) and
// calls emit for each sample in order, with the session and the sample's
// row in it. The m < EvalBatch samples left at the end run in graphs whose
// sizes are powers of two: the next one ≥ m, padded with zero rows whose
// outputs are ignored, when that wastes at most a quarter of its rows or m
// < padBelow; else the largest one ≤ m, and the same again on what is
// left. Samples do not interact in eval mode, so the batching changes
// nothing (within float rounding), and at most log2(EvalBatch) extra graphs
// per net are ever built. Padding every rest to the next power of two cost
// up to twice the work (a client's 300 samples ran as 512 rows, now 256 +
// 32 + 16); splitting every rest into exact pieces cost more than it saved
// on small ones (100 as 64 + 32 + 4 ran slower than as 128).
func (t *Trainer) predict(ctx context.Context, n *Net, w []float32, ex Examples, emit func(i int, s *session[float32], row int)) error {
	if err := checkModel(n, w); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	if err := ex.check(n); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	l := &lease{t: t, n: n, train: false}
	defer l.release()
	eb := t.evalBatchFor(n)
	for lo := 0; lo < len(ex.Idx); {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		b := eb
		if rest := len(ex.Idx) - lo; rest < eb {
			// The next power of two, padded, unless it wastes more than
			// a quarter of its rows: then the largest one below.
			b = min(eb, 1<<bits.Len(uint(rest-1)))
			if rest >= padBelow && 4*(b-rest) > b {
				b = 1 << (bits.Len(uint(rest)) - 1)
			}
		}
		idx := ex.Idx[lo:min(lo+b, len(ex.Idx))]
		lo += len(idx)
		s, err := l.use(b, w)
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		s.setBatch(ex, idx)
		if err := s.run(); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		for i := range idx {
			emit(lo-len(idx)+i, s, i)
		}
	}
	return nil
}
