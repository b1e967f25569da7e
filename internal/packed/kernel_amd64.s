#include "textflag.h"

// The AVX-512 micro-kernel of gemm.go: C[14×32] += Ap·Bp for a
// packed 14-row panel of A (k steps of 14 values) and a 32-column panel of
// B (k steps of 32 values, ldb apart: 32 when packed). The 14×32 block of C lives in Z0–Z27
// for the whole loop, two registers a row; Z28 and Z29 hold one step of B
// and Z30, Z31 the broadcast values of A.

// ROW adds the broadcast A value at addr times B's step into one row.
#define ROW(addr, bz, r0, r1) \
	VBROADCASTSS addr, bz; \
	VFMADD231PS  Z28, bz, r0; \
	VFMADD231PS  Z29, bz, r1

// ROWS8 adds a packed step's first 8 A values (at AX) into rows 0–7
// (Z0–Z15), after loading B's step at BX into Z28 and Z29.
#define ROWS8 \
	VMOVUPS (BX), Z28; \
	VMOVUPS 64(BX), Z29; \
	ROW(0(AX), Z30, Z0, Z1); \
	ROW(4(AX), Z31, Z2, Z3); \
	ROW(8(AX), Z30, Z4, Z5); \
	ROW(12(AX), Z31, Z6, Z7); \
	ROW(16(AX), Z30, Z8, Z9); \
	ROW(20(AX), Z31, Z10, Z11); \
	ROW(24(AX), Z30, Z12, Z13); \
	ROW(28(AX), Z31, Z14, Z15)

// PACKEDARGS loads the arguments of kern14x32 and kern8x32: k into CX, the
// A panel into AX, B into BX, C into DI, ldb and ldc in bytes into R9 and
// DX.
#define PACKEDARGS \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), AX; \
	MOVQ b+16(FP), BX; \
	MOVQ c+24(FP), DI; \
	MOVQ ldb+32(FP), R9; \
	SHLQ $2, R9; \
	MOVQ ldc+40(FP), DX; \
	SHLQ $2, DX

// STORE adds one row of the block into C at DI and moves DI a row down;
// SET writes it over C's row.
#define SET(r0, r1) \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 64(DI); \
	ADDQ    DX, DI

#define STORE(r0, r1) \
	VADDPS  (DI), r0, r0; \
	VADDPS  64(DI), r1, r1; \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 64(DI); \
	ADDQ    DX, DI

// ZERO16 clears Z0–Z15, the sums of an 8-row block; ZERO28 Z0–Z27, a
// 14-row block's. STORE8 and STORE14 add such a block into C's rows at DI;
// SET8 and SET14 write it over them.
#define ZERO16 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

#define ZERO28 \
	ZERO16; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27

#define STORE8 \
	STORE(Z0, Z1); \
	STORE(Z2, Z3); \
	STORE(Z4, Z5); \
	STORE(Z6, Z7); \
	STORE(Z8, Z9); \
	STORE(Z10, Z11); \
	STORE(Z12, Z13); \
	STORE(Z14, Z15)

#define STORE14 \
	STORE8; \
	STORE(Z16, Z17); \
	STORE(Z18, Z19); \
	STORE(Z20, Z21); \
	STORE(Z22, Z23); \
	STORE(Z24, Z25); \
	STORE(Z26, Z27)

#define SET8 \
	SET(Z0, Z1); \
	SET(Z2, Z3); \
	SET(Z4, Z5); \
	SET(Z6, Z7); \
	SET(Z8, Z9); \
	SET(Z10, Z11); \
	SET(Z12, Z13); \
	SET(Z14, Z15)

#define SET14 \
	SET8; \
	SET(Z16, Z17); \
	SET(Z18, Z19); \
	SET(Z20, Z21); \
	SET(Z22, Z23); \
	SET(Z24, Z25); \
	SET(Z26, Z27)

// func kern14x32(k int, a, b, c *float32, ldb, ldc int, add bool)
TEXT ·kern14x32(SB), NOSPLIT, $0-49
	PACKEDARGS
	ZERO28
	TESTQ  CX, CX
	JEQ    store

loop:
	ROWS8
	ROW(32(AX), Z30, Z16, Z17)
	ROW(36(AX), Z31, Z18, Z19)
	ROW(40(AX), Z30, Z20, Z21)
	ROW(44(AX), Z31, Z22, Z23)
	ROW(48(AX), Z30, Z24, Z25)
	ROW(52(AX), Z31, Z26, Z27)
	ADDQ    $56, AX
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loop

store:
	MOVBQZX add+48(FP), R8
	TESTQ   R8, R8
	JEQ     set
	STORE14
	VZEROUPPER
	RET

set:
	SET14
	VZEROUPPER
	RET

// kern8x32 is kern14x32 for an edge panel of at most 8 rows: it reads the
// first 8 values of each step of a packed 14-row panel and computes the
// top 8×32 of the block, the same FMAs in the same order per entry.

// func kern8x32(k int, a, b, c *float32, ldb, ldc int, add bool)
TEXT ·kern8x32(SB), NOSPLIT, $0-49
	PACKEDARGS
	ZERO16
	TESTQ  CX, CX
	JEQ    store8

loop8:
	ROWS8
	ADDQ    $56, AX
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loop8

store8:
	MOVBQZX add+48(FP), R8
	TESTQ   R8, R8
	JEQ     set8
	STORE8
	VZEROUPPER
	RET

set8:
	SET8
	VZEROUPPER
	RET

// kern14x32a is kern14x32 with A read in place: its 14 rows are lda floats
// apart, row 0 at a, and step p reads column p of each. AX, R10, R12, R13
// and SI point at rows 0, 3, 6, 9 and 12; R11 holds lda in bytes. Each
// entry of C sees the same FMAs in the same order as from a packed panel,
// so the bits are kern14x32's.

// func kern14x32a(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)
TEXT ·kern14x32a(SB), NOSPLIT, $0-57
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R11
	SHLQ $2, R11
	LEAQ (AX)(R11*2), R10
	ADDQ R11, R10
	LEAQ (R10)(R11*2), R12
	ADDQ R11, R12
	LEAQ (R12)(R11*2), R13
	ADDQ R11, R13
	LEAQ (R13)(R11*2), SI
	ADDQ R11, SI
	MOVQ b+24(FP), BX
	MOVQ c+32(FP), DI
	MOVQ ldb+40(FP), R9
	SHLQ $2, R9
	MOVQ ldc+48(FP), DX
	SHLQ $2, DX
	ZERO28
	TESTQ  CX, CX
	JEQ    storea

loopa:
	VMOVUPS (BX), Z28
	VMOVUPS 64(BX), Z29
	ROW((AX), Z30, Z0, Z1)
	ROW((AX)(R11*1), Z31, Z2, Z3)
	ROW((AX)(R11*2), Z30, Z4, Z5)
	ROW((R10), Z31, Z6, Z7)
	ROW((R10)(R11*1), Z30, Z8, Z9)
	ROW((R10)(R11*2), Z31, Z10, Z11)
	ROW((R12), Z30, Z12, Z13)
	ROW((R12)(R11*1), Z31, Z14, Z15)
	ROW((R12)(R11*2), Z30, Z16, Z17)
	ROW((R13), Z31, Z18, Z19)
	ROW((R13)(R11*1), Z30, Z20, Z21)
	ROW((R13)(R11*2), Z31, Z22, Z23)
	ROW((SI), Z30, Z24, Z25)
	ROW((SI)(R11*1), Z31, Z26, Z27)
	ADDQ    $4, AX
	ADDQ    $4, R10
	ADDQ    $4, R12
	ADDQ    $4, R13
	ADDQ    $4, SI
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loopa

storea:
	MOVBQZX add+56(FP), R8
	TESTQ   R8, R8
	JEQ     seta
	STORE14
	VZEROUPPER
	RET

seta:
	SET14
	VZEROUPPER
	RET

// The dot-product kernel of gemm.go for C = A·Bᵀ with both operands read
// along their rows, unpacked: C[4×6] += alpha·A[4×k]·B[6×k]ᵀ for 4 rows of A
// (lda bytes apart) and 6 rows of B (ldb bytes apart). Z0–Z23 hold one
// 16-lane partial sum per entry of C (Z(6i+j) for row i of A, row j of B),
// Z24–Z27 a step of A's rows and Z28, Z29 a step of B's; k runs in steps of
// 16 lanes, the last one masked (tail: the mask of its lanes, 0 for none).
// The lanes are then summed in a fixed order.

// DOTB loads a step of B's row at addr and adds its products with A's
// four rows into the sums of column j.
#define DOTB(addr, bz, j0, j1, j2, j3) \
	VMOVUPS     addr, bz; \
	VFMADD231PS Z24, bz, j0; \
	VFMADD231PS Z25, bz, j1; \
	VFMADD231PS Z26, bz, j2; \
	VFMADD231PS Z27, bz, j3

#define DOTBZ(addr, bz, j0, j1, j2, j3) \
	VMOVUPS.Z   addr, K1, bz; \
	VFMADD231PS Z24, bz, j0; \
	VFMADD231PS Z25, bz, j1; \
	VFMADD231PS Z26, bz, j2; \
	VFMADD231PS Z27, bz, j3

// HSUM sums the 16 lanes of z (whose lower halves are y and x), scales the
// sum by alpha (X30) and adds it to the float32 at dst.
#define HSUM(z, y, x, dst) \
	VEXTRACTF64X4 $1, z, Y31; \
	VADDPS        Y31, y, y; \
	VEXTRACTF32X4 $1, y, X31; \
	VADDPS        X31, x, x; \
	VPERMILPS     $0x4e, x, X31; \
	VADDPS        X31, x, x; \
	VPERMILPS     $0xb1, x, X31; \
	VADDSS        X31, x, x; \
	VMULSS        X30, x, x; \
	VADDSS        dst, x, x; \
	VMOVSS        x, dst

// func kernDot4x6(k16 int, tail uint16, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
TEXT ·kernDot4x6(SB), NOSPLIT, $0-64
	MOVQ  k16+0(FP), CX
	MOVQ  a+16(FP), AX
	MOVQ  lda+24(FP), R8
	MOVQ  b+32(FP), BX
	MOVQ  ldb+40(FP), R10
	SHLQ  $2, R8
	SHLQ  $2, R10
	LEAQ  (R8)(R8*2), R9   // 3·lda
	LEAQ  (R10)(R10*2), R11 // 3·ldb
	LEAQ  (R10)(R10*4), R12 // 5·ldb
	ZERO16
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	TESTQ CX, CX
	JEQ   tail

dotloop:
	VMOVUPS (AX), Z24
	VMOVUPS (AX)(R8*1), Z25
	VMOVUPS (AX)(R8*2), Z26
	VMOVUPS (AX)(R9*1), Z27
	DOTB((BX), Z28, Z0, Z6, Z12, Z18)
	DOTB((BX)(R10*1), Z29, Z1, Z7, Z13, Z19)
	DOTB((BX)(R10*2), Z28, Z2, Z8, Z14, Z20)
	DOTB((BX)(R11*1), Z29, Z3, Z9, Z15, Z21)
	DOTB((BX)(R10*4), Z28, Z4, Z10, Z16, Z22)
	DOTB((BX)(R12*1), Z29, Z5, Z11, Z17, Z23)
	ADDQ    $64, AX
	ADDQ    $64, BX
	DECQ    CX
	JNZ     dotloop

tail:
	MOVWQZX tail+8(FP), DX
	TESTQ   DX, DX
	JEQ     sums
	KMOVW   DX, K1
	VMOVUPS.Z (AX), K1, Z24
	VMOVUPS.Z (AX)(R8*1), K1, Z25
	VMOVUPS.Z (AX)(R8*2), K1, Z26
	VMOVUPS.Z (AX)(R9*1), K1, Z27
	DOTBZ((BX), Z28, Z0, Z6, Z12, Z18)
	DOTBZ((BX)(R10*1), Z29, Z1, Z7, Z13, Z19)
	DOTBZ((BX)(R10*2), Z28, Z2, Z8, Z14, Z20)
	DOTBZ((BX)(R11*1), Z29, Z3, Z9, Z15, Z21)
	DOTBZ((BX)(R10*4), Z28, Z4, Z10, Z16, Z22)
	DOTBZ((BX)(R12*1), Z29, Z5, Z11, Z17, Z23)

sums:
	VMOVSS alpha+12(FP), X30
	MOVQ   c+48(FP), DI
	MOVQ   ldc+56(FP), DX
	SHLQ   $2, DX
	HSUM(Z0, Y0, X0, (DI))
	HSUM(Z1, Y1, X1, 4(DI))
	HSUM(Z2, Y2, X2, 8(DI))
	HSUM(Z3, Y3, X3, 12(DI))
	HSUM(Z4, Y4, X4, 16(DI))
	HSUM(Z5, Y5, X5, 20(DI))
	ADDQ   DX, DI
	HSUM(Z6, Y6, X6, (DI))
	HSUM(Z7, Y7, X7, 4(DI))
	HSUM(Z8, Y8, X8, 8(DI))
	HSUM(Z9, Y9, X9, 12(DI))
	HSUM(Z10, Y10, X10, 16(DI))
	HSUM(Z11, Y11, X11, 20(DI))
	ADDQ   DX, DI
	HSUM(Z12, Y12, X12, (DI))
	HSUM(Z13, Y13, X13, 4(DI))
	HSUM(Z14, Y14, X14, 8(DI))
	HSUM(Z15, Y15, X15, 12(DI))
	HSUM(Z16, Y16, X16, 16(DI))
	HSUM(Z17, Y17, X17, 20(DI))
	ADDQ   DX, DI
	HSUM(Z18, Y18, X18, (DI))
	HSUM(Z19, Y19, X19, 4(DI))
	HSUM(Z20, Y20, X20, 8(DI))
	HSUM(Z21, Y21, X21, 12(DI))
	HSUM(Z22, Y22, X22, 16(DI))
	HSUM(Z23, Y23, X23, 20(DI))
	VZEROUPPER
	RET

// kern14x32t is kern14x32 with a transposed A read in place: step p's 14
// values are contiguous, as in a packed panel, and the steps are lda
// floats apart instead of 14 (AX moves by R11 = lda bytes). The same FMAs
// in the same order: kern14x32's bits.

// func kern14x32t(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)
TEXT ·kern14x32t(SB), NOSPLIT, $0-57
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R11
	SHLQ $2, R11
	MOVQ b+24(FP), BX
	MOVQ c+32(FP), DI
	MOVQ ldb+40(FP), R9
	SHLQ $2, R9
	MOVQ ldc+48(FP), DX
	SHLQ $2, DX
	ZERO28
	TESTQ  CX, CX
	JEQ    storet

loopt:
	ROWS8
	ROW(32(AX), Z30, Z16, Z17)
	ROW(36(AX), Z31, Z18, Z19)
	ROW(40(AX), Z30, Z20, Z21)
	ROW(44(AX), Z31, Z22, Z23)
	ROW(48(AX), Z30, Z24, Z25)
	ROW(52(AX), Z31, Z26, Z27)
	ADDQ    R11, AX
	ADDQ    R9, BX
	DECQ    CX
	JNZ     loopt

storet:
	MOVBQZX add+56(FP), R8
	TESTQ   R8, R8
	JEQ     sett
	STORE14
	VZEROUPPER
	RET

sett:
	SET14
	VZEROUPPER
	RET
