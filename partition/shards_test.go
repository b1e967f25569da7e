package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/partition/partitiontest"
)

func TestShardsContract(t *testing.T) {
	tests := []struct {
		name          string
		giveLabels    []uint8
		giveClients   int
		giveShardsPer int
		wantSizes     []int // nil when sizes depend on the draw
	}{
		{name: "fmnist/100x2", giveLabels: balancedLabels(10, 6000), giveClients: 100, giveShardsPer: 2, wantSizes: slices.Repeat([]int{600}, 100)},
		{name: "cifar10/100x2", giveLabels: balancedLabels(10, 5000), giveClients: 100, giveShardsPer: 2, wantSizes: slices.Repeat([]int{500}, 100)},
		{name: "remainder/103 samples, 10 shards", giveLabels: balancedLabels(1, 103), giveClients: 5, giveShardsPer: 2},
		{name: "one shard each", giveLabels: balancedLabels(4, 25), giveClients: 10, giveShardsPer: 1, wantSizes: slices.Repeat([]int{10}, 10)},
		{name: "one sample per shard", giveLabels: balancedLabels(3, 4), giveClients: 4, giveShardsPer: 3, wantSizes: slices.Repeat([]int{3}, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := partitiontest.Check(partitiontest.Harness{
				Run: func(r *rand.Rand) ([][]int, error) {
					return Shards(tt.giveLabels, tt.giveClients, tt.giveShardsPer, r)
				},
				Parts:    tt.giveClients,
				Pool:     len(tt.giveLabels),
				Complete: true,
				Sizes:    tt.wantSizes,
				Inputs:   func() any { return slices.Clone(tt.giveLabels) },
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestShardsFMNISTAcceptance is specs/fedeba.md §6 check 13 (the shard half;
// the 80/20 half is in TestHoldOutFMNISTShards): on Fashion-MNIST labels,
// 100 clients × 2 shards cut the label-sorted train set into 200 shards of
// 300, every one single-label, so each client holds 600 samples of at most 2
// classes, and a class it holds comes in multiples of 300.
//
// It also checks that shards are drawn without replacement uniformly: a
// client's two shards share a label with probability 19/199 (each label has
// 20 shards), so 100·19/199 ≈ 9.548 clients per partition hold one class.
// Over 200 seeds the mean must match within 5 standard errors.
func TestShardsFMNISTAcceptance(t *testing.T) {
	labels := balancedLabels(10, 6000)
	var single []float64
	for seed := range uint64(200) {
		parts, err := Shards(labels, 100, 2, newRand(seed))
		if err != nil {
			t.Fatalf("Shards error: %v", err)
		}
		ones := 0
		for k, p := range parts {
			if len(p) != 600 {
				t.Errorf("seed %d: client %d holds %d samples; want 600", seed, k, len(p))
			}
			held := 0
			for c, x := range labelCounts(p, labels, 10) {
				if x%300 != 0 {
					t.Errorf("seed %d: client %d holds %d samples of class %d; want a multiple of 300 (single-label shards)", seed, k, x, c)
				}
				if x > 0 {
					held++
				}
			}
			if held > 2 {
				t.Errorf("seed %d: client %d holds %d classes; want <= 2", seed, k, held)
			}
			if held == 1 {
				ones++
			}
		}
		single = append(single, float64(ones))
	}
	mean, se := moments(single)
	if want := 100 * 19.0 / 199; math.Abs(mean-want) > 5*se {
		t.Errorf("mean single-class clients = %.3f; want %.3f ± %.3f", mean, want, 5*se)
	}
}

// TestShardsRemainder checks the documented remainder rule on 103 samples of
// one label (so the label-sorted order is 0..102) cut into 10 shards: by
// np.array_split the shards are [0,11), [11,22), [22,33), then seven of 10.
// Every client's list must therefore be a union of two of those ranges.
func TestShardsRemainder(t *testing.T) {
	labels := balancedLabels(1, 103)
	var bounds []int
	for s, lo := 0, 0; s < 10; s++ {
		hi := lo + 10
		if s < 3 {
			hi++
		}
		bounds = append(bounds, lo)
		lo = hi
	}
	bounds = append(bounds, 103)
	shardOf := func(i int) int {
		s, _ := slices.BinarySearch(bounds, i+1)
		return s - 1
	}
	parts, err := Shards(labels, 5, 2, newRand(5))
	if err != nil {
		t.Fatalf("Shards error: %v", err)
	}
	used := map[int]bool{}
	for k, p := range parts {
		shards := map[int]int{}
		for _, i := range p {
			shards[shardOf(i)]++
		}
		if len(shards) != 2 {
			t.Errorf("client %d holds pieces of %d shards; want 2", k, len(shards))
		}
		for s, n := range shards {
			if want := bounds[s+1] - bounds[s]; n != want {
				t.Errorf("client %d holds %d of shard %d; want the whole shard of %d", k, n, s, want)
			}
			if used[s] {
				t.Errorf("shard %d is given to two clients", s)
			}
			used[s] = true
		}
	}
}

func TestShardsErrors(t *testing.T) {
	labels := balancedLabels(10, 10) // N = 100
	tests := []struct {
		giveClients, giveShardsPer int
		wantField                  string
	}{
		{giveClients: 0, giveShardsPer: 2, wantField: "clients = 0"},
		{giveClients: 101, giveShardsPer: 1, wantField: "lower clients"},
		{giveClients: 10, giveShardsPer: 0, wantField: "shards_per_client = 0"},
		{giveClients: 10, giveShardsPer: 11, wantField: "lower shards_per_client"},
		{giveClients: 51, giveShardsPer: 2, wantField: "lower shards_per_client"},
	}
	for _, tt := range tests {
		_, err := Shards(labels, tt.giveClients, tt.giveShardsPer, newRand(1))
		checkInvalid(t, fmt.Sprintf("Shards(%d clients, %d shards each)", tt.giveClients, tt.giveShardsPer), err, tt.wantField)
	}
}
