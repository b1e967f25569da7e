package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// HoldOut splits every client's samples into a local train part (keep) and a
// local test part (test), stratified by label. This is the per-client 80/20
// train/validation split of easyFL that FedEBA+'s per-client metrics are
// measured on (specs/fedeba.md §3.2: 600 → 480 train / 120 test on
// Fashion-MNIST shards); FedEBA+ passes fraction = 0.2.
//
// Rounding rule, for client k with n_k samples and m_kc of class c:
//
//	t_k  = math.Round(fraction · n_k)                 (halves round up)
//	t_kc = largest-remainder apportionment of t_k over quotas t_k·m_kc/n_k
//
// so each t_kc is floor or ceil of its quota and Σ_c t_kc = t_k exactly;
// ties between equal remainders are broken at random. The t_kc test samples
// of class c are drawn uniformly without replacement from the client's
// class-c samples; the rest are kept. keep[k] and test[k] partition train[k]
// and are sorted ascending. The result depends on train[k] as a set, not on
// its order. Put the result in a Partition with TestFrom = SourceTrain.
//
// easyFL's local_holdout instead keeps the first int(0.8·n_k) samples of the
// client's (optionally shuffled) list and is not stratified; for n_k = 600
// both give 480/120.
//
// HoldOut returns an error wrapping ErrInvalid if fraction is not in [0, 1],
// if an index is outside labels, or if a client lists an index twice. It
// panics if r is nil.
func HoldOut(train [][]int, labels []uint8, fraction float64, r *rand.Rand) (keep, test [][]int, err error) {
	mustRand(r)
	if math.IsNaN(fraction) || fraction < 0 || fraction > 1 {
		return nil, nil, fmt.Errorf("partition: holdout fraction = %g; use a value in [0, 1], e.g. 0.2 for an 80/20 split: %w", fraction, ErrInvalid)
	}
	if err := checkIndexLists("train", train, len(labels)); err != nil {
		return nil, nil, err
	}
	keep = make([][]int, len(train))
	test = make([][]int, len(train))
	var (
		counts = make([]int, 256)
		start  = make([]int, 257)
		quota  = make([]int, 256)
		buf    = make([]int, 0, 256)
	)
	for k, list := range train {
		sorted := slices.Clone(list)
		slices.Sort(sorted)
		for p := 1; p < len(sorted); p++ {
			if sorted[p] == sorted[p-1] {
				return nil, nil, fmt.Errorf("partition: train[%d] lists index %d twice; pass each client's samples as a set: %w", k, sorted[p], ErrInvalid)
			}
		}
		// Group by label, ascending within each label: class c occupies
		// grouped[start[c]:start[c+1]].
		clear(counts)
		for _, i := range sorted {
			counts[labels[i]]++
		}
		for c := range 256 {
			start[c+1] = start[c] + counts[c]
		}
		grouped := make([]int, len(sorted))
		next := slices.Clone(start[:256])
		for _, i := range sorted {
			grouped[next[labels[i]]] = i
			next[labels[i]]++
		}

		t := int(math.Round(fraction * float64(len(sorted))))
		apportion(quota, t, counts, r, buf)
		keep[k] = make([]int, 0, len(sorted)-t)
		test[k] = make([]int, 0, t)
		for c := range 256 {
			seg := grouped[start[c]:start[c+1]]
			tc := quota[c]
			for i := range tc { // partial Fisher–Yates: seg[:tc] is a uniform tc-subset
				j := i + r.IntN(len(seg)-i)
				seg[i], seg[j] = seg[j], seg[i]
			}
			test[k] = append(test[k], seg[:tc]...)
			keep[k] = append(keep[k], seg[tc:]...)
		}
		slices.Sort(keep[k])
		slices.Sort(test[k])
	}
	return keep, test, nil
}
