package aggregate

import (
	"fmt"
	"math"

	"github.com/flsweep/flsweep/fl"
)

// WeightedDelta is the server rule of Fraboni et al. 2022 (arXiv:2107.12211,
// eq. (3)):
//
//	θ^{t+1} = θ^t + η_g Σ_k ω_k(S_t) (θ_k^{t+1} − θ^t)
//
// with the sampler's weights ω_k. With η_g = 1 and ω_k = n_k/n this is FedAvg
// (McMahan et al., AISTATS 2017, Algorithm 1). The weights are not
// renormalised: when Σ ω_k ≠ 1 (Uniform sampling with unequal p_k) this is not
// the weighted mean of the client models, and must not be
// (specs/sampling-theory.md §4.1).
//
// Normalize replaces ω_k by ω_k / Σ_j ω_j, the "weighted average of the
// sampled clients" that many FedAvg implementations use. It is a biased ratio
// estimator under Uniform sampling with unequal p_k; it exists so such code
// can be reproduced, and a run records that it used it.
//
// The sum runs over clients in ascending order and accumulates in float64, so
// results are bit-reproducible.
type WeightedDelta struct {
	EtaG      float64 `json:"server_lr"` // server learning rate η_g > 0
	Normalize bool    `json:"normalize"`
}

var _ fl.Rule = WeightedDelta{}

type weightedOptions struct {
	ServerLR  *float64 `json:"server_lr"`
	Normalize bool     `json:"normalize"`
}

// NewWeightedDelta builds the rule from {server_lr, normalize}.
func NewWeightedDelta(opts fl.Options) (fl.Rule, error) {
	var o weightedOptions
	if err := opts.Decode("aggregator (fedavg)", &o); err != nil {
		return nil, err
	}
	w := WeightedDelta{EtaG: 1, Normalize: o.Normalize}
	if o.ServerLR != nil {
		w.EtaG = *o.ServerLR
	}
	if !(w.EtaG > 0) || math.IsInf(w.EtaG, 0) {
		return nil, fmt.Errorf("aggregator.server_lr = %v; it must be a positive number (1 is FedAvg): %w", w.EtaG, fl.ErrInvalid)
	}
	return w, nil
}

// ServerLR returns η_g, for algorithms whose server replaces the rule's
// weights but keeps its step size (FedEBA's).
func (r WeightedDelta) ServerLR() float64 { return r.EtaG }

// Begin implements fl.Rule.
func (r WeightedDelta) Begin(global []float32, sel fl.Selection, sums []fl.ClientSummary) (fl.Aggregation, error) {
	if len(sel.Weights) != len(sel.Clients) {
		return nil, fmt.Errorf("aggregate: %d weights for %d clients: %w", len(sel.Weights), len(sel.Clients), fl.ErrInvalid)
	}
	w := append([]float64(nil), sel.Weights...)
	if r.Normalize {
		total := 0.0
		for _, v := range w {
			total += v
		}
		if total > 0 {
			for i := range w {
				w[i] /= total
			}
		}
	}
	return &weightedAgg{global: global, clients: sel.Clients, w: w, etaG: r.EtaG, acc: make([]float64, len(global))}, nil
}

type weightedAgg struct {
	global  []float32
	clients []int
	w       []float64
	etaG    float64
	acc     []float64 // Σ ω_k Δ_k so far
	next    int       // index into clients of the next expected Add
}

func (a *weightedAgg) Add(client int, delta []float32) error {
	if a.next >= len(a.clients) || a.clients[a.next] != client {
		return fmt.Errorf("aggregate: got client %d out of order (want the selection's clients %v in order): %w", client, a.clients, fl.ErrInvalid)
	}
	if len(delta) != len(a.acc) {
		return fmt.Errorf("aggregate: client %d delta has %d values; the model has %d: %w", client, len(delta), len(a.acc), fl.ErrInvalid)
	}
	w := a.w[a.next]
	for j, d := range delta {
		a.acc[j] += w * float64(d)
	}
	a.next++
	return nil
}

func (a *weightedAgg) Finish(dst []float32) error {
	if a.next != len(a.clients) {
		return fmt.Errorf("aggregate: %d of %d client deltas added: %w", a.next, len(a.clients), fl.ErrInvalid)
	}
	if len(dst) != len(a.global) {
		return fmt.Errorf("aggregate: dst has %d values; the model has %d: %w", len(dst), len(a.global), fl.ErrInvalid)
	}
	for j, g := range a.global {
		v := float32(float64(g) + a.etaG*a.acc[j])
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("aggregate: parameter %d became %v: %w", j, v, fl.ErrDiverged)
		}
		dst[j] = v
	}
	return nil
}
