package algorithm_test

import (
	"math"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
)

// TestClassNorms (specs' §7 item 7): the mean of the per-sample norms, not
// the norm of the mean; a class without samples has none (NaN).
//
//	class 0: z = (3, 4) → 5, (0, 1) → 1: mean 3 (the mean vector's norm would be √(1.5² + 2.5²) ≈ 2.92)
//	class 2: z = (1, 0) → 1
func TestClassNorms(t *testing.T) {
	emb := []float32{3, 4, 1, 0, 0, 1}
	got := algorithm.ClassNorms(emb, []uint8{0, 2, 0}, 2, 3)
	if got[0] != 3 || !math.IsNaN(got[1]) || got[2] != 1 {
		t.Errorf("ClassNorms = %v; want [3 NaN 1]", got)
	}
}

// TestNormDiff (item 8): Δ_j[l] = Σ_{m ∈ others} (F_m[l] − F_j[l]), over
// the others that have l; NaN where j has no l.
//
//	F_0 = (1, 2, NaN), F_1 = (2, NaN, 1), F_2 = (4, 3, 1), F_3 = (0, 1, 5)
//	j = 0, others {2, 3} (S∖S_re with S_re = {0, 1}): Δ = (3 + −1, 1 + −1, NaN) = (2, 0, NaN)
//	j = 0, all others {1, 2, 3} (the code): Δ = (1 + 3 − 1, 0, NaN) = (3, 0, NaN)
//	j = 1, others {2, 3}: Δ = (2 − 2, NaN, 0 + 4) = (0, NaN, 4)
func TestNormDiff(t *testing.T) {
	nan := math.NaN()
	f := [][]float64{{1, 2, nan}, {2, nan, 1}, {4, 3, 1}, {0, 1, 5}}
	for _, tt := range []struct {
		j      int
		others []int
		want   []float64
	}{
		{0, []int{2, 3}, []float64{2, 0, nan}},
		{0, []int{1, 2, 3}, []float64{3, 0, nan}},
		{1, []int{2, 3}, []float64{0, nan, 4}},
	} {
		got := algorithm.NormDiff(f, tt.j, tt.others)
		if !sameFloats(got, tt.want) {
			t.Errorf("NormDiff(j=%d, others %v) = %v; want %v", tt.j, tt.others, got, tt.want)
		}
	}
	if got := algorithm.MeanNorms(f, []int{1, 2, 3}, 3); !sameFloats(got, []float64{2, 2, 7.0 / 3}) {
		t.Errorf("MeanNorms = %v; want [2 2 2.333]", got)
	}
	// J_B with the batch's shares: labels (0, 0, 2, 1) in batches of 2,
	// Δ = (2, 0, NaN): batch 1 = 2·(2/2) = 2, batch 2 = NaN skipped + 0·½ = 0;
	// 3 epochs: 6. The shares of a batch sum to 1.
	if got := algorithm.InertPenalty([]uint8{0, 0, 2, 1}, 2, 3, []float64{2, 0, nan}); got != 6 {
		t.Errorf("InertPenalty = %v; want 6", got)
	}
}

// TestLowest (item 9): the lowest accuracies, ties by client ID (n_re = ⌊n·p⌋
// is checked in the engine's TestFNRFL: 3 of 6 at p = 0.5).
func TestLowest(t *testing.T) {
	acc := []float64{0.5, 0.2, 0.5, 0.9, 0.2}
	clients := []int{7, 9, 3, 1, 4}
	if got := algorithm.Lowest(acc, clients, 3); !slices.Equal(got, []int{4, 1, 2}) {
		t.Errorf("Lowest = %v; want positions [4 1 2] (clients 4, 9, then 3 before 7)", got)
	}
}

// TestPublicAccuracy: plain and balanced (the official code's).
//
//	labels 0, 0, 0, 1; correct T, T, F, F: plain 2/4; balanced (2/3 + 0)/2 = 1/3.
func TestPublicAccuracy(t *testing.T) {
	c, y := []bool{true, true, false, false}, []uint8{0, 0, 0, 1}
	if got := algorithm.PublicAccuracy(c, y, 3, false); got != 0.5 {
		t.Errorf("plain = %v; want 0.5", got)
	}
	if got := algorithm.PublicAccuracy(c, y, 3, true); math.Abs(got-1.0/3) > 1e-15 {
		t.Errorf("balanced = %v; want 1/3", got)
	}
}

// TestFNRFLOptions: defaults and the errors that name the field.
func TestFNRFLOptions(t *testing.T) {
	a, err := algorithm.NewFNRFL(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.(algorithm.FNRFL); got != (algorithm.FNRFL{Variant: "paper", P: 0.5, Epochs: 5, Lambda: 1, Batch: 32}) {
		t.Errorf("defaults %+v", got)
	}
	for _, bad := range []fl.Options{{"variant": "official"}, {"p": 1.5}, {"epochs": -1}, {"lambda": -1}, {"batch": 0}} {
		if _, err := algorithm.NewFNRFL(bad); err == nil {
			t.Errorf("options %v: no error", bad)
		}
	}
}

func sameFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool {
		return x == y || (math.IsNaN(x) && math.IsNaN(y)) || math.Abs(x-y) < 1e-12
	})
}
