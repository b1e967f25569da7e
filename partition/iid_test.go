package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/partition/partitiontest"
)

func TestIID(t *testing.T) {
	tests := []struct {
		giveN, giveClients int
		wantSizes          []int // np.array_split: the first n%clients parts get one more
		fixed              bool
	}{
		{giveN: 10, giveClients: 3, wantSizes: []int{4, 3, 3}},
		{giveN: 1001, giveClients: 10, wantSizes: []int{101, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
		{giveN: 60000, giveClients: 100, wantSizes: slices.Repeat([]int{600}, 100)},
		{giveN: 7, giveClients: 7, wantSizes: slices.Repeat([]int{1}, 7)},
		{giveN: 9, giveClients: 4, wantSizes: []int{3, 2, 2, 2}},
		{giveN: 5, giveClients: 1, wantSizes: []int{5}, fixed: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d/clients=%d", tt.giveN, tt.giveClients), func(t *testing.T) {
			err := partitiontest.Check(partitiontest.Harness{
				Run:      func(r *rand.Rand) ([][]int, error) { return IID(tt.giveN, tt.giveClients, r) },
				Parts:    tt.giveClients,
				Pool:     tt.giveN,
				Complete: true,
				Sizes:    tt.wantSizes,
				Fixed:    tt.fixed,
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestIIDSizesAcceptance is specs/fnrfl.md §7 check 1 for "homo": every size
// is floor(N/n) or ceil(N/n), over many (N, n) pairs.
func TestIIDSizesAcceptance(t *testing.T) {
	r := newRand(1)
	for n := 1; n <= 60; n++ {
		for clients := 1; clients <= n; clients++ {
			parts, err := IID(n, clients, r)
			if err != nil {
				t.Fatalf("IID(%d, %d) error: %v", n, clients, err)
			}
			lo, hi := n/clients, (n+clients-1)/clients
			for k, p := range parts {
				if len(p) < lo || len(p) > hi {
					t.Errorf("IID(%d, %d) part %d has %d indices; want %d or %d", n, clients, k, len(p), lo, hi)
				}
			}
		}
	}
}

func TestIIDErrors(t *testing.T) {
	tests := []struct {
		giveN, giveClients int
		wantField          string
	}{
		{giveN: 10, giveClients: 0, wantField: "clients = 0"},
		{giveN: 10, giveClients: -3, wantField: "clients = -3"},
		{giveN: 10, giveClients: 11, wantField: "lower clients"},
		{giveN: 0, giveClients: 1, wantField: "lower clients"},
	}
	for _, tt := range tests {
		_, err := IID(tt.giveN, tt.giveClients, newRand(1))
		checkInvalid(t, fmt.Sprintf("IID(%d, %d)", tt.giveN, tt.giveClients), err, tt.wantField)
	}
}
