package algorithm

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/floats"
)

// gonum's Dgemm (blas/gonum, v0.17) blocks its operands in gonumBlock rows
// and columns and goes parallel from gonumMinParBlocks blocks of C.
const (
	gonumBlock        = 64
	gonumMinParBlocks = 4
)

// symmetricGram sets g (m×m) to X·Xᵀ for the m rows of x, each n long, bit
// for bit as gonum's Dgemm(NoTrans, Trans, m, m, n, 1, x, n, x, n, 0, g, m)
// sets it (TestSymmetricGramIsDgemm), in half its products. Dgemm computes
// entry (i, j) and entry (j, i) as the same dot products in the same order,
// so each pair is computed once, i ≤ j, and mirrored:
//   - below gonumMinParBlocks blocks of C, Dgemm's serial path: one
//     vectorised dot product over the whole rows, added to 0;
//   - from there its parallel path: the rows in blocks of gonumBlock, each
//     entry the sum, from 0 and in order, of the dot products over the
//     columns' blocks of gonumBlock.
//
// The blocks of C on and above the diagonal are shared out among
// GOMAXPROCS goroutines, as Dgemm shares out all of them.
func symmetricGram(x []float64, m, n int, g []float64) {
	clear(g)
	row := func(i, from, to int) []float64 { return x[i*n+from : i*n+to] }
	blocks := (m + gonumBlock - 1) / gonumBlock
	if blocks*blocks < gonumMinParBlocks {
		for i := range m {
			for j := i; j < m; j++ {
				g[i*m+j] += floats.Dot(row(i, 0, n), row(j, 0, n))
			}
		}
	} else {
		type pair struct{ bi, bj int }
		work := make(chan pair)
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), blocks*(blocks+1)/2) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range work {
					iEnd, jEnd := min(p.bi+gonumBlock, m), min(p.bj+gonumBlock, m)
					for k := 0; k < n; k += gonumBlock {
						kEnd := min(k+gonumBlock, n)
						for i := p.bi; i < iEnd; i++ {
							a := row(i, k, kEnd)
							for j := max(i, p.bj); j < jEnd; j++ {
								g[i*m+j] += floats.Dot(a, row(j, k, kEnd))
							}
						}
					}
				}
			}()
		}
		for bi := 0; bi < m; bi += gonumBlock {
			for bj := bi; bj < m; bj += gonumBlock {
				work <- pair{bi, bj}
			}
		}
		close(work)
		wg.Wait()
	}
	for i := range m {
		for j := i + 1; j < m; j++ {
			g[j*m+i] = g[i*m+j]
		}
	}
}
