// Package gp is the Gaussian-process arithmetic of FedCor (Tang, Ning, Wang,
// Sun, Wang, Li, Chen, "FedCor: Correlation-Based Active Client Selection
// Strategy for Heterogeneous Federated Learning", CVPR 2022,
// arXiv:2103.13822; specs/hicsfl.md §2): a GP over clients whose covariance
// is an order-1 polynomial kernel on learned client embeddings plus noise,
//
//	Σ = X Xᵀ + σ_n² I,   X ∈ R^{N×D} (row k is client k's embedding x_k),
//
// its leave-one-out (LOO) predictive log-probability and that quantity's
// gradient with respect to Σ, X and σ_n, the Adam optimiser that fits X, and
// the greedy posterior selection of FedCor's clients.
//
// Everything is float64 and deterministic: fixed iteration counts, sums in
// index order, no maps. Matrices are gonum's; Cholesky factorisations and
// solves are gonum's (LAPACK in pure Go).
//
// # Errors
//
// Functions return an error when a covariance is not positive definite
// (ErrNotPD); sizes that do not match are programming errors and panic
// ("gp: ..."), as in gonum.
package gp

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrNotPD reports a covariance matrix that is not numerically positive
// definite (its Cholesky factorisation failed).
var ErrNotPD = errors.New("gp: covariance is not positive definite")

// Covariance returns the kernel matrix of FedCor's order-1 polynomial kernel
// (the official code's Poly_Kernel(order=1, Normalize=False)) with noise:
//
//	Σ_ij = x_iᵀ x_j + σ_n² δ_ij
//
// x holds n embeddings of d values each, row-major (x[i*d : (i+1)*d] is x_i).
func Covariance(x []float64, n, d int, noise float64) *mat.SymDense {
	if len(x) != n*d {
		panic("gp: embedding size mismatch")
	}
	X := mat.NewDense(n, d, x)
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1, X)
	for i := range n {
		s.SetSym(i, i, s.At(i, i)+noise*noise)
	}
	return s
}

// LOO returns the discounted leave-one-out predictive log-probability of the
// samples ys under a GP with covariance k and mean mu (Rasmussen & Williams,
// "Gaussian Processes for Machine Learning", 2006, §5.4.2, eq. (5.10)–(5.12)),
//
//	L = Σ_e w_e Σ_{i∈T} log p(y_ei | y_{e,−i}),
//	log p(y_i | y_{−i}) = −½ log σ_i² − (y_i − μ̂_i)²/(2σ_i²) − ½ log 2π,
//	μ̂_i = y_i − [A r]_i / A_ii,   σ_i² = 1 / A_ii,   A = Σ⁻¹,  r = y − μ,
//
// and its gradient with respect to the covariance, G = ∂L/∂Σ (symmetric;
// R&W eq. (5.13) in matrix form):
//
//	G = −A diag(c) A + ½ Σ_e w_e (A b_e α_eᵀ + α_e b_eᵀ A),
//	α_e = A r_e,  b_ei = α_ei / A_ii,  c_i = Σ_e w_e (1 + α_ei²/A_ii) / (2 A_ii),
//
// with b_ei = c_i = 0 for i ∉ T. Every ys[e] has one value per client (FedCor
// records the loss change of every client in the rounds it trains on).
// terms lists T; nil means every client. The cost is one Cholesky
// factorisation, one inverse and one product of n×n matrices, O(n³), plus
// O(n²) per sample.
func LOO(k *mat.SymDense, mu []float64, ys [][]float64, w []float64, terms []int) (float64, *mat.SymDense, error) {
	n := k.SymmetricDim()
	if len(mu) != n || len(w) != len(ys) {
		panic("gp: LOO size mismatch")
	}
	var ch mat.Cholesky
	if !ch.Factorize(k) {
		return 0, nil, ErrNotPD
	}
	var a mat.SymDense
	if err := ch.InverseTo(&a); err != nil {
		return 0, nil, ErrNotPD
	}
	in := termMask(n, terms)
	diag := make([]float64, n)
	for i := range n {
		diag[i] = a.At(i, i)
		if in[i] && !(diag[i] > 0) {
			return 0, nil, ErrNotPD
		}
	}
	c := make([]float64, n)
	g := mat.NewSymDense(n, nil)
	r := mat.NewVecDense(n, nil)
	alpha := mat.NewVecDense(n, nil)
	b := mat.NewVecDense(n, nil)
	ab := mat.NewVecDense(n, nil)
	total := 0.0
	for e, y := range ys {
		if len(y) != n {
			panic("gp: LOO sample size mismatch")
		}
		for i := range n {
			r.SetVec(i, y[i]-mu[i])
		}
		alpha.MulVec(&a, r)
		total += w[e] * looSample(alpha, diag, in, w[e], b, c)
		ab.MulVec(&a, b)
		g.RankTwo(g, 0.5*w[e], ab, alpha) // ½ w (A b αᵀ + α bᵀ A)
	}
	// −A diag(c) A = −(A C^{½})(A C^{½})ᵀ would need c ≥ 0, which holds, but
	// a plain product keeps it simple: M = A diag(c), then −M A.
	m := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			m.Set(i, j, a.At(i, j)*c[j])
		}
	}
	var mam mat.Dense
	mam.Mul(m, &a)
	for i := range n {
		for j := i; j < n; j++ {
			g.SetSym(i, j, g.At(i, j)-0.5*(mam.At(i, j)+mam.At(j, i)))
		}
	}
	return total, g, nil
}

// EmbeddingGrad returns ∂L/∂X for Σ = X Xᵀ + σ_n² I given G = ∂L/∂Σ
// (symmetric): dL = tr(G dΣ) = 2 tr(Xᵀ G dX), so
//
//	∂L/∂X = 2 G X,
//
// row-major like x.
func EmbeddingGrad(g *mat.SymDense, x []float64, n, d int) []float64 {
	if len(x) != n*d || g.SymmetricDim() != n {
		panic("gp: EmbeddingGrad size mismatch")
	}
	out := make([]float64, n*d)
	var gx mat.Dense
	gx.Mul(g, mat.NewDense(n, d, x))
	for i := range n {
		for j := range d {
			out[i*d+j] = 2 * gx.At(i, j)
		}
	}
	return out
}

// NoiseGrad returns ∂L/∂σ_n for Σ = X Xᵀ + σ_n² I given G = ∂L/∂Σ:
//
//	∂L/∂σ_n = 2 σ_n tr(G).
func NoiseGrad(g *mat.SymDense, noise float64) float64 {
	tr := 0.0
	for i := range g.SymmetricDim() {
		tr += g.At(i, i)
	}
	return 2 * noise * tr
}

// Mean returns the discounted maximum-likelihood mean of each client's
// samples (the official code's GPR.MLE_Mean):
//
//	μ_k = Σ_e w_e y_ek / Σ_e w_e.
func Mean(ys [][]float64, w []float64, n int) []float64 {
	mu := make([]float64, n)
	sw := 0.0
	for e, y := range ys {
		for k := range n {
			mu[k] += w[e] * y[k]
		}
		sw += w[e]
	}
	if sw > 0 {
		for k := range mu {
			mu[k] /= sw
		}
	}
	return mu
}

// termMask marks the LOO terms T among n clients; nil terms is every client.
func termMask(n int, terms []int) []bool {
	in := make([]bool, n)
	if terms == nil {
		for i := range in {
			in[i] = true
		}
	}
	for _, i := range terms {
		in[i] = true
	}
	return in
}

// looSample returns one sample's Σ_{i∈T} log p(y_i | y_{−i}) from α = A r
// and A's diagonal, sets b_i = α_i/A_ii (0 outside T) and adds the sample's
// w·(1 + α_i²/A_ii)/(2A_ii) to c_i: the per-sample part of LOO and LOOGrad.
func looSample(alpha *mat.VecDense, diag []float64, in []bool, w float64, b *mat.VecDense, c []float64) float64 {
	lp := 0.0
	for i, inT := range in {
		b.SetVec(i, 0)
		if !inT {
			continue
		}
		ai, aii := alpha.AtVec(i), diag[i]
		lp += 0.5*math.Log(aii) - ai*ai/(2*aii) - 0.5*math.Log(2*math.Pi)
		b.SetVec(i, ai/aii)
		c[i] += w * (1 + ai*ai/aii) / (2 * aii)
	}
	return lp
}
