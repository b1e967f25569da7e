package qp

import (
	"fmt"
	"math"

	"github.com/flsweep/flsweep/fl"
)

// SimplexLeastSquares returns a minimiser of the least-squares problem over
// the probability simplex,
//
//	min_z ‖A z − u‖²   subject to   z ≥ 0,  Σ_j z_j = 1
//
// for an m×n matrix A (rows are equations) and u of length m. It is
// SimplexBox with G = 2AᵀA and c = −2Aᵀu (‖Az − u‖² = zᵀAᵀAz − 2uᵀAz + ‖u‖²),
// solved exactly by the active-set method; the RLU attack's Eq. (10) (Chen &
// Vikalo, ICML 2024, arXiv:2405.00955, §3.2.1), whose constraint
// 0 ≤ z ≤ 1 ∧ ‖z‖₁ = 1 is the simplex. When A is rank-deficient on the
// simplex the minimiser need not be unique, and the one returned is a vertex
// of the optimal set. Malformed input (ragged or empty A, a u of the wrong
// length, non-finite entries) is fl.ErrInvalid.
func SimplexLeastSquares(A [][]float64, u []float64) ([]float64, error) {
	m := len(A)
	if m == 0 || len(A[0]) == 0 {
		return nil, fmt.Errorf("simplex least squares: empty matrix: %w", fl.ErrInvalid)
	}
	n := len(A[0])
	if len(u) != m {
		return nil, fmt.Errorf("simplex least squares: %d×%d matrix and %d right-hand sides: %w", m, n, len(u), fl.ErrInvalid)
	}
	for r, row := range A {
		if len(row) != n {
			return nil, fmt.Errorf("simplex least squares: row %d of A has %d values; want %d: %w", r, len(row), n, fl.ErrInvalid)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("simplex least squares: A[%d][%d] = %v is not finite: %w", r, j, v, fl.ErrInvalid)
			}
		}
		if math.IsNaN(u[r]) || math.IsInf(u[r], 0) {
			return nil, fmt.Errorf("simplex least squares: u[%d] = %v is not finite: %w", r, u[r], fl.ErrInvalid)
		}
	}
	G := make([][]float64, n)
	c := make([]float64, n)
	for i := range G {
		G[i] = make([]float64, n)
	}
	// G is filled symmetrically (G[j][i] = G[i][j] bit for bit), as
	// SimplexBox requires; sums run over the rows in order.
	for i := range n {
		for j := i; j < n; j++ {
			v := 0.0
			for _, row := range A {
				v += row[i] * row[j]
			}
			G[i][j], G[j][i] = 2*v, 2*v
		}
		v := 0.0
		for r, row := range A {
			v += row[i] * u[r]
		}
		c[i] = -2 * v
	}
	lo, hi := make([]float64, n), make([]float64, n)
	for i := range hi {
		hi[i] = 1
	}
	return SimplexBox(G, c, lo, hi)
}
