// Package mem holds the scratch memory the trainer's graph ops and its
// convolution kernels (package conv) share: the element types they compute
// in (Float), a graph's Workspace with the products that run in it
// (Workspace.Gemm), and Grow, which sizes a buffer that is reused.
package mem

import "github.com/flsweep/flsweep/internal/gemm"

// Float is the element type of a graph: float32 in production, float64 in
// the finite-difference tests.
type Float interface{ ~float32 | ~float64 }

// Workspace is scratch memory shared by the ops of one graph: the trainer's
// tape (tape.go) runs one op at a time, so ops may reuse it for temporaries
// that do not outlive their Do. Each buffer grows to the largest size asked
// for and is then reused, so a compiled graph allocates nothing per step.
type Workspace[T Float] struct {
	Col, Aux  []T          // convolutions: the column matrix and a channel-major copy of dy
	Pad       []T          // convolutions: a chunk's input or input gradient, zero-padded
	Wino      []T          // Winograd convolutions: the transforms' scratch (package conv, winograd.go)
	DU        []T          // Winograd convolutions: the transformed weight gradient
	gemm      gemm.Buffers // the products' scratch (package gemm)
	CLScratch []T          // channel-lane Winograd: F(4×4, 5×5)'s scratch (package conv, winograd_cl.go)
	BLAS      bool         // float32 products by the build's BLAS, not the packed product (trainer.KernelChoice.BLAS)
}

// Grow returns *buf resliced to n elements, replacing it with a new slice
// when its capacity is short of n. The elements are not cleared.
func Grow[E any](buf *[]E, n int) []E {
	if cap(*buf) < n {
		*buf = make([]E, n)
	}
	return (*buf)[:n]
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major A, B, C, where
// op(X) is X or Xᵀ; op(A) is m×k, op(B) is k×n and C is m×n (package
// gemm): float32 by the packed product unless the session chose the
// build's BLAS (ws.BLAS), float64, used by the finite-difference tests
// only, by gonum.
func (ws *Workspace[T]) Gemm(tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float32:
		ws32 := any(ws).(*Workspace[float32])
		gemm.Sgemm(&ws32.gemm, ws32.BLAS, tA, tB, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		gemm.Dgemm(tA, tB, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}
