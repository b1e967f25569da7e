package sampling

import (
	"fmt"

	"github.com/flsweep/flsweep/fl"
)

// ClosedForm is implemented by the samplers whose characteristics have closed
// forms (Fraboni et al. 2022, App. A; specs/sampling-theory.md §2, "Extended
// closed forms"): uniform, md, binomial, poisson and clustered. Callers that
// hold any sampler ask it with a type assertion; pow-d and random have none.
//
// Closed returns the exact Σ, α, VarSum, γ, E[N] and Var[N] of drawing from
// importances p (Σ p = 1), with Mean = p and Var[k] = Var[ω_k]. It returns an
// error wrapping fl.ErrInvalid when the scheme cannot draw from p with its
// budget (m > n, or Poisson's m·p_max > 1).
type ClosedForm interface {
	Closed(p []float64) (Characteristics, error)
}

var (
	_ ClosedForm = MD{}
	_ ClosedForm = Uniform{}
	_ ClosedForm = Binomial{}
	_ ClosedForm = Poisson{}
	_ ClosedForm = Clustered{}
)

// Closed implements ClosedForm (TheoryMD).
func (d MD) Closed(p []float64) (Characteristics, error) {
	if err := checkBudget(d.M, len(p)); err != nil {
		return Characteristics{}, err
	}
	return TheoryMD(p, d.M), nil
}

// Closed implements ClosedForm (TheoryUniform).
func (u Uniform) Closed(p []float64) (Characteristics, error) {
	if err := checkBudget(u.M, len(p)); err != nil {
		return Characteristics{}, err
	}
	return TheoryUniform(p, u.M), nil
}

// Corollary1 returns Sp2 = Σ p_k², the threshold 1/(n − m + 1) of Fraboni et
// al. 2022, Corollary 1 (eq. 13), and its verdict: Uniform has better
// guarantees than MD (Σ_U ≤ Σ_MD and γ_U ≤ γ_MD) iff Sp2 ≤ threshold. The
// condition is sufficient for a better bound, not for faster training.
func Corollary1(p []float64, m int) (sp2, threshold float64, uniformBetter bool) {
	sp2 = SumSquares(p)
	threshold = 1 / float64(len(p)-m+1)
	return sp2, threshold, sp2 <= threshold
}

// checkBudget checks 1 <= m <= n.
func checkBudget(m, n int) error {
	if m < 1 || m > n {
		return fmt.Errorf("clients_per_round = %d must be in [1, %d] (the number of clients); change it: %w", m, n, fl.ErrInvalid)
	}
	return nil
}
