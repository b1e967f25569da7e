package sampling

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/flsweep/flsweep/fl"
)

// MD draws M clients independently, with replacement, from the categorical
// distribution P(l = k) = p_k, and weights each by its number of draws
// (Fraboni et al. 2022, eq. (5)):
//
//	ω_k = (1/M) Σ_{j=1..M} 1(l_j = k)
//
// A client drawn twice trains once and its update counts twice, so the weights
// always sum to 1 and E[ω_k] = p_k. Do not dedupe and renormalise, and do not
// redraw until M clients are distinct (specs/sampling-theory.md §4.3).
// Statistics: Var[ω_k] = p_k(1 − p_k)/M, α = 1/M.
type MD struct {
	M int `json:"m"` // draws per round, >= 1
}

var _ fl.Sampler = MD{}

// NewMD builds the sampler from its spec options.
func NewMD(m int, opts fl.Options) (fl.Sampler, error) {
	if err := opts.Decode("sampler (md)", &struct{}{}); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	return MD{M: m}, nil
}

// Sample implements fl.Sampler. It costs O(n + M log n).
func (d MD) Sample(t int, pop fl.Population, r *rand.Rand) (fl.Selection, error) {
	n := pop.N()
	if d.M < 1 {
		return fl.Selection{}, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", d.M, fl.ErrInvalid)
	}
	if d.M > n {
		return fl.Selection{}, fmt.Errorf("clients_per_round = %d exceeds the %d clients; lower it: %w", d.M, n, fl.ErrInvalid)
	}
	cum := make([]float64, n)
	s := 0.0
	for k, p := range pop.P {
		s += p
		cum[k] = s
	}
	counts := make(map[int]int, d.M)
	for j := 0; j < d.M; j++ {
		u := r.Float64() * s
		k := sort.SearchFloat64s(cum, u)
		// SearchFloat64s returns the first k with cum[k] >= u; u == cum[k]
		// belongs to the next client, and zero-importance clients are skipped.
		for k < n-1 && (cum[k] <= u || pop.P[k] == 0) {
			k++
		}
		counts[k]++
	}
	sel := fl.Selection{}
	for k := 0; k < n; k++ {
		if c := counts[k]; c > 0 {
			sel.Clients = append(sel.Clients, k)
			sel.Weights = append(sel.Weights, float64(c)/float64(d.M))
			sel.Draws = append(sel.Draws, c)
		}
	}
	return sel, nil
}
