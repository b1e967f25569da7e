package partition

import (
	"fmt"
	"math/rand/v2"
)

// MixedOptions configures Mixed. A zero MaxRedraws means DefaultMaxRedraws.
type MixedOptions struct {
	// Alpha is the concentration of each class's split between its two
	// holders, (q, 1-q) ~ Dir_2(Alpha) (NIID-Bench's beta).
	Alpha float64
	// MaxRedraws bounds the redraws of the class assignment after a dead
	// end (see Mixed).
	MaxRedraws int
}

// Mixed is NIID-Bench's mixed label and quantity skew "mixed" (utils.py
// partition_data; specs/fnrfl.md §2): every client holds exactly 2 classes,
// every class is held by exactly 2 clients, and each class is split between
// its holders in Dirichlet proportions. With K = classes = clients:
//
//	times[c] = 1 for every class
//	for client i = 0..K-1:
//	  hold class i, and one class c != i with times[c] < 2, drawn uniformly; times[c]++
//	for class c = 0..K-1:
//	  idx_c = the indices of class c, shuffled
//	  (q, 1-q) ~ Dir_2(alpha)
//	  the first int(q·|idx_c|) go to the lower-numbered holder, the rest to the other
//
// The reference code draws the second class by rejection (Python's
// random.randint until it hits an allowed class) and loops forever when the
// last client's only allowed class is its own, which happens for about 7.5%
// of seeds. Mixed draws uniformly from the allowed classes (the same
// distribution) and, at such a dead end, redraws the whole assignment, at
// most MaxRedraws times. The code also draws an n-party Dirichlet that it
// never uses; Mixed does not.
//
// The code's invariants hold only for as many clients as classes: with more
// clients it always hangs, with fewer it drops data (a class with one holder
// gives away only its first piece). Mixed therefore requires clients ==
// classes. The partition is complete; lists are sorted ascending.
//
// Mixed returns an error wrapping ErrInvalid if classes is not in 2..256, a
// label is not below classes, clients != classes, Alpha is invalid, or every
// assignment draw dead-ends. It panics if r is nil.
func Mixed(labels []uint8, classes, clients int, opts MixedOptions, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := checkLabels("labels", labels, classes); err != nil {
		return nil, err
	}
	if err := checkAlpha("mixed alpha", opts.Alpha); err != nil {
		return nil, err
	}
	redraws, err := checkRedraws("mixed max_redraws", opts.MaxRedraws)
	if err != nil {
		return nil, err
	}
	if classes < 2 || clients != classes {
		return nil, fmt.Errorf("partition: mixed needs clients = classes >= 2 (every client holds 2 classes and every class has 2 holders), got clients = %d, classes = %d; set clients to %d: %w",
			clients, classes, classes, ErrInvalid)
	}
	if err := checkClients(clients, len(labels)); err != nil {
		return nil, err
	}
	second, ok := mixedAssign(classes, redraws, r)
	if !ok {
		return nil, fmt.Errorf("partition: mixed: %d draws of the class assignment all dead-ended; raise max_redraws: %w", 1+redraws, ErrInvalid)
	}
	holders := make([][2]int, classes) // holders[c], ascending
	count := make([]int, classes)
	for i := range clients {
		for _, c := range [2]int{i, second[i]} {
			holders[c][count[c]] = i
			count[c]++
		}
	}
	for c := range holders {
		if holders[c][0] > holders[c][1] {
			holders[c][0], holders[c][1] = holders[c][1], holders[c][0]
		}
	}
	idx, start := byClass(labels, classes)
	owner := make([]int32, len(labels))
	sizes := make([]int, clients)
	w := make([]float64, 2)
	cuts := make([]int, 2)
	for c := range classes {
		seg := idx[start[c]:start[c+1]]
		r.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
		logDirichlet(w, opts.Alpha, r)
		normalizeLog(w)
		cumCuts(cuts, w, len(seg))
		for p, i := range seg {
			h := holders[c][1]
			if p < cuts[0] {
				h = holders[c][0]
			}
			owner[i] = int32(h)
			sizes[h]++
		}
	}
	return gather(owner, sizes), nil
}

// mixedAssign draws each client's second class: client i holds i and
// second[i] != i, and every class is somebody's second class exactly once
// (times[c] starts at 1 and may reach 2). A draw that reaches a client whose
// only allowed class is its own is a dead end and is redrawn from the start,
// at most redraws times; ok is false if every draw dead-ends.
func mixedAssign(classes, redraws int, r *rand.Rand) (second []int, ok bool) {
	second = make([]int, classes)
	taken := make([]bool, classes) // times[c] == 2
	allowed := make([]int, 0, classes)
	for range 1 + redraws {
		clear(taken)
		dead := false
		for i := range classes {
			allowed = allowed[:0]
			for c := range classes {
				if c != i && !taken[c] {
					allowed = append(allowed, c)
				}
			}
			if len(allowed) == 0 {
				dead = true
				break
			}
			c := allowed[r.IntN(len(allowed))]
			second[i] = c
			taken[c] = true
		}
		if !dead {
			return second, true
		}
	}
	return nil, false
}
