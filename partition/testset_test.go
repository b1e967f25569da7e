package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/partition/partitiontest"
)

// testSetup is a Dirichlet train partition of Fashion-MNIST-like labels and
// a 10,000-sample test split (1,000 per class).
func testSetup(t *testing.T, clients int) (train [][]int, trainLabels, testLabels []uint8) {
	t.Helper()
	trainLabels = balancedLabels(10, 6000)
	testLabels = balancedLabels(10, 1000)
	train, err := Dirichlet(trainLabels, 10, clients, DirichletOptions{Alpha: 0.5}, newRand(1))
	if err != nil {
		t.Fatalf("Dirichlet error: %v", err)
	}
	return train, trainLabels, testLabels
}

func TestFromTestSetContract(t *testing.T) {
	train, trainLabels, testLabels := testSetup(t, 20)
	sizes := make([]int, len(train))
	for k := range sizes {
		sizes[k] = 100 + 10*k
	}
	err := partitiontest.Check(partitiontest.Harness{
		Run: func(r *rand.Rand) ([][]int, error) {
			return FromTestSet(train, trainLabels, testLabels, 10, sizes, r)
		},
		Parts:    len(train),
		Pool:     len(testLabels),
		Disjoint: false, // clients draw independently and may share test samples
		Sizes:    sizes,
		Inputs: func() any {
			return []any{cloneLists(train), slices.Clone(trainLabels), slices.Clone(testLabels), slices.Clone(sizes)}
		},
	})
	if err != nil {
		t.Error(err)
	}
}

// TestFromTestSetProportions checks HiCS-FL's rule (specs/hicsfl.md §3.3):
// each client's test label counts are its train proportions scaled to
// sizes[k], each floor or ceil of its quota sizes[k]·m_kc/n_k (largest
// remainder), and the sizes are exact.
func TestFromTestSetProportions(t *testing.T) {
	train, trainLabels, testLabels := testSetup(t, 10)
	tests := []struct {
		name      string
		giveSizes []int
	}{
		{name: "200 each", giveSizes: slices.Repeat([]int{200}, 10)},
		{name: "mixed", giveSizes: []int{0, 1, 7, 33, 100, 250, 999, 1000, 17, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			test, err := FromTestSet(train, trainLabels, testLabels, 10, tt.giveSizes, newRand(2))
			if err != nil {
				t.Fatalf("FromTestSet error: %v", err)
			}
			for k := range train {
				if len(test[k]) != tt.giveSizes[k] {
					t.Errorf("client %d: %d test samples; want %d", k, len(test[k]), tt.giveSizes[k])
				}
				trainCounts := labelCounts(train[k], trainLabels, 10)
				for c, x := range labelCounts(test[k], testLabels, 10) {
					q := float64(tt.giveSizes[k]) * float64(trainCounts[c]) / float64(len(train[k]))
					if float64(x) < math.Floor(q) || float64(x) > math.Ceil(q) {
						t.Errorf("client %d: %d test samples of class %d; want floor or ceil of %.3f", k, x, c, q)
					}
				}
			}
		})
	}
}

// TestFromTestSetCap checks the documented cap: a single-class client asking
// for more test samples than the test split has of its class gets all of
// them and no other class.
func TestFromTestSetCap(t *testing.T) {
	trainLabels := []uint8{0, 0, 0, 1, 1}
	testLabels := []uint8{0, 1, 0, 1, 1, 1, 1}
	train := [][]int{{0, 1, 2}, {0, 3}}
	test, err := FromTestSet(train, trainLabels, testLabels, 2, []int{5, 4}, newRand(1))
	if err != nil {
		t.Fatalf("FromTestSet error: %v", err)
	}
	if want := []int{0, 2}; !slices.Equal(test[0], want) {
		t.Errorf("client 0 test set = %v; want all class-0 test samples %v", test[0], want)
	}
	// Client 1 is half class 0, half class 1: 2 + 2, both available.
	if got := labelCounts(test[1], testLabels, 2); !slices.Equal(got, []int{2, 2}) {
		t.Errorf("client 1 test label counts = %v; want [2 2]", got)
	}
}

// TestFromTestSetUniform checks that draws are uniform without replacement
// within a class: 3 of a 10-sample pool per client, over m = 5,000 clients,
// includes each sample with probability 0.3; each frequency must be within
// 5·sqrt(0.3·0.7/m) ≈ 0.032.
func TestFromTestSetUniform(t *testing.T) {
	const m = 5000
	trainLabels := []uint8{0}
	testLabels := make([]uint8, 10)
	train := slices.Repeat([][]int{{0}}, m)
	test, err := FromTestSet(train, trainLabels, testLabels, 1, slices.Repeat([]int{3}, m), newRand(8))
	if err != nil {
		t.Fatalf("FromTestSet error: %v", err)
	}
	hits := make([]int, 10)
	for _, list := range test {
		for _, i := range list {
			hits[i]++
		}
	}
	tol := 5 * math.Sqrt(0.3*0.7/m)
	for i, h := range hits {
		if got := float64(h) / m; math.Abs(got-0.3) > tol {
			t.Errorf("test sample %d drawn with frequency %.4f; want 0.3 ± %.4f", i, got, tol)
		}
	}
}

func TestFromTestSetErrors(t *testing.T) {
	trainLabels := []uint8{0, 1, 1, 2}
	testLabels := []uint8{0, 1, 2, 2}
	tests := []struct {
		name           string
		giveTrain      [][]int
		giveTestLabels []uint8
		giveClasses    int
		giveSizes      []int
		wantField      string
	}{
		{name: "sizes length", giveTrain: [][]int{{0}, {1}}, giveTestLabels: testLabels, giveClasses: 3, giveSizes: []int{1}, wantField: "1 test sizes for 2 clients"},
		{name: "negative size", giveTrain: [][]int{{0}}, giveTestLabels: testLabels, giveClasses: 3, giveSizes: []int{-2}, wantField: "sizes[0] = -2"},
		{name: "empty client", giveTrain: [][]int{{0}, {}}, giveTestLabels: testLabels, giveClasses: 3, giveSizes: []int{1, 1}, wantField: "set sizes[1] = 0"},
		{name: "train index", giveTrain: [][]int{{0, 4}}, giveTestLabels: testLabels, giveClasses: 3, giveSizes: []int{1}, wantField: "train[0][1] = 4"},
		{name: "test label", giveTrain: [][]int{{0}}, giveTestLabels: []uint8{0, 3}, giveClasses: 3, giveSizes: []int{1}, wantField: "test labels[1] = 3"},
		{name: "train label", giveTrain: [][]int{{0}}, giveTestLabels: testLabels, giveClasses: 2, giveSizes: []int{1}, wantField: "train labels[3] = 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromTestSet(tt.giveTrain, trainLabels, tt.giveTestLabels, tt.giveClasses, tt.giveSizes, newRand(1))
			checkInvalid(t, fmt.Sprintf("FromTestSet(%v, sizes %v)", tt.giveTrain, tt.giveSizes), err, tt.wantField)
		})
	}
}
