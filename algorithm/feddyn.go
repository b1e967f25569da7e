package algorithm

import (
	"context"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// FedDyn is federated learning with dynamic regularisation (Acar et al., ICLR
// 2021, arXiv:2111.04263, Algorithm 1).
//
// Client k keeps ∇L_k(θ_k^{t−1}) ("grad", 0 before its first round). It
// minimises, from θ^t (trainer.FedDyn),
//
//	L_k(θ) − ⟨∇L_k(θ_k^{t−1}), θ⟩ + α/2·‖θ − θ^t‖²
//
// uploads Δ_k = θ_k − θ^t and keeps
//
//	∇L_k(θ_k^t) = ∇L_k(θ_k^{t−1}) − α·(θ_k − θ^t)
//
// The server keeps h (0 before round 1) and, with N the number of clients,
//
//	h ← h − α·(1/N)·Σ_{k∈P_t} (θ_k − θ^t)
//	θ^{t+1} = (θ^t + Σ_k ω_k Δ_k) − h/α
//
// where the first part is the point's rule (the paper's mean over P_t is
// ω_k = 1/|P_t|). h, the clients' gradients and the correction cover the
// trainable parameters, not BatchNorm's running statistics, which the rule
// averages.
//
// AdaptiveAlpha is the official code's departure (alpemreacar/FedDyn,
// utils_methods.py: alpha_coef / weight_list[clnt]): client k uses
// α_k = α·Σ_j n_j/(N·n_k) in its objective and its state update; the
// server's h still uses α.
type FedDyn struct {
	Base
	Alpha         float64 `json:"alpha"`
	AdaptiveAlpha bool    `json:"adaptive_alpha,omitempty"`
}

// NewFedDyn builds FedDyn from {alpha, adaptive_alpha}. α defaults to 0.01,
// the official example's alpha_coef (example_cifar_10.py); the paper tunes
// it over {0.1, 0.01, 0.001}.
func NewFedDyn(opts fl.Options) (Algorithm, error) {
	a := FedDyn{Alpha: 0.01}
	if err := opts.Decode("algorithm (feddyn)", &a); err != nil {
		return nil, err
	}
	if err := finite("algorithm.alpha", a.Alpha, 0, true); err != nil {
		return nil, err
	}
	return a, nil
}

const (
	feddynH    = "h"
	feddynGrad = "grad"
)

func (FedDyn) Init(numParams int) (fl.State, error) {
	var s fl.State
	s.Set(feddynH, make([]float32, numParams))
	return s, nil
}

// alpha returns client k's α.
func (a FedDyn) alpha(l Local) float64 {
	if !a.AdaptiveAlpha {
		return a.Alpha
	}
	return a.Alpha / l.SizeRatio()
}

// Train implements Algorithm.
func (a FedDyn) Train(_ context.Context, c Client, obj trainer.Objective) (Upload, error) {
	n := len(c.Global)
	grad, err := clientVector(c.State, feddynGrad, n)
	if err != nil {
		return Upload{}, err
	}
	alpha := a.alpha(c.Local)
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	next := make([]float32, n)
	for j, tr := range trainable(c.Local.Net(), n) {
		if tr {
			next[j] = float32(float64(grad[j]) - alpha*(float64(w[j])-float64(c.Global[j])))
		}
	}
	up := Upload{Weights: w, Delta: Delta(w, c.Global), Train: res}
	up.State.Set(feddynGrad, next)
	return up, nil
}

// objective returns client c's local objective: the dynamic regulariser
// with its α and its ∇L_k(θ_k^{t−1}).
func (a FedDyn) Objective(c Client) (trainer.Objective, error) {
	grad, err := clientVector(c.State, feddynGrad, len(c.Global))
	if err != nil {
		return trainer.Objective{}, err
	}
	return trainer.FedDyn(a.alpha(c.Local), grad), nil
}

// Begin implements Algorithm.
func (a FedDyn) Begin(r Server) (Aggregation, error) {
	h, err := r.State.Vector(feddynH, len(r.Global))
	if err != nil {
		return nil, err
	}
	agg, err := r.Rule.Begin(r.Global, r.Selection, r.Clients)
	if err != nil {
		return nil, err
	}
	return &feddynAgg{rule: agg, alpha: a.Alpha, h: h, n: r.N, sum: make([]float64, len(h)), trainable: trainable(r.Net, len(r.Global))}, nil
}

type feddynAgg struct {
	rule      fl.Aggregation
	alpha     float64
	h         []float32
	n         int
	sum       []float64 // Σ_{k∈P_t} Δ_k so far
	trainable []bool
}

func (a *feddynAgg) Add(client int, delta []float32, _ fl.State) error {
	if err := a.rule.Add(client, delta); err != nil {
		return err
	}
	for j, v := range delta {
		a.sum[j] += float64(v)
	}
	return nil
}

func (a *feddynAgg) Finish(dst []float32) (fl.State, error) {
	if err := a.rule.Finish(dst); err != nil {
		return fl.State{}, err
	}
	h := make([]float32, len(a.h))
	for j := range h {
		if !a.trainable[j] {
			continue
		}
		hj := float64(a.h[j]) - a.alpha*a.sum[j]/float64(a.n)
		h[j] = float32(hj)
		v := float32(float64(dst[j]) - hj/a.alpha)
		if v != v || v-v != 0 {
			return fl.State{}, fmt.Errorf("feddyn: parameter %d became %v: %w", j, v, fl.ErrDiverged)
		}
		dst[j] = v
	}
	var s fl.State
	s.Set(feddynH, h)
	return s, nil
}
