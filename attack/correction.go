package attack

import (
	"fmt"
	"math"
)

// The client's update of one output-layer coordinate is linear in the
// step gradients of the cross-entropy (Chen & Vikalo, §3.3, Eq. (16)):
//
//	Δb_j = −η Σ_{τ=1..m} ρ^(τ) g_j^(τ) − h_j
//
// ρ^(τ) weighs step τ's gradient and h_j collects what the scheme adds
// independently of the data. The paper derives both in closed form for
// each scheme (Table 1, App. A.4–A.9):
//
//	SGD                  ρ^(τ) = 1                              h = 0
//	SGD, momentum γ      ρ^(τ) = (1 − γ^{m+1−τ})/(1 − γ)        h = 0
//	Nesterov, γ          ρ^(τ) = (1 − γ^{m+2−τ})/(1 − γ)        h = 0
//	FedProx, μ           ρ^(τ) = (1 − μη)^{m−τ}                 h = 0
//	SCAFFOLD             ρ^(τ) = 1                              h = η m (c − c_i)
//	FedDyn, α            ρ^(τ) = (1 − αη)^{m−τ}                 h = (1 − (1 − αη)^m) Σ_{r<t} Δb^(r)
//	FedDC, λ             ρ^(τ) = (1 − λη)^{m−τ}                 h = (1 − (1 − λη)^m) (d_k + (Δb_k^{prev} − ΔB^{prev})/(ληm))
//
// (SCAFFOLD's form is ours: Table 1 writes η m Σ_{r=2..t} c^(r) +
// Σ_{r<t} Δb^(r), which equals it when the client trained in every round;
// the bias components of the control variates are meant.) And, ours (not
// in the paper), L2 weight decay wd adds the factor
// (1 − η·wd) to every step's shrinkage: ρ^(τ) = (1 − η(wd + μ))^{m−τ} and
// h_j = (1 − (1 − η·wd)^m)·b_j^t for SGD alone.
//
// Rather than one formula per scheme and combination (momentum with
// FedProx, weight decay with FedDyn, ...), the functions below run the
// recursion trainer's optimiser applies to one coordinate (optim.go: d = g
// + μ(θ − a) + v + wd·θ; buf ← γ·buf + d; d ← nesterov ? d + γ·buf : buf;
// θ ← θ − η·d; θ ← θ − η·after), which is linear: ρ is its response to a
// unit gradient at one step, h its response to the scheme's terms with no
// gradient at all. The table above is the closed form of the special
// cases, and the tests check both against it.

// Rho returns ρ^(1..m) for l's SGD (momentum, Nesterov, weight decay) and
// a proximal coefficient prox (Scheme.Prox), l.Steps values. It is nil for
// Adam, which has no such weights.
func Rho(l Local, prox float64) []float64 {
	if l.adam() {
		return nil
	}
	m := l.Steps
	// One impulse at step 1, b and buf starting at 0: the optimiser is
	// time-invariant, so an impulse at step τ moves the final b as this
	// one moves b after m − τ + 1 steps.
	after := make([]float64, m)
	b, buf := 0.0, 0.0
	for k := range m {
		g := 0.0
		if k == 0 {
			g = 1
		}
		b, buf = sgdStep(l, prox, b, buf, g, 0, 0, 0)
		after[k] = b
	}
	rho := make([]float64, m)
	for tau := 1; tau <= m; tau++ {
		rho[tau-1] = -after[m-tau] / l.LR
	}
	return rho
}

// history returns h_j of the coordinates idx of the flat vector: minus
// the update the scheme and the optimiser's weight decay make with no
// gradient at all, from θ^t.
func (in *Input) history(idx []int) []float64 {
	h := make([]float64, len(idx))
	if in.Local.adam() {
		return h
	}
	s := in.Scheme
	for i, j := range idx {
		b0 := float64(in.Global[j])
		anchor, lin, after := b0, 0.0, 0.0
		if s.Anchor != nil {
			anchor = float64(s.Anchor[j])
		}
		if s.Linear != nil {
			lin = float64(s.Linear[j])
		}
		if s.AfterStep != nil {
			after = float64(s.AfterStep[j])
		}
		b, buf := b0, 0.0
		for range in.Local.Steps {
			b, buf = sgdStep(in.Local, s.Prox, b, buf, 0, anchor, lin, after)
		}
		h[i] = -(b - b0)
	}
	return h
}

// sgdStep is one step of trainer's SGD on one coordinate b with momentum
// buffer buf, cross-entropy gradient g, proximal anchor a, linear term v
// and after-step correction c (trainer optim.go and Objective).
func sgdStep(l Local, prox, b, buf, g, a, v, c float64) (float64, float64) {
	d := g + v + l.WeightDecay*b
	if prox != 0 {
		d += prox * (b - a)
	}
	if l.Momentum > 0 {
		buf = l.Momentum*buf + d
		if l.Nesterov {
			d += l.Momentum * buf
		} else {
			d = buf
		}
	}
	b -= l.LR * d
	b -= l.LR * c
	return b, buf
}

// signal returns, for the output layer's coordinates, minus the mean
// cross-entropy gradient of a step as the update reveals it,
//
//	u = (Δ + h)/(η·Σ_τ ρ^(τ))
//
// u of RLU's least squares for the bias (the paper's Eq. (10) with Eq.
// (16)'s correction; the 1/Σρ is ours: §3.2.2 and Alg. 1 write u = Δb/η
// also for m > 1), and the rows of ΔW corrected alike. It is an error
// when Σρ is not positive (a proximal step μη ≥ 1 that overshoots).
func (in *Input) signal() (uW [][]float64, u []float64, err error) {
	dW, db, wOff, bOff := in.output()
	c, l := len(db), len(dW[0])
	idx := make([]int, 0, c*(l+1))
	for j := range c {
		for k := range l {
			idx = append(idx, wOff+j*l+k)
		}
	}
	for j := range c {
		idx = append(idx, bOff+j)
	}
	h := in.history(idx)
	scale := in.Local.LR * sum(Rho(in.Local, in.Scheme.Prox))
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, nil, fmt.Errorf("attack: η·Σρ = %v for %+v and prox %v; the update does not follow the gradients: %w", scale, in.Local, in.Scheme.Prox, ErrNotApplicable)
	}
	uW = make([][]float64, c)
	u = make([]float64, c)
	for j := range c {
		uW[j] = make([]float64, l)
		for k := range l {
			uW[j][k] = (dW[j][k] + h[j*l+k]) / scale
		}
		u[j] = (db[j] + h[c*l+j]) / scale
	}
	return uW, u, nil
}

// naive returns the baselines' view of the update (Chen & Vikalo's
// benchmark, their code): the average step gradient of the output layer,
// −Δ/(η·m), with no correction for momentum, proximal terms or history.
func (in *Input) naive() (gW [][]float64, gb []float64) {
	dW, db, _, _ := in.output()
	scale := -in.Local.LR * float64(in.Local.Steps)
	for j := range dW {
		for k := range dW[j] {
			dW[j][k] /= scale
		}
		db[j] /= scale
	}
	return dW, db
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
