package partition

import (
	"math"
	"slices"
	"testing"
)

func TestApportion(t *testing.T) {
	tests := []struct {
		giveTotal   int
		giveWeights []int
		want        []int
	}{
		{giveTotal: 120, giveWeights: []int{300, 300}, want: []int{60, 60}},
		{giveTotal: 3, giveWeights: []int{6, 3, 1}, want: []int{2, 1, 0}}, // quotas 1.8, 0.9, 0.3
		{giveTotal: 10, giveWeights: []int{1, 0, 0}, want: []int{10, 0, 0}},
		{giveTotal: 7, giveWeights: []int{0, 0}, want: []int{0, 0}}, // no weight: nothing to apportion
		{giveTotal: 0, giveWeights: []int{3, 4}, want: []int{0, 0}},
		// Quotas 4.71, 4.71, 1.57: floors 4, 4, 1 leave 2 for the two 0.71
		// remainders, not for the 0.57.
		{giveTotal: 11, giveWeights: []int{6, 6, 2}, want: []int{5, 5, 1}},
	}
	for _, tt := range tests {
		got := apportion(make([]int, len(tt.giveWeights)), tt.giveTotal, tt.giveWeights, newRand(1), nil)
		if !slices.Equal(got, tt.want) {
			t.Errorf("apportion(%d, %v) = %v; want %v", tt.giveTotal, tt.giveWeights, got, tt.want)
		}
	}
}

// TestApportionTiesUniform checks that ties between equal remainders are
// broken uniformly: 2 over five equal weights gives each class one extra
// with probability 2/5. Over m = 10,000 draws the frequency must be within
// 5 standard errors, 5·sqrt(0.4·0.6/m) ≈ 0.0245.
func TestApportionTiesUniform(t *testing.T) {
	const m = 10000
	r := newRand(4)
	weights := []int{1, 1, 1, 1, 1}
	hits := make([]int, len(weights))
	dst := make([]int, len(weights))
	for range m {
		apportion(dst, 2, weights, r, nil)
		for c, x := range dst {
			hits[c] += x
		}
	}
	tol := 5 * math.Sqrt(0.4*0.6/m)
	for c, h := range hits {
		if got := float64(h) / m; math.Abs(got-0.4) > tol {
			t.Errorf("class %d picked with frequency %.4f; want 0.4 ± %.4f", c, got, tol)
		}
	}
}

// TestApportionQuota checks the quota property on random inputs: every part
// is floor or ceil of total·w_c/W, and the parts sum to total.
func TestApportionQuota(t *testing.T) {
	r := newRand(6)
	for trial := range 2000 {
		weights := make([]int, 1+r.IntN(12))
		for c := range weights {
			weights[c] = r.IntN(50)
		}
		w := 0
		for _, x := range weights {
			w += x
		}
		if w == 0 {
			continue
		}
		total := r.IntN(2 * w)
		got := apportion(make([]int, len(weights)), total, weights, r, make([]int, 0, len(weights)))
		sum := 0
		for c, x := range got {
			sum += x
			lo := total * weights[c] / w
			hi := lo
			if total*weights[c]%w != 0 {
				hi++
			}
			if x < lo || x > hi {
				t.Errorf("trial %d: apportion(%d, %v)[%d] = %d; want %d or %d", trial, total, weights, c, x, lo, hi)
			}
		}
		if sum != total {
			t.Errorf("trial %d: apportion(%d, %v) sums to %d; want %d", trial, total, weights, sum, total)
		}
	}
}
