package sampling

import "github.com/flsweep/flsweep/cluster"

// pairwise fills the symmetric n×n matrix d (the diagonal left as it is)
// with f(u, k) for every u < k, the rows shared among the cores
// (cluster.Triangle). Each entry is f's alone, computed once, so the matrix
// does not depend on how the rows are shared out. work is the cost of one
// entry (the vectors' length).
func pairwise(d [][]float64, work int, f func(u, k int) float64) {
	n := len(d)
	cluster.Triangle(n, n*work/2, func(u int) {
		for k := u + 1; k < n; k++ {
			x := f(u, k)
			d[u][k], d[k][u] = x, x
		}
	})
}
