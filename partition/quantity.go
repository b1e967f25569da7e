package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// QuantityOptions configures Quantity and DirichletSizes. Zero MinSize and
// MaxRedraws mean their defaults.
type QuantityOptions struct {
	// Alpha is the concentration of the size proportions q ~ Dir_n(Alpha)
	// (NIID-Bench's beta). Smaller is more unequal.
	Alpha float64
	// MinSize: q is redrawn until min_j q_j·N >= MinSize. 0 means
	// DefaultMinSize (10, NIID-Bench's constant), NoMinSize no minimum.
	MinSize int
	// MaxRedraws bounds the redraws after the first draw. 0 means
	// max(DefaultMaxRedraws, QuantityDrawBudget/clients): a draw costs only
	// one Gamma variate per client, and NIID-Bench redraws without bound
	// (at beta = 0.1 and 10 clients about 1 draw in 200 succeeds).
	MaxRedraws int
}

// QuantityDrawBudget bounds the Gamma variates DirichletSizes draws by
// default (about half a second): see QuantityOptions.MaxRedraws.
const QuantityDrawBudget = 10_000_000

// Quantity gives clients IID samples in Dirichlet-distributed amounts:
// NIID-Bench's quantity skew "iid-diff-quantity" (specs/fnrfl.md §2). With N
// = n samples and n' = clients:
//
//	idx = permutation(N)
//	repeat: q ~ Dir_n'(alpha) until min_j q_j·N >= MinSize
//	split idx at (cumsum(q)·N).astype(int)[:-1]       (np.split)
//
// so client j holds about q_j·N samples and every label in about its global
// share. As in NIID-Bench's code, the minimum is checked on q_j·N before the
// cuts are floored, so a client can end with MinSize-1 samples. Each list is
// sorted ascending.
//
// Quantity returns an error wrapping ErrInvalid if the options are invalid,
// clients is not in 1..n, MinSize·clients > n, or 1+MaxRedraws draws all
// leave a client below MinSize. It panics if r is nil.
//
// Cost: O(n + clients) per draw.
func Quantity(n, clients int, opts QuantityOptions, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := checkClients(clients, n); err != nil {
		return nil, err
	}
	perm := r.Perm(n)
	sizes, err := DirichletSizes(n, clients, opts, r)
	if err != nil {
		return nil, err
	}
	owner := make([]int32, n)
	pos := 0
	for k, s := range sizes {
		for _, i := range perm[pos : pos+s] {
			owner[i] = int32(k)
		}
		pos += s
	}
	return gather(owner, sizes), nil
}

// DirichletSizes returns client sizes summing to total with proportions
// q ~ Dir_n(opts.Alpha), redrawn until min_j q_j·total >= MinSize, and
// cut as np.split does: sizes are the differences of
// (cumsum(q)·total).astype(int), the last client taking the rest. It is the
// size step of Quantity (NIID-Bench "iid-diff-quantity"), shared with
// Unbalanced. Errors are as for Quantity.
func DirichletSizes(total, clients int, opts QuantityOptions, r *rand.Rand) ([]int, error) {
	mustRand(r)
	if err := checkAlpha("quantity alpha", opts.Alpha); err != nil {
		return nil, err
	}
	if err := checkMinSize("quantity min_size", opts.MinSize); err != nil {
		return nil, err
	}
	redraws, err := checkRedraws("quantity max_redraws", opts.MaxRedraws)
	if err != nil {
		return nil, err
	}
	if err := checkClients(clients, total); err != nil {
		return nil, err
	}
	if opts.MaxRedraws == 0 {
		redraws = max(DefaultMaxRedraws, QuantityDrawBudget/clients)
	}
	minSize := minSizeOrDefault(opts.MinSize)
	if minSize > total/clients {
		return nil, fmt.Errorf("partition: quantity min_size = %d exceeds the %d samples per client that %d samples allow for %d clients; lower min_size or clients: %w",
			minSize, total/clients, total, clients, ErrInvalid)
	}
	q := make([]float64, clients)
	best := -1.0
	for range 1 + redraws {
		logDirichlet(q, opts.Alpha, r)
		normalizeLog(q)
		smallest := slices.Min(q) * float64(total)
		if smallest >= float64(minSize) {
			cuts := make([]int, clients)
			cumCuts(cuts, q, total)
			sizes := make([]int, clients)
			prev := 0
			for j, e := range cuts {
				sizes[j] = e - prev
				prev = e
			}
			return sizes, nil
		}
		best = max(best, smallest)
	}
	return nil, fmt.Errorf("partition: %d quantity draws (alpha = %g, %d clients) all gave a client below min_size = %d (best smallest client: %.1f); raise alpha, lower clients or min_size, or raise max_redraws: %w",
		1+redraws, opts.Alpha, clients, minSize, best, ErrInvalid)
}
