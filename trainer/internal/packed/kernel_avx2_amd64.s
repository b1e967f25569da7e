#include "textflag.h"

// The AVX2 kernels of gemm.go, for CPUs without AVX-512. Each computes
// every entry of C in exactly the order of its AVX-512 counterpart in
// kernel_amd64.s, so the two give the same bits: kern6x16 runs one FMA
// chain per entry along k from zero and then adds the chain to C (or
// writes it), as kern14x32 does; kernDot2x3 keeps each entry's 16 lanes as
// two 8-lane halves and sums them in kernDot4x6's tree.

// ZERO12 clears Y0–Y11, the sums of either kernel.
#define ZERO12 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// The main kernel: C[6×16] += Ap·Bp for a packed 6-row panel of A (k steps
// of 6 values) and a 16-column panel of B (k steps of 16 values, ldb
// apart). Y0–Y11 hold the block of C, two registers a row; Y12 and Y13 a
// step of B; Y14 and Y15 the broadcast values of A.

// ROW8 adds the broadcast A value at off(AX) times B's step into one row.
#define ROW8(off, by, r0, r1) \
	VBROADCASTSS off(AX), by; \
	VFMADD231PS  Y12, by, r0; \
	VFMADD231PS  Y13, by, r1

// SET8 writes one row of the block over C's row at DI and moves DI a row
// down; STORE8 adds it into C's row.
#define SET8(r0, r1) \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 32(DI); \
	ADDQ    DX, DI

#define STORE8(r0, r1) \
	VADDPS  (DI), r0, r0; \
	VADDPS  32(DI), r1, r1; \
	SET8(r0, r1)

// func kern6x16(k int, a, b, c *float32, ldb, ldc int, add bool)
TEXT ·kern6x16(SB), NOSPLIT, $0-49
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), AX
	MOVQ   b+16(FP), BX
	MOVQ   c+24(FP), DI
	MOVQ   ldb+32(FP), R9
	SHLQ   $2, R9
	MOVQ   ldc+40(FP), DX
	SHLQ   $2, DX
	ZERO12
	TESTQ  CX, CX
	JEQ    store

loop:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	ROW8(0, Y14, Y0, Y1)
	ROW8(4, Y15, Y2, Y3)
	ROW8(8, Y14, Y4, Y5)
	ROW8(12, Y15, Y6, Y7)
	ROW8(16, Y14, Y8, Y9)
	ROW8(20, Y15, Y10, Y11)
	ADDQ    $24, AX
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loop

store:
	MOVBQZX add+48(FP), R8
	TESTQ   R8, R8
	JEQ     set
	STORE8(Y0, Y1)
	STORE8(Y2, Y3)
	STORE8(Y4, Y5)
	STORE8(Y6, Y7)
	STORE8(Y8, Y9)
	STORE8(Y10, Y11)
	VZEROUPPER
	RET

set:
	SET8(Y0, Y1)
	SET8(Y2, Y3)
	SET8(Y4, Y5)
	SET8(Y6, Y7)
	SET8(Y8, Y9)
	SET8(Y10, Y11)
	VZEROUPPER
	RET

// kern6x16a is kern6x16 with A read in place: its 6 rows are lda floats
// apart, row 0 at a, and step p reads column p of each. AX and R10 point
// at rows 0 and 3, R11 holds lda in bytes.
#define ROW8A(addr, by, r0, r1) \
	VBROADCASTSS addr, by; \
	VFMADD231PS  Y12, by, r0; \
	VFMADD231PS  Y13, by, r1

// func kern6x16a(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)
TEXT ·kern6x16a(SB), NOSPLIT, $0-57
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), AX
	MOVQ   lda+16(FP), R11
	SHLQ   $2, R11
	LEAQ   (AX)(R11*2), R10
	ADDQ   R11, R10
	MOVQ   b+24(FP), BX
	MOVQ   c+32(FP), DI
	MOVQ   ldb+40(FP), R9
	SHLQ   $2, R9
	MOVQ   ldc+48(FP), DX
	SHLQ   $2, DX
	ZERO12
	TESTQ  CX, CX
	JEQ    storea

loopa:
	VMOVUPS (BX), Y12
	VMOVUPS 32(BX), Y13
	ROW8A((AX), Y14, Y0, Y1)
	ROW8A((AX)(R11*1), Y15, Y2, Y3)
	ROW8A((AX)(R11*2), Y14, Y4, Y5)
	ROW8A((R10), Y15, Y6, Y7)
	ROW8A((R10)(R11*1), Y14, Y8, Y9)
	ROW8A((R10)(R11*2), Y15, Y10, Y11)
	ADDQ    $4, AX
	ADDQ    $4, R10
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loopa

storea:
	MOVBQZX add+56(FP), R8
	TESTQ   R8, R8
	JEQ     seta
	STORE8(Y0, Y1)
	STORE8(Y2, Y3)
	STORE8(Y4, Y5)
	STORE8(Y6, Y7)
	STORE8(Y8, Y9)
	STORE8(Y10, Y11)
	VZEROUPPER
	RET

seta:
	SET8(Y0, Y1)
	SET8(Y2, Y3)
	SET8(Y4, Y5)
	SET8(Y6, Y7)
	SET8(Y8, Y9)
	SET8(Y10, Y11)
	VZEROUPPER
	RET

// The dot-product kernel for C = A·Bᵀ, unpacked: C[2×3] += alpha·A[2×k]·B[3×k]ᵀ
// for 2 rows of A (lda floats apart) and 3 rows of B (ldb apart). Entry
// (i, j) of C keeps the lanes 0–7 of its 16-lane partial sums in Y(3i+j)
// and the lanes 8–15 in Y(6+3i+j); Y12 and Y13 hold a half step of A's
// rows, Y14 and Y15 a half step of B's rows (or the tail's lane mask).
// k runs in steps of 16 lanes, the last one masked when mask is not nil:
// mask points at 16 int32 lane masks, −1 for the lanes the step has.

// DOT8 loads half a step of B's row at addr and adds its products with
// the half steps of A's two rows into the sums r0 (row 0) and r1 (row 1).
#define DOT8(addr, by, r0, r1) \
	VMOVUPS     addr, by; \
	VFMADD231PS Y12, by, r0; \
	VFMADD231PS Y13, by, r1

// DOT8M is DOT8 for the masked tail: the lanes outside the mask Y15 load
// as zeros.
#define DOT8M(addr, r0, r1) \
	VMASKMOVPS  addr, Y15, Y14; \
	VFMADD231PS Y12, Y14, r0; \
	VFMADD231PS Y13, Y14, r1

// HSUM8 sums the 16 lanes of an entry, whose halves are lo (lower 128 bits
// x) and hi, in kernDot4x6's order (lane i + lane i+8, then i + i+4, then
// i + i+2, then 0 + 1), scales the sum by alpha (X14) and adds it to the
// float32 at dst.
#define HSUM8(lo, x, hi, dst) \
	VADDPS       hi, lo, lo; \
	VEXTRACTF128 $1, lo, X15; \
	VADDPS       X15, x, x; \
	VPERMILPS    $0x4e, x, X15; \
	VADDPS       X15, x, x; \
	VPERMILPS    $0xb1, x, X15; \
	VADDSS       X15, x, x; \
	VMULSS       X14, x, x; \
	VADDSS       dst, x, x; \
	VMOVSS       x, dst

// func kernDot2x3(k16 int, mask *int32, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
TEXT ·kernDot2x3(SB), NOSPLIT, $0-72
	MOVQ   k16+0(FP), CX
	MOVQ   a+24(FP), AX
	MOVQ   lda+32(FP), R8
	MOVQ   b+40(FP), BX
	MOVQ   ldb+48(FP), R10
	SHLQ   $2, R8
	SHLQ   $2, R10
	ZERO12
	TESTQ  CX, CX
	JEQ    tail

dotloop:
	VMOVUPS (AX), Y12
	VMOVUPS (AX)(R8*1), Y13
	DOT8((BX), Y14, Y0, Y3)
	DOT8((BX)(R10*1), Y15, Y1, Y4)
	DOT8((BX)(R10*2), Y14, Y2, Y5)
	VMOVUPS 32(AX), Y12
	VMOVUPS 32(AX)(R8*1), Y13
	DOT8(32(BX), Y15, Y6, Y9)
	DOT8(32(BX)(R10*1), Y14, Y7, Y10)
	DOT8(32(BX)(R10*2), Y15, Y8, Y11)
	ADDQ    $64, AX
	ADDQ    $64, BX
	DECQ    CX
	JNZ     dotloop

tail:
	MOVQ  mask+8(FP), DX
	TESTQ DX, DX
	JEQ   sums
	VMOVDQU    (DX), Y15
	VMASKMOVPS (AX), Y15, Y12
	VMASKMOVPS (AX)(R8*1), Y15, Y13
	DOT8M((BX), Y0, Y3)
	DOT8M((BX)(R10*1), Y1, Y4)
	DOT8M((BX)(R10*2), Y2, Y5)
	VMOVDQU    32(DX), Y15
	VMASKMOVPS 32(AX), Y15, Y12
	VMASKMOVPS 32(AX)(R8*1), Y15, Y13
	DOT8M(32(BX), Y6, Y9)
	DOT8M(32(BX)(R10*1), Y7, Y10)
	DOT8M(32(BX)(R10*2), Y8, Y11)

sums:
	VMOVSS alpha+16(FP), X14
	MOVQ   c+56(FP), DI
	MOVQ   ldc+64(FP), DX
	SHLQ   $2, DX
	HSUM8(Y0, X0, Y6, (DI))
	HSUM8(Y1, X1, Y7, 4(DI))
	HSUM8(Y2, X2, Y8, 8(DI))
	ADDQ   DX, DI
	HSUM8(Y3, X3, Y9, (DI))
	HSUM8(Y4, X4, Y10, 4(DI))
	HSUM8(Y5, X5, Y11, 8(DI))
	VZEROUPPER
	RET
