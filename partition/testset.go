package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// FromTestSet draws each client a local test set from the dataset's test
// split with the client's train label proportions, the way specs/hicsfl.md
// §3.3 describes HiCS-FL's local test sets. For client k with n_k train
// samples, m_kc of class c, and s_k = sizes[k]:
//
//	t_kc = largest-remainder apportionment of s_k over quotas s_k·m_kc/n_k
//	test[k] = t_kc test indices of class c, uniformly without replacement, for every c
//
// Each t_kc is floor or ceil of its quota and Σ_c t_kc = s_k; ties between
// equal remainders are broken at random. Clients draw independently from the
// whole test split, so two clients may share test samples; within a client
// the indices are distinct. If the test split has fewer than t_kc samples of
// class c, the client gets all of them and its set is smaller than s_k (no
// sample is drawn twice and no other class is topped up, so proportions stay
// honest); Stats reports the actual size. Each list is sorted ascending. Put
// the result in a Partition with TestFrom = SourceTest.
//
// HiCS-FL's code (sampling.py, partition_data_various_alpha) does not draw
// per client: it splits each α-group's slice of the test split among that
// group's clients with the same Dirichlet proportions as the train split, so
// its local test sets are disjoint and their sizes follow from the draw.
//
// FromTestSet returns an error wrapping ErrInvalid if classes is not in
// 1..256, a label is not below classes, len(sizes) != len(train), a size is
// negative, a train index is outside trainLabels, or a client with
// sizes[k] > 0 has no train samples to take proportions from. It panics if r
// is nil.
func FromTestSet(train [][]int, trainLabels, testLabels []uint8, classes int, sizes []int, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := checkLabels("train labels", trainLabels, classes); err != nil {
		return nil, err
	}
	if err := checkLabels("test labels", testLabels, classes); err != nil {
		return nil, err
	}
	if len(sizes) != len(train) {
		return nil, fmt.Errorf("partition: %d test sizes for %d clients; pass one size per client: %w", len(sizes), len(train), ErrInvalid)
	}
	if err := checkIndexLists("train", train, len(trainLabels)); err != nil {
		return nil, err
	}
	for k, s := range sizes {
		if s < 0 {
			return nil, fmt.Errorf("partition: sizes[%d] = %d; use a size >= 0: %w", k, s, ErrInvalid)
		}
		if s > 0 && len(train[k]) == 0 {
			return nil, fmt.Errorf("partition: client %d has no train samples to take label proportions from; set sizes[%d] = 0: %w", k, k, ErrInvalid)
		}
	}

	// pool is the test split grouped by class. Partial Fisher–Yates permutes
	// it in place; any arrangement yields a uniform subset, so clients can
	// share it.
	pool, start := byClass(testLabels, classes)
	counts := make([]int, classes)
	quota := make([]int, classes)
	buf := make([]int, 0, classes)
	test := make([][]int, len(train))
	for k, list := range train {
		clear(counts)
		for _, i := range list {
			counts[trainLabels[i]]++
		}
		apportion(quota, sizes[k], counts, r, buf)
		test[k] = make([]int, 0, sizes[k])
		for c, tc := range quota {
			seg := pool[start[c]:start[c+1]]
			tc = min(tc, len(seg))
			for i := range tc {
				j := i + r.IntN(len(seg)-i)
				seg[i], seg[j] = seg[j], seg[i]
			}
			test[k] = append(test[k], seg[:tc]...)
		}
		slices.Sort(test[k])
	}
	return test, nil
}
