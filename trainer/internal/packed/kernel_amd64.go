package packed

import "golang.org/x/sys/cpu"

// Available reports whether the CPU (and OS) runs the AVX-512 kernels: F,
// and VL for the dot-product kernel's 256- and 128-bit steps on Z16–Z31.
var Available = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// kern14x32 adds the product of a packed 14-row A panel and a 32-column B
// panel, k steps deep, into the 14×32 block of C at c (rows ldc apart), or
// writes it there when !add. B's steps are ldb apart: NR when packed, the
// row length of B when read in place. See kernel_amd64.s.
//
//go:noescape
func kern14x32(k int, a, b, c *float32, ldb, ldc int, add bool)

// kernDot4x6 adds alpha·A·Bᵀ into the 4×6 block of C at c (rows ldc apart)
// for 4 rows of A at a (lda apart) and 6 rows of B at b (ldb apart), each
// 16·k16 values long and then the lanes set in tail (the mask of a last,
// partial step of 16; 0 for none). See kernel_amd64.s.
//
//go:noescape
func kernDot4x6(k16 int, tail uint16, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
