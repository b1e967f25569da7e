package attack

import (
	"math"
	"sort"
)

// LargestRemainder rounds total·z to non-negative integers that sum to
// total (Hamilton's method): each class gets ⌊total·z_j⌋, and the units
// left go one each to the classes with the largest fractional parts, ties
// to the lower class. For z on the simplex every count is within 1 of
// total·z_j. The paper rounds each class to the nearest integer (⌊|B|·z⌉,
// Alg. 1), which can miss the known total by a few; the total is what the
// server knows (m·|B|), so the histogram keeps it.
//
// Negative or non-finite entries of z count as 0 and z is normalised
// first; a z without positive entries gives the uniform histogram.
func LargestRemainder(z []float64, total int) []int {
	n := len(z)
	if n == 0 {
		return nil
	}
	p := make([]float64, n)
	s := 0.0
	for j, v := range z {
		if v > 0 && !math.IsInf(v, 0) {
			p[j] = v
			s += v
		}
	}
	if s == 0 {
		for j := range p {
			p[j] = 1
		}
		s = float64(n)
	}
	counts := make([]int, n)
	frac := make([]float64, n)
	left := total
	for j := range p {
		x := float64(total) * p[j] / s
		f := math.Floor(x)
		counts[j] = int(f)
		frac[j] = x - f
		left -= counts[j]
	}
	order := make([]int, n)
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return frac[order[a]] > frac[order[b]] })
	// Σ⌊x_j⌋ ≤ Σ x_j = total, so 0 ≤ left ≤ n (n only by rounding).
	for i := 0; left > 0; i = (i + 1) % n {
		counts[order[i]]++
		left--
	}
	return counts
}
