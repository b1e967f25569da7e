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
// then, with Kη_l the sum of the steps' learning rates (trainer LRSum),
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
type SCAFFOLD struct {
	Correction string `json:"correction"`
}

// SCAFFOLD's correction modes.
const (
	CorrectGradient  = "gradient"
	CorrectAfterStep = "after_step"
)

// NewSCAFFOLD builds SCAFFOLD from {correction}.
func NewSCAFFOLD(opts fl.Options) (Algorithm, error) {
	s := SCAFFOLD{Correction: CorrectGradient}
	if err := opts.Decode("algorithm (scaffold)", &s); err != nil {
		return nil, err
	}
	if s.Correction != CorrectGradient && s.Correction != CorrectAfterStep {
		return nil, fmt.Errorf("algorithm.correction = %q is unknown; use %s (the paper) or %s (NIID-Bench): %w", s.Correction, CorrectGradient, CorrectAfterStep, fl.ErrInvalid)
	}
	return s, nil
}

// Names of SCAFFOLD's vectors: the server's c (sent), the client's c_i and
// its upload Δc_i.
const (
	scaffoldC  = "c"
	scaffoldCi = "c_i"
	scaffoldDC = "delta_c"
)

func (SCAFFOLD) Check(trainer.Spec, trainer.Hyper) error { return nil }

func (SCAFFOLD) Init(numParams int) (fl.State, error) {
	var s fl.State
	s.Set(scaffoldC, make([]float32, numParams))
	return s, nil
}

func (SCAFFOLD) Sends() []string { return []string{scaffoldC} }

// Train implements Algorithm.
func (s SCAFFOLD) Train(_ context.Context, cl Client) (Upload, error) {
	n := len(cl.Global)
	c, err := cl.Server.Vector(scaffoldC, n)
	if err != nil {
		return Upload{}, err
	}
	ci, err := clientVector(cl.State, scaffoldCi, n)
	if err != nil {
		return Upload{}, err
	}
	obj := s.correct(c, ci)
	y := slices.Clone(cl.Global)
	res, err := cl.Local.Train(y, obj)
	if err != nil {
		return Upload{}, err
	}
	cNew, dc := make([]float32, n), make([]float32, n)
	for j := range cNew {
		v := float64(ci[j]) - float64(c[j]) + (float64(cl.Global[j])-float64(y[j]))/res.LRSum
		cNew[j] = float32(v)
		dc[j] = float32(v - float64(ci[j]))
	}
	up := Upload{Weights: y, Delta: Delta(y, cl.Global), Train: res}
	up.Vectors.Set(scaffoldDC, dc)
	up.State.Set(scaffoldCi, cNew)
	return up, nil
}

// objective returns client cl's local objective: its correction c − c_i.
func (s SCAFFOLD) objective(cl Client) (trainer.Objective, error) {
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
