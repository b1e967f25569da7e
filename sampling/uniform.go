package sampling

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// Uniform draws M distinct clients uniformly without replacement and weights
// them by (Fraboni et al. 2022, eq. (6)):
//
//	ω_k = 1[k ∈ S] · (n/M) · p_k
//
// so E[ω_k] = p_k. The weights sum to 1 only when p_k ≡ 1/n; they are not
// renormalised (specs/sampling-theory.md §4.1). Statistics: Var[ω_k] =
// (n/M − 1) p_k², α = (n−M)/(M(n−1)).
type Uniform struct {
	M int `json:"m"` // clients per round, 1 <= M <= n
}

var _ fl.Sampler = Uniform{}

// NewUniform builds the sampler from its spec options.
func NewUniform(m int, opts fl.Options) (fl.Sampler, error) {
	if err := opts.Decode("sampler (uniform)", &struct{}{}); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	return Uniform{M: m}, nil
}

// Sample implements fl.Sampler.
func (u Uniform) Sample(t int, pop fl.Population, r *rand.Rand) (fl.Selection, error) {
	n := pop.N()
	if u.M < 1 || u.M > n {
		return fl.Selection{}, fmt.Errorf("clients_per_round = %d must be in [1, %d] (the number of clients); lower it: %w", u.M, n, fl.ErrInvalid)
	}
	clients := partialShuffle(n, u.M, r)
	slices.Sort(clients)
	sel := fl.Selection{Clients: clients, Weights: make([]float64, u.M), Draws: make([]int, u.M)}
	scale := float64(n) / float64(u.M)
	for i, k := range clients {
		sel.Weights[i] = scale * pop.P[k]
		sel.Draws[i] = 1
	}
	return sel, nil
}

// partialShuffle returns m distinct values of [0, n) chosen uniformly: the
// first m positions of a Fisher–Yates shuffle of 0..n-1.
func partialShuffle(n, m int, r *rand.Rand) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	for i := 0; i < m; i++ {
		j := i + r.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	return idx[:m:m]
}
