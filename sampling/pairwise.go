package sampling

import (
	"runtime"
	"sync"
)

// pairwise fills the symmetric n×n matrix d (rows over one backing array;
// the diagonal left as it is) with f(u, k) for every u < k, on up to
// GOMAXPROCS goroutines: row u goes to worker u mod workers, which balances
// the triangle. Each entry is f's alone, computed once, so the matrix does
// not depend on how the rows are shared out. work is the cost of one entry
// (the vectors' length): small matrices stay on the calling goroutine.
func pairwise(d [][]float64, work int, f func(u, k int) float64) {
	n := len(d)
	workers := min(runtime.GOMAXPROCS(0), max(1, n-1))
	if n*n/2*work < 1<<20 {
		workers = 1 // too small to be worth a goroutine
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := w; u < n-1; u += workers {
				for k := u + 1; k < n; k++ {
					x := f(u, k)
					d[u][k], d[k][u] = x, x
				}
			}
		}()
	}
	wg.Wait()
}
