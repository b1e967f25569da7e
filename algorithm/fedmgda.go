package algorithm

import (
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/qp"
)

// FedMGDAPlus is FedMGDA+ (Hu, Shaloudegi, Zhang & Yu, IEEE TNSE 2022,
// arXiv:2006.11489): multiple-gradient descent over the round's clients,
// which looks for a common descent direction of all their losses instead of
// their weighted mean. Clients run plain local SGD from θ^t, as FedAvg's. The
// server normalises each client's update,
//
//	d_k = (θ^t − θ_k)/(‖θ^t − θ_k‖ + norm_offset) = −Δ_k/(‖Δ_k‖ + norm_offset)
//
// finds the weights of the min-norm convex combination of the d_k within ε
// of the clients' size shares λ0_k = n_k/Σ_{j∈S_t} n_j,
//
//	λ* = argmin ‖Σ_k λ_k·d_k‖²  over  Σ_k λ_k = 1,  max(0, λ0_k − ε) ≤ λ_k ≤ min(1, λ0_k + ε)
//
// exactly (qp.SimplexBox on the Gram matrix G_kj = d_k·d_j), and steps
//
//	θ^{t+1} = θ^t − η_g·Σ_k λ*_k·d_k
//
// as FedEBA+ (Wang et al., arXiv 2301.12407, §2) and easyFL's fedmgda.py
// state it. ε = 0 gives λ* = λ0 (FedAvg's size weights on the normalised
// updates); ε ≥ 1 the unconstrained min-norm element of their convex hull
// (MGDA). The step is the point's rule applied to −d_k with λ*_k in place of
// the sampler's ω_k, so η_g is the rule's server_lr (1 by default, easyFL's
// eta; the paper does not report its value), and normalize changes nothing
// (Σ λ* = 1). λ* is reported (agg_weight). Norms and Gram entries cover
// every entry of the flat vector, BatchNorm running statistics included,
// like Δ_k (easyFL's Gram matrix flattens the state dict too), and
// accumulate in float64 in index order.
//
// The Gram matrix needs every update before the step, so the aggregation
// keeps the round's m updates: m × (model size) float32 values (m = 10 and
// the 199,210-parameter MLP: 8 MB), and computes m(m+1)/2 dot products.
//
// ε defaults to 0.03, FedEBA+'s Table 1 pick (grid 0, 0.03, 0.08, 0.1, 1;
// easyFL's default is 0.1); norm_offset to 1e−8, the constant easyFL adds to
// ‖g_k‖.
type FedMGDAPlus struct {
	Base
	Epsilon    float64 `json:"epsilon"`     // ε ≥ 0
	NormOffset float64 `json:"norm_offset"` // ≥ 0
}

var _ Algorithm = FedMGDAPlus{}

// NewFedMGDAPlus builds FedMGDA+ from {epsilon, norm_offset}.
func NewFedMGDAPlus(opts fl.Options) (Algorithm, error) {
	a := FedMGDAPlus{Epsilon: 0.03, NormOffset: 1e-8}
	if err := opts.Decode("algorithm (fedmgda+)", &a); err != nil {
		return nil, err
	}
	if err := finite("algorithm.epsilon", a.Epsilon, 0, false); err != nil {
		return nil, err
	}
	if err := finite("algorithm.norm_offset", a.NormOffset, 0, false); err != nil {
		return nil, err
	}
	return a, nil
}

// Begin implements Algorithm.
func (a FedMGDAPlus) Begin(r Server) (Aggregation, error) {
	if len(r.Clients) != len(r.Selection.Clients) {
		return nil, fmt.Errorf("fedmgda+: %d summaries for %d clients: %w", len(r.Clients), len(r.Selection.Clients), fl.ErrInvalid)
	}
	lambda0 := make([]float64, len(r.Clients))
	total := 0.0
	for i, s := range r.Clients {
		if s.NumExamples <= 0 {
			return nil, fmt.Errorf("fedmgda+: client %d reports %d training samples; λ0 needs n_k > 0: %w", s.Client, s.NumExamples, fl.ErrInvalid)
		}
		lambda0[i] = float64(s.NumExamples)
		total += lambda0[i]
	}
	for i := range lambda0 {
		lambda0[i] /= total
	}
	return &fedmgdaAgg{alg: a, r: r, lambda0: lambda0, deltas: make([][]float32, 0, len(lambda0))}, nil
}

type fedmgdaAgg struct {
	alg     FedMGDAPlus
	r       Server
	lambda0 []float64
	deltas  [][]float32 // Δ_k in selection order; then −d_k
	lambda  []float64   // λ*, after Finish
}

func (a *fedmgdaAgg) Add(client int, delta []float32, _ fl.State) error {
	i := len(a.deltas)
	if i >= len(a.r.Selection.Clients) || a.r.Selection.Clients[i] != client {
		return fmt.Errorf("fedmgda+: got client %d out of order (want the selection's clients %v in order): %w", client, a.r.Selection.Clients, fl.ErrInvalid)
	}
	if len(delta) != len(a.r.Global) {
		return fmt.Errorf("fedmgda+: client %d delta has %d values; the model has %d: %w", client, len(delta), len(a.r.Global), fl.ErrInvalid)
	}
	a.deltas = append(a.deltas, slices.Clone(delta))
	return nil
}

func (a *fedmgdaAgg) Finish(dst []float32) (fl.State, error) {
	m := len(a.deltas)
	if m != len(a.r.Selection.Clients) {
		return fl.State{}, fmt.Errorf("fedmgda+: %d of %d client deltas added: %w", m, len(a.r.Selection.Clients), fl.ErrInvalid)
	}
	g := make([][]float64, m) // Δ_k·Δ_j, then d_k·d_j
	for k := range g {
		g[k] = make([]float64, m)
	}
	for k := range m {
		for j := k; j < m; j++ {
			s := 0.0
			for p, v := range a.deltas[k] {
				s += float64(v) * float64(a.deltas[j][p])
			}
			g[k][j], g[j][k] = s, s
		}
	}
	den := make([]float64, m) // ‖Δ_k‖ + norm_offset
	for k := range den {
		den[k] = math.Sqrt(g[k][k]) + a.alg.NormOffset
	}
	for k := range m {
		for j := k; j < m; j++ {
			v := 0.0
			if den[k] > 0 && den[j] > 0 {
				v = g[k][j] / (den[k] * den[j])
			}
			g[k][j], g[j][k] = v, v
		}
	}
	lo, hi := make([]float64, m), make([]float64, m)
	for k, l0 := range a.lambda0 {
		lo[k], hi[k] = math.Max(0, l0-a.alg.Epsilon), math.Min(1, l0+a.alg.Epsilon)
	}
	lambda, err := qp.SimplexBox(g, nil, lo, hi)
	if err != nil {
		return fl.State{}, fmt.Errorf("fedmgda+: %w", err)
	}
	agg, err := reweighted(a.r, lambda)
	if err != nil {
		return fl.State{}, err
	}
	for k, d := range a.deltas { // −d_k = Δ_k/(‖Δ_k‖ + norm_offset), in place
		for p, v := range d {
			if den[k] > 0 {
				d[p] = float32(float64(v) / den[k])
			} else {
				d[p] = 0
			}
		}
		if err := agg.Add(a.r.Selection.Clients[k], d); err != nil {
			return fl.State{}, err
		}
		a.deltas[k] = nil
	}
	if err := agg.Finish(dst); err != nil {
		return fl.State{}, err
	}
	a.lambda = lambda
	return fl.State{}, nil
}

// Report implements Reporting.
func (a *fedmgdaAgg) Report() fl.AggReport {
	return fl.AggReport{Weights: slices.Clone(a.lambda)}
}
