package trainer

import (
	"fmt"
	"math"
)

// Objective is what an FL algorithm changes in a client's local training:
// the client half of an FL algorithm (package algorithm; docs/architecture.md, "Methods"). With w the trainable
// parameters, w⁰ the weights Train starts from (the global model) and g the
// gradient of the minibatch's mean cross-entropy, every step descends along
//
//	h = (1 − α)·∇CE + ν·∇ℓ_con + λ·∇J_B + μ·(w − a) + v + α·g̃
//
// that is, the gradient of the local objective
//
//	F(w) = (1 − α)·CE(w) + ν·ℓ_con(w) + λ·J_B(w) + μ/2·‖w − a‖² + ⟨v, w⟩ + α·⟨g̃, w⟩
//
// before the optimiser adds its weight decay and momentum; the embedding
// terms ℓ_con and J_B are not scaled by 1 − α. The zero
// Objective is the plain mean cross-entropy (FedAvg's local SGD). Each
// paper's terms, and where they come from:
//
//   - FedProx (Li et al., MLSys 2020, arXiv:1812.06127, Eq. (2)):
//     Proximal(μ): μ/2·‖w − w⁰‖².
//   - SCAFFOLD (Karimireddy et al., ICML 2020, arXiv:1910.06378, Alg. 1
//     line 10): Scaffold(c, c_i): every gradient gets c − c_i, as v.
//   - FedDyn (Acar et al., ICLR 2021, arXiv:2111.04263, Alg. 1):
//     FedDyn(α, ∇L_i(θ_i^{t−1})): −⟨∇L_i(θ_i^{t−1}), w⟩ + α/2·‖w − w⁰‖².
//   - FedEBA+ (specs/fedeba.md §1.5, Eq. (11)): Aligned(α, g̃):
//     h = (1 − α)·∇F_i(x; ξ) + α·g̃ with g̃ fixed for the whole call.
//   - MOON (Li, He & Song, CVPR 2021, arXiv:2103.16257, Eq. (3)):
//     Contrast(ν, τ, zg, zp): ν·ℓ_con on the embedding (op_embed.go).
//   - FNR-FL's corrected variant (specs/fnrfl.md §1.6, our extension; the
//     paper's J, Eq. (9), has zero gradient): FeatureNorm(λ, T):
//     λ·J_B, pulling the batch's class-mean embedding norms toward T.
//
// Terms compose: set several fields for a combination no paper uses. Only
// trainable parameters are affected: entries of Anchor, Linear and
// AlignGrad at buffer positions (BatchNorm running statistics) are ignored.
// Vectors are flat, in the net's layout (Net.Params), of length NumParams.
// An Objective is read, never written, by Train, except State, FirstStep
// and FeatureNorm.Loss.
type Objective struct {
	Prox   float64   // μ ≥ 0 of the proximal term
	Anchor []float32 // a; nil means the weights Train starts from
	Linear []float32 // v; nil means 0

	Align     float64   // α in [0, 1]
	AlignGrad []float32 // g̃; needed when Align > 0

	Contrast    *Contrastive        // MOON's term; nil means none
	FeatureNorm *FeatureNormPenalty // FNR-FL's feature-norm penalty (our variant); nil means none

	// AfterStep, if not nil, is subtracted after every optimiser step,
	// scaled by the step's learning rate, from every entry of the weights,
	// BatchNorm running statistics included:
	//
	//	w ← w − η·AfterStep
	//
	// It is not a term of F: it bypasses momentum and weight decay. This is
	// NIID-Bench's SCAFFOLD, which corrects the state dict by
	// −lr·(c − c_i) after each optimizer.step() (specs/fnrfl.md §3), where
	// the paper puts c − c_i into the gradient (Linear).
	AfterStep []float32

	// PropFair, if not nil, replaces the minibatch's mean cross-entropy ℓ
	// by PropFair's transformed loss φ(ℓ) (see PropFairLoss): the
	// cross-entropy's gradient is scaled by φ'(ℓ) at the minibatch's own ℓ.
	// The reported losses stay the cross-entropy's.
	PropFair *PropFairLoss

	// FirstStep, if not nil, receives the weights after the first
	// optimiser step, x_{t,1} (FedEBA+'s model alignment uploads
	// x_{t,1} − x_{t,0}, Wang et al., arXiv:2301.12407, Eq. (9)). It is the only field Train
	// writes besides State.
	FirstStep []float32

	// State, if not nil, carries the optimiser's state across Train calls:
	// Train starts from it and leaves the final state in it. nil starts
	// from zero every call, as a fresh torch optimizer per round does. The
	// official HiCS-FL clients keep one torch optimizer for the whole run
	// (client_base.py), so their momentum and Adam moments persist.
	State *OptState
}

// Contrastive is MOON's model-contrastive term ν·ℓ_con (op_embed.go). Its
// payloads are the embeddings (Trainer.Forward) of every training sample
// under the global model and under the client's previous local model, row
// i for sample ex.Idx[i], each row Net.Embedding() floats.
type Contrastive struct {
	Mu     float64   // ν ≥ 0 (MOON's μ; 5 for CIFAR-10 in the paper)
	Tau    float64   // temperature τ > 0 (0.5 in MOON and NIID-Bench)
	Global []float32 // zg: len(ex.Idx)·L
	Prev   []float32 // zp: len(ex.Idx)·L; nil in a client's first round, where ℓ_con = 0
}

// FeatureNormPenalty is this project's differentiable reading of FNR-FL's
// feature-norm regulariser (specs/fnrfl.md §1.6, first bullet; §7 item 14).
// It is ours, not the paper's: the paper's J (Eq. (9)) is a constant of the
// weights, so its gradient is zero. For a minibatch B with labels y,
//
//	J_B(w) = Σ_{l ∈ L_B} ρ_l·(Ū_{B,l}(w) − T_l)²
//	ρ_l = n_l/|B|,  Ū_{B,l}(w) = (1/n_l)·Σ_{i ∈ B, y_i = l} ‖z_i(w)‖₂
//
// where z_i is sample i's embedding (the input of the output layer, as
// Trainer.Forward returns it), n_l the number of samples of class l in B
// and L_B the labels present in B; classes whose target is NaN are left
// out. The objective adds λ·J_B, whose gradient with respect to z_i is
//
//	λ·2ρ_l(Ū_{B,l} − T_l)/n_l · z_i/‖z_i‖ = λ·2(Ū_{B,l} − T_l)/|B| · z_i/‖z_i‖
//
// for y_i = l (taking ∂‖z‖/∂z = 0 at z = 0). It is added in the embedding
// op's backward pass (op_embed.go), like MOON's term, so it needs a net
// with hidden layers. λ = 0 trains exactly as a nil penalty.
type FeatureNormPenalty struct {
	Lambda  float64   // λ ≥ 0
	Targets []float64 // T_l ≥ 0, one per class (len = Net.Classes()); NaN: no target for class l
	// Loss, if not nil, receives Σ over the call's steps of λ·J_B (the
	// penalty's share of the objective), for logging. MeanLoss stays the
	// cross-entropy's.
	Loss *float64
}

// OptState is an optimiser's state between Train calls, flat in the net's
// layout: SGD's momentum buffer in M (nil when there is no momentum);
// Adam's first and second moments in M and V and its step count in Steps.
// nil slices start from zero.
type OptState struct {
	Steps int
	M, V  []float32
}

// PropFairLoss is the per-minibatch loss of PropFair (Zhang, Malekmohammadi,
// Chen & Yu, "Proportional Fairness in Federated Learning", TMLR 2023,
// arXiv:2202.01666), which minimises Σ_i −log(M − F_i) by local SGD on a
// transformed minibatch loss. With ℓ the minibatch's mean cross-entropy,
//
//	φ(ℓ) = −log(1 − ℓ/M)   if M − ℓ ≥ Thres
//	φ(ℓ) = ℓ/M             otherwise
//
// so the gradient is ∇ℓ/(M − ℓ) on the log branch and ∇ℓ/M on the linear
// one. This is the default of the authors' official code and the form the
// AAggFF authors' code copies (both with Thres = 0.2). Its slope jumps at
// the switch, from 1/Thres to 1/M. With Huber (the official code's huber
// flag) the linear branch is ℓ/Thres instead: the first-order extension of
// −log(M − ℓ) at ℓ = M − Thres, whose gradient is continuous there. When
// M = Thres the two forms agree.
type PropFairLoss struct {
	M     float64 // the baseline M > 0
	Thres float64 // ε ≥ 0, the switch to the linear branch; > 0 with Huber
	Huber bool    // the linear branch has slope 1/Thres (continuous), not 1/M
}

// Scale returns φ'(ℓ), the factor of the cross-entropy's gradient.
func (p PropFairLoss) Scale(l float64) float64 {
	if p.M-l < p.Thres {
		if p.Huber {
			return 1 / p.Thres
		}
		return 1 / p.M
	}
	return 1 / (p.M - l)
}

// Proximal returns FedProx's objective CE + μ/2·‖w − w⁰‖².
func Proximal(mu float64) Objective { return Objective{Prox: mu} }

// Scaffold returns SCAFFOLD's corrected objective: the gradient g + c − c_i
// (Karimireddy et al. 2020, Alg. 1 line 10: y_i ← y_i − η_l·(g_i(y_i) − c_i + c)).
// c and ci are the server's and the client's control variates.
func Scaffold(c, ci []float32) (Objective, error) {
	if len(c) != len(ci) {
		return Objective{}, fmt.Errorf("scaffold: len(c) = %d, len(c_i) = %d; want equal lengths: %w", len(c), len(ci), ErrInvalid)
	}
	v := make([]float32, len(c))
	for j := range v {
		v[j] = c[j] - ci[j]
	}
	return Objective{Linear: v}, nil
}

// FedDyn returns FedDyn's dynamic regulariser with coefficient α and the
// client's state prevGrad = ∇L_i(θ_i^{t−1}) (Acar et al. 2021, Alg. 1):
//
//	L_i(w) − ⟨∇L_i(θ_i^{t−1}), w⟩ + α/2·‖w − θ^{t−1}‖²
//
// The state update ∇L_i(θ_i^t) = ∇L_i(θ_i^{t−1}) − α(θ_i^t − θ^{t−1}) is the
// caller's.
func FedDyn(alpha float64, prevGrad []float32) Objective {
	v := make([]float32, len(prevGrad))
	for j, g := range prevGrad {
		v[j] = -g
	}
	return Objective{Prox: alpha, Linear: v}
}

// Aligned returns FedEBA+'s gradient alignment with weight α and the fair
// gradient g̃ computed by the server (specs/fedeba.md §1.5, Eq. (10)–(11)).
func Aligned(alpha float64, g []float32) Objective {
	return Objective{Align: alpha, AlignGrad: g}
}

// MOON returns MOON's objective CE + ν·ℓ_con with temperature τ and the
// embeddings of the global and previous local models.
func MOON(nu, tau float64, global, prev []float32) Objective {
	return Objective{Contrast: &Contrastive{Mu: nu, Tau: tau, Global: global, Prev: prev}}
}

// Validate checks o against the net and the number of training samples.
// Errors name the field and the fix and wrap ErrInvalid.
func (o *Objective) Validate(n *Net, samples int) error {
	vec := func(name string, v []float32, need bool) error {
		if v == nil && !need {
			return nil
		}
		if len(v) != n.size {
			return fmt.Errorf("objective.%s has length %d; net %s has %d parameters: %w", name, len(v), n.key, n.size, ErrInvalid)
		}
		return checkFinite32("objective."+name, v)
	}
	switch {
	case !(o.Prox >= 0) || !finite(o.Prox):
		return fmt.Errorf("objective.prox = %v; μ must be a finite number ≥ 0: %w", o.Prox, ErrInvalid)
	case !(o.Align >= 0 && o.Align <= 1):
		return fmt.Errorf("objective.align = %v; α must be in [0, 1]: %w", o.Align, ErrInvalid)
	case o.Anchor != nil && o.Prox == 0:
		return fmt.Errorf("objective.anchor is set but objective.prox = 0; set μ > 0 or drop the anchor: %w", ErrInvalid)
	case o.AlignGrad != nil && o.Align == 0:
		return fmt.Errorf("objective.align_grad is set but objective.align = 0; set α > 0 or drop g̃: %w", ErrInvalid)
	}
	if err := vec("anchor", o.Anchor, false); err != nil {
		return err
	}
	if err := vec("linear", o.Linear, false); err != nil {
		return err
	}
	if err := vec("align_grad", o.AlignGrad, o.Align > 0); err != nil {
		return err
	}
	if err := vec("after_step", o.AfterStep, false); err != nil {
		return err
	}
	if o.FirstStep != nil && len(o.FirstStep) != n.size {
		return fmt.Errorf("objective.first_step has length %d; net %s has %d parameters: %w", len(o.FirstStep), n.key, n.size, ErrInvalid)
	}
	if p := o.PropFair; p != nil {
		switch {
		case !(p.M > 0) || !finite(p.M):
			return fmt.Errorf("objective.propfair.M = %v; M must be a finite number > 0 (the paper tries 0.2, 2, 5): %w", p.M, ErrInvalid)
		case !(p.Thres >= 0) || !finite(p.Thres):
			return fmt.Errorf("objective.propfair.thres = %v; it must be a finite number ≥ 0 (0.2 in the reference code): %w", p.Thres, ErrInvalid)
		case p.Huber && p.Thres == 0:
			return fmt.Errorf("objective.propfair.thres = 0 with huber: the linear branch's slope 1/thres is infinite; set thres > 0 (0.2 in the reference code): %w", ErrInvalid)
		}
	}
	if c := o.Contrast; c != nil {
		l := n.Embedding()
		switch {
		case n.embed < 0:
			return fmt.Errorf("objective.contrast: net %s has no hidden embedding (its output layer reads the input); use a net with hidden layers: %w", n.key, ErrInvalid)
		case !(c.Mu >= 0) || !finite(c.Mu):
			return fmt.Errorf("objective.contrast.mu = %v; ν must be a finite number ≥ 0: %w", c.Mu, ErrInvalid)
		case !(c.Tau > 0) || !finite(c.Tau):
			return fmt.Errorf("objective.contrast.tau = %v; τ must be a finite number > 0: %w", c.Tau, ErrInvalid)
		case len(c.Global) != samples*l:
			return fmt.Errorf("objective.contrast.global has %d values; want len(examples.idx)·embedding = %d·%d: %w", len(c.Global), samples, l, ErrInvalid)
		case c.Prev != nil && len(c.Prev) != samples*l:
			return fmt.Errorf("objective.contrast.prev has %d values; want len(examples.idx)·embedding = %d·%d or nil: %w", len(c.Prev), samples, l, ErrInvalid)
		}
		if err := checkFinite32("objective.contrast.global", c.Global); err != nil {
			return err
		}
		if err := checkFinite32("objective.contrast.prev", c.Prev); err != nil {
			return err
		}
	}
	if p := o.FeatureNorm; p != nil {
		switch {
		case n.embed < 0:
			return fmt.Errorf("objective.feature_norm: net %s has no hidden embedding (its output layer reads the input); use a net with hidden layers: %w", n.key, ErrInvalid)
		case !(p.Lambda >= 0) || !finite(p.Lambda):
			return fmt.Errorf("objective.feature_norm.lambda = %v; λ must be a finite number ≥ 0: %w", p.Lambda, ErrInvalid)
		case len(p.Targets) != n.classes:
			return fmt.Errorf("objective.feature_norm.targets has %d values; want one per class, %d for net %s (NaN for a class without a target): %w",
				len(p.Targets), n.classes, n.key, ErrInvalid)
		}
		for l, t := range p.Targets {
			if !math.IsNaN(t) && !(t >= 0 && finite(t)) {
				return fmt.Errorf("objective.feature_norm.targets[%d] = %v; a target norm must be a finite number ≥ 0, or NaN for none: %w", l, t, ErrInvalid)
			}
		}
	}
	if s := o.State; s != nil {
		switch {
		case s.Steps < 0:
			return fmt.Errorf("objective.state.steps = %d; it must be ≥ 0: %w", s.Steps, ErrInvalid)
		case s.M != nil && len(s.M) != n.size, s.V != nil && len(s.V) != n.size:
			return fmt.Errorf("objective.state: M, V have lengths %d, %d; want %d (net %s) or nil: %w", len(s.M), len(s.V), n.size, n.key, ErrInvalid)
		}
	}
	return nil
}

func checkFinite32(name string, v []float32) error {
	for j, x := range v {
		if !finite(float64(x)) {
			return fmt.Errorf("%s[%d] = %v; want finite values: %w", name, j, x, ErrInvalid)
		}
	}
	return nil
}

// objectiveValue returns the parameter-space terms of o at w (float64,
// summed in index order, over trainable entries only):
//
//	μ/2·‖w − a‖² + ⟨v, w⟩ + α·⟨g̃, w⟩
//
// with a = w0 when o.Anchor is nil. The tests compare its central
// differences with the gradient Train applies.
func objectiveValue[T float](n *Net, o *Objective, w []T, w0 []float32) float64 {
	anchor := o.Anchor
	if anchor == nil {
		anchor = w0
	}
	var s float64
	for _, p := range n.params {
		if !p.Trainable {
			continue
		}
		for j := p.Offset; j < p.Offset+p.Len; j++ {
			x := float64(w[j])
			if o.Prox != 0 {
				d := x - float64(anchor[j])
				s += o.Prox / 2 * d * d
			}
			if o.Linear != nil {
				s += float64(o.Linear[j]) * x
			}
			if o.Align != 0 {
				s += o.Align * float64(o.AlignGrad[j]) * x
			}
		}
	}
	return s
}
