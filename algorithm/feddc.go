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
// Δθ_k^{prev} = θ_k − θ^t of the round it last trained in ("last"), both 0
// before its first round; the server keeps its last global update
// Δθ^{prev} = θ^t − θ^{t−1} ("global_update", 0 before round 2) and sends it.
// η·m is the round's local learning rate times the client's local steps.
// After training, d_k ← d_k + (θ_k − θ^t) (Eq. (82)), and the client uploads
// its drift-corrected model θ_k + d_k as Δ_k = θ_k + d_k − θ^t, which the
// server averages with the point's rule (θ^{t+1} = mean of θ_i + h_i in
// the paper's Algorithm 1).
//
// DriftMean "all" is the official code's server (gaoliang13/FedDC,
// utils_methods_FedDC.py: avg_mdl_param_sel + np.mean(parameter_drifts)):
// clients upload θ_k − θ^t, and the server adds the mean drift over all N
// clients, trained this round or not, which it keeps as Σ_k d_k
// ("drift_sum"):
//
//	θ^{t+1} = θ^t + η_g Σ_k ω_k (θ_k − θ^t) + (1/N)·Σ_{k=1..N} d_k
//
// Drifts and updates cover the trainable parameters, not BatchNorm's
// running statistics (the official code flattens model.parameters()). The
// official code also scales λ per client by its size (α/weight_list)
// and corrects gradients with SCAFFOLD-style control variates instead of
// the last updates; neither is implemented here (docs/architecture.md lists
// them).
type FedDC struct {
	Lambda    float64 `json:"lambda"`
	DriftMean string  `json:"drift_mean"`
}

// FedDC's server variants.
const (
	DriftSelected = "selected" // the paper: the average of the uploaded θ_k + d_k
	DriftAll      = "all"      // the official code: + the mean drift of every client
)

// NewFedDC builds FedDC from {lambda, drift_mean}. λ defaults to 0.01, the
// official example's alpha_coef (example_code_cifar10.py).
func NewFedDC(opts fl.Options) (Algorithm, error) {
	a := FedDC{Lambda: 0.01, DriftMean: DriftSelected}
	if err := opts.Decode("algorithm (feddc)", &a); err != nil {
		return nil, err
	}
	if err := finite("algorithm.lambda", a.Lambda, 0, false); err != nil {
		return nil, err
	}
	if a.DriftMean != DriftSelected && a.DriftMean != DriftAll {
		return nil, fmt.Errorf("algorithm.drift_mean = %q is unknown; use %s (the paper) or %s (the official code): %w", a.DriftMean, DriftSelected, DriftAll, fl.ErrInvalid)
	}
	return a, nil
}

const (
	feddcDrift    = "drift"
	feddcLast     = "last"
	feddcGlobal   = "global_update"
	feddcDriftSum = "drift_sum"
)

func (FedDC) Check(trainer.Spec, trainer.Hyper) error { return nil }

func (a FedDC) Init(numParams int) (fl.State, error) {
	var s fl.State
	s.Set(feddcGlobal, make([]float32, numParams))
	if a.DriftMean == DriftAll {
		s.Set(feddcDriftSum, make([]float32, numParams))
	}
	return s, nil
}

func (FedDC) Sends() []string { return []string{feddcGlobal} }

// Train implements Algorithm.
func (a FedDC) Train(_ context.Context, c Client) (Upload, error) {
	n := len(c.Global)
	obj, drift, err := a.objective(c)
	if err != nil {
		return Upload{}, err
	}
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	step := Delta(w, c.Global)
	next, nextLast := make([]float32, n), make([]float32, n)
	for j, tr := range trainable(c.Local.Net(), n) {
		if tr {
			next[j], nextLast[j] = drift[j]+step[j], step[j]
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
	up.State.Set(feddcLast, nextLast)
	return up, nil
}

// objective returns client c's local objective, λ/2·‖θ − (θ^t − d_k)‖²
// + ⟨(Δθ_k^{prev} − Δθ^{prev})/(η·K), θ⟩, and its drift d_k.
func (a FedDC) objective(c Client) (trainer.Objective, []float32, error) {
	n := len(c.Global)
	g, err := c.Server.Vector(feddcGlobal, n)
	if err != nil {
		return trainer.Objective{}, nil, err
	}
	drift, err := clientVector(c.State, feddcDrift, n)
	if err != nil {
		return trainer.Objective{}, nil, err
	}
	last, err := clientVector(c.State, feddcLast, n)
	if err != nil {
		return trainer.Objective{}, nil, err
	}
	eta := c.Local.Hyper().LR * float64(c.Local.Steps())
	anchor, lin := make([]float32, n), make([]float32, n)
	for j := range anchor {
		anchor[j] = c.Global[j] - drift[j]
		lin[j] = float32((float64(last[j]) - float64(g[j])) / eta)
	}
	obj := trainer.Objective{Prox: a.Lambda, Anchor: anchor, Linear: lin}
	if a.Lambda == 0 {
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
	fa := &feddcAgg{rule: agg, global: r.Global, n: r.N, trainable: trainable(r.Net, len(r.Global))}
	if a.DriftMean == DriftAll {
		sum, err := r.State.Vector(feddcDriftSum, len(r.Global))
		if err != nil {
			return nil, err
		}
		fa.driftSum = make([]float64, len(sum))
		for j, v := range sum {
			if fa.trainable[j] {
				fa.driftSum[j] = float64(v)
			}
		}
	}
	return fa, nil
}

type feddcAgg struct {
	rule      fl.Aggregation
	global    []float32
	n         int
	driftSum  []float64 // Σ_k d_k over all clients (DriftAll), updated as uploads come
	trainable []bool
}

func (a *feddcAgg) Add(client int, delta []float32, _ fl.State) error {
	if err := a.rule.Add(client, delta); err != nil {
		return err
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
	g := make([]float32, len(dst))
	for j := range g {
		g[j] = dst[j] - a.global[j]
	}
	s.Set(feddcGlobal, g)
	return s, nil
}
