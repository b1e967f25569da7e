package trainer

import (
	"sync"

	"github.com/flsweep/flsweep/trainer/internal/packed"
)

// sgemm is gemm for float32: the packed product unless the workspace's
// session chose the build's BLAS (ws.blas, KernelChoice.BLAS) or the CPU
// lacks AVX2, else the BLAS (blasSgemm in blas_gonum.go or
// blas_openblas.go).
func sgemm(ws *workspace[float32], tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if packed.Available && !ws.blas {
		packed.Sgemm(&ws.packed, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	blasSgemm(ws, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SGEMM is the trainer's float32 product under choice kc, C = A·op(B) for
// row-major A (m×k), op(B) (k×n; B is n×k when transB) and C (m×n),
// exported for the benchmark that measures the machine's SGEMM rate
// (cmd/starter bench).
func SGEMM(kc KernelChoice, transB bool, m, n, k int, a, b, c []float32) {
	ldb := n
	if transB {
		ldb = k
	}
	ws := workspaces.Get().(*workspace[float32])
	defer workspaces.Put(ws)
	ws.blas = !kc.resolve().packed
	sgemm(ws, false, transB, m, n, k, 1, a, k, b, ldb, 0, c, n)
}

var workspaces = sync.Pool{New: func() any { return new(workspace[float32]) }}
