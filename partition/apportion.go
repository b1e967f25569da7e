package partition

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// apportion splits total into integer parts proportional to weights by the
// largest-remainder (Hamilton) method and writes them to dst, which it
// returns. With W = Σ weights > 0:
//
//	quota_c = total·w_c / W
//	dst[c]  = floor(quota_c), plus one for the total - Σ floor(quota_c)
//	          classes with the largest remainders total·w_c mod W
//
// Ties between equal remainders are broken uniformly at random with r, so no
// class is favoured by its position. Arithmetic is exact in integers (total·w_c
// must fit in an int). Every part is floor or ceil of its quota, parts sum to
// total, and dst[c] <= w_c whenever total <= W. If W = 0, dst is all zero.
// buf is scratch space of capacity len(weights), reused if non-nil.
func apportion(dst []int, total int, weights []int, r *rand.Rand, buf []int) []int {
	var w int
	for _, x := range weights {
		w += x
	}
	if w == 0 {
		clear(dst)
		return dst
	}
	left := total
	cand := buf[:0]
	for c, x := range weights {
		dst[c] = total * x / w
		left -= dst[c]
		if total*x%w != 0 {
			cand = append(cand, c)
		}
	}
	if left == 0 {
		return dst
	}
	r.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
	slices.SortStableFunc(cand, func(a, b int) int {
		return cmp.Compare(total*weights[b]%w, total*weights[a]%w) // larger remainder first
	})
	for _, c := range cand[:left] {
		dst[c]++
	}
	return dst
}
