// Package partitiontest checks a partitioner against the contract every
// partitioner in package partition promises. It has the shape of
// testing/fstest.TestFS: Check runs the partitioner several times and
// returns one error that lists every violation, or nil.
//
// A partitioner's test builds a Harness around a closure over its inputs:
//
//	h := partitiontest.Harness{
//		Run:      func(r *rand.Rand) ([][]int, error) { return partition.IID(100, 7, r) },
//		Parts:    7,
//		Pool:     100,
//		Complete: true,
//	}
//	if err := partitiontest.Check(h); err != nil {
//		t.Error(err)
//	}
package partitiontest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
)

// Harness describes one partitioner call and what it promises.
type Harness struct {
	// Run draws one partition from r. Check calls it three times with fresh
	// generators: twice with one seed and once with another.
	Run func(r *rand.Rand) ([][]int, error)
	// Parts is the wanted number of index lists (clients).
	Parts int
	// Pool bounds the indices: every index lies in [0, Pool).
	Pool int
	// Complete requires every index in [0, Pool) to appear in exactly one
	// list; it implies Disjoint.
	Complete bool
	// Disjoint requires that no index appears in two lists. Lists drawn
	// independently per client, such as local test sets, are not disjoint.
	Disjoint bool
	// Sizes, if non-nil, is the wanted length of every list.
	Sizes []int
	// Inputs, if non-nil, returns a deep copy of everything Run reads. Check
	// compares the copies taken before and after the runs to catch a
	// partitioner that modifies its arguments.
	Inputs func() any
	// Fixed marks a partition that does not depend on the random stream
	// (e.g. one client). Check then skips the "another seed differs" check.
	Fixed bool
}

// maxPerCheck bounds how many violations of one kind are reported.
const maxPerCheck = 5

// Check runs h.Run and reports every violation of the contract:
//   - Run returns no error and exactly h.Parts lists;
//   - every index lies in [0, h.Pool);
//   - each list is strictly increasing (sorted, no duplicates);
//   - lists are pairwise disjoint (if h.Disjoint or h.Complete);
//   - the union is all of [0, h.Pool) and the sizes add up to h.Pool (if h.Complete);
//   - list lengths equal h.Sizes (if set);
//   - two runs with equal seeds give equal lists, and a run with another
//     seed gives different lists (unless h.Fixed);
//   - the inputs are unchanged (if h.Inputs is set).
func Check(h Harness) error {
	var before any
	if h.Inputs != nil {
		before = h.Inputs()
	}
	a, err := h.Run(rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		return fmt.Errorf("partitiontest: run with seed (1, 2): %w", err)
	}
	errs := checkParts(h, a)

	b, err := h.Run(rand.New(rand.NewPCG(1, 2)))
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("second run with seed (1, 2): %w", err))
	case !equal(a, b):
		errs = append(errs, errors.New("two runs with seed (1, 2) differ; the partitioner must draw only from its *rand.Rand"))
	}
	c, err := h.Run(rand.New(rand.NewPCG(3, 4)))
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("run with seed (3, 4): %w", err))
	case !h.Fixed && equal(a, c):
		errs = append(errs, errors.New("runs with seeds (1, 2) and (3, 4) are equal; the partitioner ignores its *rand.Rand"))
	}
	if h.Inputs != nil {
		if after := h.Inputs(); !reflect.DeepEqual(before, after) {
			errs = append(errs, errors.New("the inputs changed; partitioners must not modify their arguments"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("partitiontest: %d violation(s):\n%w", len(errs), errors.Join(errs...))
}

// checkParts checks the static invariants of one result.
func checkParts(h Harness, parts [][]int) []error {
	var errs []error
	report := func(count *int, format string, args ...any) {
		*count++
		if *count <= maxPerCheck {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	if len(parts) != h.Parts {
		errs = append(errs, fmt.Errorf("got %d lists; want %d", len(parts), h.Parts))
	}
	if h.Sizes != nil && len(h.Sizes) != len(parts) {
		errs = append(errs, fmt.Errorf("got %d lists; the harness gives sizes for %d", len(parts), len(h.Sizes)))
	}
	seen := make([]int32, max(h.Pool, 0)) // seen[i] = 1 + the first list holding i, 0 if none
	var nRange, nOrder, nShared, nSize int
	total := 0
	for k, list := range parts {
		total += len(list)
		if h.Sizes != nil && k < len(h.Sizes) && len(list) != h.Sizes[k] {
			report(&nSize, "list %d has %d indices; want %d", k, len(list), h.Sizes[k])
		}
		for p, i := range list {
			if p > 0 && i <= list[p-1] {
				report(&nOrder, "list %d: index %d at position %d is not above its predecessor %d; lists must be strictly increasing", k, i, p, list[p-1])
			}
			if i < 0 || i >= h.Pool {
				report(&nRange, "list %d: index %d at position %d is outside [0, %d)", k, i, p, h.Pool)
				continue
			}
			if (h.Disjoint || h.Complete) && seen[i] != 0 && int(seen[i]) != k+1 {
				report(&nShared, "index %d is in lists %d and %d; lists must be disjoint", i, seen[i]-1, k)
			}
			if seen[i] == 0 {
				seen[i] = int32(k + 1)
			}
		}
	}
	if h.Complete {
		if total != h.Pool {
			errs = append(errs, fmt.Errorf("sizes add up to %d; want the pool size %d", total, h.Pool))
		}
		var nMissing int
		for i, s := range seen {
			if s == 0 {
				report(&nMissing, "index %d is in no list; the partition must be complete", i)
			}
		}
		if nMissing > maxPerCheck {
			errs = append(errs, fmt.Errorf("... %d indices missing in all", nMissing))
		}
	}
	for _, c := range []struct {
		n    int
		what string
	}{{nRange, "out-of-range indices"}, {nOrder, "ordering violations"}, {nShared, "shared indices"}, {nSize, "wrong sizes"}} {
		if c.n > maxPerCheck {
			errs = append(errs, fmt.Errorf("... %d %s in all", c.n, c.what))
		}
	}
	return errs
}

func equal(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}
