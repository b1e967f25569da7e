package attack

import (
	"fmt"
	"math"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// Input is what an honest-but-curious server knows when it attacks one
// client's update of one round (Chen & Vikalo 2024, §3.1), and nothing
// more: the model it sent, the update it received, the local training's
// hyperparameters, the FL scheme's terms it keeps itself, and its own
// labelled auxiliary set. It holds no sample, label or label count of the
// client: those reach only the evaluator (LabelCounts, Evaluate), and a
// test keeps it so.
type Input struct {
	Net    *trainer.Net
	Global []float32 // θ^t, the model the client started from (Net.NumParams values)
	Delta  []float32 // Δ = θ_k − θ^t, the client's local model minus θ^t
	Local  Local     // the client's optimiser and schedule, as the server set them
	Scheme Scheme    // the FL algorithm's local-objective terms (the zero Scheme is FedAvg's)

	// Aux is the server's labelled auxiliary set, drawn from data no client
	// trains on, with at least one sample of every class (the paper: 100
	// per class, balanced).
	Aux trainer.Examples
}

// Local is the client's local training as the server configured it. The
// learning rate is constant within the round (no schedule), and the
// optimiser starts fresh every round (trainer's default; a momentum buffer
// carried across rounds is client state the server does not see).
type Local struct {
	Optimizer   string  // trainer.OptimizerSGD (also ""), trainer.OptimizerAdam or trainer.OptimizerAdamW
	LR          float64 // η > 0, the round's rate
	Momentum    float64 // sgd: γ in [0, 1), PyTorch's heavy ball with dampening 0
	Nesterov    bool    // sgd: PyTorch's nesterov=True; needs Momentum > 0
	WeightDecay float64 // L2 coefficient ≥ 0 added to the gradient (decoupled for adamw)
	Steps       int     // m ≥ 1: optimiser steps taken
	Batch       int     // |B| ≥ 1: samples per step
	// Samples is T_k, the samples processed over the Steps (with
	// repetitions): the total the recovered histogram sums to. 0 means
	// Steps·Batch.
	Samples int
}

// Total returns the number of processed samples the histogram sums to.
func (l Local) Total() int {
	if l.Samples > 0 {
		return l.Samples
	}
	return l.Steps * l.Batch
}

// adam reports whether the optimiser normalises its steps elementwise,
// which takes it outside RLU's model (Eq. (16) needs the update to be
// linear in the gradients).
func (l Local) adam() bool {
	return l.Optimizer == trainer.OptimizerAdam || l.Optimizer == trainer.OptimizerAdamW
}

// FromHyper returns the Local of a client with n training samples trained
// with hp (trainer.Train's schedule: hp.LocalSteps steps of min(B, n)
// samples, or hp.LocalEpochs epochs of ⌈n/B⌉ steps over all n samples, the
// last batch partial: its samples weigh more in its mean gradient than
// RLU's equal batches assume). A learning-rate schedule within the round
// is not modelled: it is ErrNotApplicable.
func FromHyper(hp trainer.Hyper, n int) (Local, error) {
	if err := hp.Validate(); err != nil {
		return Local{}, fmt.Errorf("attack: %v: %w", err, fl.ErrInvalid)
	}
	if n <= 0 {
		return Local{}, fmt.Errorf("attack: a client with %d samples: %w", n, fl.ErrInvalid)
	}
	if hp.Schedule != "" && hp.Schedule != trainer.ScheduleConstant {
		return Local{}, fmt.Errorf("attack: hyper.schedule %q changes η within the round; the attacks assume a constant rate: %w", hp.Schedule, ErrNotApplicable)
	}
	l := Local{
		Optimizer: hp.Optimizer, LR: hp.LR, Momentum: hp.Momentum, Nesterov: hp.Nesterov, WeightDecay: hp.WeightDecay,
		Steps: trainer.NumSteps(n, hp), Batch: min(hp.BatchSize, n),
	}
	if hp.LocalEpochs > 0 {
		l.Samples = hp.LocalEpochs * n
	}
	return l, nil
}

// Scheme is the part of an FL algorithm's local objective that the
// attacks must undo, as trainer.Objective applies it: every step descends
// along
//
//	g + Prox·(θ − Anchor) + Linear
//
// (before the optimiser's weight decay and momentum), and after every step
// θ ← θ − η·AfterStep. Vectors are flat in the net's layout, of length
// NumParams, or nil (Anchor nil means θ^t; Linear and AfterStep nil mean
// 0). The server knows each of them: it sent them or tracks them from the
// client's uploads. The constructors below build the built-in algorithms'
// schemes (package algorithm).
type Scheme struct {
	Prox      float64   // μ ≥ 0 of μ/2·‖θ − Anchor‖²: FedProx's μ, FedDyn's α, FedDC's λ
	Anchor    []float32 // nil: θ^t
	Linear    []float32 // v of ⟨v, θ⟩
	AfterStep []float32 // SCAFFOLD's correction applied after each step (NIID-Bench)
}

// FedProx is FedProx's μ/2·‖θ − θ^t‖² (Li et al., MLSys 2020).
func FedProx(mu float64) Scheme { return Scheme{Prox: mu} }

// Scaffold is SCAFFOLD's corrected gradient g − c_i + c (Karimireddy et
// al., ICML 2020, Alg. 1 line 10) with the server's control variate c and
// client i's c_i, which the server tracks as the sum of the Δc_i the
// client uploaded (algorithm.SCAFFOLD, correction "gradient").
func Scaffold(c, ci []float32) Scheme { return Scheme{Linear: diff(c, ci)} }

// ScaffoldAfterStep is SCAFFOLD with NIID-Bench's correction θ ← θ −
// η·(c − c_i) after every optimiser step (algorithm.SCAFFOLD, correction
// "after_step").
func ScaffoldAfterStep(c, ci []float32) Scheme { return Scheme{AfterStep: diff(c, ci)} }

// FedDyn is FedDyn's L_k(θ) − ⟨∇L_k(θ_k^{t−1}), θ⟩ + α/2·‖θ − θ^t‖² (Acar
// et al., ICLR 2021, Alg. 1) with the client's α (α_k under
// adaptive_alpha). The client's state ∇L_k(θ_k^{t−1}) starts at 0 and drops
// by α·Δ_k in every round the client trains (algorithm.FedDyn), so the
// server knows it as −α·past, past = Σ Δθ_k^(r) over the rounds r < t in
// which client k trained (Chen & Vikalo, App. A.8).
func FedDyn(alpha float64, past []float32) Scheme {
	v := make([]float32, len(past))
	for j, p := range past {
		v[j] = float32(alpha * float64(p))
	}
	return Scheme{Prox: alpha, Linear: v}
}

// FedDC is FedDC's local objective as Chen & Vikalo write it (App. A.9,
// Eq. (81); algorithm.FedDC):
//
//	CE + λ/2·‖θ − (θ^t − d_k)‖² + (1/(η·m))·⟨θ, Δθ_k^{prev} − Δθ^{prev}⟩
//
// with global θ^t, the client's drift d_k (the sum of its past local
// updates θ_k − θ^t), its last local update Δθ_k^{prev}, the server's last
// global update Δθ^{prev}, and lrSteps = η·m as the client computed it.
// Note that algorithm.FedDC with drift_mean "selected" uploads θ_k + d_k −
// θ^t: Input.Delta is θ_k − θ^t, the upload minus the new drift.
func FedDC(lambda float64, global, drift, last, lastGlobal []float32, lrSteps float64) Scheme {
	s := Scheme{Prox: lambda, Linear: make([]float32, len(last))}
	for j := range s.Linear {
		s.Linear[j] = float32((float64(last[j]) - float64(lastGlobal[j])) / lrSteps)
	}
	if lambda != 0 {
		s.Anchor = diff(global, drift)
	}
	return s
}

func diff(a, b []float32) []float32 {
	d := make([]float32, len(a))
	for j := range d {
		d[j] = a[j] - b[j]
	}
	return d
}

// check validates in. Errors name the field and wrap fl.ErrInvalid.
func (in *Input) check() error {
	if in.Net == nil {
		return fmt.Errorf("attack: input.net is nil: %w", fl.ErrInvalid)
	}
	p := in.Net.NumParams()
	vec := func(name string, v []float32, need bool) error {
		if v == nil && !need {
			return nil
		}
		if len(v) != p {
			return fmt.Errorf("attack: input.%s has %d values; net %s has %d parameters: %w", name, len(v), in.Net.Key(), p, fl.ErrInvalid)
		}
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("attack: input.%s[%d] = %v; want finite values: %w", name, j, x, fl.ErrInvalid)
			}
		}
		return nil
	}
	if err := vec("global", in.Global, true); err != nil {
		return err
	}
	if err := vec("delta", in.Delta, true); err != nil {
		return err
	}
	l := in.Local
	switch {
	case l.Optimizer != "" && l.Optimizer != trainer.OptimizerSGD && !l.adam():
		return fmt.Errorf("attack: input.local.optimizer = %q is unknown; use %q, %q or %q: %w", l.Optimizer, trainer.OptimizerSGD, trainer.OptimizerAdam, trainer.OptimizerAdamW, fl.ErrInvalid)
	case !(l.LR > 0) || math.IsInf(l.LR, 0):
		return fmt.Errorf("attack: input.local.lr = %v; want a finite η > 0: %w", l.LR, fl.ErrInvalid)
	case !(l.Momentum >= 0 && l.Momentum < 1) || (l.Momentum > 0 && l.adam()):
		return fmt.Errorf("attack: input.local.momentum = %v; want [0, 1), and 0 with Adam: %w", l.Momentum, fl.ErrInvalid)
	case l.Nesterov && l.Momentum == 0:
		return fmt.Errorf("attack: input.local.nesterov needs momentum > 0: %w", fl.ErrInvalid)
	case !(l.WeightDecay >= 0) || math.IsInf(l.WeightDecay, 0):
		return fmt.Errorf("attack: input.local.weight_decay = %v; want a finite value ≥ 0: %w", l.WeightDecay, fl.ErrInvalid)
	case l.Steps < 1 || l.Batch < 1 || l.Samples < 0:
		return fmt.Errorf("attack: input.local has steps %d, batch %d, samples %d; want steps, batch ≥ 1 and samples ≥ 0: %w", l.Steps, l.Batch, l.Samples, fl.ErrInvalid)
	}
	s := in.Scheme
	if !(s.Prox >= 0) || math.IsInf(s.Prox, 0) {
		return fmt.Errorf("attack: input.scheme.prox = %v; want a finite value ≥ 0: %w", s.Prox, fl.ErrInvalid)
	}
	if s.Anchor != nil && s.Prox == 0 {
		return fmt.Errorf("attack: input.scheme.anchor is set but prox = 0: %w", fl.ErrInvalid)
	}
	for _, v := range []struct {
		name string
		v    []float32
	}{{"scheme.anchor", s.Anchor}, {"scheme.linear", s.Linear}, {"scheme.after_step", s.AfterStep}} {
		if err := vec(v.name, v.v, false); err != nil {
			return err
		}
	}
	return checkAux(in.Net, in.Aux)
}

// checkAux validates the auxiliary set: the net's input width, labels in
// range, and every class present.
func checkAux(n *trainer.Net, aux trainer.Examples) error {
	c := n.Classes()
	if aux.Dim != n.Dim() || len(aux.X) != len(aux.Y)*aux.Dim {
		return fmt.Errorf("attack: input.aux has dim %d and %d values for %d labels; net %s takes %d features: %w", aux.Dim, len(aux.X), len(aux.Y), n.Key(), n.Dim(), fl.ErrInvalid)
	}
	seen := make([]int, c)
	for i, k := range aux.Idx {
		if k < 0 || k >= len(aux.Y) {
			return fmt.Errorf("attack: input.aux.idx[%d] = %d is outside [0, %d): %w", i, k, len(aux.Y), fl.ErrInvalid)
		}
		if int(aux.Y[k]) >= c {
			return fmt.Errorf("attack: input.aux.y[%d] = %d; net %s has %d classes: %w", k, aux.Y[k], n.Key(), c, fl.ErrInvalid)
		}
		seen[aux.Y[k]]++
	}
	for j, s := range seen {
		if s == 0 {
			return fmt.Errorf("attack: input.aux has no sample of class %d; every class needs one: %w", j, fl.ErrInvalid)
		}
	}
	return nil
}

// output returns the output layer's update as float64: ΔW (classes rows of
// L) and Δb, and the flat offsets of W and b.
func (in *Input) output() (dW [][]float64, db []float64, wOff, bOff int) {
	w, b := in.Net.Output()
	c, l := in.Net.Classes(), in.Net.Embedding()
	dW = make([][]float64, c)
	db = make([]float64, c)
	for j := range c {
		dW[j] = make([]float64, l)
		for k := range l {
			dW[j][k] = float64(in.Delta[w.Offset+j*l+k])
		}
		db[j] = float64(in.Delta[b.Offset+j])
	}
	return dW, db, w.Offset, b.Offset
}

// local returns θ^t + Δ, the client's model.
func (in *Input) local() []float32 {
	w := make([]float32, len(in.Global))
	for j := range w {
		w[j] = in.Global[j] + in.Delta[j]
	}
	return w
}
