// Package gemm is the trainer's matrix product, C = alpha·op(A)·op(B) +
// beta·C for row-major A, B, C. float32 takes the packed product (package
// packed) on CPUs with AVX-512 or AVX2: it is faster than OpenBLAS's
// kernels (BenchmarkSgemm), needs no cgo, and gives the same bits with
// either instruction set. Elsewhere, or when the caller asks for it
// (trainer.KernelChoice.BLAS), float32 takes the build's BLAS: gonum's
// pure-Go BLAS (gonum.go), or with the build tag openblas OpenBLAS
// (openblas.go), whose rounding depends on its kernels. float64, which
// only the trainer's finite-difference tests use, always takes gonum.
package gemm

import (
	"gonum.org/v1/gonum/blas"
	gonum "gonum.org/v1/gonum/blas/gonum"

	"github.com/flsweep/flsweep/internal/packed"
)

// Buffers are a caller's scratch for its products: the packed product's
// blocks and the BLAS path's transposed operands. One goroutine at a time.
type Buffers struct {
	Packed packed.Buffers
	ta, tb []float32
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32, where op(X) is
// X or Xᵀ; op(A) is m×k, op(B) is k×n and C is m×n: by the packed product
// unless useBLAS or the CPU lacks AVX2, else by the build's BLAS.
func Sgemm(buf *Buffers, useBLAS bool, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if Packed(useBLAS) {
		packed.Sgemm(&buf.Packed, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	blasSgemm(buf, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Packed reports whether float32 products take the packed product: on a
// CPU with AVX2 or AVX-512, unless useBLAS.
func Packed(useBLAS bool) bool { return packed.Available && !useBLAS }

// Dgemm is Sgemm in float64, always on gonum's BLAS.
func Dgemm(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gonumBLAS.Dgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Core names the kernels that compute the float32 products: the packed
// product's ("packed AVX-512", "packed AVX2") unless useBLAS or the CPU
// lacks AVX2, else the BLAS's (BLASCore).
func Core(useBLAS bool) string {
	if Packed(useBLAS) {
		return "packed " + packed.Kernels()
	}
	return BLASCore()
}

// gonumBLAS is gonum's pure-Go BLAS. Its gemm splits C into blocks and
// computes each block on one goroutine, summing along k in a fixed order, so
// results do not depend on scheduling.
var gonumBLAS gonum.Implementation

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// Transpose writes the r×c row-major matrix src (rows ld apart) into dst as
// its c×r transpose: float32 in packed's 8×8 AVX2 blocks where the CPU
// runs the packed gemm (an evaluation session transposes its linear
// weights on every load: 1.24 s of the demo's 34 s of CPU in the tiles
// below, 0.33 s in the blocks), else in 32×32 tiles so both sides stay in
// cache.
func Transpose[T ~float32 | ~float64](dst, src []T, r, c, ld int) {
	if d, ok := any(dst).([]float32); ok && packed.Available {
		packed.Transpose(d, any(src).([]float32), r, c, ld)
		return
	}
	const tile = 32
	for i0 := 0; i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := 0; j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				row := src[i*ld : i*ld+c]
				for j := j0; j < j1; j++ {
					dst[j*r+i] = row[j]
				}
			}
		}
	}
}

func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}
