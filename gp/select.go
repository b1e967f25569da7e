package gp

import "math"

// Posterior is FedCor's covariance Σ = X Xᵀ + σ_n² I conditioned, one client
// at a time, on the loss changes of the clients selected so far (their
// values do not matter, only which clients were observed):
//
//	Σ ← Σ − Σ_{:,k} Σ_{k,:} / Σ_kk
//
// (FedCor §4, the official code's GPR.Select_Clients). It never forms the
// n×n matrix: Σ stays X Xᵀ + σ_n² I minus the rank-one terms u_l u_lᵀ/c_l
// of the clients conditioned on, and it keeps, for every client k, the
// conditioned variance Σ_kk and the p-weighted column sum Σ_i p_i Σ_ik. A
// step costs O(n·(d + j)) after j steps, so selecting m clients costs
// O(m·n·(d + m)) time and O(m·n) memory.
type Posterior struct {
	n, d  int
	x     []float64 // n×d, row-major
	noise float64
	p     []float64
	us    [][]float64 // the conditioned columns u_l
	cs    []float64   // their pivots c_l
	vars  []float64   // Σ_kk
	sums  []float64   // Σ_i p_i Σ_ik
}

// NewPosterior returns the prior: Σ = X Xᵀ + σ_n² I with importances p.
func NewPosterior(x []float64, n, d int, noise float64, p []float64) *Posterior {
	if len(x) != n*d || len(p) != n {
		panic("gp: NewPosterior size mismatch")
	}
	q := &Posterior{n: n, d: d, x: x, noise: noise, p: p, vars: make([]float64, n), sums: make([]float64, n)}
	xp := make([]float64, d) // Xᵀ p
	for i := range n {
		for a := range d {
			xp[a] += p[i] * x[i*d+a]
		}
	}
	for k := range n {
		xk := x[k*d : (k+1)*d]
		sq, s := 0.0, 0.0
		for a, v := range xk {
			sq += v * v
			s += v * xp[a]
		}
		q.vars[k] = sq + noise*noise
		q.sums[k] = s + noise*noise*p[k]
	}
	return q
}

// Var returns the conditioned variance Σ_kk.
func (q *Posterior) Var(k int) float64 { return q.vars[k] }

// Sum returns the conditioned p-weighted column sum Σ_i p_i Σ_ik.
func (q *Posterior) Sum(k int) float64 { return q.sums[k] }

// Column returns the conditioned column Σ_{:,k}.
func (q *Posterior) Column(k int) []float64 {
	d := q.d
	xk := q.x[k*d : (k+1)*d]
	u := make([]float64, q.n)
	for i := range q.n {
		s := 0.0
		for a, v := range q.x[i*d : (i+1)*d] {
			s += v * xk[a]
		}
		u[i] = s
	}
	u[k] += q.noise * q.noise
	for l, ul := range q.us {
		f := ul[k] / q.cs[l]
		for i := range u {
			u[i] -= ul[i] * f
		}
	}
	return u
}

// Condition conditions Σ on client k: Σ ← Σ − Σ_{:,k} Σ_{k,:} / Σ_kk.
func (q *Posterior) Condition(k int) {
	u := q.Column(k)
	c := u[k]
	up := 0.0
	for i, v := range u {
		up += v * q.p[i]
	}
	for i, v := range u {
		q.vars[i] -= v * v / c
		q.sums[i] -= v * up / c
	}
	q.us = append(q.us, u)
	q.cs = append(q.cs, c)
}

// Select picks m distinct clients greedily (FedCor §4.2; the official
// code's GPR.Select_Clients without ε-greedy or a dynamic count): each step
// takes
//
//	k = argmax_k (Σ_i p_i Σ_ik) · α_k / √Σ_kk
//
// over the clients not yet taken (equal scores: the lower client), then
// conditions Σ on k. alpha holds FedCor's discounts α_k (β^{times selected
// since the GP was trained}). The official code sums Σ_i p_i Σ_ik over the
// clients not yet taken only; the rows of taken clients are zero after
// conditioning, so the two agree up to rounding. Clients come back in the
// order taken.
func Select(x []float64, n, d int, noise float64, p, alpha []float64, m int) []int {
	if len(alpha) != n || m > n {
		panic("gp: Select size mismatch")
	}
	q := NewPosterior(x, n, d, noise, p)
	taken := make([]bool, n)
	out := make([]int, 0, m)
	for range m {
		best, bestScore := -1, math.Inf(-1)
		for k := range n {
			if taken[k] {
				continue
			}
			s := q.sums[k] * alpha[k] / math.Sqrt(q.vars[k])
			if best < 0 || s > bestScore {
				best, bestScore = k, s
			}
		}
		taken[best] = true
		out = append(out, best)
		q.Condition(best)
	}
	return out
}
