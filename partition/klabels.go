package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// KLabels gives every client exactly k distinct labels: NIID-Bench's
// quantity-based label imbalance "noniid-#label{k}" (#C = k; Li, Diao, Chen,
// He, ICDE 2022; utils.py partition_data, specs/fnrfl.md §2). With K =
// classes and n = clients:
//
//	if k == K: every class's shuffled indices are array_split into n pieces, piece j to client j
//	else:
//	  client i holds class i mod K plus k-1 further distinct classes drawn uniformly
//	  times[c] = the number of clients holding class c
//	  each class's shuffled indices are array_split into times[c] pieces,
//	  given to its holders in client-id order
//
// so the holders of a class get sizes that differ by at most one. Each list
// is sorted ascending.
//
// Where the reference code says more than the paper, KLabels follows the
// code: the k == K case is special-cased (the code tests num == 10), the
// extra classes come from rejection sampling with Python's random.randint
// (here: a uniform draw from the classes the client does not hold yet, the
// same distribution), and a class that no client holds is not given to
// anyone. The code raises an error there (np.array_split into 0 pieces);
// KLabels drops those samples instead, so the partition is complete only
// when every class is held, which is certain when n >= K.
//
// KLabels returns an error wrapping ErrInvalid if classes is not in 1..256, a
// label is not below classes, k is not in 1..classes, clients is not in
// 1..len(labels), or some client ends up with no samples (its classes are
// too small for their holders; lower clients). It panics if r is nil.
//
// Cost: O(N + n·k) time and O(N) memory.
func KLabels(labels []uint8, classes, clients, k int, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := checkLabels("labels", labels, classes); err != nil {
		return nil, err
	}
	if err := checkClients(clients, len(labels)); err != nil {
		return nil, err
	}
	if k < 1 || k > classes {
		return nil, fmt.Errorf("partition: labels_per_client = %d; use 1..%d (the number of classes): %w", k, classes, ErrInvalid)
	}
	holders := make([][]int, classes) // holders[c]: the clients holding c, ascending
	if k == classes {
		for c := range holders {
			holders[c] = make([]int, clients)
			for j := range holders[c] {
				holders[c][j] = j
			}
		}
	} else {
		free := make([]int, 0, classes)
		for i := range clients {
			own := i % classes
			holders[own] = append(holders[own], i)
			free = free[:0]
			for c := range classes {
				if c != own {
					free = append(free, c)
				}
			}
			for range k - 1 {
				p := r.IntN(len(free))
				c := free[p]
				free = slices.Delete(free, p, p+1)
				holders[c] = append(holders[c], i)
			}
		}
	}
	idx, start := byClass(labels, classes)
	owner := make([]int32, len(labels))
	for i := range owner {
		owner[i] = -1
	}
	sizes := make([]int, clients)
	for c := range classes {
		seg := idx[start[c]:start[c+1]]
		h := holders[c]
		r.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
		if len(h) == 0 {
			continue
		}
		pos := 0
		for p, s := range arraySplitSizes(len(seg), len(h)) {
			for _, i := range seg[pos : pos+s] {
				owner[i] = int32(h[p])
			}
			sizes[h[p]] += s
			pos += s
		}
	}
	for j, s := range sizes {
		if s == 0 {
			return nil, fmt.Errorf("partition: noniid-#label with %d labels per client left client %d without samples (its classes are shared by too many clients); lower clients: %w",
				k, j, ErrInvalid)
		}
	}
	return gather(owner, sizes), nil
}
