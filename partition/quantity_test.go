package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/partition/partitiontest"
)

func TestQuantityContract(t *testing.T) {
	tests := []struct {
		giveN, giveClients int
		giveOpts           QuantityOptions
	}{
		{giveN: 60000, giveClients: 10, giveOpts: QuantityOptions{Alpha: 0.5}},
		{giveN: 6000, giveClients: 100, giveOpts: QuantityOptions{Alpha: 5, MinSize: 20}},
		{giveN: 500, giveClients: 7, giveOpts: QuantityOptions{Alpha: 0.1, MinSize: NoMinSize}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("N=%d/n=%d/alpha=%g", tt.giveN, tt.giveClients, tt.giveOpts.Alpha), func(t *testing.T) {
			err := partitiontest.Check(partitiontest.Harness{
				Run:      func(r *rand.Rand) ([][]int, error) { return Quantity(tt.giveN, tt.giveClients, tt.giveOpts, r) },
				Parts:    tt.giveClients,
				Pool:     tt.giveN,
				Complete: true,
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestQuantityFNRFLAcceptance is specs/fnrfl.md §7 check 3, "iid-diff-quantity"
// with N = 60,000 and n = 10 against the spec's 2,000-seed reference: all
// sizes >= 10 up to the 1 lost by flooring the cuts; at beta = 0.5 the
// smallest party has mean ≈ 211 and median ≈ 99, the largest mean ≈ 22,300
// with p5 ≈ 13,400 and p95 ≈ 35,300; at beta = 0.1 the smallest has median
// ≈ 21 and the largest mean ≈ 30,900. Rounding allowances are half a unit of
// the last reported digit (5 for 211 at three figures is generous: ±0.5 for
// 211, ±50 for 22,300 and 30,900, ±50 for the quantiles, ±0.5 for medians).
// Within parties of >= 1,000 samples every class share is 0.10 ± 0.04 (the
// labels cycle through 10 classes, so a party is a uniform sample of them;
// at 1,000 samples 0.04 is 4.2 standard deviations, checked on 200 seeds).
func TestQuantityFNRFLAcceptance(t *testing.T) {
	const seeds, n, clients = 1000, 60000, 10
	labels := balancedLabels(10, n/10)
	tests := []struct {
		giveAlpha float64
		want      []refStat
	}{
		{giveAlpha: 0.5, want: []refStat{
			{name: "smallest", mean: 211, meanHalf: 0.5, quant: []refQuantile{{0.5, 99, 0.5}}},
			{name: "largest", mean: 22300, meanHalf: 50, quant: []refQuantile{{0.05, 13400, 50}, {0.95, 35300, 50}}},
		}},
		{giveAlpha: 0.1, want: []refStat{
			{name: "smallest", mean: math.NaN(), quant: []refQuantile{{0.5, 21, 0.5}}},
			{name: "largest", mean: 30900, meanHalf: 50},
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("beta=", tt.giveAlpha), func(t *testing.T) {
			samples := map[string][]float64{}
			checked := 0
			for seed := range uint64(seeds) {
				// The sizes are DirichletSizes' draw; the first 200 seeds
				// run the whole of Quantity for the class shares.
				var sizes []int
				var parts [][]int
				var err error
				if seed < 200 {
					parts, err = Quantity(n, clients, QuantityOptions{Alpha: tt.giveAlpha}, newRand(seed))
					for _, p := range parts {
						sizes = append(sizes, len(p))
					}
				} else {
					sizes, err = DirichletSizes(n, clients, QuantityOptions{Alpha: tt.giveAlpha}, newRand(seed))
				}
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				smallest, largest := math.Inf(1), 0.0
				for k, size := range sizes {
					smallest, largest = min(smallest, float64(size)), max(largest, float64(size))
					if size < DefaultMinSize-1 {
						t.Errorf("seed %d: party %d holds %d samples; want >= %d", seed, k, size, DefaultMinSize-1)
					}
					if parts == nil || size < 1000 {
						continue
					}
					p := parts[k]
					checked++
					for c, x := range labelCounts(p, labels, 10) {
						if share := float64(x) / float64(len(p)); math.Abs(share-0.1) > 0.04 {
							t.Errorf("seed %d: party %d (%d samples) has class %d share %.3f; want 0.10 ± 0.04", seed, k, len(p), c, share)
						}
					}
				}
				samples["smallest"] = append(samples["smallest"], smallest)
				samples["largest"] = append(samples["largest"], largest)
			}
			if checked == 0 {
				t.Error("no party of >= 1,000 samples; the share check ran on nothing")
			}
			checkRefStats(t, samples, 2000, tt.want)
		})
	}
}

func TestQuantityErrors(t *testing.T) {
	tests := []struct {
		name               string
		giveN, giveClients int
		giveOpts           QuantityOptions
		wantField          string
	}{
		{name: "alpha zero", giveN: 100, giveClients: 5, giveOpts: QuantityOptions{}, wantField: "alpha = 0"},
		{name: "alpha NaN", giveN: 100, giveClients: 5, giveOpts: QuantityOptions{Alpha: math.NaN()}, wantField: "alpha = NaN"},
		{name: "min size", giveN: 100, giveClients: 5, giveOpts: QuantityOptions{Alpha: 1, MinSize: -2}, wantField: "min_size = -2"},
		{name: "min size above N/n", giveN: 100, giveClients: 5, giveOpts: QuantityOptions{Alpha: 1, MinSize: 21}, wantField: "min_size = 21"},
		{name: "max redraws", giveN: 100, giveClients: 5, giveOpts: QuantityOptions{Alpha: 1, MaxRedraws: -1}, wantField: "max_redraws = -1"},
		{name: "clients", giveN: 100, giveClients: 101, giveOpts: QuantityOptions{Alpha: 1}, wantField: "lower clients"},
		// 1,000 clients at beta = 0.5 need every q_j >= 10/60000 = 1/6000,
		// while P(q_j < 1/6000) ≈ 0.3 for each: no draw succeeds.
		{name: "impossible in practice", giveN: 60000, giveClients: 1000, giveOpts: QuantityOptions{Alpha: 0.5, MaxRedraws: 20}, wantField: "21 quantity draws"},
		{name: "default budget", giveN: 60000, giveClients: 1000, giveOpts: QuantityOptions{Alpha: 0.5}, wantField: "10001 quantity draws"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Quantity(tt.giveN, tt.giveClients, tt.giveOpts, newRand(1))
			checkInvalid(t, "Quantity", err, tt.wantField)
		})
	}
}
