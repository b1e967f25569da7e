// Package cluster groups vectors by Ward's agglomerative clustering (Ward,
// "Hierarchical Grouping to Optimize an Objective Function", JASA 1963),
// the "off-the-shelf hierarchical clustering with Ward's method" that
// clustered sampling (Fraboni et al., ICML 2021) and HiCS-FL (Chen & Vikalo,
// NeurIPS 2024, App. A.1.2; specs/hicsfl.md §1.6) run on the rows of their
// client-distance matrices.
//
// Ward returns the whole merge tree in the form of scipy's linkage matrix
// (scipy.cluster.hierarchy.linkage(X, "ward")); Cut turns it into exactly m
// flat clusters, the partition sklearn's AgglomerativeClustering(n_clusters=m,
// linkage="ward") returns, and CutHeight is scipy's fcluster(Z, h,
// criterion="distance"). The package is plain Go and allocates O(n²) memory
// for n vectors.
package cluster

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	cblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/flsweep/flsweep/fl"
)

// Merge is one step of an agglomerative clustering, as a row of scipy's
// linkage matrix: clusters A < B are joined at Height into a cluster of Size
// vectors. Leaves are 0 … n−1; the cluster formed by the i-th merge is n+i.
type Merge struct {
	A, B   int
	Height float64
	Size   int
}

// Ward clusters the rows (n vectors of equal length) by Ward's minimum
// variance method on Euclidean distances and returns the n−1 merges in
// increasing order of height. Two vectors start at their Euclidean distance;
// when clusters x and y merge, the distance of any other cluster i to x∪y is
// the Lance–Williams update
//
//	d(i, x∪y) = sqrt( ((n_i+n_x)·d(i,x)² + (n_i+n_y)·d(i,y)² − n_i·d(x,y)²) / (n_i+n_x+n_y) )
//
// so a merge's height is sqrt(2·n_x·n_y/(n_x+n_y))·‖c_x − c_y‖, c the
// centroids: the distances of scipy's linkage(rows, "ward").
//
// Algorithm and ties: the nearest-neighbour chain (Murtagh 1983; Müllner,
// "Modern hierarchical, agglomerative clustering algorithms",
// arXiv:1109.2378, 2011), exact for Ward's method, as scipy runs it. A chain
// starts at the lowest-numbered active cluster; the next link is the
// nearest active cluster to the chain's tip, the previous link when it is
// among the nearest, otherwise the lowest-numbered of the nearest; the tip
// and its predecessor merge when they are each other's nearest. The merges
// are then sorted by height, stably, and numbered as scipy numbers them. For
// a fixed input the tree is therefore fixed, and it is scipy's tree up to
// the rounding of distances that tie to the last bit.
//
// Cost: O(n²·d) for the n·(n−1)/2 distances between vectors of length d
// (Euclidean: summed in float64, coordinate order, or from the Gram
// matrix at large sizes), then O(n²) time for the chain and n·(n−1)/2
// float64 of memory.
func Ward(rows [][]float64) ([]Merge, error) {
	n := len(rows)
	if n == 0 {
		return nil, fmt.Errorf("ward: no rows; cluster at least one vector: %w", fl.ErrInvalid)
	}
	dim := len(rows[0])
	for i, r := range rows {
		if len(r) != dim {
			return nil, fmt.Errorf("ward: row %d has %d values, row 0 has %d; every row needs the same length: %w", i, len(r), dim, fl.ErrInvalid)
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("ward: row %d value %d is %v; rows must be finite: %w", i, j, v, fl.ErrInvalid)
			}
		}
	}
	return wardCondensed(Euclidean(rows), n), nil
}

// Euclidean returns the condensed matrix of Euclidean distances between the
// rows (scipy's pdist(rows)): the distance of rows i < j is at
// Index(n, i, j). The result does not depend on how the work is shared out
// among the cores.
//
// Two forms, chosen by size alone. Below gramWork multiply-adds (n·(n−1)/2
// pairs of d values: about 645 rows of 645), each squared distance is
// summed in float64 in coordinate order (the direct form; row i goes to
// worker i mod GOMAXPROCS, which balances the triangle). From gramWork on,
// the Gram form: ‖a − b‖² = ‖a‖² + ‖b‖² − 2a·b with the products a·b from
// the level-3 BLAS (gonum's Dgemm, pure Go, blocked and parallel; 1.7× the
// direct form's speed at 1,000 Gaussian rows of 1,000 and 2.4× at 2,000,
// BenchmarkEuclidean*). It cancels where two rows are close relative to
// their norms, so a pair whose Gram value is below gramRecompute·(‖a‖² +
// ‖b‖²) is summed directly instead: equal rows are at distance 0 exactly,
// and the close pairs, which decide the low merges and their ties, have
// the direct form's bits. Elsewhere the Gram value's relative error is at
// most about 2·d·ε/gramRecompute (ε = 2⁻⁵³), 4·10⁻¹¹ at d = 10,000, and
// measured near 10⁻¹⁴ (TestEuclideanGramForm). The price of the exact
// close pairs: where most rows are close to each other (clients in a few
// tight groups), most pairs would be summed directly after the products,
// so when an estimate on a fixed sample of pairs (closeShare) finds a
// quarter of them close or more, Euclidean takes the direct form at any
// size.
//
// Rows may be float32 (DivFL's remembered gradients); every sum is float64.
func Euclidean[T float32 | float64](rows [][]T) []float64 {
	n := len(rows)
	if n < 2 {
		return []float64{}
	}
	if float64(n)*float64(n-1)/2*float64(len(rows[0])) >= gramWork && closeShare(rows) < gramMaxClose {
		return euclideanGram(rows)
	}
	return euclideanDirect(rows)
}

// closeShare estimates the share of pairs the Gram form would sum directly
// (squared distance below gramRecompute·(‖a‖² + ‖b‖²)) from up to
// gramSample pairs at fixed positions: a function of the rows alone, so
// the form Euclidean takes is too.
func closeShare[T float32 | float64](rows [][]T) float64 {
	n := len(rows)
	pairs := min(gramSample, n*(n-1)/2)
	close := 0
	for t := range pairs {
		i := (t * 7919) % n
		j := (i + 1 + (t*104729)%(n-1)) % n
		a, b := rows[i], rows[j]
		d, sa, sb := direct(a, b), 0.0, 0.0
		for k, v := range a {
			sa += float64(v) * float64(v)
			sb += float64(b[k]) * float64(b[k])
		}
		if d*d < gramRecompute*(sa+sb) {
			close++
		}
	}
	return float64(close) / float64(pairs)
}

const (
	// gramWork is the size (multiply-adds of the direct form) from which
	// Euclidean takes the Gram form. Every run of the project's experiments
	// and tests (at most 100 clients) is below it, so their clusterings are
	// the direct form's, as they were before the Gram form existed.
	gramWork = 1 << 28
	// gramRecompute: a pair whose Gram-form squared distance is below this
	// fraction of ‖a‖² + ‖b‖² is summed directly (a distance under about a
	// third of the rows' norms). 1/16 is the largest power of 2 that keeps
	// every scipy fixture's clusters, ties included (at 1/64 the 12 HiCS-FL
	// rows' tied merges break the other way); centring the rows first, which
	// shrinks the norms, did not keep them at 1/16.
	gramRecompute = 1.0 / 16
	// gramMaxClose: when closeShare estimates this share of the pairs or
	// more to be close, Euclidean sums every pair directly instead: the
	// Gram form would pay for the products and then for most of the direct
	// sums too (at 1,000 rows in BenchmarkHiCS1000's tight groups 68% of
	// the pairs are close, and the Gram form was no faster than the direct
	// sums: 323 ms against 294 ms, one run on a loaded machine).
	gramMaxClose = 0.25
	// gramSample pairs estimate the share of close pairs.
	gramSample = 4096
	// gramBlock rows are multiplied at once (two panels of gramBlock·d
	// float64 and a gramBlock² product in memory).
	gramBlock = 512
)

// euclideanDirect is the direct form of Euclidean.
func euclideanDirect[T float32 | float64](rows [][]T) []float64 {
	n := len(rows)
	d := make([]float64, n*(n-1)/2)
	work := 0
	if n > 0 {
		work = len(rows[0])
	}
	Triangle(n, n*work/2, func(i int) {
		a := rows[i]
		at := Index(n, i, i+1)
		for j := i + 1; j < n; j++ {
			d[at] = direct(a, rows[j])
			at++
		}
	})
	return d
}

// direct is ‖a − b‖ summed in float64 in coordinate order.
func direct[T float32 | float64](a, b []T) float64 {
	b = b[:len(a)]
	s := 0.0
	for k, v := range a {
		e := float64(v) - float64(b[k])
		s += e * e
	}
	return math.Sqrt(s)
}

// euclideanGram is the Gram form of Euclidean: for each pair of row blocks
// I ≤ J, the products X_I·X_Jᵀ by one Dgemm over the packed blocks, then
// each pair's distance from the products and the squared norms (summed
// directly), or summed directly when the Gram value cancels. The entries
// of a block are filled on every core, row i by worker i mod GOMAXPROCS;
// each entry is computed once, from values fixed before the fill, so the
// result does not depend on the sharing.
func euclideanGram[T float32 | float64](rows [][]T) []float64 {
	n, dim := len(rows), len(rows[0])
	sq := make([]float64, n)
	for i, r := range rows {
		s := 0.0
		for _, v := range r {
			s += float64(v) * float64(v)
		}
		sq[i] = s
	}
	d := make([]float64, n*(n-1)/2)
	bs := min(gramBlock, n)
	pa, pb := make([]float64, bs*dim), make([]float64, bs*dim)
	prod := make([]float64, bs*bs)
	pack := func(dst []float64, lo, hi int) {
		for i := lo; i < hi; i++ {
			row := dst[(i-lo)*dim : (i-lo+1)*dim]
			for k, v := range rows[i] {
				row[k] = float64(v)
			}
		}
	}
	var blas gonum.Implementation
	for i0 := 0; i0 < n; i0 += bs {
		i1 := min(i0+bs, n)
		pack(pa, i0, i1)
		for j0 := i0; j0 < n; j0 += bs {
			j1 := min(j0+bs, n)
			b := pa
			if j0 != i0 {
				pack(pb, j0, j1)
				b = pb
			}
			blas.Dgemm(cblas.NoTrans, cblas.Trans, i1-i0, j1-j0, dim, 1, pa, dim, b, dim, 0, prod, bs)
			Triangle(i1-i0+1, (j1-j0)*dim, func(r int) {
				i := i0 + r
				at := Index(n, i, max(j0, i+1))
				for j := max(j0, i+1); j < j1; j++ {
					g := sq[i] + sq[j] - 2*prod[r*bs+j-j0]
					if g < gramRecompute*(sq[i]+sq[j]) {
						d[at] = direct(rows[i], rows[j])
					} else {
						d[at] = math.Sqrt(g)
					}
					at++
				}
			})
		}
	}
	return d
}

// Triangle calls row(i) for every row i < n−1 of a pairwise triangle (row
// i computes the pairs (i, j), j > i), on up to GOMAXPROCS goroutines: row
// i goes to worker i mod workers, which balances the triangle. work is the
// cost of a row (about n/2 entries times an entry's); below 2¹⁶ per row
// everything runs on the calling goroutine. row must write only its own
// entries, so the result does not depend on how the rows are shared out.
func Triangle(n, work int, row func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n-1))
	if work < 1<<16 {
		workers = 1 // too small to be worth a goroutine
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n-1; i += workers {
				row(i)
			}
		}()
	}
	wg.Wait()
}

// Index returns the position of pair (i, j), i ≠ j, in a condensed matrix
// of n items (scipy's squareform order).
func Index(n, i, j int) int {
	if i > j {
		i, j = j, i
	}
	return n*i - i*(i+1)/2 + (j - i - 1)
}

// wardCondensed runs the nearest-neighbour chain on the condensed Euclidean
// distances d of n items, which it overwrites.
func wardCondensed(d []float64, n int) []Merge {
	if n == 1 {
		return nil
	}
	size := make([]int, n) // 0: merged away
	for i := range size {
		size[i] = 1
	}
	chain := make([]int, 0, n)
	merges := make([]Merge, 0, n-1)
	for range n - 1 {
		if len(chain) == 0 {
			for i, s := range size {
				if s > 0 {
					chain = append(chain, i)
					break
				}
			}
		}
		var x, y int
		var dmin float64
		for {
			x = len(chain) - 1
			x, y = chain[x], -1
			dmin = math.Inf(1)
			if len(chain) > 1 {
				y = chain[len(chain)-2]
				dmin = d[Index(n, x, y)]
			}
			for i, s := range size {
				if s == 0 || i == x {
					continue
				}
				if v := d[Index(n, x, i)]; v < dmin {
					dmin, y = v, i
				}
			}
			if len(chain) > 1 && y == chain[len(chain)-2] {
				break
			}
			chain = append(chain, y)
		}
		chain = chain[:len(chain)-2]
		if x > y {
			x, y = y, x
		}
		nx, ny := size[x], size[y]
		merges = append(merges, Merge{A: x, B: y, Height: dmin, Size: nx + ny})
		size[x], size[y] = 0, nx+ny
		dxy2 := dmin * dmin
		for i, ni := range size {
			if ni == 0 || i == y {
				continue
			}
			dix, diy := d[Index(n, i, x)], d[Index(n, i, y)]
			fi, fx, fy := float64(ni), float64(nx), float64(ny)
			v := ((fi+fx)*dix*dix + (fi+fy)*diy*diy - fi*dxy2) / (fi + fx + fy)
			d[Index(n, i, y)] = math.Sqrt(max(v, 0))
		}
	}
	// Sort by height (stable), then name the clusters as scipy does: the
	// i-th merge of the sorted list forms cluster n+i, and each merge joins
	// the current clusters of its two representatives.
	slices.SortStableFunc(merges, func(a, b Merge) int { return cmp.Compare(a.Height, b.Height) })
	parent := make([]int, 2*n-1)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int { return findRoot(parent, x) }
	sizes := make([]int, 2*n-1)
	for i := range n {
		sizes[i] = 1
	}
	for i := range merges {
		a, b := find(merges[i].A), find(merges[i].B)
		if a > b {
			a, b = b, a
		}
		parent[a], parent[b] = n+i, n+i
		sizes[n+i] = sizes[a] + sizes[b]
		merges[i].A, merges[i].B, merges[i].Size = a, b, sizes[n+i]
	}
	return merges
}

// Cut returns the partition of the tree's n = len(tree)+1 leaves into
// exactly m clusters: the clusters that exist after the first n−m merges,
// i.e. the tree with its m−1 highest merges undone (sklearn's _hc_cut on
// AgglomerativeClustering(n_clusters=m)'s tree). labels[k] ∈ [0, m) is leaf
// k's cluster; clusters are numbered in the order of their lowest leaf
// (sklearn numbers them otherwise; only the numbering differs).
func Cut(tree []Merge, m int) ([]int, error) {
	n := len(tree) + 1
	if m < 1 || m > n {
		return nil, fmt.Errorf("cut: %d clusters of %d leaves; ask for 1 to %d: %w", m, n, n, fl.ErrInvalid)
	}
	if err := checkTree(tree); err != nil {
		return nil, err
	}
	join := make([]bool, len(tree))
	for i := range n - m {
		join[i] = true
	}
	return labels(tree, join), nil
}

// CutHeight returns the flat clusters of scipy's fcluster(tree, h,
// criterion="distance"): the largest subtrees whose every merge has height
// ≤ h. Labels are numbered from 0 in the order of each cluster's lowest
// leaf (fcluster numbers them from 1 in another order).
func CutHeight(tree []Merge, h float64) ([]int, error) {
	if err := checkTree(tree); err != nil {
		return nil, err
	}
	n := len(tree) + 1
	top := make([]float64, 2*n-1) // the highest merge in each subtree
	join := make([]bool, len(tree))
	for i, mg := range tree {
		top[n+i] = max(mg.Height, top[mg.A], top[mg.B])
		join[i] = top[n+i] <= h
	}
	return labels(tree, join), nil
}

// Clusters returns the members of each cluster of labels, ascending.
func Clusters(labels []int) [][]int {
	m := 0
	for _, l := range labels {
		m = max(m, l+1)
	}
	out := make([][]int, m)
	for k, l := range labels {
		out[l] = append(out[l], k)
	}
	return out
}

// labels applies the merges marked in join and numbers the resulting
// clusters in the order of their lowest leaf.
func labels(tree []Merge, join []bool) []int {
	n := len(tree) + 1
	parent := make([]int, 2*n-1)
	for i := range parent {
		parent[i] = i
	}
	for i, mg := range tree {
		if join[i] {
			parent[mg.A], parent[mg.B] = n+i, n+i
		}
	}
	root := func(x int) int { return findRoot(parent, x) }
	out := make([]int, n)
	name := map[int]int{}
	for k := range n {
		r := root(k)
		l, ok := name[r]
		if !ok {
			l = len(name)
			name[r] = l
		}
		out[k] = l
	}
	return out
}

// checkTree checks that tree is a linkage of len(tree)+1 leaves: each merge
// joins two existing, not yet merged clusters.
func checkTree(tree []Merge) error {
	n := len(tree) + 1
	used := make([]bool, 2*n-1)
	for i, mg := range tree {
		for _, c := range []int{mg.A, mg.B} {
			if c < 0 || c >= n+i || used[c] {
				return fmt.Errorf("tree merge %d joins cluster %d, which does not exist yet or is already merged; pass a tree from Ward: %w", i, c, fl.ErrInvalid)
			}
			used[c] = true
		}
		if mg.A == mg.B {
			return fmt.Errorf("tree merge %d joins cluster %d with itself: %w", i, mg.A, fl.ErrInvalid)
		}
	}
	return nil
}

// findRoot returns the root of x in the union-find forest parent,
// compressing the path it walked.
func findRoot(parent []int, x int) int {
	root := x
	for parent[root] != root {
		root = parent[root]
	}
	for parent[x] != root {
		parent[x], x = root, parent[x]
	}
	return root
}
