package algorithm

import (
	"context"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// SCAFFOLD is stochastic controlled averaging (Karimireddy et al., ICML
// 2020, arXiv:1910.06378, Algorithm 1 with option II).
//
// The server keeps c and sends it to the round's clients; client i keeps
// c_i. Both start at 0 (the official NIID-Bench code starts them as copies of
// one net's weights, which only c − c_i sees: the same thing; specs/fnrfl.md
// §3). Client i trains y from x = θ^t for K steps with
//
//	y ← y − η_l·(g_i(y) − c_i + c)                          (line 10)
//
// then, with Kη_l the sum of the steps' learning rates (trainer LRSum; see
// Momentum below),
//
//	c_i⁺ = c_i − c + (x − y)/(K·η_l)                        (line 12, option II)
//
// keeps c_i⁺ and uploads Δy_i = y − x and Δc_i = c_i⁺ − c_i (line 13). The
// server aggregates Δy with the point's rule (the paper's x + η_g/|S|·ΣΔy is
// ω_i = 1/|S|) and updates
//
//	c ← c + (1/N)·Σ_{i∈S} Δc_i                              (line 17: c + (|S|/N)·mean Δc)
//
// so c stays the mean of all N clients' c_i.
//
// Correction "gradient" (the paper, default) puts c − c_i into every
// gradient, inside momentum and weight decay when the optimiser has them;
// "after_step" is NIID-Bench's: after each optimiser step the weights,
// BatchNorm running statistics included, move by −η_l·(c − c_i)
// (trainer Objective.AfterStep). Control variates cover every entry of the
// flat vector; with "gradient" their buffer entries are carried but unused.
//
// # Momentum
//
// Line 12 divides by Kη_l because plain SGD moves the weights by Kη_l times
// the mean corrected gradient. Heavy-ball momentum ρ moves them by η_l·a_K
// times it (a_K FedNova's effective step count, about K/(1 − ρ)), so with
// Kη_l, c_i⁺ − c keeps (1 − a_K/K) of c_i − c: −3.1 times it for K = 10 and
// ρ = 0.9, and the control variates diverge within a few rounds. LRSum
// "momentum" (OURS, the default) divides by the weights' displacement per
// unit gradient through the momentum buffer instead (trainer
// MomentumLRSum: η_l·a_K at a constant rate), so that c_i⁺ estimates the
// client's mean gradient under any heavy-ball or Nesterov momentum; it is
// Kη_l bit for bit without momentum. LRSum "plain" is line 12 as written,
// whatever the optimiser. After_step corrections bypass the momentum
// buffer, so their c_i⁺ keeps Kη_l (then c_i⁺ − c carries no part of
// c_i − c). Adam's steps are not linear in the gradient, so gradient
// corrections refuse it (Check); after_step's does not.
type SCAFFOLD struct {
	Base
	Correction string `json:"correction"`
	LRSum      string `json:"lr_sum,omitempty"` // gradient corrections only
}

// SCAFFOLD's correction modes.
const (
	CorrectGradient  = "gradient"
	CorrectAfterStep = "after_step"
)

// What a gradient correction's control variate divides the local update by
// (SCAFFOLD's and FedDC's lr_sum option).
const (
	LRSumMomentum = "momentum" // Σ_s η_s·γ_s through the momentum buffer (ours; trainer MomentumLRSum)
	LRSumPlain    = "plain"    // K·η, as the papers write it for plain SGD (trainer LRSum)
)

// NewSCAFFOLD builds SCAFFOLD from {correction, lr_sum}.
func NewSCAFFOLD(opts fl.Options) (Algorithm, error) {
	s := SCAFFOLD{Correction: CorrectGradient}
	if err := opts.Decode("algorithm (scaffold)", &s); err != nil {
		return nil, err
	}
	switch s.Correction {
	case CorrectGradient:
		if s.LRSum == "" {
			s.LRSum = LRSumMomentum
		}
		if err := checkLRSum(s.LRSum); err != nil {
			return nil, err
		}
	case CorrectAfterStep:
		if s.LRSum != "" {
			return nil, fmt.Errorf("algorithm.lr_sum = %q is set with correction: %s, whose c_i⁺ always divides by K·η (its correction bypasses momentum); remove lr_sum: %w", s.LRSum, CorrectAfterStep, fl.ErrInvalid)
		}
	default:
		return nil, fmt.Errorf("algorithm.correction = %q is unknown; use %s (the paper) or %s (NIID-Bench): %w", s.Correction, CorrectGradient, CorrectAfterStep, fl.ErrInvalid)
	}
	return s, nil
}

// checkLRSum validates an lr_sum option.
func checkLRSum(v string) error {
	if v != LRSumMomentum && v != LRSumPlain {
		return fmt.Errorf("algorithm.lr_sum = %q is unknown; use %s (the local update over its displacement through momentum, ours) or %s (K·η as the paper writes it): %w",
			v, LRSumMomentum, LRSumPlain, fl.ErrInvalid)
	}
	return nil
}

// checkGradientCorrection refuses Adam for a correction added to the
// gradient: the control variate divides the update by a sum of step sizes,
// which Adam's normalised steps are not multiples of.
func checkGradientCorrection(alg string, hp trainer.Hyper, fix string) error {
	if hp.Optimizer == trainer.OptimizerSGD {
		return nil
	}
	return fmt.Errorf("algorithm.name = %s corrects the gradient with a control variate that divides the local update by the sum of the step sizes, which train.optimizer = %s does not move the weights by; use sgd (with or without momentum)%s: %w",
		alg, hp.Optimizer, fix, fl.ErrInvalid)
}

// Names of SCAFFOLD's vectors: the server's c (sent), the client's c_i and
// its upload Δc_i.
const (
	scaffoldC  = "c"
	scaffoldCi = "c_i"
	scaffoldDC = "delta_c"
)

// Check implements Algorithm: gradient corrections need SGD.
func (s SCAFFOLD) Check(_ trainer.Spec, hp trainer.Hyper) error {
	if s.Correction == CorrectAfterStep {
		return nil
	}
	return checkGradientCorrection("scaffold", hp, ", or algorithm.correction: after_step, which applies c − c_i after each step")
}

func (SCAFFOLD) Init(numParams int) (fl.State, error) {
	var s fl.State
	s.Set(scaffoldC, make([]float32, numParams))
	return s, nil
}

func (SCAFFOLD) Sends() []string { return []string{scaffoldC} }

// Train implements Algorithm.
func (s SCAFFOLD) Train(_ context.Context, cl Client, obj trainer.Objective) (Upload, error) {
	n := len(cl.Global)
	c, err := cl.Server.Vector(scaffoldC, n)
	if err != nil {
		return Upload{}, err
	}
	ci, err := clientVector(cl.State, scaffoldCi, n)
	if err != nil {
		return Upload{}, err
	}
	y := slices.Clone(cl.Global)
	res, err := cl.Local.Train(y, obj)
	if err != nil {
		return Upload{}, err
	}
	sum := res.LRSum
	if s.Correction == CorrectGradient && s.LRSum == LRSumMomentum {
		sum = res.MomentumLRSum
	}
	cNew, dc := make([]float32, n), make([]float32, n)
	for j := range cNew {
		v := float64(ci[j]) - float64(c[j]) + (float64(cl.Global[j])-float64(y[j]))/sum
		cNew[j] = float32(v)
		dc[j] = float32(v - float64(ci[j]))
	}
	up := Upload{Weights: y, Delta: Delta(y, cl.Global), Train: res}
	up.Vectors.Set(scaffoldDC, dc)
	up.State.Set(scaffoldCi, cNew)
	return up, nil
}

// objective returns client cl's local objective: its correction c − c_i.
func (s SCAFFOLD) Objective(cl Client) (trainer.Objective, error) {
	n := len(cl.Global)
	c, err := cl.Server.Vector(scaffoldC, n)
	if err != nil {
		return trainer.Objective{}, err
	}
	ci, err := clientVector(cl.State, scaffoldCi, n)
	if err != nil {
		return trainer.Objective{}, err
	}
	return s.correct(c, ci), nil
}

// correct returns the correction c − c_i in the gradient (the paper) or
// after every step (NIID-Bench).
func (s SCAFFOLD) correct(c, ci []float32) trainer.Objective {
	corr := make([]float32, len(c))
	for j := range corr {
		corr[j] = c[j] - ci[j]
	}
	if s.Correction == CorrectAfterStep {
		return trainer.Objective{AfterStep: corr}
	}
	return trainer.Objective{Linear: corr}
}

// Begin implements Algorithm.
func (SCAFFOLD) Begin(r Server) (Aggregation, error) {
	c, err := r.State.Vector(scaffoldC, len(r.Global))
	if err != nil {
		return nil, err
	}
	agg, err := r.Rule.Begin(r.Global, r.Selection, r.Clients)
	if err != nil {
		return nil, err
	}
	return &scaffoldAgg{rule: agg, c: c, n: r.N, sum: make([]float64, len(c))}, nil
}

type scaffoldAgg struct {
	rule fl.Aggregation
	c    []float32
	n    int
	sum  []float64 // Σ Δc_i so far
}

func (a *scaffoldAgg) Add(client int, delta []float32, up fl.State) error {
	dc, err := up.Vector(scaffoldDC, len(a.c))
	if err != nil {
		return fmt.Errorf("client %d: %w", client, err)
	}
	if err := a.rule.Add(client, delta); err != nil {
		return err
	}
	for j, v := range dc {
		a.sum[j] += float64(v)
	}
	return nil
}

func (a *scaffoldAgg) Finish(dst []float32) (fl.State, error) {
	if err := a.rule.Finish(dst); err != nil {
		return fl.State{}, err
	}
	c := make([]float32, len(a.c))
	for j := range c {
		c[j] = float32(float64(a.c[j]) + a.sum[j]/float64(a.n))
	}
	var s fl.State
	s.Set(scaffoldC, c)
	return s, nil
}
