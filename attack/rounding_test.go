package attack_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/attack"
)

// TestLargestRemainderProperties: for random z on the
// simplex (with zeros) and totals, the counts are non-negative, sum to the
// total and lie within 1 of total·z_j.
func TestLargestRemainderProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := range 2000 {
		n := 1 + r.IntN(12)
		total := r.IntN(700)
		z := make([]float64, n)
		s := 0.0
		for j := range z {
			if r.IntN(4) > 0 {
				z[j] = r.ExpFloat64()
				s += z[j]
			}
		}
		if s == 0 {
			z[0], s = 1, 1
		}
		for j := range z {
			z[j] /= s
		}
		c := attack.LargestRemainder(z, total)
		got := 0
		for j, v := range c {
			got += v
			if v < 0 || math.Abs(float64(v)-float64(total)*z[j]) >= 1 {
				t.Errorf("trial %d: LargestRemainder(%v, %d) = %v; count %d is not within 1 of %v", trial, z, total, c, j, float64(total)*z[j])
			}
		}
		if got != total {
			t.Errorf("trial %d: LargestRemainder(%v, %d) = %v sums to %d", trial, z, total, c, got)
		}
	}
}

// TestLargestRemainderKnownValues: worked by hand.
func TestLargestRemainderKnownValues(t *testing.T) {
	tests := []struct {
		name  string
		giveZ []float64
		giveT int
		want  []int
	}{
		// 64·(0.5, 0.3, 0.2) = (32, 19.2, 12.8): floors 63, one unit to .8.
		{"hamilton", []float64{0.5, 0.3, 0.2}, 64, []int{32, 19, 13}},
		// Nearest rounding would give (1, 1, 1) = 3 ≠ 2; ties go to the lower class.
		{"thirds", []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 2, []int{1, 1, 0}},
		{"exact", []float64{0.25, 0, 0.75}, 8, []int{2, 0, 6}},
		// Not normalised, a negative entry: clipped and normalised first.
		{"unnormalised", []float64{2, -1, 2}, 5, []int{3, 0, 2}},
		{"nothing positive", []float64{0, -1, 0}, 4, []int{2, 1, 1}},
		{"zero total", []float64{0.5, 0.5}, 0, []int{0, 0}},
	}
	for _, tt := range tests {
		if got := attack.LargestRemainder(tt.giveZ, tt.giveT); !slices.Equal(got, tt.want) {
			t.Errorf("%s: LargestRemainder(%v, %d) = %v; want %v", tt.name, tt.giveZ, tt.giveT, got, tt.want)
		}
	}
}
