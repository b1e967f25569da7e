package trainer

import (
	"fmt"
	"math"
)

// Optimizer names accepted in Hyper.Optimizer.
const OptimizerSGD = "sgd"

// Hyper holds the local-training hyperparameters of one Train call.
type Hyper struct {
	Optimizer   string  // "sgd" (momentum/nesterov/adam come later)
	LR          float64 // learning rate η, > 0
	Momentum    float64 // heavy-ball β in [0, 1); the buffer starts at zero in every Train call
	WeightDecay float64 // L2 coefficient λ ≥ 0, added to the gradient (PyTorch SGD semantics)
	BatchSize   int     // B > 0
	LocalSteps  int     // K: exactly one of LocalSteps and LocalEpochs is > 0
	LocalEpochs int     // E
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate reports whether h is usable. Errors name the field and the fix
// and wrap ErrInvalid.
func (h Hyper) Validate() error {
	switch {
	case h.Optimizer != OptimizerSGD:
		return fmt.Errorf("hyper.optimizer = %q is unknown; use %q: %w", h.Optimizer, OptimizerSGD, ErrInvalid)
	case !(h.LR > 0) || !finite(h.LR):
		return fmt.Errorf("hyper.lr = %v; the learning rate must be a finite number > 0: %w", h.LR, ErrInvalid)
	case !(h.Momentum >= 0 && h.Momentum < 1):
		return fmt.Errorf("hyper.momentum = %v; it must be in [0, 1): %w", h.Momentum, ErrInvalid)
	case !(h.WeightDecay >= 0) || !finite(h.WeightDecay):
		return fmt.Errorf("hyper.weight_decay = %v; it must be a finite number ≥ 0: %w", h.WeightDecay, ErrInvalid)
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
	}
	return nil
}

// Examples is a read-only view of a client's data: the samples Idx of a
// split held in X and Y.
type Examples struct {
	X   []float32 // N·Dim values, row-major; each sample in CHW order, values in [0, 1]
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
	Loss        float64 // mean loss of its minibatch
}

// TrainResult summarises a Train call.
type TrainResult struct {
	Steps    int     // optimiser steps taken
	Samples  int     // sum of the minibatch sizes
	MeanLoss float64 // mean of the per-step minibatch losses
}

// EvalResult summarises an Evaluate call.
type EvalResult struct {
	N, Correct int
	LossSum    float64 // Σ of per-sample cross-entropy losses; LossSum/N is the mean loss
}
