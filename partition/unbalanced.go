package partition

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// UnbalancedOptions configures Unbalanced.
type UnbalancedOptions struct {
	// Sizes[k] is client k's number of train samples; Σ Sizes must not
	// exceed the number of labels. See FraboniCIFARSizes, PowerLawSizes and
	// DirichletSizes.
	Sizes []int
	// Alpha is the concentration of each client's class proportions
	// q_k ~ Dir_C(Alpha) (Hsu, Qi, Brown 2019). 0 means no label skew:
	// clients draw uniformly from the pool.
	Alpha float64
}

// Unbalanced gives clients the given numbers of samples, optionally with
// per-client Dirichlet class proportions: the unbalanced, non-IID clients of
// Fraboni et al. ("A General Theory for Client Sampling in Federated
// Learning", 2022, App. C.2, after Fraboni et al. ICML 2021 and Hsu et al.
// 2019; specs/sampling-theory.md §5). Lists are sorted ascending and
// disjoint; the partition is complete when Σ Sizes = len(labels).
//
// With Alpha = 0 the samples are a uniform permutation cut into blocks of
// Sizes[k]. With Alpha > 0, q_k ~ Dir_C(Alpha) for every client k (drawn in
// client order, in log space), then samples are dealt one at a time:
//
//	while some client is not full:
//	  k = a uniformly drawn client that is not full
//	  c ~ q_k restricted to the classes with samples left, renormalised
//	  give k a uniformly drawn remaining sample of class c
//
// This is the sample-by-sample rule of FedDyn's code (Acar et al., ICLR
// 2021) and Flower's InnerDirichletPartitioner: a client's mix follows q_k
// until its classes run out, and then the remaining classes in proportion.
//
// The sampling-theory authors' code (Labs-Federated-Learning,
// read_db.py partition_CIFAR_dataset) instead gives client k int(q_kc·n_k)
// samples of class c for c < C-1 and the rest of class C-1, drawn WITH
// replacement and independently per client, so clients overlap and hold
// duplicates. The paper does not say which; Unbalanced keeps a partition a
// partition. Both give client k exactly Sizes[k] samples; their label mixes
// differ only once a class runs out, which at tiny Alpha (one class per
// client) happens for most classes.
//
// Unbalanced returns an error wrapping ErrInvalid if classes is not in
// 1..256, a label is not below classes, Sizes is empty or has a negative
// entry, Σ Sizes exceeds len(labels), or Alpha is negative, not finite, or
// positive but below MinAlpha. It panics if r is nil.
//
// Cost: O(N + n·C) with Alpha = 0; O(Σ Sizes · C) with Alpha > 0.
func Unbalanced(labels []uint8, classes int, opts UnbalancedOptions, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := checkLabels("labels", labels, classes); err != nil {
		return nil, err
	}
	if len(opts.Sizes) == 0 {
		return nil, fmt.Errorf("partition: unbalanced sizes is empty; give one size per client: %w", ErrInvalid)
	}
	total := 0
	for k, s := range opts.Sizes {
		if s < 0 {
			return nil, fmt.Errorf("partition: unbalanced sizes[%d] = %d; sizes must be >= 0: %w", k, s, ErrInvalid)
		}
		total += s
	}
	if total > len(labels) {
		return nil, fmt.Errorf("partition: unbalanced sizes add up to %d, more than the %d samples; lower them: %w", total, len(labels), ErrInvalid)
	}
	if opts.Alpha != 0 {
		if err := checkAlpha("unbalanced alpha", opts.Alpha); err != nil {
			return nil, err
		}
	}
	n := len(opts.Sizes)
	owner := make([]int32, len(labels))
	for i := range owner {
		owner[i] = -1
	}
	if opts.Alpha == 0 {
		perm := r.Perm(len(labels))
		pos := 0
		for k, s := range opts.Sizes {
			for _, i := range perm[pos : pos+s] {
				owner[i] = int32(k)
			}
			pos += s
		}
		return gather(owner, opts.Sizes), nil
	}

	logq := make([]float64, n*classes)
	for k := range n {
		logDirichlet(logq[k*classes:(k+1)*classes], opts.Alpha, r)
	}
	idx, start := byClass(labels, classes)
	left := make([]int, classes) // samples of class c still free: idx[start[c] : start[c]+left[c]]
	for c := range classes {
		left[c] = start[c+1] - start[c]
	}
	need := slices.Clone(opts.Sizes)
	open := make([]int, 0, n) // clients that are not full
	for k, s := range need {
		if s > 0 {
			open = append(open, k)
		}
	}
	w := make([]float64, classes)
	for len(open) > 0 {
		p := r.IntN(len(open))
		k := open[p]
		c := drawClass(w, logq[k*classes:(k+1)*classes], left, r)
		// A uniform remaining sample of class c: swap it to the end of the
		// free range and shrink the range.
		seg := idx[start[c] : start[c]+left[c]]
		j := r.IntN(len(seg))
		seg[j], seg[len(seg)-1] = seg[len(seg)-1], seg[j]
		owner[seg[len(seg)-1]] = int32(k)
		left[c]--
		need[k]--
		if need[k] == 0 {
			open[p] = open[len(open)-1]
			open = open[:len(open)-1]
		}
	}
	return gather(owner, opts.Sizes), nil
}

// drawClass draws a class from the log-weights logq restricted to the
// classes with left[c] > 0, renormalised: p_c ∝ exp(logq_c - max) over
// those classes. At least one class must have samples left.
func drawClass(w, logq []float64, left []int, r *rand.Rand) int {
	m := math.Inf(-1)
	for c, l := range logq {
		if left[c] > 0 {
			m = max(m, l)
		}
	}
	var sum float64
	last := -1
	for c, l := range logq {
		w[c] = 0
		if left[c] > 0 {
			w[c] = math.Exp(l - m)
			sum += w[c]
			last = c
		}
	}
	u := r.Float64() * sum
	for c, x := range w {
		if x > 0 {
			if u < x {
				return c
			}
			u -= x
		}
	}
	return last // u ran past the end by rounding
}

// FraboniCIFARSizes returns the client sizes of Fraboni et al.'s CIFAR-10
// experiments (ICML 2021; "A General Theory for Client Sampling", 2022, App.
// C.2): 100 clients, of which 10, 30, 30, 20 and 10 hold 100, 250, 500, 750
// and 1,000 training samples (48,500 in all), in that order of client IDs.
// Their test sets are a fifth of that (20/50/100/150/200), which the sweep
// spec's test: split with test_fraction: 0.2 gives.
func FraboniCIFARSizes() []int {
	var s []int
	for _, b := range []struct{ count, size int }{{10, 100}, {30, 250}, {30, 500}, {20, 750}, {10, 1000}} {
		s = append(s, slices.Repeat([]int{b.size}, b.count)...)
	}
	return s
}

// PowerLawSizes returns clients sizes summing to total that follow a
// power law in rank (Zipf): client k (0-based) gets
//
//	n_k = minSize + share_k,  share_k ∝ (k+1)^(-exponent)
//
// with the total - clients·minSize samples above the minimum apportioned by
// the largest-remainder method (ties to the lower client ID), so every size
// is at least minSize and the sizes add up to total exactly. Client 0 is the
// largest. The sizes do not depend on a random stream: the same profile for
// every seed. exponent 0 gives equal sizes (to within one).
//
// It returns an error wrapping ErrInvalid if clients < 1, exponent is
// negative or not finite, minSize < 0, or clients·minSize > total.
func PowerLawSizes(total, clients int, exponent float64, minSize int) ([]int, error) {
	if clients < 1 {
		return nil, fmt.Errorf("partition: clients = %d; use at least 1: %w", clients, ErrInvalid)
	}
	if math.IsNaN(exponent) || math.IsInf(exponent, 0) || exponent < 0 {
		return nil, fmt.Errorf("partition: size_exponent = %g; use a finite value >= 0 (e.g. 1 for Zipf's law): %w", exponent, ErrInvalid)
	}
	if minSize < 0 || clients*minSize > total {
		return nil, fmt.Errorf("partition: min_size = %d for %d clients needs %d samples but there are %d; lower min_size or clients: %w",
			minSize, clients, clients*minSize, total, ErrInvalid)
	}
	rest := total - clients*minSize
	w := make([]float64, clients)
	var sum float64
	for k := range w {
		w[k] = math.Pow(float64(k+1), -exponent)
		sum += w[k]
	}
	sizes := make([]int, clients)
	frac := make([]float64, clients)
	given := 0
	for k := range w {
		q := float64(rest) * w[k] / sum
		sizes[k] = int(q)
		frac[k] = q - float64(sizes[k])
		given += sizes[k]
	}
	order := make([]int, clients)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(frac[b], frac[a]) })
	// The float shares add up to rest to within rounding, so 0 <= rest -
	// given < clients; the loop also absorbs a last-ulp excess.
	for p := 0; given < rest; p = (p + 1) % clients {
		sizes[order[p]]++
		given++
	}
	for k := range sizes {
		sizes[k] += minSize
	}
	return sizes, nil
}
