// Package qp solves the small quadratic programmes over the probability
// simplex that the FL methods need: FedMGDA+'s min-norm weights (package
// algorithm) and the simplex-constrained least squares of the RLU
// label-recovery attack (package attack). N is at most a few hundred, so the
// solvers are exact active-set methods on dense matrices, in float64.
//
// # Errors
//
// Malformed problems (sizes, non-finite or asymmetric entries, empty
// feasible sets) are errors wrapping fl.ErrInvalid.
package qp

import (
	"fmt"
	"math"

	"github.com/flsweep/flsweep/fl"
)

// SimplexBox solves the convex quadratic programme
//
//	min_x  ½ xᵀ G x + cᵀ x   subject to   Σ_i x_i = 1,   lo_i ≤ x_i ≤ hi_i
//
// for a symmetric positive semidefinite G, possibly singular, and a linear
// term c (nil means 0). With c = nil it is FedMGDA+'s weight problem (Hu,
// Shaloudegi, Zhang & Yu, IEEE TNSE 2022, arXiv:2006.11489), min λᵀGλ for a
// Gram matrix G_ij = d_i·d_j, so λᵀGλ = ‖Σ_i λ_i d_i‖²; SimplexLeastSquares
// is the case G = 2AᵀA, c = −2Aᵀu. It returns a minimiser; when G is
// singular the minimiser need not be unique, and the one returned is a
// vertex of the optimal set.
//
// The method is a primal active-set method that keeps the reduced Hessian
// positive definite (an inertia-controlling method; Gill, Murray, Saunders
// & Wright, Math. Prog. 1991; Nocedal & Wright, Numerical Optimization,
// 2nd ed., §16.5). It starts at a vertex (the bounds filled greedily in
// index order, one variable free), and at each iteration either takes the
// Newton step in the subspace of the free variables (with Σ p = 0) up to
// the first bound it meets, or, at a subspace minimiser whose bound
// multipliers do not all have the right sign, frees the most violating
// variable and moves along the direction z that keeps the step G-conjugate
// to the subspace: the exact minimiser along z when zᵀGz > 0, and until a
// bound is met when zᵀGz = 0 (G singular), which then restores positive
// definiteness. The objective never increases and each subspace is
// visited at most once away from degenerate steps, so it terminates in
// finitely many steps; the answer satisfies the KKT conditions, with
// g = Gx + c,
//
//	g_i ≥ ν where x_i = lo_i,  g_i ≤ ν where x_i = hi_i,  g_i = ν otherwise
//
// up to rounding. Every iteration solves a dense (|F|+1)-square system by
// Gaussian elimination: O(n³) per iteration and O(n) iterations typically,
// for the n ≤ a few hundred variables of its uses.
//
// Preconditions: G is n×n and symmetric, c is nil or of length n, lo ≤ hi
// entrywise, and Σ lo ≤ 1 ≤ Σ hi (up to rounding); violations are
// fl.ErrInvalid. Variables with lo_i = hi_i are fixed there.
func SimplexBox(G [][]float64, c, lo, hi []float64) ([]float64, error) {
	n := len(G)
	if len(lo) != n || len(hi) != n || (c != nil && len(c) != n) {
		return nil, fmt.Errorf("simplex QP: %d×? matrix with %d lower and %d upper bounds and %d linear coefficients: %w", n, len(lo), len(hi), len(c), fl.ErrInvalid)
	}
	if n == 0 {
		return nil, fmt.Errorf("simplex QP: no variables: %w", fl.ErrInvalid)
	}
	scale, sumLo, sumHi := 0.0, 0.0, 0.0
	for i, row := range G {
		if len(row) != n {
			return nil, fmt.Errorf("simplex QP: row %d of G has %d values; want %d: %w", i, len(row), n, fl.ErrInvalid)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) || v != G[j][i] {
				return nil, fmt.Errorf("simplex QP: G[%d][%d] = %v is not finite or not symmetric: %w", i, j, v, fl.ErrInvalid)
			}
			scale = math.Max(scale, math.Abs(v))
		}
		if c != nil {
			if math.IsNaN(c[i]) || math.IsInf(c[i], 0) {
				return nil, fmt.Errorf("simplex QP: c[%d] = %v is not finite: %w", i, c[i], fl.ErrInvalid)
			}
			scale = math.Max(scale, math.Abs(c[i]))
		}
		if !(lo[i] <= hi[i]) || math.IsInf(lo[i], 0) || math.IsInf(hi[i], 0) {
			return nil, fmt.Errorf("simplex QP: bounds [%v, %v] of variable %d are not a finite interval: %w", lo[i], hi[i], i, fl.ErrInvalid)
		}
		sumLo += lo[i]
		sumHi += hi[i]
	}
	slack := 1e-12 * float64(n)
	if sumLo > 1+slack || sumHi < 1-slack {
		return nil, fmt.Errorf("simplex QP: Σ lo = %v and Σ hi = %v leave no x with Σ x = 1: %w", sumLo, sumHi, fl.ErrInvalid)
	}
	q := &simplexQP{G: G, c: c, lo: lo, hi: hi, n: n, tol: 64 * float64(n) * 0x1p-52 * scale}
	return q.solve()
}

// Variable states of the active-set method.
const (
	qpLower int8 = iota // at lo
	qpUpper             // at hi
	qpFree              // in the working subspace
	qpFixed             // lo = hi
)

type simplexQP struct {
	G      [][]float64
	c      []float64 // nil: 0
	lo, hi []float64
	n      int
	tol    float64 // multiplier tolerance: the rounding of Gx + c
	x      []float64
	state  []int8
}

func (q *simplexQP) solve() ([]float64, error) {
	q.start()
	free := q.free()
	if len(free) == 0 { // every variable fixed
		return q.x, nil
	}
	atMin := true // x minimises the objective on its subspace (true at a vertex)
	limit := 20*q.n + 100
	for iter := 0; iter < limit; iter++ {
		if !atMin && len(free) == 1 { // the subspace is a point
			atMin = true
		}
		if !atMin { // Newton step in the subspace, up to the first bound
			g := q.grad()
			rhs := make([]float64, len(free))
			for a, k := range free {
				rhs[a] = -g[k]
			}
			p, err := q.kkt(free, rhs, 0)
			if err != nil {
				return nil, err
			}
			blocked, err := q.step(free, p, 1)
			if err != nil {
				return nil, err
			}
			atMin = blocked < 0
			free = q.free()
			continue
		}
		i, s := q.violator(free)
		if i < 0 {
			return q.x, nil
		}
		// z: z_i = s, Σ z = 0 and z_F minimising zᵀGz, which makes z
		// G-conjugate to the subspace of the free variables.
		rhs := make([]float64, len(free))
		for a, k := range free {
			rhs[a] = -q.G[k][i] * s
		}
		zf, err := q.kkt(free, rhs, -s)
		if err != nil {
			return nil, err
		}
		idx := append(append([]int(nil), free...), i)
		z := append(zf, s)
		g := q.grad()
		curv, gz := 0.0, 0.0
		for a, k := range idx {
			gz += g[k] * z[a]
			for b, l := range idx {
				curv += z[a] * q.G[k][l] * z[b]
			}
		}
		t := math.Inf(1) // zero curvature: on to the first bound
		if curv > 0 {
			t = -gz / curv
		}
		q.state[i] = qpFree
		blocked, err := q.step(idx, z, t)
		if err != nil {
			return nil, err
		}
		// Stopping at i's other bound keeps x a subspace minimiser (z is
		// G-conjugate to the subspace); stopping at another bound does not.
		atMin = blocked < 0 || blocked == i
		free = q.free()
	}
	return nil, fmt.Errorf("simplex QP: no solution after %d active-set iterations (cycling on a degenerate problem?)", limit)
}

// start puts x at a vertex: every variable at lo, then, in index order,
// each raised to hi until Σ x = 1. The variable that absorbs the rest is
// free (the last raised one, or the first non-fixed one when Σ lo ≥ 1).
func (q *simplexQP) start() {
	q.x = append([]float64(nil), q.lo...)
	q.state = make([]int8, q.n)
	rest := 1.0
	for _, v := range q.lo {
		rest -= v
	}
	basic := -1
	for i := range q.x {
		if q.lo[i] == q.hi[i] {
			q.state[i] = qpFixed
			continue
		}
		if basic < 0 {
			basic = i
		}
		if rest <= 0 {
			continue
		}
		if w := q.hi[i] - q.lo[i]; w <= rest {
			q.x[i], q.state[i] = q.hi[i], qpUpper
			rest -= w
		} else {
			q.x[i] += rest
			rest = 0
		}
		basic = i
	}
	if basic >= 0 {
		q.state[basic] = qpFree
	}
}

// free returns the free variables in index order.
func (q *simplexQP) free() []int {
	var f []int
	for i, s := range q.state {
		if s == qpFree {
			f = append(f, i)
		}
	}
	return f
}

// grad returns the objective's gradient Gx + c, summed in index order.
func (q *simplexQP) grad() []float64 {
	g := make([]float64, q.n)
	for i, row := range q.G {
		for j, v := range row {
			g[i] += v * q.x[j]
		}
		if q.c != nil {
			g[i] += q.c[i]
		}
	}
	return g
}

// violator returns the bound variable whose multiplier most violates the
// KKT conditions at a subspace minimiser and the direction s = ±1 that
// frees it, or −1 when x is optimal. ν is the free variables' common
// value of (Gx + c)_i.
func (q *simplexQP) violator(free []int) (int, float64) {
	g := q.grad()
	nu := 0.0
	for _, k := range free {
		nu += g[k]
	}
	nu /= float64(len(free))
	worst, at, s := q.tol, -1, 0.0
	for i, st := range q.state {
		switch {
		case st == qpLower && nu-g[i] > worst:
			worst, at, s = nu-g[i], i, 1
		case st == qpUpper && g[i]-nu > worst:
			worst, at, s = g[i]-nu, i, -1
		}
	}
	return at, s
}

// step moves the variables idx by α·p, α ≤ tmax the largest step that
// keeps them within their bounds. The variable that stops the step (the
// lowest position in idx among ties) is put exactly at its bound and leaves
// the free set; step returns it, or −1 when the whole step tmax was taken.
func (q *simplexQP) step(idx []int, p []float64, tmax float64) (int, error) {
	pmax := 0.0
	for _, v := range p {
		pmax = math.Max(pmax, math.Abs(v))
	}
	alpha, block := tmax, -1
	for a, k := range idx {
		if math.Abs(p[a]) <= 1e-13*pmax {
			continue // the rounding noise of a zero component
		}
		var r float64
		if p[a] > 0 {
			r = (q.hi[k] - q.x[k]) / p[a]
		} else {
			r = (q.lo[k] - q.x[k]) / p[a]
		}
		if r = math.Max(r, 0); r < alpha {
			alpha, block = r, a
		}
	}
	if math.IsInf(alpha, 0) || math.IsNaN(alpha) {
		return -1, fmt.Errorf("simplex QP: step %v along a direction without a bound (is G positive semidefinite?): %w", alpha, fl.ErrInvalid)
	}
	for a, k := range idx {
		q.x[k] = math.Min(math.Max(q.x[k]+alpha*p[a], q.lo[k]), q.hi[k])
	}
	if block < 0 {
		return -1, nil
	}
	k := idx[block]
	if p[block] > 0 {
		q.x[k], q.state[k] = q.hi[k], qpUpper
	} else {
		q.x[k], q.state[k] = q.lo[k], qpLower
	}
	return k, nil
}

// kkt solves the equality-constrained subproblem on the free variables,
//
//	[G_FF 1; 1ᵀ 0] [p; μ] = [rhs; sum]
//
// by Gaussian elimination with partial pivoting, and returns p. The
// active-set method keeps the system nonsingular.
func (q *simplexQP) kkt(free []int, rhs []float64, sum float64) ([]float64, error) {
	m := len(free) + 1
	a := make([][]float64, m)
	for r := range a {
		a[r] = make([]float64, m+1)
		if r < len(free) {
			for c, k := range free {
				a[r][c] = q.G[free[r]][k]
			}
			a[r][m-1], a[r][m] = 1, rhs[r]
		} else {
			for c := range free {
				a[r][c] = 1
			}
			a[r][m] = sum
		}
	}
	for col := range m {
		piv := col
		for r := col + 1; r < m; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if a[piv][col] == 0 {
			return nil, fmt.Errorf("simplex QP: singular subproblem on %d free variables (is G positive semidefinite?): %w", len(free), fl.ErrInvalid)
		}
		a[col], a[piv] = a[piv], a[col]
		for r := col + 1; r < m; r++ {
			f := a[r][col] / a[col][col]
			if f == 0 {
				continue
			}
			for c := col; c <= m; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	sol := make([]float64, m)
	for r := m - 1; r >= 0; r-- {
		v := a[r][m]
		for c := r + 1; c < m; c++ {
			v -= a[r][c] * sol[c]
		}
		sol[r] = v / a[r][r]
	}
	return sol[:len(free)], nil
}
