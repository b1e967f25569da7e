package trainer

import (
	"fmt"
	"math"
)

// Optimizer names accepted in Hyper.Optimizer.
const (
	OptimizerSGD   = "sgd"   // torch.optim.SGD: momentum, Nesterov, L2 weight decay
	OptimizerAdam  = "adam"  // torch.optim.Adam: L2 weight decay added to the gradient
	OptimizerAdamW = "adamw" // torch.optim.AdamW: decoupled weight decay
)

// Learning-rate schedules accepted in Hyper.Schedule, over the local steps
// of one Train call.
const (
	ScheduleConstant = "constant" // η_k = η (also "")
	ScheduleStep     = "step"     // η_k = η·γ^⌊k/StepSize⌋ (torch StepLR stepped every local step)
	ScheduleCosine   = "cosine"   // η_k = η_min + (η − η_min)·(1 + cos(π·k/K))/2 (torch CosineAnnealingLR, T_max = K)
)

// PyTorch's Adam defaults.
const (
	defaultBeta1 = 0.9
	defaultBeta2 = 0.999
	defaultEps   = 1e-8
)

// Hyper holds the local-training hyperparameters of one Train call. Zero
// values of the optional fields mean PyTorch's defaults.
type Hyper struct {
	Optimizer string // "sgd", "adam" or "adamw"
	// LR is the learning rate η of this call: the round's rate. A per-round
	// schedule (e.g. FedEBA+'s η·d^(t−1)) is the caller's: the engine passes
	// sweep.Config.RoundLR(t) for round t.
	LR          float64
	Momentum    float64 // sgd: heavy-ball β in [0, 1), PyTorch's (dampening 0)
	Nesterov    bool    // sgd: Nesterov momentum (PyTorch's nesterov=True); needs Momentum > 0
	WeightDecay float64 // λ ≥ 0: L2 added to the gradient (sgd, adam) or decoupled (adamw)
	Beta1       float64 // adam, adamw: β1 in [0, 1); 0 means 0.9
	Beta2       float64 // adam, adamw: β2 in [0, 1); 0 means 0.999
	Eps         float64 // adam, adamw: ε > 0; 0 means 1e-8
	Schedule    string  // within the call: "" or "constant", "step", "cosine"
	StepSize    int     // step: multiply η by Gamma every StepSize local steps
	Gamma       float64 // step: the factor γ in (0, 1]
	MinLR       float64 // cosine: η_min in [0, LR]
	BatchSize   int     // B > 0
	LocalSteps  int     // K: exactly one of LocalSteps and LocalEpochs is > 0
	LocalEpochs int     // E
	// InOrder makes every epoch walk ex.Idx in its given order instead of
	// a fresh shuffle, so r is read only for dropout masks (a DataLoader
	// with shuffle=False, as FNR-FL's passes over the public set). It
	// needs LocalEpochs; with LocalSteps it is an error.
	InOrder bool
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate reports whether h is usable. Errors name the field and the fix
// and wrap ErrInvalid.
func (h Hyper) Validate() error {
	adam := h.Optimizer == OptimizerAdam || h.Optimizer == OptimizerAdamW
	switch {
	case h.Optimizer != OptimizerSGD && !adam:
		return fmt.Errorf("hyper.optimizer = %q is unknown; use %q, %q or %q: %w",
			h.Optimizer, OptimizerSGD, OptimizerAdam, OptimizerAdamW, ErrInvalid)
	case !(h.LR > 0) || !finite(h.LR):
		return fmt.Errorf("hyper.lr = %v; the learning rate must be a finite number > 0: %w", h.LR, ErrInvalid)
	case !(h.Momentum >= 0 && h.Momentum < 1):
		return fmt.Errorf("hyper.momentum = %v; it must be in [0, 1): %w", h.Momentum, ErrInvalid)
	case h.Momentum > 0 && adam:
		return fmt.Errorf("hyper.momentum = %v is set with optimizer %q; Adam's momentum is beta1: %w", h.Momentum, h.Optimizer, ErrInvalid)
	case h.Nesterov && (h.Momentum == 0 || adam):
		return fmt.Errorf("hyper.nesterov needs optimizer %q with momentum > 0 (PyTorch's rule): %w", OptimizerSGD, ErrInvalid)
	case !(h.WeightDecay >= 0) || !finite(h.WeightDecay):
		return fmt.Errorf("hyper.weight_decay = %v; it must be a finite number ≥ 0: %w", h.WeightDecay, ErrInvalid)
	case !(h.Beta1 >= 0 && h.Beta1 < 1) || !(h.Beta2 >= 0 && h.Beta2 < 1):
		return fmt.Errorf("hyper.beta1, hyper.beta2 = %v, %v; each must be in [0, 1) (0 means PyTorch's 0.9, 0.999): %w", h.Beta1, h.Beta2, ErrInvalid)
	case !(h.Eps >= 0) || !finite(h.Eps):
		return fmt.Errorf("hyper.eps = %v; it must be a finite number ≥ 0 (0 means 1e-8): %w", h.Eps, ErrInvalid)
	case !adam && (h.Beta1 != 0 || h.Beta2 != 0 || h.Eps != 0):
		return fmt.Errorf("hyper.beta1, hyper.beta2 and hyper.eps are Adam's; remove them for optimizer %q: %w", h.Optimizer, ErrInvalid)
	case h.BatchSize <= 0:
		return fmt.Errorf("hyper.batch_size = %d; it must be > 0: %w", h.BatchSize, ErrInvalid)
	case h.LocalSteps < 0:
		return fmt.Errorf("hyper.local_steps = %d; it must be ≥ 0: %w", h.LocalSteps, ErrInvalid)
	case h.LocalEpochs < 0:
		return fmt.Errorf("hyper.local_epochs = %d; it must be ≥ 0: %w", h.LocalEpochs, ErrInvalid)
	case h.LocalSteps > 0 && h.LocalEpochs > 0:
		return fmt.Errorf("hyper.local_steps = %d and hyper.local_epochs = %d are both set; set exactly one: %w",
			h.LocalSteps, h.LocalEpochs, ErrInvalid)
	case h.LocalSteps == 0 && h.LocalEpochs == 0:
		return fmt.Errorf("hyper.local_steps and hyper.local_epochs are both 0; set exactly one of them > 0: %w", ErrInvalid)
	case h.InOrder && h.LocalSteps > 0:
		return fmt.Errorf("hyper.in_order is set with hyper.local_steps = %d; it orders epochs only, so use hyper.local_epochs or drop it: %w",
			h.LocalSteps, ErrInvalid)
	}
	switch h.Schedule {
	case "", ScheduleConstant:
		if h.StepSize != 0 || h.Gamma != 0 || h.MinLR != 0 {
			return fmt.Errorf("hyper.step_size, hyper.gamma or hyper.min_lr is set without a hyper.schedule; set it to %q or %q: %w",
				ScheduleStep, ScheduleCosine, ErrInvalid)
		}
	case ScheduleStep:
		if h.StepSize <= 0 || !(h.Gamma > 0 && h.Gamma <= 1) || h.MinLR != 0 {
			return fmt.Errorf("hyper.schedule %q needs hyper.step_size > 0 and hyper.gamma in (0, 1] (have %d, %v) and no hyper.min_lr: %w",
				ScheduleStep, h.StepSize, h.Gamma, ErrInvalid)
		}
	case ScheduleCosine:
		if !(h.MinLR >= 0 && h.MinLR <= h.LR) || h.StepSize != 0 || h.Gamma != 0 {
			return fmt.Errorf("hyper.schedule %q takes hyper.min_lr in [0, hyper.lr] (have %v) and no hyper.step_size or hyper.gamma: %w",
				ScheduleCosine, h.MinLR, ErrInvalid)
		}
	default:
		return fmt.Errorf("hyper.schedule = %q is unknown; use %q, %q or %q: %w",
			h.Schedule, ScheduleConstant, ScheduleStep, ScheduleCosine, ErrInvalid)
	}
	return nil
}

// lrAt returns the learning rate of local step k (0-based) of total steps.
func (h Hyper) lrAt(k, total int) float64 {
	switch h.Schedule {
	case ScheduleStep:
		return h.LR * math.Pow(h.Gamma, float64(k/h.StepSize))
	case ScheduleCosine:
		return h.MinLR + (h.LR-h.MinLR)*(1+math.Cos(math.Pi*float64(k)/float64(total)))/2
	}
	return h.LR
}

// momentumGain walks the γ_s of TrainResult.MomentumLRSum step by step.
type momentumGain struct {
	rho      float64 // 0 for Adam and AdamW
	nesterov bool
	buf      float64 // (1 − ρ^s)/(1 − ρ): the buffer's multiple of a constant gradient after step s
}

func newMomentumGain(h Hyper) momentumGain {
	if h.Optimizer != OptimizerSGD {
		return momentumGain{}
	}
	return momentumGain{rho: h.Momentum, nesterov: h.Nesterov}
}

// next returns γ_s of the next step s.
func (m *momentumGain) next() float64 {
	m.buf = m.rho*m.buf + 1
	if m.nesterov {
		return m.rho*m.buf + 1
	}
	return m.buf
}

// MomentumSteps returns Σ_{s=1..k} γ_s, the effective number of steps of k
// optimiser steps with h from a zero momentum buffer: η·MomentumSteps(k) is
// TrainResult.MomentumLRSum at a constant rate η. It is FedNova's a_k for
// heavy-ball SGD, and k without momentum or for Adam.
func (h Hyper) MomentumSteps(k int) float64 {
	g, sum := newMomentumGain(h), 0.0
	for range k {
		sum += g.next()
	}
	return sum
}

// adam returns β1, β2 and ε with the defaults applied.
func (h Hyper) adam() (b1, b2, eps float64) {
	b1, b2, eps = h.Beta1, h.Beta2, h.Eps
	if b1 == 0 {
		b1 = defaultBeta1
	}
	if b2 == 0 {
		b2 = defaultBeta2
	}
	if eps == 0 {
		eps = defaultEps
	}
	return b1, b2, eps
}

// Examples is a read-only view of a client's data: the samples Idx of a
// split held in X and Y.
type Examples struct {
	X   []float32 // N·Dim values, row-major; each sample in CHW order: pixels in [0, 1], or normalised per channel (dataset.Norm); no range is assumed
	Y   []uint8   // N labels
	Dim int       // features per sample
	Idx []int     // which samples (indices into X/Y) this view holds
}

// check validates ex against the net.
func (ex Examples) check(n *Net) error {
	if ex.Dim != n.Dim() {
		return fmt.Errorf("examples.dim = %d; net %s takes %d features: %w", ex.Dim, n.key, n.Dim(), ErrInvalid)
	}
	if len(ex.X) != len(ex.Y)*ex.Dim {
		return fmt.Errorf("examples.x has %d values; want len(examples.y)·dim = %d·%d: %w",
			len(ex.X), len(ex.Y), ex.Dim, ErrInvalid)
	}
	if len(ex.Idx) == 0 {
		return fmt.Errorf("examples.idx is empty; a client needs at least one sample: %w", ErrInvalid)
	}
	for i, k := range ex.Idx {
		if k < 0 || k >= len(ex.Y) {
			return fmt.Errorf("examples.idx[%d] = %d is outside [0, %d): %w", i, k, len(ex.Y), ErrInvalid)
		}
		if int(ex.Y[k]) >= n.classes {
			return fmt.Errorf("examples.y[%d] = %d; net %s has %d classes: %w", k, ex.Y[k], n.key, n.classes, ErrInvalid)
		}
	}
	return nil
}

// checkModel validates the net and the weight vector of a call.
func checkModel(n *Net, w []float32) error {
	if n == nil {
		return fmt.Errorf("nil *Net; build one with NewNet: %w", ErrInvalid)
	}
	if len(w) != n.size {
		return fmt.Errorf("w has length %d; net %s has %d parameters: %w", len(w), n.key, n.size, ErrInvalid)
	}
	return nil
}

// Progress reports one finished local step.
type Progress struct {
	Step, Steps int     // 1-based step just finished, and the total
	Loss        float64 // mean cross-entropy of its minibatch
}

// TrainResult summarises a Train call.
type TrainResult struct {
	Steps    int     // optimiser steps taken
	Samples  int     // sum of the minibatch sizes
	MeanLoss float64 // mean of the per-step minibatch cross-entropies (without the Objective's extra terms)
	LRSum    float64 // Σ of the steps' learning rates: K·η for a constant rate (SCAFFOLD's K·η_l)
	// MomentumLRSum is Σ_s η_s·γ_s: how far a constant unit gradient moves
	// the weights over the call through SGD's momentum buffer, which starts
	// at zero, with
	//
	//	γ_s = (1 − ρ^s)/(1 − ρ)        heavy-ball (s = 1, 2, …)
	//	γ_s = (1 − ρ^{s+1})/(1 − ρ)    Nesterov
	//
	// For a constant rate it is η·a_K, FedNova's effective step count
	// a_K = [K − ρ(1 − ρ^K)/(1 − ρ)]/(1 − ρ) (algorithm.NormSteps). Without
	// momentum, and for Adam and AdamW (whose steps are not linear in the
	// gradient), γ_s = 1 and it equals LRSum bit for bit.
	MomentumLRSum float64
	// LabelCounts[j] is the number of processed samples of class j, with
	// repetitions (Σ = Samples): the truth a label-recovery attack is
	// scored against (package attack), counted as the batches were drawn.
	LabelCounts []int
}

// EvalResult summarises an Evaluate call.
type EvalResult struct {
	N, Correct int
	LossSum    float64 // Σ of per-sample cross-entropy losses; LossSum/N is the mean loss
}
