package packed

import "golang.org/x/sys/cpu"

// The CPU's kernel sets, best first: AVX-512 (F, and VL for the dot-product
// kernel's 256- and 128-bit steps on Z16–Z31), then AVX2 with FMA. Both
// give the same bits (kernel_avx2_amd64.s).
var kernelSets = func() []*kernels {
	var ks []*kernels
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		ks = append(ks, &avx512)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, &avx2)
	}
	return ks
}()

var (
	avx512 = kernels{name: "AVX-512", mr: 14, nr: 32, dm: 4, dn: 6, kern: kern14x32, kernA: kern14x32a, kernAT: kern14x32t, kernEdge: kern8x32, edgeRows: 8, dot: dot4x6}
	avx2   = kernels{name: "AVX2", mr: 6, nr: 16, dm: 4, dn: 3, kern: kern6x16, kernA: kern6x16a, dot: dot4x3, packMinM: 64}
)

// kern14x32 adds the product of a packed 14-row A panel and a 32-column B
// panel, k steps deep, into the 14×32 block of C at c (rows ldc apart), or
// writes it there when !add. B's steps are ldb apart: NR when packed, the
// row length of B when read in place. See kernel_amd64.s.
//
//go:noescape
func kern14x32(k int, a, b, c *float32, ldb, ldc int, add bool)

// kern8x32 is kern14x32 for the top 8 rows of a packed 14-row panel: an
// edge panel of at most 8 rows (64 output channels are 4 panels and 8
// rows). See kernel_amd64.s.
//
//go:noescape
func kern8x32(k int, a, b, c *float32, ldb, ldc int, add bool)

// kern14x32a is kern14x32 with the A panel's 14 rows read in place, lda
// floats apart, from a: for products with alpha 1 (packA would only copy
// them). See kernel_amd64.s.
//
//go:noescape
func kern14x32a(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)

// kern14x32t is kern14x32 with a transposed A read in place: the 14
// values of step p at a + p·lda, contiguous. See kernel_amd64.s.
//
//go:noescape
func kern14x32t(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)

// kernDot4x6 adds alpha·A·Bᵀ into the 4×6 block of C at c (rows ldc apart)
// for 4 rows of A at a (lda apart) and 6 rows of B at b (ldb apart), each
// 16·k16 values long and then the lanes set in tail (the mask of a last,
// partial step of 16; 0 for none). See kernel_amd64.s.
//
//go:noescape
func kernDot4x6(k16 int, tail uint16, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

func dot4x6(k16, tail int, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	kernDot4x6(k16, uint16(1)<<tail-1, alpha, a, lda, b, ldb, c, ldc)
}

// kern6x16 is kern14x32 for a 6-row A panel and a 16-column B panel, in
// AVX2. See kernel_avx2_amd64.s.
//
//go:noescape
func kern6x16(k int, a, b, c *float32, ldb, ldc int, add bool)

// kern6x16a is kern6x16 with the A panel's 6 rows read in place, lda
// floats apart, from a: for products with alpha 1 (packA would only copy
// them). See kernel_avx2_amd64.s.
//
//go:noescape
func kern6x16a(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)

// laneMasks[16−t:] are the lane masks of a step with its first t lanes.
var laneMasks = [32]int32{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}

// kernDot4x3 is kernDot4x6 for a 4×3 block of C, in AVX2; mask points at
// the 16 lane masks of the last, partial step (nil for none). See
// kernel_avx2_amd64.s.
//
//go:noescape
func kernDot4x3(k16 int, mask *int32, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

func dot4x3(k16, tail int, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	var mask *int32
	if tail > 0 {
		mask = &laneMasks[16-tail]
	}
	kernDot4x3(k16, mask, alpha, a, lda, b, ldb, c, ldc)
}

// transposeStrip transposes blocks 8×8 blocks of src (lds floats between
// rows) that lie side by side into blocks of dst (ldd floats between rows)
// that lie one below the other, in AVX2. See kernel_avx2_amd64.s.
//
//go:noescape
func transposeStrip(dst *float32, ldd int, src *float32, lds int, blocks int)

var haveAVX2 = cpu.X86.HasAVX2
