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

// ROW8 adds the broadcast A value at addr times B's step into one row.
#define ROW8(addr, by, r0, r1) \
	VBROADCASTSS addr, by; \
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

// STORE12 adds the block Y0–Y11 into C's 6 rows at DI and returns; SET12
// writes it over them.
#define STORE12 \
	STORE8(Y0, Y1); \
	STORE8(Y2, Y3); \
	STORE8(Y4, Y5); \
	STORE8(Y6, Y7); \
	STORE8(Y8, Y9); \
	STORE8(Y10, Y11); \
	VZEROUPPER; \
	RET

#define SET12 \
	SET8(Y0, Y1); \
	SET8(Y2, Y3); \
	SET8(Y4, Y5); \
	SET8(Y6, Y7); \
	SET8(Y8, Y9); \
	SET8(Y10, Y11); \
	VZEROUPPER; \
	RET

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
	ROW8(0(AX), Y14, Y0, Y1)
	ROW8(4(AX), Y15, Y2, Y3)
	ROW8(8(AX), Y14, Y4, Y5)
	ROW8(12(AX), Y15, Y6, Y7)
	ROW8(16(AX), Y14, Y8, Y9)
	ROW8(20(AX), Y15, Y10, Y11)
	ADDQ    $24, AX
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loop

store:
	MOVBQZX add+48(FP), R8
	TESTQ   R8, R8
	JEQ     set
	STORE12

set:
	SET12

// kern6x16a is kern6x16 with A read in place: its 6 rows are lda floats
// apart, row 0 at a, and step p reads column p of each. AX and R10 point
// at rows 0 and 3, R11 holds lda in bytes.

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
	ROW8((AX), Y14, Y0, Y1)
	ROW8((AX)(R11*1), Y15, Y2, Y3)
	ROW8((AX)(R11*2), Y14, Y4, Y5)
	ROW8((R10), Y15, Y6, Y7)
	ROW8((R10)(R11*1), Y14, Y8, Y9)
	ROW8((R10)(R11*2), Y15, Y10, Y11)
	ADDQ    $4, AX
	ADDQ    $4, R10
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loopa

storea:
	MOVBQZX add+56(FP), R8
	TESTQ   R8, R8
	JEQ     seta
	STORE12

seta:
	SET12

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

// func transposeStrip(dst *float32, ldd int, src *float32, lds int, blocks int)
//
// Transposes blocks 8×8 blocks side by side: block b holds rows 0–7 of src
// (lds floats apart), columns 8b…8b+7, and goes to rows 8b…8b+7 of dst
// (ldd floats apart), columns 0–7. Y0–Y7 hold a block's rows, Y8–Y15 the
// interleaved steps.
TEXT ·transposeStrip(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R8
	SHLQ $2, R8
	MOVQ blocks+32(FP), CX
	LEAQ (SI)(R8*4), R9 // row 4 of src
	LEAQ (R8)(R8*2), R10 // 3 rows of src, in bytes
	TESTQ CX, CX
	JEQ  tdone

tloop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R10*1), Y3
	VMOVUPS (R9), Y4
	VMOVUPS (R9)(R8*1), Y5
	VMOVUPS (R9)(R8*2), Y6
	VMOVUPS (R9)(R10*1), Y7
	VUNPCKLPS Y1, Y0, Y8  // r0[0] r1[0] r0[1] r1[1] per 128-bit lane
	VUNPCKHPS Y1, Y0, Y9  // r0[2] r1[2] r0[3] r1[3]
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0 // column 0 (and 4) of rows 0–3
	VSHUFPS $0xEE, Y10, Y8, Y1 // column 1 (and 5)
	VSHUFPS $0x44, Y11, Y9, Y2 // column 2 (and 6)
	VSHUFPS $0xEE, Y11, Y9, Y3 // column 3 (and 7)
	VSHUFPS $0x44, Y14, Y12, Y4 // the same of rows 4–7
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	MOVQ DI, R11
	VMOVUPS Y8, (R11)
	ADDQ DX, R11
	VMOVUPS Y9, (R11)
	ADDQ DX, R11
	VMOVUPS Y10, (R11)
	ADDQ DX, R11
	VMOVUPS Y11, (R11)
	ADDQ DX, R11
	VMOVUPS Y12, (R11)
	ADDQ DX, R11
	VMOVUPS Y13, (R11)
	ADDQ DX, R11
	VMOVUPS Y14, (R11)
	ADDQ DX, R11
	VMOVUPS Y15, (R11)
	ADDQ DX, R11
	MOVQ R11, DI // the next block's rows of dst
	ADDQ $32, SI
	ADDQ $32, R9
	DECQ CX
	JNZ  tloop

tdone:
	VZEROUPPER
	RET
