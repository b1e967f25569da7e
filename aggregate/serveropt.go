package aggregate

import (
	"fmt"
	"math"

	"github.com/flsweep/flsweep/fl"
)

// Server optimisers (fl.ServerOptimizer): the server_optimizer block of a
// spec. Each takes the algorithm's proposed θ^{t+1} − θ^t as its
// pseudo-gradient Δ_t, as Reddi et al. (ICLR 2021, arXiv:2003.00295,
// Algorithm 2) take the mean client update, so it composes with every
// algorithm: FedProx's, SCAFFOLD's or FedDyn's whole server step is the
// Δ_t it is given. Arithmetic is in float64 per entry; the moments are
// stored as float32, as PyTorch's optimisers keep them.

// SGD is the server's SGD with heavy-ball momentum μ (FedAvgM: Hsu, Qi &
// Brown 2019, arXiv:1909.06335; Reddi et al. §5):
//
//	m_t = μ·m_{t−1} + Δ_t,  θ^{t+1} = θ^t + η·m_t
//
// with m_{−1} = 0. With μ = 0 it keeps no memory, and with η = 1 as well it
// takes the proposed model itself, bit for bit.
type SGD struct {
	LR       float64 `json:"lr"`       // η > 0
	Momentum float64 `json:"momentum"` // μ ∈ [0, 1)
}

// Adaptive is FedAdagrad, FedYogi or FedAdam (Reddi et al., Algorithm 2):
//
//	m_t = β₁·m_{t−1} + (1 − β₁)·Δ_t
//	v_t = v_{t−1} + Δ_t²                              (FedAdagrad)
//	v_t = v_{t−1} − (1 − β₂)·Δ_t²·sign(v_{t−1} − Δ_t²)  (FedYogi)
//	v_t = β₂·v_{t−1} + (1 − β₂)·Δ_t²                    (FedAdam)
//	θ^{t+1} = θ^t + η·m_t / (√v_t + τ)
//
// entrywise, from m_{−1} = 0 and v_{−1} = τ² (the algorithm asks v_{−1} ≥ τ²;
// we take the bound). No bias correction: the paper's algorithm has none.
type Adaptive struct {
	Rule  string  `json:"rule"`            // adagrad, yogi or adam
	LR    float64 `json:"lr"`              // η > 0
	Beta1 float64 `json:"beta1"`           // β₁ ∈ [0, 1)
	Beta2 float64 `json:"beta2,omitempty"` // β₂ ∈ [0, 1); not used by adagrad
	Tau   float64 `json:"tau"`             // τ > 0, the degree of adaptivity
}

// The adaptive rules.
const (
	RuleAdagrad = "adagrad"
	RuleYogi    = "yogi"
	RuleAdam    = "adam"
)

// The paper's settings (Reddi et al. §5 and App. D): β₁ = 0.9 and β₂ = 0.99
// in every experiment, τ tuned over {10⁻¹, …, 10⁻⁵} with 10⁻³ the most
// common best; η tuned per task, so it has no default; FedAvgM's μ = 0.9.
const (
	defaultBeta1    = 0.9
	defaultBeta2    = 0.99
	defaultTau      = 1e-3
	defaultMomentum = 0.9
)

var (
	_ fl.ServerOptimizer = SGD{}
	_ fl.ServerOptimizer = Adaptive{}
)

// NewSGD builds the server's SGD from {lr, momentum}: lr defaults to 1 and
// momentum to 0, which is the algorithm's own step.
func NewSGD(opts fl.Options) (fl.ServerOptimizer, error) {
	var o struct {
		LR       *float64 `json:"lr"`
		Momentum float64  `json:"momentum"`
	}
	if err := opts.Decode("server_optimizer (sgd)", &o); err != nil {
		return nil, err
	}
	s := SGD{LR: 1, Momentum: o.Momentum}
	if o.LR != nil {
		s.LR = *o.LR
	}
	return s, s.check("sgd")
}

// NewFedAvgM builds FedAvgM, the server's SGD with momentum: {lr (required),
// momentum (0.9)}.
func NewFedAvgM(opts fl.Options) (fl.ServerOptimizer, error) {
	var o struct {
		LR       *float64 `json:"lr"`
		Momentum *float64 `json:"momentum"`
	}
	if err := opts.Decode("server_optimizer (fedavgm)", &o); err != nil {
		return nil, err
	}
	if o.LR == nil {
		return nil, missingLR("fedavgm")
	}
	s := SGD{LR: *o.LR, Momentum: defaultMomentum}
	if o.Momentum != nil {
		s.Momentum = *o.Momentum
	}
	return s, s.check("fedavgm")
}

func (s SGD) check(name string) error {
	if !(s.LR > 0) || math.IsInf(s.LR, 0) {
		return fmt.Errorf("server_optimizer.lr = %v for %s; the server learning rate η must be a positive number: %w", s.LR, name, fl.ErrInvalid)
	}
	if !(s.Momentum >= 0 && s.Momentum < 1) {
		return fmt.Errorf("server_optimizer.momentum = %v for %s; μ must be in [0, 1) (FedAvgM uses 0.9): %w", s.Momentum, name, fl.ErrInvalid)
	}
	return nil
}

func missingLR(name string) error {
	return fmt.Errorf("server_optimizer.lr is required for %s: Reddi et al. tune the server learning rate η per task over 10^-3 … 10^1 (write e.g. {name: %s, lr: 0.01}): %w", name, name, fl.ErrInvalid)
}

// NewFedAdagrad, NewFedYogi and NewFedAdam build the adaptive optimisers
// from {lr (required), beta1 (0.9), beta2 (0.99; not adagrad's), tau (1e-3)}.
func NewFedAdagrad(opts fl.Options) (fl.ServerOptimizer, error) {
	return newAdaptive(RuleAdagrad, opts)
}
func NewFedYogi(opts fl.Options) (fl.ServerOptimizer, error) { return newAdaptive(RuleYogi, opts) }
func NewFedAdam(opts fl.Options) (fl.ServerOptimizer, error) { return newAdaptive(RuleAdam, opts) }

func newAdaptive(rule string, opts fl.Options) (fl.ServerOptimizer, error) {
	name := "fed" + rule
	var o struct {
		LR    *float64 `json:"lr"`
		Beta1 *float64 `json:"beta1"`
		Beta2 *float64 `json:"beta2"`
		Tau   *float64 `json:"tau"`
	}
	if err := opts.Decode("server_optimizer ("+name+")", &o); err != nil {
		return nil, err
	}
	if o.LR == nil {
		return nil, missingLR(name)
	}
	a := Adaptive{Rule: rule, LR: *o.LR, Beta1: defaultBeta1, Beta2: defaultBeta2, Tau: defaultTau}
	if rule == RuleAdagrad {
		if o.Beta2 != nil {
			return nil, fmt.Errorf("server_optimizer.beta2 is not an option of fedadagrad, whose v_t sums every Δ_t² (remove it, or use fedadam): %w", fl.ErrInvalid)
		}
		a.Beta2 = 0
	}
	for _, f := range []struct {
		v   **float64
		dst *float64
	}{{&o.Beta1, &a.Beta1}, {&o.Beta2, &a.Beta2}, {&o.Tau, &a.Tau}} {
		if *f.v != nil {
			*f.dst = **f.v
		}
	}
	if !(a.LR > 0) || math.IsInf(a.LR, 0) {
		return nil, fmt.Errorf("server_optimizer.lr = %v for %s; the server learning rate η must be a positive number: %w", a.LR, name, fl.ErrInvalid)
	}
	if !(a.Beta1 >= 0 && a.Beta1 < 1) {
		return nil, fmt.Errorf("server_optimizer.beta1 = %v for %s; β₁ must be in [0, 1) (the paper's is 0.9): %w", a.Beta1, name, fl.ErrInvalid)
	}
	if rule != RuleAdagrad && !(a.Beta2 >= 0 && a.Beta2 < 1) {
		return nil, fmt.Errorf("server_optimizer.beta2 = %v for %s; β₂ must be in [0, 1) (the paper's is 0.99): %w", a.Beta2, name, fl.ErrInvalid)
	}
	if !(a.Tau > 0) || math.IsInf(a.Tau, 0) {
		return nil, fmt.Errorf("server_optimizer.tau = %v for %s; τ must be a positive number (the paper tunes it over 1e-1 … 1e-5): %w", a.Tau, name, fl.ErrInvalid)
	}
	return a, nil
}

// identity reports whether s takes the proposed model as it is.
func (s SGD) identity() bool { return s.LR == 1 && s.Momentum == 0 }

// Init implements fl.ServerOptimizer: m_{−1} = 0 when there is momentum.
func (s SGD) Init(n int) (fl.State, error) {
	var st fl.State
	if s.Momentum > 0 {
		st.Set("m", make([]float32, n))
	}
	return st, nil
}

// Step implements fl.ServerOptimizer.
func (s SGD) Step(in fl.OptimizerStep) (fl.State, error) {
	if err := checkStep(in); err != nil {
		return fl.State{}, err
	}
	if s.identity() {
		copy(in.Dst, in.Proposed)
		return fl.State{}, nil
	}
	var m []float32
	if s.Momentum > 0 {
		var err error
		if m, err = in.State.Vector("m", len(in.Global)); err != nil {
			return fl.State{}, fmt.Errorf("server optimizer state: %w", err)
		}
	}
	next := make([]float32, len(m))
	for j, g := range in.Global {
		p := in.Proposed[j]
		if in.Trainable != nil && !in.Trainable[j] {
			in.Dst[j] = p
			if m != nil {
				next[j] = m[j]
			}
			continue
		}
		d := float64(p) - float64(g)
		if m != nil {
			mj := s.Momentum*float64(m[j]) + d
			next[j] = float32(mj)
			d = mj
		}
		in.Dst[j] = float32(float64(g) + s.LR*d)
	}
	var st fl.State
	if m != nil {
		st.Set("m", next)
		if err := finite("moment", next); err != nil {
			return st, err
		}
	}
	return st, finiteModel(in.Dst)
}

// Init implements fl.ServerOptimizer: m_{−1} = 0, v_{−1} = τ².
func (a Adaptive) Init(n int) (fl.State, error) {
	v := make([]float32, n)
	t2 := float32(a.Tau * a.Tau)
	for j := range v {
		v[j] = t2
	}
	var st fl.State
	st.Set("m", make([]float32, n))
	st.Set("v", v)
	return st, nil
}

// Step implements fl.ServerOptimizer.
func (a Adaptive) Step(in fl.OptimizerStep) (fl.State, error) {
	if err := checkStep(in); err != nil {
		return fl.State{}, err
	}
	n := len(in.Global)
	m, err := in.State.Vector("m", n)
	if err != nil {
		return fl.State{}, fmt.Errorf("server optimizer state: %w", err)
	}
	v, err := in.State.Vector("v", n)
	if err != nil {
		return fl.State{}, fmt.Errorf("server optimizer state: %w", err)
	}
	nm, nv := make([]float32, n), make([]float32, n)
	for j, g := range in.Global {
		p := in.Proposed[j]
		if in.Trainable != nil && !in.Trainable[j] {
			in.Dst[j], nm[j], nv[j] = p, m[j], v[j]
			continue
		}
		d := float64(p) - float64(g)
		d2 := d * d
		mj := a.Beta1*float64(m[j]) + (1-a.Beta1)*d
		vj := float64(v[j])
		switch a.Rule {
		case RuleAdagrad:
			vj += d2
		case RuleYogi:
			vj -= (1 - a.Beta2) * d2 * sign(vj-d2)
		default:
			vj = a.Beta2*vj + (1-a.Beta2)*d2
		}
		nm[j], nv[j] = float32(mj), float32(vj)
		in.Dst[j] = float32(float64(g) + a.LR*mj/(math.Sqrt(vj)+a.Tau))
	}
	var st fl.State
	st.Set("m", nm)
	st.Set("v", nv)
	if err := finite("moment", nm, nv); err != nil {
		return st, err
	}
	return st, finiteModel(in.Dst)
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func checkStep(in fl.OptimizerStep) error {
	n := len(in.Global)
	if len(in.Proposed) != n || len(in.Dst) != n || (in.Trainable != nil && len(in.Trainable) != n) {
		return fmt.Errorf("server optimizer: θ^t has %d values, the proposed model %d, dst %d, the trainable mask %d: %w",
			n, len(in.Proposed), len(in.Dst), len(in.Trainable), fl.ErrInvalid)
	}
	return nil
}

func finiteModel(w []float32) error { return finite("parameter", w) }

// finite reports the first entry of vs that is NaN or ±Inf as a divergence.
func finite(what string, vs ...[]float32) error {
	for _, w := range vs {
		for j, x := range w {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("server optimizer: %s %d became %v: %w", what, j, x, fl.ErrDiverged)
			}
		}
	}
	return nil
}
