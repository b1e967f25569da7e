package algorithm

import (
	"context"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// FedDC is federated learning with local drift decoupling and correction
// (Gao, Fu, Li, Chen, Xu & Xu, CVPR 2022, arXiv:2203.11751), with the local
// objective as Chen & Vikalo write it (RLU, ICML 2024, Table 1 and App.
// A.9, Eq. (81)–(82); specs/rlu.md §1.7):
//
//	CE + λ/2·‖θ − (θ^t − d_k)‖² + (1/(η·m))·⟨θ, Δθ_k^{prev} − Δθ^{prev}⟩
//
// Client k keeps its local drift d_k ("drift") and its last local update
// Δθ_k^{prev} = θ_k − θ^s of the round s it last trained in ("last"), both 0
// before its first round. Δθ^{prev} is the server's mean local update of the
// previous round,
//
//	Δθ^{prev} = Σ_{i∈S_{t−1}} ω_i·(θ_i − θ^{t−1})                 ("mean_update", 0 before round 2)
//
// the rule's weights ω_i applied to the clients' local updates without
// their drifts (η_g = 1), which the server keeps and sends. It is not the
// change of the global model θ^t − θ^{t−1}: that also holds the drifts the
// server adds, and a correction against it averages to −d̄/(η·m) over the
// clients, pushing every client along the drift the server adds again, so
// the drift doubles every round. η·m is the round's local learning rate
// times the client's local steps (see lr_sum below). After training,
// d_k ← d_k + (θ_k − θ^t) (Eq. (82)), and the client uploads its
// drift-corrected model θ_k + d_k as Δ_k = θ_k + d_k − θ^t, which the server
// averages with the point's rule (θ^{t+1} = mean of θ_i + h_i in the paper's
// Algorithm 1), and its local update θ_k − θ^t ("local_update") for the
// mean.
//
// DriftMean "all" is the official code's server (gaoliang13/FedDC,
// utils_methods_FedDC.py: avg_mdl_param_sel + np.mean(parameter_drifts)):
// clients upload θ_k − θ^t, and the server adds the mean drift over all N
// clients, trained this round or not, which it keeps as Σ_k d_k
// ("drift_sum"):
//
//	θ^{t+1} = θ^t + η_g Σ_k ω_k (θ_k − θ^t) + (1/N)·Σ_{k=1..N} d_k
//
// Correction "control_variate" is the official code's gradient correction
// (train_FedDC: state_gadient_diffs), SCAFFOLD's recursion in place of the
// last updates: client k keeps c_k ("c_i"), the server keeps and sends c
// ("c"), both 0 at first; the client trains with ⟨θ, c − c_k⟩ in place of
// the last-update term, then keeps
//
//	c_k⁺ = c_k − c + (θ^t − θ_k)/(η·m)
//
// and uploads Δc_k = c_k⁺ − c_k ("delta_c"); the server adds
// (1/N)·Σ_{k∈S} Δc_k to c. The official code divides by the mean client's
// number of minibatches and the round-0 learning rate; this divides by the
// client's own η·m, as SCAFFOLD's option II does.
//
// SizeScaled is the official code's per-client weighting by w_k = n_k·N/Σn
// (Local.SizeRatio; weight_list): λ/w_k for the proximal term, and with
// "control_variate" c/w_k in the correction and w_k·Δc_k uploaded. Not built:
// the official code's gradient clipping (clip_grad_norm_, max norm 10).
//
// # Momentum
//
// The correction divides a local update by η·m, the distance plain SGD
// moves the weights along a constant unit gradient in m steps. Heavy-ball
// momentum ρ moves them η·a_m (a_m FedNova's effective step count, about
// m/(1 − ρ)), so with η·m the correction comes out a_m/m times too large
// and, passing through the momentum buffer, overshoots: the clients'
// deviations grow by |1 − a_m/m| > 1 a round and training diverges. LRSum
// "momentum" (OURS, the default) divides by η·Σ_s γ_s (trainer
// Hyper.MomentumSteps: a_m for heavy-ball, Nesterov's gains otherwise) when
// train.momentum > 0, and by η·m bit for bit without it; "plain" is η·m as
// the paper writes it. A correction in the gradient is not a multiple of
// Adam's steps, so FedDC refuses Adam (Check). η is the round's rate
// before any schedule within the round.
//
// Drifts, updates and corrections cover the trainable parameters, not
// BatchNorm's running statistics (the official code flattens
// model.parameters()).
type FedDC struct {
	Base
	Lambda     float64 `json:"lambda"`
	DriftMean  string  `json:"drift_mean"`
	Correction string  `json:"correction"`
	LRSum      string  `json:"lr_sum"`
	SizeScaled bool    `json:"size_scaled"`
}

// FedDC's server variants.
const (
	DriftSelected = "selected" // the paper: the average of the uploaded θ_k + d_k
	DriftAll      = "all"      // the official code: + the mean drift of every client
)

// FedDC's gradient corrections.
const (
	FedDCUpdate         = "update"          // the paper: (Δθ_k^{prev} − Δθ^{prev})/(η·m)
	FedDCControlVariate = "control_variate" // the official code: c − c_k, SCAFFOLD's recursion
)

// NewFedDC builds FedDC from {lambda, drift_mean, correction, lr_sum,
// size_scaled}. λ defaults to 0.01, the official example's alpha_coef
// (example_code_cifar10.py).
func NewFedDC(opts fl.Options) (Algorithm, error) {
	a := FedDC{Lambda: 0.01, DriftMean: DriftSelected, Correction: FedDCUpdate, LRSum: LRSumMomentum}
	if err := opts.Decode("algorithm (feddc)", &a); err != nil {
		return nil, err
	}
	if err := finite("algorithm.lambda", a.Lambda, 0, false); err != nil {
		return nil, err
	}
	if a.DriftMean != DriftSelected && a.DriftMean != DriftAll {
		return nil, fmt.Errorf("algorithm.drift_mean = %q is unknown; use %s (the paper) or %s (the official code): %w", a.DriftMean, DriftSelected, DriftAll, fl.ErrInvalid)
	}
	if a.Correction != FedDCUpdate && a.Correction != FedDCControlVariate {
		return nil, fmt.Errorf("algorithm.correction = %q is unknown; use %s (the paper's last-update difference) or %s (the official code's control variates): %w", a.Correction, FedDCUpdate, FedDCControlVariate, fl.ErrInvalid)
	}
	if err := checkLRSum(a.LRSum); err != nil {
		return nil, err
	}
	return a, nil
}

// Names of FedDC's vectors.
const (
	feddcDrift    = "drift"        // client: d_k
	feddcLast     = "last"         // client: Δθ_k^{prev} (update)
	feddcCi       = "c_i"          // client: c_k (control_variate)
	feddcMean     = "mean_update"  // server, sent: Δθ^{prev} (update)
	feddcC        = "c"            // server, sent: c (control_variate)
	feddcDriftSum = "drift_sum"    // server: Σ_k d_k (all)
	feddcStep     = "local_update" // upload: θ_k − θ^t (update, selected)
	feddcDC       = "delta_c"      // upload: Δc_k, scaled by w_k with size_scaled (control_variate)
)

// Check implements Algorithm: the correction needs SGD.
func (FedDC) Check(_ trainer.Spec, hp trainer.Hyper) error {
	return checkGradientCorrection("feddc", hp, "")
}

func (a FedDC) Init(numParams int) (fl.State, error) {
	var s fl.State
	s.Set(a.sent(), make([]float32, numParams))
	if a.DriftMean == DriftAll {
		s.Set(feddcDriftSum, make([]float32, numParams))
	}
	return s, nil
}

// sent names the server vector the clients receive.
func (a FedDC) sent() string {
	if a.Correction == FedDCControlVariate {
		return feddcC
	}
	return feddcMean
}

func (a FedDC) Sends() []string { return []string{a.sent()} }

// lrSteps returns η·m, or its momentum form (see FedDC).
func (a FedDC) lrSteps(l Local) float64 {
	hp, m := l.Hyper(), l.Steps()
	if a.LRSum == LRSumMomentum && hp.Optimizer == trainer.OptimizerSGD && hp.Momentum > 0 {
		return hp.LR * hp.MomentumSteps(m)
	}
	return hp.LR * float64(m)
}

// Train implements Algorithm.
func (a FedDC) Train(_ context.Context, c Client, obj trainer.Objective) (Upload, error) {
	n := len(c.Global)
	drift, err := clientVector(c.State, feddcDrift, n)
	if err != nil {
		return Upload{}, err
	}
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	step := Delta(w, c.Global)
	tr := trainable(c.Local.Net(), n)
	next, local := make([]float32, n), make([]float32, n)
	for j, ok := range tr {
		if ok {
			next[j], local[j] = drift[j]+step[j], step[j]
		}
	}
	up := Upload{Weights: w, Delta: step, Train: res}
	if a.DriftMean == DriftSelected {
		up.Delta = make([]float32, n)
		for j := range up.Delta {
			up.Delta[j] = step[j] + next[j]
		}
	}
	up.State.Set(feddcDrift, next)
	if a.Correction != FedDCControlVariate {
		up.State.Set(feddcLast, local)
		if a.DriftMean == DriftSelected {
			up.Vectors.Set(feddcStep, local)
		}
		return up, nil
	}
	cs, ci, err := a.variates(c)
	if err != nil {
		return Upload{}, err
	}
	eta, wk := a.lrSteps(c.Local), 1.0
	if a.SizeScaled {
		wk = c.Local.SizeRatio()
	}
	cNew, dc := make([]float32, n), make([]float32, n)
	for j, ok := range tr {
		if ok {
			v := float64(ci[j]) - float64(cs[j])/wk - float64(step[j])/eta
			cNew[j] = float32(v)
			dc[j] = float32((v - float64(ci[j])) * wk)
		}
	}
	up.State.Set(feddcCi, cNew)
	up.Vectors.Set(feddcDC, dc)
	return up, nil
}

// variates returns the server's c and the client's c_k (control_variate).
func (a FedDC) variates(c Client) (cs, ci []float32, err error) {
	n := len(c.Global)
	if cs, err = c.Server.Vector(feddcC, n); err != nil {
		return nil, nil, err
	}
	if ci, err = clientVector(c.State, feddcCi, n); err != nil {
		return nil, nil, err
	}
	return cs, ci, nil
}

// objective returns client c's local objective, λ_k/2·‖θ − (θ^t − d_k)‖²
// + ⟨v, θ⟩ with v = (Δθ_k^{prev} − Δθ^{prev})/(η·m) or c/w_k − c_k, and its
// drift d_k.
// Objective implements Algorithm: FedDC's penalty (λ/2)·‖θ_k + d_k − θ^t‖²
// with its gradient correction, as the point's correction says.
func (a FedDC) Objective(c Client) (trainer.Objective, error) {
	obj, _, err := a.objective(c)
	return obj, err
}

func (a FedDC) objective(c Client) (trainer.Objective, []float32, error) {
	n := len(c.Global)
	drift, err := clientVector(c.State, feddcDrift, n)
	if err != nil {
		return trainer.Objective{}, nil, err
	}
	lambda, wk := a.Lambda, 1.0
	if a.SizeScaled {
		wk = c.Local.SizeRatio()
		lambda /= wk
	}
	lin := make([]float32, n)
	if a.Correction == FedDCControlVariate {
		cs, ci, err := a.variates(c)
		if err != nil {
			return trainer.Objective{}, nil, err
		}
		for j := range lin {
			lin[j] = float32(float64(cs[j])/wk - float64(ci[j]))
		}
	} else {
		g, err := c.Server.Vector(feddcMean, n)
		if err != nil {
			return trainer.Objective{}, nil, err
		}
		last, err := clientVector(c.State, feddcLast, n)
		if err != nil {
			return trainer.Objective{}, nil, err
		}
		eta := a.lrSteps(c.Local)
		for j := range lin {
			lin[j] = float32((float64(last[j]) - float64(g[j])) / eta)
		}
	}
	anchor := make([]float32, n)
	for j := range anchor {
		anchor[j] = c.Global[j] - drift[j]
	}
	obj := trainer.Objective{Prox: lambda, Anchor: anchor, Linear: lin}
	if lambda == 0 {
		obj.Anchor = nil
	}
	return obj, drift, nil
}

// Begin implements Algorithm.
func (a FedDC) Begin(r Server) (Aggregation, error) {
	agg, err := r.Rule.Begin(r.Global, r.Selection, r.Clients)
	if err != nil {
		return nil, err
	}
	size := len(r.Global)
	fa := &feddcAgg{alg: a, rule: agg, n: r.N, trainable: trainable(r.Net, size)}
	if a.Correction != FedDCControlVariate {
		// The mean local update: the rule's weights on the updates, from 0.
		if fa.mean, err = r.Rule.Begin(make([]float32, size), r.Selection, r.Clients); err != nil {
			return nil, err
		}
		fa.etaG = 1.0
		if s, ok := r.Rule.(interface{ ServerLR() float64 }); ok {
			fa.etaG = s.ServerLR()
		}
	} else {
		if fa.c, err = r.State.Vector(feddcC, size); err != nil {
			return nil, err
		}
		fa.dcSum = make([]float64, size)
	}
	if a.DriftMean == DriftAll {
		sum, err := r.State.Vector(feddcDriftSum, size)
		if err != nil {
			return nil, err
		}
		fa.driftSum = make([]float64, size)
		for j, v := range sum {
			if fa.trainable[j] {
				fa.driftSum[j] = float64(v)
			}
		}
	}
	return fa, nil
}

type feddcAgg struct {
	alg       FedDC
	rule      fl.Aggregation
	n         int
	trainable []bool
	mean      fl.Aggregation // update: Σ ω_k (θ_k − θ^t)·η_g
	etaG      float64        // the rule's η_g, divided out of mean
	c         []float32      // control_variate: c after round t−1
	dcSum     []float64      // control_variate: Σ Δc_k so far
	driftSum  []float64      // Σ_k d_k over all clients (DriftAll), updated as uploads come
}

func (a *feddcAgg) Add(client int, delta []float32, up fl.State) error {
	if err := a.rule.Add(client, delta); err != nil {
		return err
	}
	if a.mean != nil {
		step := delta // "all" uploads θ_k − θ^t itself
		if a.alg.DriftMean == DriftSelected {
			var err error
			if step, err = up.Vector(feddcStep, len(delta)); err != nil {
				return fmt.Errorf("feddc: client %d: %w", client, err)
			}
		}
		if err := a.mean.Add(client, a.masked(step)); err != nil {
			return err
		}
	}
	if a.dcSum != nil {
		dc, err := up.Vector(feddcDC, len(a.dcSum))
		if err != nil {
			return fmt.Errorf("feddc: client %d: %w", client, err)
		}
		for j, v := range dc {
			a.dcSum[j] += float64(v)
		}
	}
	if a.driftSum != nil {
		for j, v := range delta { // d_k grows by this round's θ_k − θ^t
			if a.trainable[j] {
				a.driftSum[j] += float64(v)
			}
		}
	}
	return nil
}

// masked returns v with its buffer entries zeroed (a copy when it has any).
func (a *feddcAgg) masked(v []float32) []float32 {
	var out []float32
	for j, ok := range a.trainable {
		if !ok && v[j] != 0 {
			if out == nil {
				out = slices.Clone(v)
			}
			out[j] = 0
		}
	}
	if out == nil {
		return v
	}
	return out
}

func (a *feddcAgg) Finish(dst []float32) (fl.State, error) {
	if err := a.rule.Finish(dst); err != nil {
		return fl.State{}, err
	}
	var s fl.State
	if a.driftSum != nil {
		sum := make([]float32, len(dst))
		for j := range dst {
			sum[j] = float32(a.driftSum[j])
			v := float32(float64(dst[j]) + a.driftSum[j]/float64(a.n))
			if v != v || v-v != 0 {
				return fl.State{}, fmt.Errorf("feddc: parameter %d became %v: %w", j, v, fl.ErrDiverged)
			}
			dst[j] = v
		}
		s.Set(feddcDriftSum, sum)
	}
	if a.mean != nil {
		g := make([]float32, len(dst))
		if err := a.mean.Finish(g); err != nil {
			return fl.State{}, err
		}
		if a.etaG != 1 {
			for j := range g {
				g[j] = float32(float64(g[j]) / a.etaG)
			}
		}
		s.Set(feddcMean, g)
		return s, nil
	}
	c := make([]float32, len(a.c))
	for j := range c {
		c[j] = float32(float64(a.c[j]) + a.dcSum[j]/float64(a.n))
	}
	s.Set(feddcC, c)
	return s, nil
}
