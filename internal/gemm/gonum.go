//go:build !openblas

package gemm

import "github.com/flsweep/flsweep/internal/packed"

// BLAS names the float32 BLAS of this build: "gonum" (pure Go, the
// default) or "openblas" (build tag openblas, see openblas.go).
const BLAS = "gonum"

// blasSgemm is gemm for float32 on gonum's pure-Go BLAS.
//
// gonum's Sgemm is fastest when both operands are read along rows, C = A·Bᵀ
// (NoTrans, Trans): its kernel is then a dot product of two contiguous
// rows. Measured on the 2-core development machine, one goroutine, in
// GFLOP/s (NoTrans/NoTrans, Trans/NoTrans → NoTrans/Trans): the MLP's
// weight gradient 200×784×50: 9.3 → 13.9; its input gradient 50×784×200:
// 14.2 → 18.1; 512³: 13.5 → 19.5. So the other orientations are rewritten
// into that one by transposing an operand into the workspace first, which
// costs k·n (or k·m) copies against m·n·k multiply-adds; it is done when the
// other dimension is at least minTransposeGain.
func blasSgemm(ws *Buffers, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	const minTransposeGain = 8
	if !tB && m >= minTransposeGain {
		// B is k×n: its transpose is n×k.
		bt := grow(&ws.tb, n*k)
		Transpose(bt, b, k, n, ldb)
		b, ldb, tB = bt, k, true
	}
	if tA && n >= minTransposeGain {
		// A is stored k×m: its transpose is m×k.
		at := grow(&ws.ta, m*k)
		Transpose(at, a, k, m, lda)
		a, lda, tA = at, k, false
	}
	gonumGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gonumGemm is gonum's Sgemm computed block by block in the calling
// goroutine. gonum's Sgemm splits products of four or more 64×64 blocks of
// C across new goroutines (with a channel, a WaitGroup and a closure per
// block, allocated on every call); the trainer already keeps the cores busy
// with one client per core, so that only costs allocations and
// scheduling. The blocks are computed exactly as gonum's parallel path
// computes them (C scaled by beta first, then each 64×64 block of C
// accumulated over 64-wide blocks of k, each by gonum's serial kernel), so
// the results are the same, bit for bit.
func gonumGemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	const bs = 64 // gonum's blockSize
	blocks := func(d int) int { return (d + bs - 1) / bs }
	if alpha == 0 || k == 0 || blocks(m)*blocks(n) < 4 {
		// gonum runs these serially (or returns early) itself.
		gonumBLAS.Sgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	packed.ScaleRows(beta, c, m, n, ldc)
	// view is gonum's sliceView32: the r×cols block at (i, j) of a
	// row-major matrix with leading dimension ld.
	view := func(x []float32, ld, i, j, r, cols int) []float32 { return x[i*ld+j : (i+r-1)*ld+j+cols] }
	for i := 0; i < m; i += bs {
		li := min(bs, m-i)
		for j := 0; j < n; j += bs {
			lj := min(bs, n-j)
			cs := view(c, ldc, i, j, li, lj)
			for l := 0; l < k; l += bs {
				lk := min(bs, k-l)
				var as, bsub []float32
				if tA {
					as = view(a, lda, l, i, lk, li)
				} else {
					as = view(a, lda, i, l, li, lk)
				}
				if tB {
					bsub = view(b, ldb, j, l, lj, lk)
				} else {
					bsub = view(b, ldb, l, j, lk, lj)
				}
				gonumBLAS.Sgemm(trans(tA), trans(tB), li, lj, lk, alpha, as, lda, bsub, ldb, 1, cs, ldc)
			}
		}
	}
}

// BLASCore names the kernels of this build's BLAS: gonum's pure-Go assembly.
func BLASCore() string { return "pure Go" }
