package partition

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// newRand returns a generator for a fixed test seed.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// balancedLabels returns perClass samples of each of classes labels,
// interleaved (label of i = i mod classes) like a shuffled dataset.
// balancedLabels(10, 6000) is Fashion-MNIST's train split: 6,000 per class.
func balancedLabels(classes, perClass int) []uint8 {
	labels := make([]uint8, classes*perClass)
	for i := range labels {
		labels[i] = uint8(i % classes)
	}
	return labels
}

// labelCounts returns the class counts of the samples in list.
func labelCounts(list []int, labels []uint8, classes int) []int {
	counts := make([]int, classes)
	for _, i := range list {
		counts[labels[i]]++
	}
	return counts
}

func cloneLists(lists [][]int) [][]int {
	out := make([][]int, len(lists))
	for k, l := range lists {
		out[k] = slices.Clone(l)
	}
	return out
}

// moments returns the sample mean and the standard error of the mean.
func moments(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return mean, sd / math.Sqrt(float64(len(xs)))
}

// quantile returns the empirical p-quantile of xs (nearest rank); xs is
// sorted in place.
func quantile(xs []float64, p float64) float64 {
	sort.Float64s(xs)
	i := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// panics reports whether f panics, and the panic value.
func panics(f func()) (v any, ok bool) {
	defer func() {
		v = recover()
		ok = v != nil
	}()
	f()
	return nil, false
}

// checkRefStats compares Monte-Carlo samples with a reference computed over
// refSeeds seeds (specs/fnrfl.md §7 reports 2,000-seed means and quantiles),
// with the tolerances TestDirichletFNRFLAcceptance documents: a mean within
// 5 combined standard errors plus the reference's rounding, a quantile
// inside our empirical quantiles at p ± 5·sqrt(p(1-p)(1/seeds+1/refSeeds)).
func checkRefStats(t *testing.T, samples map[string][]float64, refSeeds int, want []refStat) {
	t.Helper()
	for _, w := range want {
		xs := samples[w.name]
		if len(xs) < 2 {
			t.Errorf("%s: %d samples; the test must collect at least 2", w.name, len(xs))
			continue
		}
		seeds := float64(len(xs))
		if !math.IsNaN(w.mean) {
			mean, se := moments(xs)
			tol := 5*se*math.Sqrt(1+seeds/float64(refSeeds)) + w.meanHalf
			if math.Abs(mean-w.mean) > tol {
				t.Errorf("mean %s = %.4g; want %g ± %.3g", w.name, mean, w.mean, tol)
			}
		}
		for _, q := range w.quant {
			d := 5 * math.Sqrt(q.p*(1-q.p)*(1/seeds+1/float64(refSeeds)))
			lo, hi := quantile(xs, q.p-d)-q.half, quantile(xs, q.p+d)+q.half
			if q.value < lo || q.value > hi {
				t.Errorf("p%g %s = %g; want it in our band [%g, %g]", 100*q.p, w.name, q.value, lo, hi)
			}
		}
	}
}

// distinctLabels returns the number of classes present in list.
func distinctLabels(list []int, labels []uint8, classes int) int {
	n := 0
	for _, x := range labelCounts(list, labels, classes) {
		if x > 0 {
			n++
		}
	}
	return n
}
