package algorithm

import (
	"fmt"
	"math"

	"github.com/flsweep/flsweep/fl"
)

// TERM is client-level tilted empirical risk minimisation (Li, Beirami,
// Sanjabi & Smith, ICLR 2021, arXiv:2007.01162), which minimises the
// t-tilted loss over clients,
//
//	(1/t)·log Σ_k p_k·exp(t·F_k(w))
//
// (t > 0 leans toward the worst-off clients, t → 0 is FedAvg's objective,
// t < 0 leans away from outliers). Clients run plain local SGD from θ^t, as
// FedAvg's, and the engine measures F_k(θ^t), each client's loss on its full
// training set at the global model (LossUser). The server weighs the round's
// clients S_t by the softmax of their tilted losses (FedEBA+, Wang et al.,
// arXiv 2301.12407, §2)
//
//	w_k = exp(t·F_k(θ^t)) / Σ_{j∈S_t} exp(t·F_j(θ^t))
//
// computed with log-sum-exp (no overflow for any finite t·F), and applies the
// point's rule with w_k in place of the sampler's ω_k:
//
//	θ^{t+1} = θ^t + η_g·Σ_k w_k·Δ_k
//
// (η_g the rule's server_lr; normalize changes nothing, Σ w_k = 1). The
// losses are the pre-training ones, F_k(θ^t): FedEBA's weights have the same
// form with τ = 1/t but use the losses after training, F_k(θ_k), which is
// what separates the two. The weights are reported (agg_weight).
//
// t defaults to 0.1, FedEBA+'s Table 1 pick (its grid is 0.1, 0.5, 0.8, 1,
// 5).
type TERM struct {
	Base
	T float64 `json:"t"` // tilt, finite
}

var (
	_ Algorithm = TERM{}
	_ LossUser  = TERM{}
)

// NewTERM builds TERM from {t}.
func NewTERM(opts fl.Options) (Algorithm, error) {
	a := TERM{T: 0.1}
	if err := opts.Decode("algorithm (term)", &a); err != nil {
		return nil, err
	}
	if math.IsNaN(a.T) || math.IsInf(a.T, 0) {
		return nil, fmt.Errorf("algorithm.t = %v; the tilt must be a finite number (FedEBA+'s Table 1 uses 0.1): %w", a.T, fl.ErrInvalid)
	}
	return a, nil
}

// UsesLosses implements LossUser: the tilted weights read F_k(θ^t).
func (TERM) UsesLosses() (before, after bool) { return true, false }

// Begin implements Algorithm.
func (a TERM) Begin(r Server) (Aggregation, error) {
	f, err := lossesBefore("term", r)
	if err != nil {
		return nil, err
	}
	w := TiltedWeights(f, a.T)
	agg, err := reweighted(r, w)
	if err != nil {
		return nil, err
	}
	return &reportedAgg{rule: agg, w: w}, nil
}

// TiltedWeights returns softmax(t·f): w_k = exp(t·f_k)/Σ_j exp(t·f_j),
// through log-sum-exp, summed in index order. f and t must be finite.
func TiltedWeights(f []float64, t float64) []float64 {
	m := math.Inf(-1)
	for _, v := range f {
		m = math.Max(m, t*v)
	}
	w := make([]float64, len(f))
	sum := 0.0
	for i, v := range f {
		w[i] = math.Exp(t*v - m)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// reportedAgg is the point's rule run with the algorithm's weights w,
// which it reports.
type reportedAgg struct {
	rule fl.Aggregation
	w    []float64
}

func (a *reportedAgg) Add(client int, delta []float32, _ fl.State) error {
	return a.rule.Add(client, delta)
}

func (a *reportedAgg) Finish(dst []float32) (fl.State, error) {
	return fl.State{}, a.rule.Finish(dst)
}

// Report implements Reporting.
func (a *reportedAgg) Report() fl.AggReport {
	return fl.AggReport{Weights: append([]float64(nil), a.w...)}
}
