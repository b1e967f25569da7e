package partition

import "math/rand/v2"

// IID splits the indices 0..n-1 uniformly at random into clients parts of
// near-equal size: NIID-Bench's "homo" partition (specs/fnrfl.md §2),
//
//	idx = permutation(n); parts = np.array_split(idx, clients)
//
// Sizes follow numpy's array_split rule: with q = n / clients and
// m = n % clients, parts 0..m-1 hold q+1 indices and the rest hold q.
// Each part is returned sorted ascending.
//
// IID returns an error wrapping ErrInvalid unless 1 <= clients <= n. It
// panics if r is nil.
func IID(n, clients int, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	if err := checkClients(clients, n); err != nil {
		return nil, err
	}
	perm := r.Perm(n)
	sizes := arraySplitSizes(n, clients)
	owner := make([]int32, n)
	pos := 0
	for k, s := range sizes {
		for _, i := range perm[pos : pos+s] {
			owner[i] = int32(k)
		}
		pos += s
	}
	return gather(owner, sizes), nil
}

// arraySplitSizes returns the part sizes of np.array_split(range(n), parts):
// the first n%parts parts get one more than n/parts.
func arraySplitSizes(n, parts int) []int {
	q, m := n/parts, n%parts
	sizes := make([]int, parts)
	for k := range sizes {
		sizes[k] = q
		if k < m {
			sizes[k]++
		}
	}
	return sizes
}
