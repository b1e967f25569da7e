package algorithm

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// FedNova is normalised averaging (Wang, Liu, Liang, Joshi & Poor, NeurIPS
// 2020, arXiv:2007.07481), as NIID-Bench implements it with local momentum ρ
// (specs/fnrfl.md §3). Client k runs τ_k steps of SGD with momentum ρ
// (train.momentum) and reports
//
//	a_k = [τ_k − ρ·(1 − ρ^{τ_k})/(1 − ρ)] / (1 − ρ)         (a_k = τ_k when ρ = 0)
//
// with Δ_k = θ_k − θ^t, so that d_k = −Δ_k/a_k is its normalised gradient.
// The server steps by τ_eff along the weighted mean of the d_k:
//
//	τ_eff = Σ_k ω_k a_k / Σ_k ω_k
//	θ^{t+1} = θ^t + η_g·Σ_k ω_k·(τ_eff/a_k)·Δ_k
//
// τ_eff averages with the weights normalised over the round's clients, as
// NIID-Bench's p_i = n_i/Σ_{j∈S} n_j; the outer sum is the point's rule (with
// aggregator {normalize: true} and importance: size it is NIID-Bench's
// −τ_eff·Σ p_i d_i). Each client's factor is computed as
// Σ_j ω_j·(a_j/a_k) / Σ_j ω_j, so equal τ_k give exactly 1 and FedNova is
// FedAvg bit for bit.
type FedNova struct{ Base }

// NewFedNova builds FedNova; it takes no options (ρ is train.momentum).
func NewFedNova(opts fl.Options) (Algorithm, error) {
	if err := opts.Decode("algorithm (fednova)", &struct{}{}); err != nil {
		return nil, err
	}
	return FedNova{}, nil
}

// FedNovaA names a_k in a client's Scalars.
const FedNovaA = "fednova.a"

// Check implements Algorithm: a_k is derived for heavy-ball SGD at a
// constant rate.
func (FedNova) Check(_ trainer.Spec, hp trainer.Hyper) error {
	switch {
	case hp.Optimizer != trainer.OptimizerSGD:
		return fmt.Errorf("algorithm.name = fednova normalises by the steps of SGD with momentum; train.optimizer = %s has no such factor: use sgd: %w", hp.Optimizer, fl.ErrInvalid)
	case hp.Nesterov:
		return fmt.Errorf("algorithm.name = fednova derives a_k for heavy-ball momentum; set train.nesterov: false: %w", fl.ErrInvalid)
	case hp.Schedule != "" && hp.Schedule != trainer.ScheduleConstant:
		return fmt.Errorf("algorithm.name = fednova derives a_k for a constant local learning rate; train.lr_schedule = %s changes it within the round: remove it: %w", hp.Schedule, fl.ErrInvalid)
	}
	return nil
}

// NormSteps returns a_k for τ steps with momentum ρ.
func NormSteps(tau int, rho float64) float64 {
	t := float64(tau)
	if rho == 0 {
		return t
	}
	return (t - rho*(1-math.Pow(rho, t))/(1-rho)) / (1 - rho)
}

// Train implements Algorithm.
func (FedNova) Train(_ context.Context, c Client, obj trainer.Objective) (Upload, error) {
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	a := NormSteps(res.Steps, c.Local.Hyper().Momentum)
	return Upload{Weights: w, Delta: Delta(w, c.Global), Train: res, Scalars: map[string]float64{FedNovaA: a}}, nil
}

// Begin implements Algorithm.
func (FedNova) Begin(r Server) (Aggregation, error) {
	if len(r.Clients) != len(r.Selection.Clients) || len(r.Selection.Weights) != len(r.Clients) {
		return nil, fmt.Errorf("fednova: %d summaries for %d clients: %w", len(r.Clients), len(r.Selection.Clients), fl.ErrInvalid)
	}
	a := make([]float64, len(r.Clients))
	for i, s := range r.Clients {
		v, ok := s.Scalars[FedNovaA]
		if !ok || !(v > 0) {
			return nil, fmt.Errorf("fednova: client %d reported a_k = %v (was it trained by another algorithm?): %w", s.Client, v, fl.ErrInvalid)
		}
		a[i] = v
	}
	sumW := 0.0
	for _, w := range r.Selection.Weights {
		sumW += w
	}
	scale := map[int]float64{}
	for i, k := range r.Selection.Clients {
		num := 0.0
		for j, w := range r.Selection.Weights {
			num += w * (a[j] / a[i])
		}
		scale[k] = num / sumW
	}
	agg, err := r.Rule.Begin(r.Global, r.Selection, r.Clients)
	if err != nil {
		return nil, err
	}
	return &fednovaAgg{rule: agg, scale: scale}, nil
}

type fednovaAgg struct {
	rule  fl.Aggregation
	scale map[int]float64 // τ_eff/a_k by client
}

func (a *fednovaAgg) Add(client int, delta []float32, _ fl.State) error {
	s := a.scale[client]
	if s == 1 {
		return a.rule.Add(client, delta)
	}
	scaled := make([]float32, len(delta))
	for j, d := range delta {
		scaled[j] = float32(float64(d) * s)
	}
	return a.rule.Add(client, scaled)
}

func (a *fednovaAgg) Finish(dst []float32) (fl.State, error) { return fl.State{}, a.rule.Finish(dst) }
