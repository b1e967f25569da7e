package attack

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flsweep/flsweep/trainer"
	"gonum.org/v1/gonum/mat"
)

// ILRG is iLRG (Ma, Sun, Cui, Li, Guan & Liu, "Instance-wise Batch Label
// Restoration via Gradients in Federated Learning", ICLR 2023; "iRLG" in
// Chen & Vikalo). For an untrained model the gradient of the output layer
// gives each class's mean embedding and, through the output layer, its
// mean posterior, and the counts k solve a linear system:
//
//  1. ê_j = ḡ_W[j]/ḡ_b,j  (ḡ = −Δ/(η·m), the steps' mean gradient);
//  2. p̂_j = softmax(W ê_j + b) with θ^t's output layer;
//  3. Σ_j k_j = T and, for every class i, Σ_j (p̂_j[i] − δ_ij)·k_j = T·ḡ_b,i,
//     an (N+1)×N system solved by the Moore–Penrose pseudo-inverse
//     (singular values below 10⁻¹⁵ of the largest dropped, numpy's pinv);
//  4. negatives clipped to 0 and the rest rounded by largest remainders to
//     T (the official code rounds each count and zeroes those above T, so
//     its sum may miss T).
//
// T = T_k, as Chen & Vikalo's benchmark runs it on the m-step mean
// gradient. A class with ḡ_b,j = 0 (or an ê_j too large for float64)
// gets ê_j = 0.
type ILRG struct{}

// Name returns "ilrg".
func (ILRG) Name() string { return "ilrg" }

// Recover implements Attack.
func (a ILRG) Recover(_ context.Context, _ *trainer.Trainer, in Input, _ *rand.Rand) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, err
	}
	n, total := in.Net.Classes(), in.Local.Total()
	wp, bp := in.Net.Output()
	l := in.Net.Embedding()
	gW, gb := in.naive()
	sys := mat.NewDense(n+1, n, nil)
	rhs := mat.NewVecDense(n+1, nil)
	for j := range n {
		sys.Set(0, j, 1)
	}
	rhs.SetVec(0, float64(total))
	q := make([]float64, n)
	for j := range n { // column j: the posterior of class j's mean embedding
		finite := true
		for i := range n {
			v := 0.0
			if gb[j] != 0 {
				for k := range l {
					v += float64(in.Global[wp.Offset+i*l+k]) * gW[j][k] / gb[j]
				}
			}
			q[i] = v
			finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		for i := range n {
			if !finite {
				q[i] = 0
			}
			q[i] += float64(in.Global[bp.Offset+i])
		}
		for i, p := range softmax(q) {
			if i == j {
				p--
			}
			sys.Set(1+i, j, p)
		}
	}
	for i := range n {
		rhs.SetVec(1+i, float64(total)*gb[i])
	}
	var svd mat.SVD
	if !svd.Factorize(sys, mat.SVDThin) {
		return Result{}, fmt.Errorf("ilrg: the SVD of the %d×%d system failed: %w", n+1, n, ErrNotApplicable)
	}
	var k mat.VecDense
	svd.SolveVecTo(&k, rhs, max(1, svd.Rank(1e-15)))
	est := make([]float64, n)
	for j := range est {
		if v := k.AtVec(j); v > 0 && !math.IsInf(v, 0) {
			est[j] = v
		}
	}
	counts := LargestRemainder(est, total)
	return Result{Method: a.Name(), Counts: histogram(counts, n, total), Heuristic: in.Local.adam()}, nil
}
