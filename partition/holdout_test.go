package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/partition/partitiontest"
)

// TestHoldOutContract checks HoldOut with the shared harness by treating
// keep and test together as 2n lists: they must partition the whole train
// split exactly as the input did.
func TestHoldOutContract(t *testing.T) {
	labels := balancedLabels(10, 6000)
	train, err := Shards(labels, 100, 2, newRand(1))
	if err != nil {
		t.Fatalf("Shards error: %v", err)
	}
	dir, err := Dirichlet(balancedLabels(10, 100), 10, 7, DirichletOptions{Alpha: 0.3, MinSize: 1}, newRand(1))
	if err != nil {
		t.Fatalf("Dirichlet error: %v", err)
	}
	tests := []struct {
		name         string
		giveTrain    [][]int
		giveLabels   []uint8
		giveFraction float64
		wantSizes    []int // keep sizes, then test sizes
	}{
		{
			name: "fedeba/fmnist shards 80/20", giveTrain: train, giveLabels: labels, giveFraction: 0.2,
			wantSizes: append(slices.Repeat([]int{480}, 100), slices.Repeat([]int{120}, 100)...),
		},
		{name: "dirichlet/0.3", giveTrain: dir, giveLabels: balancedLabels(10, 100), giveFraction: 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := partitiontest.Check(partitiontest.Harness{
				Run: func(r *rand.Rand) ([][]int, error) {
					keep, test, err := HoldOut(tt.giveTrain, tt.giveLabels, tt.giveFraction, r)
					return append(keep, test...), err
				},
				Parts:    2 * len(tt.giveTrain),
				Pool:     len(tt.giveLabels),
				Complete: true,
				Sizes:    tt.wantSizes,
				Inputs:   func() any { return []any{cloneLists(tt.giveTrain), slices.Clone(tt.giveLabels)} },
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestHoldOutFMNISTShards is the 80/20 half of specs/fedeba.md §6 check 13:
// every 600-sample shard client splits 480/120, keep ∪ test is the client's
// data, and the split is stratified: a client with 300 + 300 samples of two
// classes tests on 60 + 60, one with 600 of a single class on 120.
func TestHoldOutFMNISTShards(t *testing.T) {
	labels := balancedLabels(10, 6000)
	train, err := Shards(labels, 100, 2, newRand(2))
	if err != nil {
		t.Fatalf("Shards error: %v", err)
	}
	keep, test, err := HoldOut(train, labels, 0.2, newRand(3))
	if err != nil {
		t.Fatalf("HoldOut error: %v", err)
	}
	for k := range train {
		if len(keep[k]) != 480 || len(test[k]) != 120 {
			t.Errorf("client %d: %d kept / %d test; want 480 / 120", k, len(keep[k]), len(test[k]))
		}
		union := slices.Concat(keep[k], test[k])
		slices.Sort(union)
		if !slices.Equal(union, train[k]) {
			t.Errorf("client %d: keep ∪ test differs from its train data", k)
		}
		trainCounts := labelCounts(train[k], labels, 10)
		for c, x := range labelCounts(test[k], labels, 10) {
			if want := trainCounts[c] / 5; x != want {
				t.Errorf("client %d: %d test samples of class %d; want %d (a fifth of %d)", k, x, c, want, trainCounts[c])
			}
		}
	}
}

// TestHoldOutRounding checks the documented rule: t = round(fraction·n),
// halves up, then a largest-remainder split over classes.
func TestHoldOutRounding(t *testing.T) {
	tests := []struct {
		name         string
		giveCounts   []int // the client's samples per class
		giveFraction float64
		wantTest     []int // test samples per class; nil: only floor/ceil of the quota
		wantTotal    int
	}{
		{name: "600 at 0.2", giveCounts: []int{300, 300}, giveFraction: 0.2, wantTest: []int{60, 60}, wantTotal: 120},
		{name: "half rounds up", giveCounts: []int{5}, giveFraction: 0.5, wantTest: []int{3}, wantTotal: 3},
		{name: "1.4 rounds down", giveCounts: []int{7}, giveFraction: 0.2, wantTest: []int{1}, wantTotal: 1},
		// t = 3; quotas 1.8, 0.9, 0.3: floors 1, 0, 0 leave 2 for the largest
		// remainders 0.9 (class 1) and 0.8 (class 0).
		{name: "largest remainders", giveCounts: []int{6, 3, 1}, giveFraction: 0.3, wantTest: []int{2, 1, 0}, wantTotal: 3},
		// t = 4; quotas 4·7/12 = 2.33, 4·3/12 = 1, 4·2/12 = 0.67: floors 2, 1, 0
		// leave 1 for class 2 (remainder 0.67 > 0.33).
		{name: "exact quota kept", giveCounts: []int{7, 3, 2}, giveFraction: 1.0 / 3, wantTest: []int{2, 1, 1}, wantTotal: 4},
		{name: "ties broken at random", giveCounts: []int{1, 1, 1, 1, 1}, giveFraction: 0.4, wantTotal: 2},
		{name: "fraction 0", giveCounts: []int{4, 4}, giveFraction: 0, wantTest: []int{0, 0}, wantTotal: 0},
		{name: "fraction 1", giveCounts: []int{4, 2}, giveFraction: 1, wantTest: []int{4, 2}, wantTotal: 6},
		{name: "empty client", giveCounts: []int{0, 0}, giveFraction: 0.2, wantTest: []int{0, 0}, wantTotal: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var labels []uint8
			for c, x := range tt.giveCounts {
				labels = append(labels, slices.Repeat([]uint8{uint8(c)}, x)...)
			}
			client := make([]int, len(labels))
			for i := range client {
				client[i] = i
			}
			for seed := range uint64(10) {
				_, test, err := HoldOut([][]int{client}, labels, tt.giveFraction, newRand(seed))
				if err != nil {
					t.Fatalf("HoldOut error: %v", err)
				}
				got := labelCounts(test[0], labels, len(tt.giveCounts))
				if len(test[0]) != tt.wantTotal {
					t.Errorf("seed %d: %d test samples; want %d", seed, len(test[0]), tt.wantTotal)
				}
				if tt.wantTest != nil && !slices.Equal(got, tt.wantTest) {
					t.Errorf("seed %d: test counts per class = %v; want %v", seed, got, tt.wantTest)
				}
				for c, x := range got {
					q := float64(tt.wantTotal) * float64(tt.giveCounts[c]) / float64(len(labels))
					if float64(x) < math.Floor(q) || float64(x) > math.Ceil(q) {
						t.Errorf("seed %d: class %d gets %d test samples; want floor or ceil of its quota %.3f", seed, c, x, q)
					}
				}
			}
		})
	}
}

// TestHoldOutOrderInvariant checks that the split depends on each client's
// samples as a set: the same samples listed in another order, with the same
// seed, give the same split.
func TestHoldOutOrderInvariant(t *testing.T) {
	labels := balancedLabels(3, 40)
	client := []int{5, 17, 2, 99, 31, 64, 8, 77, 13, 50, 41, 100, 0, 23}
	reversed := slices.Clone(client)
	slices.Reverse(reversed)
	k1, t1, err1 := HoldOut([][]int{client}, labels, 0.3, newRand(9))
	k2, t2, err2 := HoldOut([][]int{reversed}, labels, 0.3, newRand(9))
	if err1 != nil || err2 != nil {
		t.Fatalf("HoldOut errors: %v, %v", err1, err2)
	}
	if !slices.Equal(k1[0], k2[0]) || !slices.Equal(t1[0], t2[0]) {
		t.Errorf("HoldOut of reordered input = %v / %v; want %v / %v", k2[0], t2[0], k1[0], t1[0])
	}
}

func TestHoldOutErrors(t *testing.T) {
	labels := balancedLabels(2, 5)
	tests := []struct {
		name         string
		giveTrain    [][]int
		giveFraction float64
		wantField    string
	}{
		{name: "negative fraction", giveTrain: [][]int{{0, 1}}, giveFraction: -0.1, wantField: "fraction = -0.1"},
		{name: "fraction above 1", giveTrain: [][]int{{0, 1}}, giveFraction: 1.5, wantField: "fraction = 1.5"},
		{name: "NaN fraction", giveTrain: [][]int{{0, 1}}, giveFraction: math.NaN(), wantField: "fraction = NaN"},
		{name: "index out of range", giveTrain: [][]int{{0, 1}, {10}}, giveFraction: 0.2, wantField: "train[1][0] = 10"},
		{name: "negative index", giveTrain: [][]int{{-1}}, giveFraction: 0.2, wantField: "train[0][0] = -1"},
		{name: "duplicate index", giveTrain: [][]int{{3, 1, 3}}, giveFraction: 0.2, wantField: "index 3 twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := HoldOut(tt.giveTrain, labels, tt.giveFraction, newRand(1))
			checkInvalid(t, fmt.Sprintf("HoldOut(%v, %g)", tt.giveTrain, tt.giveFraction), err, tt.wantField)
		})
	}
}
