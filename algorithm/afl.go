package algorithm

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// AFL is agnostic federated learning (Mohri, Sivek & Suresh, ICML 2019,
// arXiv:1902.00146), which minimises the loss of the worst mixture of the N
// clients' distributions,
//
//	min_w max_{λ∈Δ_N} Σ_k λ_k·F_k(w)
//
// by stochastic gradient descent on w and projected gradient ascent on λ
// (the paper's Stochastic-AFL, as easyFL's afl.py and FedEBA+, Wang et al.,
// arXiv 2301.12407, §2, implement it). Clients run plain local SGD from θ^t,
// as FedAvg's, and the engine measures F_k(θ^t), each client's loss on its
// full training set at the global model (LossUser). With g_k = (θ^t − θ_k)/η_L
// the server steps
//
//	θ^{t+1} = θ^t − η_L·Σ_k λ̃_k·g_k = θ^t + Σ_k λ̃_k·Δ_k
//	λ ← Proj_{Δ_N}(λ + γ_λ·F(θ^t))
//
// with λ starting uniform (1/N), the projection the Euclidean one onto the
// simplex (ProjectSimplex), and the step the point's rule with λ̃_k in place
// of the sampler's ω_k (η_g = the rule's server_lr, 1 in the paper). λ̃ is
// reported (agg_weight). The model AFL reports (and the engine evaluates) is
// the running average of the iterates θ^0, …, θ^t (Reporter; easyFL's
// result_model):
//
//	avg_t = (c·avg_{t−1} + θ^t)/(c + 1),   c = the iterates averaged so far
//
// so avg_t is their mean; Report "last" evaluates θ^t instead. A round that
// selected nobody adds no iterate.
//
// Partial participation is a project choice (Partial "renormalize"): the
// paper and easyFL train every client in every round, and FedEBA+ does not
// say how it ran AFL with 10 of 100 clients. With S_t the round's clients,
//
//	λ̃_k = λ_k / Σ_{j∈S_t} λ_j   (k ∈ S_t; uniform 1/|S_t| if that sum is 0)
//
// and only the coordinates of S_t take the ascent step (the others' losses
// are unknown) before the projection. With full participation λ̃ = λ up to
// rounding, which is the paper's step.
//
// γ_λ (lambda_lr) defaults to 0.7, FedEBA+'s reported pick (its Table 8;
// grid 0.1, 0.5, 0.7); easyFL's default learning_rate_lambda is 0.01. λ is
// kept in float64 in the state's metadata (JSON round-trips float64 exactly,
// so a resumed run is bit-identical); the average is a float32 vector.
type AFL struct {
	Base
	LambdaLR float64 `json:"lambda_lr"` // γ_λ ≥ 0
	Report   string  `json:"report"`    // AFLReportAverage or AFLReportLast
	Partial  string  `json:"partial"`   // AFLPartialRenormalize
}

// AFL's options.
const (
	AFLReportAverage      = "average"
	AFLReportLast         = "last"
	AFLPartialRenormalize = "renormalize"
)

var (
	_ Algorithm = AFL{}
	_ LossUser  = AFL{}
	_ Reporter  = AFL{}
)

// NewAFL builds AFL from {lambda_lr, report, partial}.
func NewAFL(opts fl.Options) (Algorithm, error) {
	a := AFL{LambdaLR: 0.7, Report: AFLReportAverage, Partial: AFLPartialRenormalize}
	if err := opts.Decode("algorithm (afl)", &a); err != nil {
		return nil, err
	}
	if err := finite("algorithm.lambda_lr", a.LambdaLR, 0, false); err != nil {
		return nil, err
	}
	if a.Report != AFLReportAverage && a.Report != AFLReportLast {
		return nil, fmt.Errorf("algorithm.report = %q is unknown; use %s (the running average of the iterates, as the paper) or %s (the last iterate): %w", a.Report, AFLReportAverage, AFLReportLast, fl.ErrInvalid)
	}
	if a.Partial != AFLPartialRenormalize {
		return nil, fmt.Errorf("algorithm.partial = %q is unknown; use %s (λ restricted to the round's clients and renormalised): %w", a.Partial, AFLPartialRenormalize, fl.ErrInvalid)
	}
	return a, nil
}

// aflAverage names the running average in AFL's state.
const aflAverage = "average"

// aflMeta is AFL's state metadata.
type aflMeta struct {
	Lambda   []float64 `json:"lambda"`   // λ over the N clients
	Averaged int       `json:"averaged"` // iterates in the average
}

// UsesLosses implements LossUser: λ's step reads F_k(θ^t).
func (AFL) UsesLosses() (before, after bool) { return true, false }

// Reported implements Reporter: the running average of the iterates, or
// θ^t itself for report "last" and before round 1.
func (a AFL) Reported(global []float32, s fl.State) ([]float32, error) {
	if a.Report == AFLReportLast {
		return global, nil
	}
	var m aflMeta
	if err := s.DecodeMeta(&m); err != nil {
		return nil, err
	}
	if m.Averaged == 0 { // before round 1: avg_0 = θ^0
		return global, nil
	}
	return s.Vector(aflAverage, len(global))
}

// Begin implements Algorithm.
func (a AFL) Begin(r Server) (Aggregation, error) {
	f, err := lossesBefore("afl", r)
	if err != nil {
		return nil, err
	}
	var m aflMeta
	if err := r.State.DecodeMeta(&m); err != nil {
		return nil, err
	}
	if m.Lambda == nil {
		m.Lambda = make([]float64, r.N)
		for k := range m.Lambda {
			m.Lambda[k] = 1 / float64(r.N)
		}
	}
	if len(m.Lambda) != r.N {
		return nil, fmt.Errorf("afl: the state holds λ for %d clients; the population has %d (was it written for another point?): %w", len(m.Lambda), r.N, fl.ErrInvalid)
	}
	var avg []float32
	if a.Report == AFLReportAverage {
		if m.Averaged == 0 { // before round 1: avg_0 = θ^0
			avg, m.Averaged = r.Global, 1
		} else if avg, err = r.State.Vector(aflAverage, len(r.Global)); err != nil {
			return nil, err
		}
	}
	sel := r.Selection.Clients
	w := make([]float64, len(sel))
	sum := 0.0
	for i, k := range sel {
		if k < 0 || k >= r.N {
			return nil, fmt.Errorf("afl: client %d is not in [0, %d): %w", k, r.N, fl.ErrInvalid)
		}
		w[i] = m.Lambda[k]
		sum += w[i]
	}
	for i := range w {
		if sum > 0 {
			w[i] /= sum
		} else {
			w[i] = 1 / float64(len(w))
		}
	}
	agg, err := reweighted(r, w)
	if err != nil {
		return nil, err
	}
	return &aflAgg{reportedAgg: reportedAgg{rule: agg, w: w}, gamma: a.LambdaLR, meta: m, avg: avg, sel: sel, f: f}, nil
}

type aflAgg struct {
	reportedAgg
	gamma float64
	meta  aflMeta   // the state after round t−1
	avg   []float32 // avg_{t−1}; nil for report "last"
	sel   []int
	f     []float64 // F_k(θ^t), in sel order
}

func (a *aflAgg) Finish(dst []float32) (fl.State, error) {
	if err := a.rule.Finish(dst); err != nil {
		return fl.State{}, err
	}
	lambda := slices.Clone(a.meta.Lambda)
	for i, k := range a.sel {
		lambda[k] += a.gamma * a.f[i]
	}
	next := aflMeta{Lambda: ProjectSimplex(lambda), Averaged: a.meta.Averaged}
	var s fl.State
	if a.avg != nil {
		c := float64(next.Averaged)
		avg := make([]float32, len(dst))
		for j := range avg {
			avg[j] = float32((c*float64(a.avg[j]) + float64(dst[j])) / (c + 1))
		}
		s.Set(aflAverage, avg)
		next.Averaged++
	}
	if err := s.SetMeta(next); err != nil {
		return fl.State{}, err
	}
	return s, nil
}

// ProjectSimplex returns the Euclidean projection of v onto the probability
// simplex {x : x ≥ 0, Σ x = 1} (Duchi, Shalev-Shwartz, Singer & Chandra, ICML
// 2008, Fig. 1): with u the entries of v sorted in decreasing order,
//
//	ρ = max{j : u_j − (Σ_{r≤j} u_r − 1)/j > 0},  θ = (Σ_{r≤ρ} u_r − 1)/ρ
//	x_i = max(v_i − θ, 0)
//
// in float64, with the prefix sums in sorted order. v must be finite and
// non-empty.
func ProjectSimplex(v []float64) []float64 {
	u := slices.Clone(v)
	slices.SortFunc(u, func(a, b float64) int { return cmp.Compare(b, a) })
	sum, theta := 0.0, 0.0
	for j, x := range u {
		sum += x
		if t := (sum - 1) / float64(j+1); x-t > 0 {
			theta = t
		}
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Max(x-theta, 0)
	}
	return out
}
