package partitiontest

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// good is a correct complete partitioner of [0, 6) into 2 sorted lists of 3.
func good(r *rand.Rand) ([][]int, error) {
	perm := r.Perm(6)
	a, b := perm[:3], perm[3:]
	slices.Sort(a)
	slices.Sort(b)
	return [][]int{a, b}, nil
}

func TestCheckAcceptsGood(t *testing.T) {
	h := Harness{Run: good, Parts: 2, Pool: 6, Complete: true, Sizes: []int{3, 3}}
	// good has 20 outcomes, so the two seeds Check uses could in principle
	// agree; with PCG they do not.
	if err := Check(h); err != nil {
		t.Errorf("Check(good) = %v; want nil", err)
	}
}

// TestCheckReportsViolations runs Check on broken partitioners and requires
// a message naming each violation.
func TestCheckReportsViolations(t *testing.T) {
	var calls int
	input := []int{1, 2, 3}
	tests := []struct {
		name     string
		give     Harness
		wantText string
	}{
		{
			name:     "error",
			give:     Harness{Run: func(*rand.Rand) ([][]int, error) { return nil, errors.New("boom") }, Parts: 1, Pool: 1},
			wantText: "boom",
		},
		{
			name:     "wrong count",
			give:     Harness{Run: constant([][]int{{0, 1}}), Parts: 2, Pool: 2, Fixed: true},
			wantText: "got 1 lists; want 2",
		},
		{
			name:     "unsorted",
			give:     Harness{Run: constant([][]int{{1, 0}}), Parts: 1, Pool: 2, Fixed: true},
			wantText: "not above its predecessor",
		},
		{
			name:     "duplicate within a list",
			give:     Harness{Run: constant([][]int{{0, 0}}), Parts: 1, Pool: 2, Fixed: true},
			wantText: "not above its predecessor",
		},
		{
			name:     "out of range",
			give:     Harness{Run: constant([][]int{{0, 2}}), Parts: 1, Pool: 2, Fixed: true},
			wantText: "outside [0, 2)",
		},
		{
			name:     "shared",
			give:     Harness{Run: constant([][]int{{0, 1}, {1}}), Parts: 2, Pool: 2, Disjoint: true, Fixed: true},
			wantText: "index 1 is in lists 0 and 1",
		},
		{
			name:     "incomplete",
			give:     Harness{Run: constant([][]int{{0}, {2}}), Parts: 2, Pool: 3, Complete: true, Fixed: true},
			wantText: "index 1 is in no list",
		},
		{
			name:     "sizes",
			give:     Harness{Run: constant([][]int{{0}, {1, 2}}), Parts: 2, Pool: 3, Sizes: []int{2, 1}, Fixed: true},
			wantText: "list 0 has 1 indices; want 2",
		},
		{
			name: "not deterministic",
			give: Harness{Run: func(*rand.Rand) ([][]int, error) {
				calls++
				return [][]int{{calls % 2}}, nil
			}, Parts: 1, Pool: 2},
			wantText: "two runs with seed (1, 2) differ",
		},
		{
			name:     "ignores the stream",
			give:     Harness{Run: constant([][]int{{0}}), Parts: 1, Pool: 1},
			wantText: "ignores its *rand.Rand",
		},
		{
			name: "mutates its input",
			give: Harness{
				Run: func(r *rand.Rand) ([][]int, error) {
					input[0]++
					return good(r)
				},
				Parts: 2, Pool: 6,
				Inputs: func() any { return append([]int(nil), input...) },
			},
			wantText: "the inputs changed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.give)
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Check = %v; want an error containing %q", err, tt.wantText)
			}
		})
	}
}

// TestCheckReportsAll checks the fstest.TestFS shape: several violations in
// one result are all reported.
func TestCheckReportsAll(t *testing.T) {
	err := Check(Harness{Run: constant([][]int{{1, 0}, {1, 5}}), Parts: 2, Pool: 5, Complete: true, Fixed: true})
	if err == nil {
		t.Fatal("Check = nil; want violations")
	}
	for _, want := range []string{"not above its predecessor", "outside [0, 5)", "index 1 is in lists 0 and 1", "index 2 is in no list", "sizes add up to 4; want the pool size 5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %q; want it to contain %q", err, want)
		}
	}
}

func constant(parts [][]int) func(*rand.Rand) ([][]int, error) {
	return func(*rand.Rand) ([][]int, error) { return parts, nil }
}
