package sampling

import (
	"fmt"
	"math/rand/v2"

	"github.com/flsweep/flsweep/fl"
)

// Binomial draws every client independently with probability m/n and weights
// it by (Fraboni et al. 2022, App. A.6, eq. 49):
//
//	ω_k = (n/m) · p_k · B_k,   B_k ~ Bernoulli(m/n)
//
// so E[ω_k] = p_k. The covariances are 0 (α = 0), and (eqs. 50–53)
//
//	Var[ω_k] = ((n − m)/m) p_k²,   Σ = VarSum = γ = ((n − m)/m) Sp2,
//	E[N] = m,   Var[N] = m − m²/n.
//
// A round can select nobody (probability (1 − m/n)^n); the round then leaves
// θ and the server state unchanged (specs/sampling-theory.md §4.8). The
// authors' code (Labs-Federated-Learning, impact_client_sampling,
// FL/sampling.py) computes the weight as p_k/(m/n); this uses (n/m)·p_k, as
// Uniform does, which can differ in the last bit.
type Binomial struct {
	M int `json:"m"` // expected clients per round, 1 <= M <= n
}

var _ fl.Sampler = Binomial{}

// NewBinomial builds the sampler from its spec options (none).
func NewBinomial(m int, opts fl.Options) (fl.Sampler, error) {
	if err := opts.Decode("sampler (binomial)", &struct{}{}); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	return Binomial{M: m}, nil
}

// Sample implements fl.Sampler: one Float64 from r per client, in client
// order. It costs O(n).
func (b Binomial) Sample(t int, pop fl.Population, r *rand.Rand) (fl.Selection, error) {
	n := pop.N()
	if err := checkBudget(b.M, n); err != nil {
		return fl.Selection{}, err
	}
	q := float64(b.M) / float64(n)
	scale := float64(n) / float64(b.M)
	var sel fl.Selection
	for k := range n {
		if r.Float64() < q {
			sel.Clients = append(sel.Clients, k)
			sel.Weights = append(sel.Weights, scale*pop.P[k])
			sel.Draws = append(sel.Draws, 1)
		}
	}
	return sel, nil
}

// Closed implements ClosedForm (App. A.6).
func (b Binomial) Closed(p []float64) (Characteristics, error) {
	n := len(p)
	if err := checkBudget(b.M, n); err != nil {
		return Characteristics{}, err
	}
	fn, fm := float64(n), float64(b.M)
	c := Characteristics{Mean: append([]float64(nil), p...), Var: make([]float64, n), MeanN: fm, VarN: fm - fm*fm/fn}
	for k, pk := range p {
		c.Var[k] = (fn - fm) / fm * pk * pk
	}
	c.Sigma = (fn - fm) / fm * SumSquares(p)
	c.VarSum, c.Gamma = c.Sigma, c.Sigma
	return c, nil
}
