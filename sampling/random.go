package sampling

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// Random is HiCS-FL's "random sampling" baseline (Chen & Vikalo, NeurIPS
// 2024, §5 baselines; specs/hicsfl.md §2 "Random sampling"): m distinct
// clients drawn with probabilities ∝ p_k without replacement, as the
// official code's np.random.choice(N, K, replace=False, p=p_k) (one client at
// a time, renormalised over those not yet drawn), aggregated with equal
// weights
//
//	ω_k = 1/m for k ∈ S
//
// (the paper's θ^{t+1} = (1/K) Σ_{k∈S} θ_k). The weights sum to 1, but unless
// p_k ≡ 1/n, E[ω_k] = P(k ∈ S)/m ≠ p_k: the scheme is biased in the sense of
// Fraboni et al. 2022, Definition 1, and has no closed form there. It is not
// Uniform (which draws uniformly and weights (n/m)·p_k) nor MD (which draws
// with replacement). The code reseeds numpy with the round index; here the
// draws come from the round's stream.
type Random struct {
	M int `json:"m"` // clients per round, 1 <= M <= n
}

var _ fl.Sampler = Random{}

// NewRandom builds the sampler from its spec options (none).
func NewRandom(m int, opts fl.Options) (fl.Sampler, error) {
	if err := opts.Decode("sampler (random)", &struct{}{}); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	return Random{M: m}, nil
}

// Sample implements fl.Sampler. It costs O(n·m).
func (s Random) Sample(t int, pop fl.Population, r *rand.Rand) (fl.Selection, error) {
	if err := checkBudget(s.M, pop.N()); err != nil {
		return fl.Selection{}, err
	}
	clients, err := weightedWithoutReplacement(pop.P, s.M, r)
	if err != nil {
		return fl.Selection{}, err
	}
	slices.Sort(clients)
	sel := fl.Selection{Clients: clients, Weights: make([]float64, s.M), Draws: make([]int, s.M)}
	for i := range clients {
		sel.Weights[i], sel.Draws[i] = 1/float64(s.M), 1
	}
	return sel, nil
}
