package dataset

import (
	"math"
	"slices"
	"testing"
)

func TestShuffleKnownValue(t *testing.T) {
	// Computed by this implementation when the package was written. Fetched files depend on this
	// sequence; the pinned file SHA-256s in npmSource are the end-to-end check, this the local one.
	p := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	shuffle(p, newStream("flsweep/fetch/fmnist/train"))
	if want := []int{9, 1, 7, 5, 4, 6, 2, 3, 0, 8}; !slices.Equal(p, want) {
		t.Errorf("shuffle(0..9, fmnist/train) = %v; want %v", p, want)
	}
}

func TestUintNUniform(t *testing.T) {
	// 10⁵ draws per bound; each bucket count is Binomial(draws, 1/n), checked within 5 standard deviations.
	const draws = 100_000
	tests := []struct {
		name string
		give uint64
	}{
		{"n=1", 1},
		{"n=7", 7},
		{"n=10", 10},
		{"n=2^63+1 top half", 1<<63 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newStream("test/uintN/" + tt.name)
			buckets := min(tt.give, 10)
			counts := make([]int, buckets)
			for range draws {
				v := uintN(src, tt.give)
				if v >= tt.give {
					t.Fatalf("uintN(%d) = %d; want < %d", tt.give, v, tt.give)
				}
				// For huge n, bucket by the value's position in [0, n).
				counts[uint64(float64(v)/float64(tt.give)*float64(buckets))%buckets]++
			}
			p := 1 / float64(buckets)
			sd := math.Sqrt(draws * p * (1 - p))
			for b, c := range counts {
				if math.Abs(float64(c)-draws*p) > 5*sd+1e-9 {
					t.Errorf("uintN(%d) bucket %d count = %d; want %.0f ± %.0f", tt.give, b, c, draws*p, 5*sd)
				}
			}
		})
	}
}

func TestApproxNormalMoments(t *testing.T) {
	// The Irwin–Hall sum of 12 uniforms minus 6 has mean 0, variance 1 and kurtosis 2.9 (excess
	// −0.1). With 10⁵ draws the standard error of the mean is 0.003 and of the variance about 0.0044.
	const draws = 100_000
	src := newStream("test/approxNormal")
	var sum, sum2 float64
	for range draws {
		z := approxNormal(src)
		if z < -6 || z > 6 {
			t.Fatalf("approxNormal() = %v; want in [-6, 6]", z)
		}
		sum += z
		sum2 += z * z
	}
	mean := sum / draws
	variance := sum2/draws - mean*mean
	if math.Abs(mean) > 0.015 {
		t.Errorf("mean of approxNormal = %.4f; want 0 ± 0.015", mean)
	}
	if math.Abs(variance-1) > 0.025 {
		t.Errorf("variance of approxNormal = %.4f; want 1 ± 0.025", variance)
	}
}

func TestUnitRange(t *testing.T) {
	src := newStream("test/unit")
	for range 10_000 {
		if u := unit(src); u < 0 || u >= 1 {
			t.Fatalf("unit() = %v; want in [0, 1)", u)
		}
	}
}
