#include "textflag.h"

// The AVX2 kernels of gemm.go, for CPUs without AVX-512. Each computes
// every entry of C in exactly the order of its AVX-512 counterpart in
// kernel_amd64.s, so the two give the same bits: kern6x16 runs one FMA
// chain per entry along k from zero and then adds the chain to C (or
// writes it), as kern14x32 does; kernDot4x3 keeps each entry's 16 lanes as
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

// The dot-product kernel for C = A·Bᵀ, unpacked: C[4×3] += alpha·A[4×k]·B[3×k]ᵀ
// for 4 rows of A (lda floats apart) and 3 rows of B (ldb apart). k runs
// in steps of 16 lanes, the last one masked when mask is not nil: mask
// points at 16 int32 lane masks, −1 for the lanes the step has. Each entry
// of C sums its 16 lanes as kernDot4x6 does, in two passes over the steps:
// the first sums every entry's lanes 0–7 and keeps them on the stack, the
// second its lanes 8–15. A pass keeps entry (i, j)'s 8 lanes in Y(3i+j), a
// half step of B's three rows in Y12–Y14 and one of A's rows at a time in
// Y15: 7 loads for 12 FMAs. (The kernel it replaced, 2×3 with both halves
// in registers, loaded 10 for 12; the block's rows, at most 14 KB for a DK
// block, are still in L1 for the second pass.) AX and R11 point at A's
// rows 0 and 3, BX at B's row 0, R8 and R10 hold lda and ldb in bytes, R9
// the count of full steps.

// FMA3 loads the half step of A's row at addr into Y15 and adds its
// products with the three rows of B into the sums r0, r1 and r2.
#define FMA3(addr, r0, r1, r2) \
	VMOVUPS     addr, Y15; \
	VFMADD231PS Y12, Y15, r0; \
	VFMADD231PS Y13, Y15, r1; \
	VFMADD231PS Y14, Y15, r2

// TAIL4 adds the masked last step of B's row at addr (mask in Y15) times
// each of A's four rows into the sums r0–r3, lanes outside the mask as
// zeros.
#define TAIL4(off, addr, r0, r1, r2, r3) \
	VMASKMOVPS  addr, Y15, Y12; \
	VMASKMOVPS  off(AX), Y15, Y13; \
	VFMADD231PS Y12, Y13, r0; \
	VMASKMOVPS  off(AX)(R8*1), Y15, Y13; \
	VFMADD231PS Y12, Y13, r1; \
	VMASKMOVPS  off(AX)(R8*2), Y15, Y13; \
	VFMADD231PS Y12, Y13, r2; \
	VMASKMOVPS  off(R11), Y15, Y13; \
	VFMADD231PS Y12, Y13, r3

// PASS sums one half of every entry's lanes: the 8 floats at off (0 or
// 32) of each step of 16, and of the masked tail with the mask's half at
// off(DX). It leaves AX, BX and R11 past the last full step.
#define PASS(off, loop, tail, done) \
	ZERO12; \
	MOVQ  R9, CX; \
	TESTQ CX, CX; \
	JEQ   tail; \
loop: \
	VMOVUPS off(BX), Y12; \
	VMOVUPS off(BX)(R10*1), Y13; \
	VMOVUPS off(BX)(R10*2), Y14; \
	FMA3(off(AX), Y0, Y1, Y2); \
	FMA3(off(AX)(R8*1), Y3, Y4, Y5); \
	FMA3(off(AX)(R8*2), Y6, Y7, Y8); \
	FMA3(off(R11), Y9, Y10, Y11); \
	ADDQ $64, AX; \
	ADDQ $64, BX; \
	ADDQ $64, R11; \
	DECQ CX; \
	JNZ  loop; \
tail: \
	TESTQ DX, DX; \
	JEQ   done; \
	VMOVDQU off(DX), Y15; \
	TAIL4(off, off(BX), Y0, Y3, Y6, Y9); \
	TAIL4(off, off(BX)(R10*1), Y1, Y4, Y7, Y10); \
	TAIL4(off, off(BX)(R10*2), Y2, Y5, Y8, Y11); \
done:

// HSUM8 sums the 16 lanes of an entry, whose lanes 0–7 are on the stack
// at lo and whose lanes 8–15 are in hi (lower 128 bits x), in kernDot4x6's
// order (lane i + lane i+8, then i + i+4, then i + i+2, then 0 + 1), scales
// the sum by alpha (X14) and adds it to the float32 at dst.
#define HSUM8(lo, hi, x, dst) \
	VADDPS       lo, hi, hi; \
	VEXTRACTF128 $1, hi, X15; \
	VADDPS       X15, x, x; \
	VPERMILPS    $0x4e, x, X15; \
	VADDPS       X15, x, x; \
	VPERMILPS    $0xb1, x, X15; \
	VADDSS       X15, x, x; \
	VMULSS       X14, x, x; \
	VADDSS       dst, x, x; \
	VMOVSS       x, dst

// func kernDot4x3(k16 int, mask *int32, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
TEXT ·kernDot4x3(SB), $384-72
	MOVQ k16+0(FP), R9
	MOVQ a+24(FP), AX
	MOVQ lda+32(FP), R8
	MOVQ b+40(FP), BX
	MOVQ ldb+48(FP), R10
	MOVQ mask+8(FP), DX
	SHLQ $2, R8
	SHLQ $2, R10
	LEAQ (AX)(R8*2), R11
	ADDQ R8, R11
	PASS(0, lo, lotail, lodone)
	VMOVUPS Y0, 0(SP)
	VMOVUPS Y1, 32(SP)
	VMOVUPS Y2, 64(SP)
	VMOVUPS Y3, 96(SP)
	VMOVUPS Y4, 128(SP)
	VMOVUPS Y5, 160(SP)
	VMOVUPS Y6, 192(SP)
	VMOVUPS Y7, 224(SP)
	VMOVUPS Y8, 256(SP)
	VMOVUPS Y9, 288(SP)
	VMOVUPS Y10, 320(SP)
	VMOVUPS Y11, 352(SP)
	MOVQ a+24(FP), AX
	MOVQ b+40(FP), BX
	LEAQ (AX)(R8*2), R11
	ADDQ R8, R11
	PASS(32, hi, hitail, hidone)
	VMOVSS alpha+16(FP), X14
	MOVQ   c+56(FP), DI
	MOVQ   ldc+64(FP), DX
	SHLQ   $2, DX
	HSUM8(0(SP), Y0, X0, (DI))
	HSUM8(32(SP), Y1, X1, 4(DI))
	HSUM8(64(SP), Y2, X2, 8(DI))
	ADDQ   DX, DI
	HSUM8(96(SP), Y3, X3, (DI))
	HSUM8(128(SP), Y4, X4, 4(DI))
	HSUM8(160(SP), Y5, X5, 8(DI))
	ADDQ   DX, DI
	HSUM8(192(SP), Y6, X6, (DI))
	HSUM8(224(SP), Y7, X7, 4(DI))
	HSUM8(256(SP), Y8, X8, 8(DI))
	ADDQ   DX, DI
	HSUM8(288(SP), Y9, X9, (DI))
	HSUM8(320(SP), Y10, X10, 4(DI))
	HSUM8(352(SP), Y11, X11, 8(DI))
	VZEROUPPER
	RET
