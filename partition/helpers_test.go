package partition

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
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
