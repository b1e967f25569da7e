package trainer

import (
	"os"
	"strings"
	"sync"

	"github.com/flsweep/flsweep/trainer/internal/packed"
)

// usePacked sends float32 products to the packed product (package packed),
// on CPUs with AVX-512 or AVX2: it is faster than OpenBLAS's kernels
// (BenchmarkSgemm), needs no cgo, and gives the same bits with either
// instruction set, so both builds use it. FLSWEEP_GEMM=blas
// keeps the build's BLAS instead (gonum, or OpenBLAS in the openblas
// build), whose rounding earlier results came from.
var usePacked = packed.Available && os.Getenv("FLSWEEP_GEMM") != "blas"

// sgemm is gemm for float32: the packed product where usePacked,
// else the build's BLAS (blasSgemm in blas_gonum.go or blas_openblas.go).
func sgemm(ws *workspace[float32], tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if usePacked {
		packed.Sgemm(&ws.packed, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	blasSgemm(ws, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Core names the kernels that compute the trainer's float32 products: the
// packed product's ("packed AVX-512", "packed AVX2"), or the BLAS's
// (blasCore).
func Core() string {
	if usePacked {
		return "packed " + packed.Kernels()
	}
	return blasCore()
}

// SGEMM is the trainer's float32 product, C = A·op(B) for row-major A (m×k),
// op(B) (k×n; B is n×k when transB) and C (m×n), exported for the benchmark
// that measures the machine's SGEMM rate (cmd/starter bench).
func SGEMM(transB bool, m, n, k int, a, b, c []float32) {
	ldb := n
	if transB {
		ldb = k
	}
	ws := workspaces.Get().(*workspace[float32])
	defer workspaces.Put(ws)
	sgemm(ws, false, transB, m, n, k, 1, a, k, b, ldb, 0, c, n)
}

var workspaces = sync.Pool{New: func() any { return new(workspace[float32]) }}

// Numerics names what, besides the build (conf.Version), decides the bits a
// model trains to on this machine, as a version suffix: "" for the packed
// products with the vector kernels, which give the same bits on every CPU
// with AVX2 or AVX-512 (the default); else "+blas-<kernels>" when the
// build's BLAS computes the products (FLSWEEP_GEMM=blas, or a CPU without
// AVX2: its rounding depends on its kernels) and "+portable" when the
// elementwise sums run in the portable loops' order (a build without
// GOEXPERIMENT=simd, or a CPU without AVX2), and "+im2col" when every
// convolution runs as im2col and one product (FLSWEEP_CONV=im2col) rather
// than the 3×3 and 5×5 stride-1 ones by Winograd (winograd.go), and
// "+wino2" when the 3×3 ones all take F(2×2, 3×3) (FLSWEEP_WINO43=0)
// rather than F(4×4, 3×3) where their outputs are wide enough.
// Workers and in-process runs record conf.Version + Numerics() as their
// build, so a point's rounds, and the workers a sweep's tasks are routed
// to, agree on it.
func Numerics() string {
	var s string
	if !usePacked {
		s += "+blas-" + strings.ToLower(strings.ReplaceAll(blasCore(), " ", ""))
	}
	if vec.name == "" {
		s += "+portable"
	}
	if !useWinograd {
		s += "+im2col"
	} else {
		if !useWino43 {
			s += "+wino2"
		}
		if !useWino45 {
			s += "+wino45off"
		}
	}
	return s
}
