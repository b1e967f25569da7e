//go:build openblas

package trainer

// This file makes OpenBLAS, through gonum's cgo binding
// gonum.org/v1/netlib/blas/netlib, the float32 BLAS of the build. Build with
//
//	CGO_LDFLAGS=-lopenblas go build -tags openblas ...
//
// with Debian's libopenblas-dev installed (make openblas).
//
// OpenBLAS runs single-threaded: openblas_set_num_threads(1) before the
// first product. Each product is then computed by the calling goroutine's
// thread with a kernel and blocking chosen from the CPU and the matrix
// sizes alone, so results are bit-identical across runs and between
// sequential and concurrent clients; the cores are used by training clients
// in parallel instead (engine.Engine trains a round's clients concurrently).
// A multi-threaded OpenBLAS would also be deterministic for fixed sizes,
// but concurrent calls from several clients would oversubscribe the cores.
// A different BLAS (or CPU kernel family) computes different, equally
// deterministic, numbers: the Makefile adds "+openblas" to the build's
// version, which every committed round records.

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"sync"

	"gonum.org/v1/netlib/blas/netlib"
)

// BLAS names the float32 BLAS of this build: "gonum" (pure Go, the
// default) or "openblas" (build tag openblas).
const BLAS = "openblas"

var (
	openBLAS    netlib.Implementation
	threadsOnce sync.Once
)

func singleThreaded() { C.openblas_set_num_threads(1) }

// sgemm is gemm for float32 on OpenBLAS, which handles every orientation
// at full speed.
func sgemm(_ *workspace[float32], tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	threadsOnce.Do(singleThreaded)
	openBLAS.Sgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SGEMM is the float32 gemm of this build, C = A·op(B) for row-major A
// (m×k), op(B) (k×n; B is n×k when transB) and C (m×n), exported for the
// benchmark that measures the machine's SGEMM rate (cmd/starter bench). It
// calls the BLAS directly.
func SGEMM(transB bool, m, n, k int, a, b, c []float32) {
	threadsOnce.Do(singleThreaded)
	ldb := n
	if transB {
		ldb = k
	}
	openBLAS.Sgemm(trans(false), trans(transB), m, n, k, 1, a, k, b, ldb, 0, c, n)
}
