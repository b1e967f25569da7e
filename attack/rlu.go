package attack

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/qp"
	"github.com/flsweep/flsweep/trainer"
)

// Scales of RLU's right-hand side u (RLU.Scale).
const (
	ScaleRho   = ""     // u = (Δb + h)/(η·Σ_τ ρ^(τ)): Eq. (16) undone (the default)
	ScaleSteps = "m"    // u = Δb/(η·m): ρ and h ignored (the ρ-naive ablation)
	ScaleNone  = "none" // u = Δb/η: Eq. (10) as printed, without 1/m (the ablation)
)

// RLU is Recovering Labels from Local Updates (Chen & Vikalo, "Recovering
// Labels from Local Updates in Federated Learning", ICML 2024, PMLR 235,
// arXiv:2405.00955, §3 and App. C, Alg. 1): the bias update's expectation
// is linear in the label counts with coefficients from the model's
// erroneous confidences, and the counts solve a least squares over the
// simplex (see the package documentation). The zero value is the method;
// the other fields select the variants and ablations the benchmark
// compares.
type RLU struct {
	// ClosedForm replaces the least squares by the official code's closed
	// form z_j ∝ max(0, u_j + S̄_j), S̄_j = mean_{n≠j} S[n][j] (the
	// untrained-model limit of the least squares; the official code uses
	// S̄ = softmax of the mean erroneous logits, we use the mean of S).
	ClosedForm bool
	// StartOnly estimates S from θ^t alone when m > 1 (the ablation; the
	// paper averages the start and end models' S, §3.2.2).
	StartOnly bool
	// Scale selects u: ScaleRho (default), ScaleSteps or ScaleNone.
	Scale string
	// Transposed builds A as Alg. 1's words read literally, a_{n,j} =
	// −S_{n,j} with n the row: the transpose of Eq. (9)'s matrix (the
	// ablation that pins the orientation). The closed form has no A, so
	// Transposed with ClosedForm is fl.ErrInvalid.
	Transposed bool
	// Posterior, if not nil, refines the counts of m > 1 steps by the
	// paper's posterior search (Alg. 2; see Posterior). It needs r.
	Posterior *Posterior
}

// Name returns "rlu" and the variant's suffixes, in a fixed order:
// -closed-form, -start, -naive (ScaleSteps) or -unscaled (ScaleNone),
// -transposed, -posterior.
func (a RLU) Name() string {
	var b strings.Builder
	b.WriteString("rlu")
	if a.ClosedForm {
		b.WriteString("-closed-form")
	}
	if a.StartOnly {
		b.WriteString("-start")
	}
	switch a.Scale {
	case ScaleSteps:
		b.WriteString("-naive")
	case ScaleNone:
		b.WriteString("-unscaled")
	}
	if a.Transposed {
		b.WriteString("-transposed")
	}
	if a.Posterior != nil {
		b.WriteString("-posterior")
	}
	return b.String()
}

// Coefficients returns RLU's matrix A for the erroneous confidences S
// (Eq. (9) in matrix form, with u = Az and z = N/|B|):
//
//	A[j][j] = Σ_{n≠j} S[j][n],   A[j][n] = −S[n][j]  (n ≠ j)
//
// Row j is the equation of class j's bias, column n the count of class n.
// Every column sums to 0 (1ᵀA = 0, A is singular, Σ_j u_j = 0), which is
// why the constraint Σ z = 1 is needed. The paper's text and Alg. 1 say
// "the (n, j) off-diagonal entry is −S_{n,j}", which read as row n,
// column j is the transpose of this; Eq. (9) fixes the orientation.
func Coefficients(S [][]float64) [][]float64 {
	n := len(S)
	A := make([][]float64, n)
	for j := range A {
		A[j] = make([]float64, n)
		for k := range n {
			if k == j {
				for l, v := range S[j] {
					if l != j {
						A[j][j] += v
					}
				}
			} else {
				A[j][k] = -S[k][j]
			}
		}
	}
	return A
}

// transpose returns Aᵀ.
func transpose(A [][]float64) [][]float64 {
	T := make([][]float64, len(A[0]))
	for i := range T {
		T[i] = make([]float64, len(A))
		for j := range A {
			T[i][j] = A[j][i]
		}
	}
	return T
}

// Solve returns RLU's estimate for the erroneous confidences S and the
// bias signal u (Eq. (10)): the proportions
//
//	z* = argmin ‖A z − u‖²  over  z ≥ 0, Σ z = 1,   A = Coefficients(S)
//
// solved exactly (qp.SimplexLeastSquares), and the counts
// LargestRemainder(z*, total).
func Solve(S [][]float64, u []float64, total int) ([]float64, []int, error) {
	if len(S) != len(u) {
		return nil, nil, fmt.Errorf("rlu: %d rows of S and %d entries of u: %w", len(S), len(u), fl.ErrInvalid)
	}
	z, err := qp.SimplexLeastSquares(Coefficients(S), u)
	if err != nil {
		return nil, nil, fmt.Errorf("rlu: %w", err)
	}
	return z, LargestRemainder(z, total), nil
}

// closedForm returns z_j ∝ max(0, u_j + S̄_j), S̄_j = mean_{n≠j} S[n][j]
// (the official code's estimated_entropy_from_grad; uniform if nothing is
// positive).
func closedForm(S [][]float64, u []float64) []float64 {
	n := len(u)
	z := make([]float64, n)
	s := 0.0
	for j := range z {
		bar := 0.0
		for k := range n {
			if k != j {
				bar += S[k][j]
			}
		}
		z[j] = math.Max(0, u[j]+bar/float64(n-1))
		s += z[j]
	}
	for j := range z {
		if s > 0 {
			z[j] /= s
		} else {
			z[j] = 1 / float64(n)
		}
	}
	return z
}

// adamSignal is our heuristic for Adam, which RLU does not cover: the
// first Adam step moves each coordinate by −η·g/(|g| + ε) ≈ −η·sign(g), so
// the update keeps the signs of the bias gradients (which classes are
// over-represented) and loses their scale. We take d = Δb/(η·m), a
// per-step update in [−1, 1], as u up to one unknown factor κ, and set κ
// so that ‖κd‖ = ‖A ẑ‖, with ẑ uniform over the classes whose bias rose
// (d_j > 0; all classes if none): the size of the signal a client holding
// only those classes, in equal parts, would send. It is a heuristic; the
// Result says so.
func adamSignal(A [][]float64, db []float64, l Local) []float64 {
	n := len(db)
	d := make([]float64, n)
	var up []int
	for j, v := range db {
		d[j] = v / (l.LR * float64(l.Steps))
		if d[j] > 0 {
			up = append(up, j)
		}
	}
	if len(up) == 0 {
		for j := range n {
			up = append(up, j)
		}
	}
	zh := make([]float64, n)
	for _, j := range up {
		zh[j] = 1 / float64(len(up))
	}
	ref, norm := 0.0, 0.0
	for j := range n {
		v := 0.0
		for k := range n {
			v += A[j][k] * zh[k]
		}
		ref += v * v
		norm += d[j] * d[j]
	}
	if norm == 0 {
		return d
	}
	k := math.Sqrt(ref / norm)
	for j := range d {
		d[j] *= k
	}
	return d
}

// Recover implements Attack:
//
//  1. u from the bias update (Scale; Adam: adamSignal, flagged);
//  2. S from the auxiliary set at θ^t, averaged with S at θ^t + Δ when
//     m > 1 (§3.2.2; equivalently Ā = (A^(t) + A^(t+1))/2, A being linear
//     in S);
//  3. z* of the least squares with A = Coefficients(S), or the closed form;
//  4. counts = LargestRemainder(z*, T_k), T_k = Local.Total();
//  5. with Posterior and m > 1, the posterior search from those counts.
func (a RLU) Recover(ctx context.Context, tr *trainer.Trainer, in Input, r *rand.Rand) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, err
	}
	if a.Scale != ScaleRho && a.Scale != ScaleSteps && a.Scale != ScaleNone {
		return Result{}, fmt.Errorf("rlu: scale %q is unknown; use %q, %q or %q: %w", a.Scale, ScaleRho, ScaleSteps, ScaleNone, fl.ErrInvalid)
	}
	if a.Transposed && a.ClosedForm {
		return Result{}, fmt.Errorf("rlu: the closed form has no matrix to transpose: %w", fl.ErrInvalid)
	}
	if a.Posterior != nil && r == nil {
		return Result{}, fmt.Errorf("rlu: the posterior search draws; pass a seeded *rand.Rand: %w", fl.ErrInvalid)
	}
	res := Result{Method: a.Name()}
	l, total := in.Local, in.Local.Total()
	multi := l.Steps > 1
	start, err := forward(ctx, tr, in.Net, in.Global, in.Aux, false)
	if err != nil {
		return Result{}, err
	}
	S := start.confidences()
	var end pass
	if multi && (!a.StartOnly || a.Posterior != nil) {
		if end, err = forward(ctx, tr, in.Net, in.local(), in.Aux, false); err != nil {
			return Result{}, err
		}
		if !a.StartOnly {
			S = meanMatrix(S, end.confidences())
		}
	}
	A := Coefficients(S)
	if a.Transposed {
		A = transpose(A)
	}
	_, db, _, _ := in.output()
	var u []float64
	switch {
	case l.adam():
		u, res.Heuristic = adamSignal(A, db, l), true
	case a.Scale == ScaleRho:
		if _, u, err = in.signal(); err != nil {
			return Result{}, err
		}
	default:
		den := l.LR
		if a.Scale == ScaleSteps {
			den *= float64(l.Steps)
		}
		u = make([]float64, len(db))
		for j, v := range db {
			u[j] = v / den
		}
	}
	var z []float64
	if a.ClosedForm {
		z = closedForm(S, u)
	} else if z, err = qp.SimplexLeastSquares(A, u); err != nil {
		return Result{}, fmt.Errorf("rlu: %w", err)
	}
	counts := LargestRemainder(z, total)
	if a.Posterior != nil && multi {
		if counts, err = a.Posterior.search(&in, start, end, counts, r); err != nil {
			return Result{}, err
		}
	}
	res.Counts, res.Proportions = histogram(counts, len(db), total), z
	return res, nil
}
