package sampling

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// Poisson is Poisson-binomial sampling (Fraboni et al. 2022, App. A.5,
// eq. 44): every client independently with probability m·p_k, weighted
//
//	ω_k = (1/m) · B_k,   B_k ~ Bernoulli(m p_k)
//
// so E[ω_k] = p_k. The covariances are 0 (α = 0), and (eqs. 45–48)
//
//	Var[ω_k] = p_k (1 − m p_k)/m,   Σ = VarSum = γ = 1/m − Sp2,
//	E[N] = m,   Var[N] = m − m² Sp2.
//
// It needs m·p_max ≤ 1; the paper's "only m ≥ p_max^{-1}" is a typo for
// m ≤ 1/p_max (specs/sampling-theory.md §7). A round can select nobody; the
// round then leaves θ and the server state unchanged (§4.8).
type Poisson struct {
	M int `json:"m"` // expected clients per round, 1 <= M <= 1/p_max
}

var _ fl.Sampler = Poisson{}

// NewPoisson builds the sampler from its spec options (none).
func NewPoisson(m int, opts fl.Options) (fl.Sampler, error) {
	if err := opts.Decode("sampler (poisson)", &struct{}{}); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	return Poisson{M: m}, nil
}

// probTolerance absorbs the rounding of m·p_k when m·p_max is 1 in exact
// arithmetic (p_k = n_k/M with m = M/n_k).
const probTolerance = 1e-12

// check returns an error unless 1 <= m <= n and m·p_max <= 1.
func (s Poisson) check(p []float64) error {
	if err := checkBudget(s.M, len(p)); err != nil {
		return err
	}
	pmax := slices.Max(p)
	if q := float64(s.M) * pmax; q > 1+probTolerance {
		return fmt.Errorf("sampler poisson: clients_per_round·p_max = %d × %.4g = %.4g > 1, but every client is drawn with probability m·p_k; lower clients_per_round to at most %d (⌊1/p_max⌋) or use md, which allows any m: %w",
			s.M, pmax, q, int(1/pmax+probTolerance), fl.ErrInvalid)
	}
	return nil
}

// Sample implements fl.Sampler: one Float64 from r per client, in client
// order. It costs O(n).
func (s Poisson) Sample(t int, pop fl.Population, r *rand.Rand) (fl.Selection, error) {
	if err := s.check(pop.P); err != nil {
		return fl.Selection{}, err
	}
	fm := float64(s.M)
	var sel fl.Selection
	for k, pk := range pop.P {
		if r.Float64() < fm*pk {
			sel.Clients = append(sel.Clients, k)
			sel.Weights = append(sel.Weights, 1/fm)
			sel.Draws = append(sel.Draws, 1)
		}
	}
	return sel, nil
}

// Closed implements ClosedForm (App. A.5).
func (s Poisson) Closed(p []float64) (Characteristics, error) {
	if err := s.check(p); err != nil {
		return Characteristics{}, err
	}
	fm := float64(s.M)
	sp2 := SumSquares(p)
	c := Characteristics{Mean: append([]float64(nil), p...), Var: make([]float64, len(p)), MeanN: fm, VarN: fm - fm*fm*sp2}
	for k, pk := range p {
		c.Var[k] = pk * (1 - fm*pk) / fm
	}
	c.Sigma = 1/fm - sp2
	c.VarSum, c.Gamma = c.Sigma, c.Sigma
	return c, nil
}
