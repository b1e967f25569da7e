package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults and limits for DirichletOptions.
const (
	// DefaultMinSize is NIID-Bench's min_require_size: every client must end
	// with at least 10 samples.
	DefaultMinSize = 10
	// DefaultMaxRedraws bounds the redraws when MaxRedraws is 0.
	DefaultMaxRedraws = 1000
	// NoMinSize, as a MinSize, asks for no minimum client size: one draw is
	// accepted whatever it gives, including empty clients.
	NoMinSize = -1
	// MinAlpha is the smallest accepted concentration. Below it log(U)/alpha
	// in the Gamma sampler can overflow to -Inf.
	MinAlpha = 1e-300
)

// DirichletOptions configures Dirichlet. Zero MinSize and MaxRedraws mean
// their defaults.
type DirichletOptions struct {
	// Alpha is the concentration of the symmetric Dirichlet Dir_n(Alpha)
	// (NIID-Bench's beta, HiCS-FL's alpha). Smaller is more skewed. It must be
	// finite and at least MinAlpha; HiCS-FL uses values as small as 0.001.
	Alpha float64
	// MinSize is the smallest client size accepted: the whole partition is
	// redrawn until every client holds at least MinSize samples. 0 means
	// DefaultMinSize (10), NoMinSize (-1) no minimum. HiCS-FL's code uses
	// int(0.2·N/n).
	MinSize int
	// MaxRedraws bounds the redraws after the first draw, so at most
	// 1+MaxRedraws partitions are drawn. 0 means DefaultMaxRedraws (1000).
	MaxRedraws int
}

// Validate reports options that can never work, whatever the data.
func (o DirichletOptions) Validate() error {
	if math.IsNaN(o.Alpha) || math.IsInf(o.Alpha, 0) || o.Alpha < MinAlpha {
		return fmt.Errorf("partition: dirichlet alpha = %g; use a finite value >= %g (e.g. 0.5): %w", o.Alpha, MinAlpha, ErrInvalid)
	}
	if o.MinSize < NoMinSize {
		return fmt.Errorf("partition: dirichlet min_size = %d; use 0 for the default %d, %d for none, or a positive size: %w", o.MinSize, DefaultMinSize, NoMinSize, ErrInvalid)
	}
	if o.MaxRedraws < 0 {
		return fmt.Errorf("partition: dirichlet max_redraws = %d; use 0 for the default %d, or a positive bound: %w", o.MaxRedraws, DefaultMaxRedraws, ErrInvalid)
	}
	return nil
}

// withDefaults resolves the zero values; NoMinSize becomes 0.
func (o DirichletOptions) withDefaults() DirichletOptions {
	o.MinSize = minSizeOrDefault(o.MinSize)
	if o.MaxRedraws == 0 {
		o.MaxRedraws = DefaultMaxRedraws
	}
	return o
}

// Dirichlet splits the samples among clients with per-class proportions
// drawn from a symmetric Dirichlet distribution: NIID-Bench's
// "noniid-labeldir" (Li et al., ICDE 2022; utils.py partition_data), as
// specs/fnrfl.md §2 gives it. With N = len(labels) and n = clients:
//
//	repeat until min_j |batch_j| >= MinSize:
//	  batch_j = {} for every client j
//	  for class k = 0..classes-1:
//	    idx_k = the indices with label k, shuffled
//	    p ~ Dir_n(alpha)
//	    p_j = 0 if |batch_j| >= N/n          ("balance": a full client gets no more)
//	    p = p / Σ p
//	    split idx_k at floor(cumsum(p)·|idx_k|) with the last cut dropped (np.split)
//	    and append piece j to batch_j
//
// The partition is complete: every index goes to exactly one client. Each
// client's list is returned sorted ascending.
//
// p is drawn in log space (see logGamma) and the balance mask is applied
// before exponentiating, so tiny alphas such as HiCS-FL's 0.001 give no NaN
// and no all-zero draws; the distribution is numpy's. The cuts follow numpy's
// float arithmetic, so, as in NIID-Bench, the last client can receive one
// sample of a class although it is full (see splitBalanced); at n = 10 this
// lowers the mean number of empty (client, class) cells by about 0.3 in 100.
//
// Dirichlet returns an error wrapping ErrInvalid if the options are invalid,
// if clients is not in 1..N, if a label is not below classes, if MinSize·n >
// N (no partition can satisfy it), or if 1+MaxRedraws draws all leave some
// client below MinSize. It panics if r is nil.
//
// Cost: O(N + classes·n) time per draw, with O(N + classes·n) memory reused
// across redraws.
func Dirichlet(labels []uint8, classes, clients int, opts DirichletOptions, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	n := len(labels)
	if err := checkClients(clients, n); err != nil {
		return nil, err
	}
	if err := checkLabels("labels", labels, classes); err != nil {
		return nil, err
	}
	if o.MinSize > n/clients {
		return nil, fmt.Errorf("partition: dirichlet min_size = %d exceeds the %d samples per client that %d samples allow for %d clients; lower min_size or clients: %w",
			o.MinSize, n/clients, n, clients, ErrInvalid)
	}

	idx, start := byClass(labels, classes)
	size := make([]int, clients)
	cut := make([]int, classes*clients) // cut[k*clients+j]: end of client j's piece of class k
	w := make([]float64, clients)
	best := -1
	for range 1 + o.MaxRedraws {
		clear(size)
		for k := range classes {
			seg := idx[start[k]:start[k+1]]
			cuts := cut[k*clients : (k+1)*clients]
			if len(seg) == 0 {
				clear(cuts)
				continue
			}
			r.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			logDirichlet(w, o.Alpha, r)
			splitBalanced(cuts, w, size, len(seg), n)
		}
		smallest := slices.Min(size)
		if smallest >= o.MinSize {
			owner := make([]int32, n)
			for k := range classes {
				seg := idx[start[k]:start[k+1]]
				lo := 0
				for j, hi := range cut[k*clients : (k+1)*clients] {
					for _, i := range seg[lo:hi] {
						owner[i] = int32(j)
					}
					lo = hi
				}
			}
			return gather(owner, size), nil
		}
		best = max(best, smallest)
	}
	return nil, fmt.Errorf("partition: %d dirichlet draws (alpha = %g, %d clients) all left a client below min_size = %d (best smallest client: %d); lower min_size or clients, raise alpha, or raise max_redraws: %w",
		1+o.MaxRedraws, o.Alpha, clients, o.MinSize, best, ErrInvalid)
}

// splitBalanced computes one class's cut points. logw holds the class's
// log-Dirichlet draw (overwritten); size[j] is client j's running total,
// updated in place; length is the class size and total the dataset size N.
// Client j is open when size[j] < N/n, i.e. size[j]·n < N, and only open
// clients get a share:
//
//	p_j     = exp(logw_j - max_open logw) / Σ_open exp(...) if open, else 0
//	cuts[j] = int((p_0 + ... + p_j) · length), clamped to [cuts[j-1], length]
//
// and client j's piece is [cuts[j-1], cuts[j]) with cuts[n-1] = length (the
// last cut dropped, as np.split does). The float arithmetic follows numpy's
// order in NIID-Bench (normalise, cumsum, scale, truncate), including its
// artefact: when the clients after the last open one are all closed, the
// cumulative sum can end one ulp below 1, and the last client receives the
// one sample left over although it is full. Closed clients before the last
// open one always receive nothing (adding p_j = 0 leaves the sum unchanged).
// At least one client is open whenever length > 0, because otherwise the
// closed clients already hold at least N > N - length samples.
func splitBalanced(cuts []int, logw []float64, size []int, length, total int) {
	n := len(size)
	m := math.Inf(-1)
	for j, l := range logw {
		if size[j]*n < total {
			m = max(m, l)
		}
	}
	var sum float64
	for j, l := range logw {
		if size[j]*n < total {
			logw[j] = math.Exp(l - m)
		} else {
			logw[j] = 0
		}
		sum += logw[j]
	}
	var cum float64
	prev := 0
	for j, wj := range logw {
		e := length
		if j < n-1 {
			cum += wj / sum
			e = min(max(int(cum*float64(length)), prev), length)
		}
		cuts[j] = e
		size[j] += e - prev
		prev = e
	}
}
