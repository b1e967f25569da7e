package partition

import (
	"fmt"
	"math/rand/v2"
)

// Reserve draws the server's public set before the clients' data is
// split: perClass samples of every class of labels (stratified, a uniform
// draw without replacement within each class), and returns them in a
// random order (drawn after the classes: a pass over the set in order sees
// the classes mixed, as a pass over a test split does), with the pool of
// the remaining indices in ascending order. FNR-FL's D_public (Hu, Qiu & Tang, arXiv:2312.06951)
// must be disjoint from every client's data and from the test sets: drawn
// from the train split first, it is, and the partitioners then split pool.
// A class with fewer than perClass+1 samples is ErrInvalid.
func Reserve(labels []uint8, classes, perClass int, r *rand.Rand) (public, pool []int, err error) {
	if perClass < 1 {
		return nil, nil, fmt.Errorf("partition: public set of %d per class; want at least 1: %w", perClass, ErrInvalid)
	}
	byClass := make([][]int, classes)
	for i, y := range labels {
		if int(y) >= classes {
			return nil, nil, fmt.Errorf("partition: label %d at %d is outside [0, %d): %w", y, i, classes, ErrInvalid)
		}
		byClass[y] = append(byClass[y], i)
	}
	taken := make([]bool, len(labels))
	for j, idx := range byClass {
		if len(idx) <= perClass {
			return nil, nil, fmt.Errorf("partition: class %d has %d training samples; a public set of %d per class would leave the clients none: %w", j, len(idx), perClass, ErrInvalid)
		}
		for i := range perClass {
			k := i + r.IntN(len(idx)-i)
			idx[i], idx[k] = idx[k], idx[i]
			public = append(public, idx[i])
			taken[idx[i]] = true
		}
	}
	r.Shuffle(len(public), func(i, j int) { public[i], public[j] = public[j], public[i] })
	pool = make([]int, 0, len(labels)-len(public))
	for i := range labels {
		if !taken[i] {
			pool = append(pool, i)
		}
	}
	return public, pool, nil
}

// Lift maps a partition of pool (its indices into pool) back to indices of
// the split pool indexes, in place.
func Lift(lists [][]int, pool []int) {
	for _, l := range lists {
		for i, k := range l {
			l[i] = pool[k]
		}
	}
}
