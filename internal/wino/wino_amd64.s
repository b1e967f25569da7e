#include "textflag.h"

// Channel-lane Winograd kernels (see wino.go): every vector holds one
// value of 16 channels, so the tile transforms are plain vertical
// arithmetic and the layout changes are 16×16 transposes.

// TRANSPOSE16 transposes Z0–Z15 (row i in Zi) in place, through Z16–Z31:
// afterwards Zj holds column j.
#define TRANSPOSE16 \
	VUNPCKLPS Z1, Z0, Z16; \
	VUNPCKHPS Z1, Z0, Z17; \
	VUNPCKLPS Z3, Z2, Z18; \
	VUNPCKHPS Z3, Z2, Z19; \
	VUNPCKLPS Z5, Z4, Z20; \
	VUNPCKHPS Z5, Z4, Z21; \
	VUNPCKLPS Z7, Z6, Z22; \
	VUNPCKHPS Z7, Z6, Z23; \
	VUNPCKLPS Z9, Z8, Z24; \
	VUNPCKHPS Z9, Z8, Z25; \
	VUNPCKLPS Z11, Z10, Z26; \
	VUNPCKHPS Z11, Z10, Z27; \
	VUNPCKLPS Z13, Z12, Z28; \
	VUNPCKHPS Z13, Z12, Z29; \
	VUNPCKLPS Z15, Z14, Z30; \
	VUNPCKHPS Z15, Z14, Z31; \
	VUNPCKLPD Z18, Z16, Z0; \
	VUNPCKHPD Z18, Z16, Z1; \
	VUNPCKLPD Z19, Z17, Z2; \
	VUNPCKHPD Z19, Z17, Z3; \
	VUNPCKLPD Z22, Z20, Z4; \
	VUNPCKHPD Z22, Z20, Z5; \
	VUNPCKLPD Z23, Z21, Z6; \
	VUNPCKHPD Z23, Z21, Z7; \
	VUNPCKLPD Z26, Z24, Z8; \
	VUNPCKHPD Z26, Z24, Z9; \
	VUNPCKLPD Z27, Z25, Z10; \
	VUNPCKHPD Z27, Z25, Z11; \
	VUNPCKLPD Z30, Z28, Z12; \
	VUNPCKHPD Z30, Z28, Z13; \
	VUNPCKLPD Z31, Z29, Z14; \
	VUNPCKHPD Z31, Z29, Z15; \
	VSHUFF32X4 $0x88, Z4, Z0, Z16; \
	VSHUFF32X4 $0xdd, Z4, Z0, Z20; \
	VSHUFF32X4 $0x88, Z12, Z8, Z24; \
	VSHUFF32X4 $0xdd, Z12, Z8, Z28; \
	VSHUFF32X4 $0x88, Z5, Z1, Z17; \
	VSHUFF32X4 $0xdd, Z5, Z1, Z21; \
	VSHUFF32X4 $0x88, Z13, Z9, Z25; \
	VSHUFF32X4 $0xdd, Z13, Z9, Z29; \
	VSHUFF32X4 $0x88, Z6, Z2, Z18; \
	VSHUFF32X4 $0xdd, Z6, Z2, Z22; \
	VSHUFF32X4 $0x88, Z14, Z10, Z26; \
	VSHUFF32X4 $0xdd, Z14, Z10, Z30; \
	VSHUFF32X4 $0x88, Z7, Z3, Z19; \
	VSHUFF32X4 $0xdd, Z7, Z3, Z23; \
	VSHUFF32X4 $0x88, Z15, Z11, Z27; \
	VSHUFF32X4 $0xdd, Z15, Z11, Z31; \
	VSHUFF32X4 $0x88, Z24, Z16, Z0; \
	VSHUFF32X4 $0xdd, Z24, Z16, Z8; \
	VSHUFF32X4 $0x88, Z28, Z20, Z4; \
	VSHUFF32X4 $0xdd, Z28, Z20, Z12; \
	VSHUFF32X4 $0x88, Z25, Z17, Z1; \
	VSHUFF32X4 $0xdd, Z25, Z17, Z9; \
	VSHUFF32X4 $0x88, Z29, Z21, Z5; \
	VSHUFF32X4 $0xdd, Z29, Z21, Z13; \
	VSHUFF32X4 $0x88, Z26, Z18, Z2; \
	VSHUFF32X4 $0xdd, Z26, Z18, Z10; \
	VSHUFF32X4 $0x88, Z30, Z22, Z6; \
	VSHUFF32X4 $0xdd, Z30, Z22, Z14; \
	VSHUFF32X4 $0x88, Z27, Z19, Z3; \
	VSHUFF32X4 $0xdd, Z27, Z19, Z11; \
	VSHUFF32X4 $0x88, Z31, Z23, Z7; \
	VSHUFF32X4 $0xdd, Z31, Z23, Z15

// MASK sets K1 to the low min(16, DX) lanes and CX to that count.
#define MASK \
	MOVQ    $16, CX; \
	CMPQ    DX, CX; \
	CMOVQLT DX, CX; \
	MOVL    $1, R11; \
	SHLL    CX, R11; \
	DECL    R11; \
	KMOVW   R11, K1

// FSTORE stores a transposed position at BX and moves BX on by R11 (the
// position stride); after the CX-th it leaves the block.
#define FSTORE(z, n) \
	VMOVUPS z, (BX); \
	ADDQ    R11, BX; \
	CMPQ    CX, $n; \
	JEQ     fnext

// func Fill16(dst *float32, drow uintptr, src *float32, plane, srow uintptr, w, rows int, pstride uintptr)
TEXT ·Fill16(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ drow+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ plane+24(FP), R9
	MOVQ srow+32(FP), R10
	MOVQ rows+48(FP), R12
	LEAQ (R9)(R9*2), R13
	LEAQ (R9)(R9*4), R14
	LEAQ (R13)(R9*4), R15
	TESTQ R12, R12
	JLE  fdone

frow:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ w+40(FP), DX

fcol:
	MASK
	VMOVUPS.Z (AX), K1, Z0
	VMOVUPS.Z (AX)(R9*1), K1, Z1
	VMOVUPS.Z (AX)(R9*2), K1, Z2
	VMOVUPS.Z (AX)(R13*1), K1, Z3
	VMOVUPS.Z (AX)(R9*4), K1, Z4
	VMOVUPS.Z (AX)(R14*1), K1, Z5
	VMOVUPS.Z (AX)(R13*2), K1, Z6
	VMOVUPS.Z (AX)(R15*1), K1, Z7
	LEAQ      (AX)(R9*8), R11
	VMOVUPS.Z (R11), K1, Z8
	VMOVUPS.Z (R11)(R9*1), K1, Z9
	VMOVUPS.Z (R11)(R9*2), K1, Z10
	VMOVUPS.Z (R11)(R13*1), K1, Z11
	VMOVUPS.Z (R11)(R9*4), K1, Z12
	VMOVUPS.Z (R11)(R14*1), K1, Z13
	VMOVUPS.Z (R11)(R13*2), K1, Z14
	VMOVUPS.Z (R11)(R15*1), K1, Z15
	TRANSPOSE16
	MOVQ      pstride+56(FP), R11
	FSTORE(Z0, 1)
	FSTORE(Z1, 2)
	FSTORE(Z2, 3)
	FSTORE(Z3, 4)
	FSTORE(Z4, 5)
	FSTORE(Z5, 6)
	FSTORE(Z6, 7)
	FSTORE(Z7, 8)
	FSTORE(Z8, 9)
	FSTORE(Z9, 10)
	FSTORE(Z10, 11)
	FSTORE(Z11, 12)
	FSTORE(Z12, 13)
	FSTORE(Z13, 14)
	FSTORE(Z14, 15)
	VMOVUPS Z15, (BX)
	ADDQ    R11, BX

fnext:
	ADDQ $64, AX
	SUBQ $16, DX
	JG   fcol
	ADDQ R10, SI
	ADDQ R8, DI
	DECQ R12
	JNZ  frow

fdone:
	VZEROUPPER
	RET

// DLOAD loads the next position at BX into z and moves BX on by R11;
// after the CX-th it goes to the transpose (the other registers zero).
#define DLOAD(z, n) \
	VMOVUPS (BX), z; \
	ADDQ    R11, BX; \
	CMPQ    CX, $n; \
	JEQ     dtrans

// func Drain16(dst *float32, plane, drow uintptr, src *float32, srow uintptr, w, rows int, pstride uintptr)
TEXT ·Drain16(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ plane+8(FP), R9
	MOVQ drow+16(FP), R8
	MOVQ src+24(FP), SI
	MOVQ srow+32(FP), R10
	MOVQ rows+48(FP), R12
	LEAQ (R9)(R9*2), R13
	LEAQ (R9)(R9*4), R14
	LEAQ (R13)(R9*4), R15
	TESTQ R12, R12
	JLE  ddone

drow:
	MOVQ DI, AX
	MOVQ SI, BX
	MOVQ w+40(FP), DX

dcol:
	MASK
	MOVQ pstride+56(FP), R11
	CMPQ CX, $16
	JEQ  dfull
	// A last block of fewer than 16 positions: the others are zeros.
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
	VPXORD  Z4, Z4, Z4
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	VPXORD  Z8, Z8, Z8
	VPXORD  Z9, Z9, Z9
	VPXORD  Z10, Z10, Z10
	VPXORD  Z11, Z11, Z11
	VPXORD  Z12, Z12, Z12
	VPXORD  Z13, Z13, Z13
	VPXORD  Z14, Z14, Z14
	VPXORD  Z15, Z15, Z15

dfull:
	DLOAD(Z0, 1)
	DLOAD(Z1, 2)
	DLOAD(Z2, 3)
	DLOAD(Z3, 4)
	DLOAD(Z4, 5)
	DLOAD(Z5, 6)
	DLOAD(Z6, 7)
	DLOAD(Z7, 8)
	DLOAD(Z8, 9)
	DLOAD(Z9, 10)
	DLOAD(Z10, 11)
	DLOAD(Z11, 12)
	DLOAD(Z12, 13)
	DLOAD(Z13, 14)
	DLOAD(Z14, 15)
	VMOVUPS (BX), Z15
	ADDQ    R11, BX

dtrans:
	TRANSPOSE16
	VMOVUPS Z0, K1, (AX)
	VMOVUPS Z1, K1, (AX)(R9*1)
	VMOVUPS Z2, K1, (AX)(R9*2)
	VMOVUPS Z3, K1, (AX)(R13*1)
	VMOVUPS Z4, K1, (AX)(R9*4)
	VMOVUPS Z5, K1, (AX)(R14*1)
	VMOVUPS Z6, K1, (AX)(R13*2)
	VMOVUPS Z7, K1, (AX)(R15*1)
	LEAQ    (AX)(R9*8), R11
	VMOVUPS Z8, K1, (R11)
	VMOVUPS Z9, K1, (R11)(R9*1)
	VMOVUPS Z10, K1, (R11)(R9*2)
	VMOVUPS Z11, K1, (R11)(R13*1)
	VMOVUPS Z12, K1, (R11)(R9*4)
	VMOVUPS Z13, K1, (R11)(R14*1)
	VMOVUPS Z14, K1, (R11)(R13*2)
	VMOVUPS Z15, K1, (R11)(R15*1)
	ADDQ $64, AX
	SUBQ $16, DX
	JG   dcol
	ADDQ R8, DI
	ADDQ R10, SI
	DECQ R12
	JNZ  drow

ddone:
	VZEROUPPER
	RET

// CONSTS puts 2, 4 and 5 (and 8 in Z28) in every lane of Z29, Z30, Z31.
#define CONSTS \
	MOVL         $0x40000000, AX; \
	VPBROADCASTD AX, Z29; \
	MOVL         $0x40800000, AX; \
	VPBROADCASTD AX, Z30; \
	MOVL         $0x40a00000, AX; \
	VPBROADCASTD AX, Z31

// LOAD6 loads rows 0–5 (R8 bytes apart; R9 = 3·R8, R10 = 5·R8) of the
// column at off(DI) into Z0–Z5; LOAD4 rows 1–4 into Z1–Z4.
#define LOAD6(off) \
	VMOVUPS off(DI), Z0; \
	VMOVUPS off(DI)(R8*1), Z1; \
	VMOVUPS off(DI)(R8*2), Z2; \
	VMOVUPS off(DI)(R9*1), Z3; \
	VMOVUPS off(DI)(R8*4), Z4; \
	VMOVUPS off(DI)(R10*1), Z5

#define LOAD4(off) \
	VMOVUPS off(DI)(R8*1), Z1; \
	VMOVUPS off(DI)(R8*2), Z2; \
	VMOVUPS off(DI)(R9*1), Z3; \
	VMOVUPS off(DI)(R8*4), Z4

// BT05, BT12 and BT34 compute rows 0 and 5, 1 and 2, 3 and 4 of Bᵀ
// (F(4×4, 3×3)'s input transform; bt6 in package conv) down the column at
// off(DI).
#define BT05(off, A, F) \
	LOAD6(off); \
	VMULPS Z30, Z0, Z18; \
	VMULPS Z31, Z2, Z19; \
	VSUBPS Z19, Z18, Z18; \
	VADDPS Z4, Z18, A; \
	VMULPS Z30, Z1, Z19; \
	VMULPS Z31, Z3, Z20; \
	VSUBPS Z20, Z19, Z19; \
	VADDPS Z5, Z19, F

#define BT12(off, B, E) \
	LOAD4(off); \
	VADDPS Z2, Z1, Z18; \
	VMULPS Z30, Z18, Z18; \
	VADDPS Z4, Z3, Z19; \
	VSUBPS Z19, Z18, B; \
	VSUBPS Z1, Z2, Z18; \
	VMULPS Z30, Z18, Z18; \
	VSUBPS Z4, Z3, Z19; \
	VADDPS Z19, Z18, E

#define BT34(off, G, H) \
	LOAD4(off); \
	VSUBPS Z1, Z3, Z18; \
	VMULPS Z29, Z18, Z18; \
	VSUBPS Z2, Z4, Z19; \
	VADDPS Z19, Z18, G; \
	VSUBPS Z3, Z1, Z18; \
	VMULPS Z29, Z18, Z18; \
	VADDPS Z19, Z18, H

// BTROW stores bt6(x0, …, x5) at (AX), (AX)+xs, …, (AX)+5·xs (R11 = xs,
// R12 = 3·xs, R13 = 5·xs).
#define BTROW(x0, x1, x2, x3, x4, x5) \
	VMULPS  Z30, x0, Z18; \
	VMULPS  Z31, x2, Z19; \
	VSUBPS  Z19, Z18, Z18; \
	VADDPS  x4, Z18, Z18; \
	VMOVUPS Z18, (AX); \
	VADDPS  x2, x1, Z19; \
	VMULPS  Z30, Z19, Z19; \
	VADDPS  x4, x3, Z20; \
	VSUBPS  Z20, Z19, Z19; \
	VMOVUPS Z19, (AX)(R11*1); \
	VSUBPS  x1, x2, Z20; \
	VMULPS  Z30, Z20, Z20; \
	VSUBPS  x4, x3, Z21; \
	VADDPS  Z21, Z20, Z20; \
	VMOVUPS Z20, (AX)(R11*2); \
	VSUBPS  x1, x3, Z21; \
	VMULPS  Z29, Z21, Z21; \
	VSUBPS  x2, x4, Z22; \
	VADDPS  Z22, Z21, Z21; \
	VMOVUPS Z21, (AX)(R12*1); \
	VSUBPS  x3, x1, Z23; \
	VMULPS  Z29, Z23, Z23; \
	VADDPS  Z22, Z23, Z23; \
	VMOVUPS Z23, (AX)(R11*4); \
	VMULPS  Z30, x1, Z24; \
	VMULPS  Z31, x3, Z25; \
	VSUBPS  Z25, Z24, Z24; \
	VADDPS  x5, Z24, Z24; \
	VMOVUPS Z24, (AX)(R13*1)

// func In43(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr)
TEXT ·In43(SB), NOSPLIT, $0-64
	MOVQ buf+0(FP), BX
	MOVQ brow+8(FP), R8
	MOVQ vt+32(FP), SI
	MOVQ xs+40(FP), R11
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R11)(R11*2), R12
	LEAQ (R11)(R11*4), R13
	LEAQ (R12)(R12*1), R14
	CONSTS
	MOVQ th+16(FP), DX

iti:
	MOVQ BX, DI
	MOVQ tw+24(FP), CX

itj:
	BT05(0, Z6, Z12)
	BT05(64, Z7, Z13)
	BT05(128, Z8, Z14)
	BT05(192, Z9, Z15)
	BT05(256, Z10, Z16)
	BT05(320, Z11, Z17)
	MOVQ SI, AX
	BTROW(Z6, Z7, Z8, Z9, Z10, Z11)
	LEAQ (SI)(R14*4), AX
	ADDQ R14, AX
	BTROW(Z12, Z13, Z14, Z15, Z16, Z17)
	BT12(0, Z6, Z12)
	BT12(64, Z7, Z13)
	BT12(128, Z8, Z14)
	BT12(192, Z9, Z15)
	BT12(256, Z10, Z16)
	BT12(320, Z11, Z17)
	LEAQ (SI)(R14*1), AX
	BTROW(Z6, Z7, Z8, Z9, Z10, Z11)
	LEAQ (SI)(R14*2), AX
	BTROW(Z12, Z13, Z14, Z15, Z16, Z17)
	BT34(0, Z6, Z12)
	BT34(64, Z7, Z13)
	BT34(128, Z8, Z14)
	BT34(192, Z9, Z15)
	BT34(256, Z10, Z16)
	BT34(320, Z11, Z17)
	LEAQ (SI)(R14*2), AX
	ADDQ R14, AX
	BTROW(Z6, Z7, Z8, Z9, Z10, Z11)
	LEAQ (SI)(R14*4), AX
	BTROW(Z12, Z13, Z14, Z15, Z16, Z17)
	ADDQ $256, DI
	ADDQ ldv+48(FP), SI
	DECQ CX
	JNZ  itj
	LEAQ (BX)(R8*4), BX
	DECQ DX
	JNZ  iti
	VZEROUPPER
	RET

// CONSTS248 puts 2, 4 and 8 in every lane of Z29, Z30 and Z28.
#define CONSTS248 \
	MOVL         $0x40000000, AX; \
	VPBROADCASTD AX, Z29; \
	MOVL         $0x40800000, AX; \
	VPBROADCASTD AX, Z30; \
	MOVL         $0x41000000, AX; \
	VPBROADCASTD AX, Z28

// LOADM loads M_ξ for ξ = 6k + l, k = 0…5, of the tile at SI into Z0–Z5
// (R11 = xs, R14 = 6·xs, R15 = 18·xs, R12 = 30·xs; AX = SI + l·xs).
#define LOADM \
	VMOVUPS (AX), Z0; \
	VMOVUPS (AX)(R14*1), Z1; \
	VMOVUPS (AX)(R14*2), Z2; \
	VMOVUPS (AX)(R15*1), Z3; \
	VMOVUPS (AX)(R14*4), Z4; \
	VMOVUPS (AX)(R12*1), Z5

// AT4A and AT4B are outputs 0 and 1, 2 and 3 of Aᵀ (at4 in package conv)
// on Z0–Z5.
#define AT4A(o0, o1) \
	VSUBPS Z2, Z1, Z18; \
	VADDPS Z2, Z1, Z19; \
	VSUBPS Z4, Z3, Z20; \
	VADDPS Z4, Z3, Z21; \
	VADDPS Z19, Z0, Z22; \
	VADDPS Z21, Z22, o0; \
	VMULPS Z29, Z20, Z22; \
	VADDPS Z22, Z18, o1

#define AT4B(o2, o3) \
	VSUBPS Z2, Z1, Z18; \
	VADDPS Z2, Z1, Z19; \
	VSUBPS Z4, Z3, Z20; \
	VADDPS Z4, Z3, Z21; \
	VMULPS Z30, Z21, Z22; \
	VADDPS Z22, Z19, o2; \
	VMULPS Z28, Z20, Z22; \
	VADDPS Z22, Z18, Z22; \
	VADDPS Z5, Z22, o3

// ATROW stores at4(x0, …, x5) + bias (Z27) at 0(r), 64(r), 128(r) and 192(r).
#define ATROW(x0, x1, x2, x3, x4, x5, r) \
	VSUBPS  x2, x1, Z18; \
	VADDPS  x2, x1, Z19; \
	VSUBPS  x4, x3, Z20; \
	VADDPS  x4, x3, Z21; \
	VADDPS  Z19, x0, Z22; \
	VADDPS  Z21, Z22, Z22; \
	VADDPS  Z27, Z22, Z22; \
	VMOVUPS Z22, (r); \
	VMULPS  Z29, Z20, Z23; \
	VADDPS  Z23, Z18, Z23; \
	VADDPS  Z27, Z23, Z23; \
	VMOVUPS Z23, 64(r); \
	VMULPS  Z30, Z21, Z24; \
	VADDPS  Z24, Z19, Z24; \
	VADDPS  Z27, Z24, Z24; \
	VMOVUPS Z24, 128(r); \
	VMULPS  Z28, Z20, Z25; \
	VADDPS  Z25, Z18, Z25; \
	VADDPS  x5, Z25, Z25; \
	VADDPS  Z27, Z25, Z25; \
	VMOVUPS Z25, 192(r)

// func Out43(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr)
TEXT ·Out43(SB), NOSPLIT, $0-72
	MOVQ mt+0(FP), SI
	MOVQ xs+8(FP), R11
	MOVQ bias+24(FP), AX
	VMOVUPS (AX), Z27
	MOVQ obuf+48(FP), BX
	MOVQ orow+56(FP), R8
	LEAQ (R8)(R8*2), R10
	LEAQ (R11)(R11*2), R13
	LEAQ (R11)(R11*4), R9
	LEAQ (R13)(R13*1), R14
	LEAQ (R14)(R14*2), R15
	LEAQ (R14)(R14*4), R12
	CONSTS248
	MOVQ th+32(FP), DX

oti:
	MOVQ BX, DI
	MOVQ tw+40(FP), CX

otj:
	MOVQ SI, AX
	LOADM
	AT4A(Z6, Z12)
	LEAQ (SI)(R11*1), AX
	LOADM
	AT4A(Z7, Z13)
	LEAQ (SI)(R11*2), AX
	LOADM
	AT4A(Z8, Z14)
	LEAQ (SI)(R13*1), AX
	LOADM
	AT4A(Z9, Z15)
	LEAQ (SI)(R11*4), AX
	LOADM
	AT4A(Z10, Z16)
	LEAQ (SI)(R9*1), AX
	LOADM
	AT4A(Z11, Z17)
	ATROW(Z6, Z7, Z8, Z9, Z10, Z11, DI)
	LEAQ (DI)(R8*1), AX
	ATROW(Z12, Z13, Z14, Z15, Z16, Z17, AX)
	MOVQ SI, AX
	LOADM
	AT4B(Z6, Z12)
	LEAQ (SI)(R11*1), AX
	LOADM
	AT4B(Z7, Z13)
	LEAQ (SI)(R11*2), AX
	LOADM
	AT4B(Z8, Z14)
	LEAQ (SI)(R13*1), AX
	LOADM
	AT4B(Z9, Z15)
	LEAQ (SI)(R11*4), AX
	LOADM
	AT4B(Z10, Z16)
	LEAQ (SI)(R9*1), AX
	LOADM
	AT4B(Z11, Z17)
	LEAQ (DI)(R8*2), AX
	ATROW(Z6, Z7, Z8, Z9, Z10, Z11, AX)
	LEAQ (DI)(R10*1), AX
	ATROW(Z12, Z13, Z14, Z15, Z16, Z17, AX)
	ADDQ $256, DI
	ADDQ ldm+16(FP), SI
	DECQ CX
	JNZ  otj
	LEAQ (BX)(R8*4), BX
	DECQ DX
	JNZ  oti
	VZEROUPPER
	RET

// A4A computes a4's outputs 0–2 (y0, e+o, e−o) of y0…y3 in Z0–Z3; A4B
// outputs 3–5 (e4+o4, e4−o4, y3).
#define A4A(k0, k1, k2) \
	VADDPS  Z2, Z0, Z18; \
	VADDPS  Z3, Z1, Z19; \
	VMOVAPS Z0, k0; \
	VADDPS  Z19, Z18, k1; \
	VSUBPS  Z19, Z18, k2

#define A4B(k3, k4, k5) \
	VMULPS  Z30, Z2, Z18; \
	VADDPS  Z18, Z0, Z18; \
	VMULPS  Z29, Z1, Z19; \
	VMULPS  Z28, Z3, Z20; \
	VADDPS  Z20, Z19, Z19; \
	VADDPS  Z19, Z18, k3; \
	VSUBPS  Z19, Z18, k4; \
	VMOVAPS Z3, k5

// A4ROW stores a4(x0, x1, x2, x3) at (AX), (AX)+xs, …, (AX)+5·xs (R11 =
// xs, R12 = 3·xs, R13 = 5·xs).
#define A4ROW(x0, x1, x2, x3) \
	VMOVUPS x0, (AX); \
	VADDPS  x2, x0, Z18; \
	VADDPS  x3, x1, Z19; \
	VADDPS  Z19, Z18, Z20; \
	VMOVUPS Z20, (AX)(R11*1); \
	VSUBPS  Z19, Z18, Z21; \
	VMOVUPS Z21, (AX)(R11*2); \
	VMULPS  Z30, x2, Z18; \
	VADDPS  Z18, x0, Z18; \
	VMULPS  Z29, x1, Z19; \
	VMULPS  Z28, x3, Z20; \
	VADDPS  Z20, Z19, Z19; \
	VADDPS  Z19, Z18, Z20; \
	VMOVUPS Z20, (AX)(R12*1); \
	VSUBPS  Z19, Z18, Z21; \
	VMOVUPS Z21, (AX)(R11*4); \
	VMOVUPS x3, (AX)(R13*1)

// LOADD loads the output gradients of rows 0–3 of column off of the tile
// at DI (rows R8 apart, R10 = 3·R8) into Z0–Z3.
#define LOADD(off) \
	VMOVUPS off(DI), Z0; \
	VMOVUPS off(DI)(R8*1), Z1; \
	VMOVUPS off(DI)(R8*2), Z2; \
	VMOVUPS off(DI)(R10*1), Z3

// func Dy43(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr)
TEXT ·Dy43(SB), NOSPLIT, $0-64
	MOVQ dbuf+0(FP), BX
	MOVQ drow+8(FP), R8
	MOVQ dmt+32(FP), SI
	MOVQ xs+40(FP), R11
	LEAQ (R8)(R8*2), R10
	LEAQ (R11)(R11*2), R12
	LEAQ (R11)(R11*4), R13
	LEAQ (R12)(R12*1), R14
	CONSTS248
	MOVQ th+16(FP), DX

yti:
	MOVQ BX, DI
	MOVQ tw+24(FP), CX

ytj:
	LOADD(0)
	A4A(Z6, Z10, Z14)
	LOADD(64)
	A4A(Z7, Z11, Z15)
	LOADD(128)
	A4A(Z8, Z12, Z16)
	LOADD(192)
	A4A(Z9, Z13, Z17)
	MOVQ SI, AX
	A4ROW(Z6, Z7, Z8, Z9)
	LEAQ (SI)(R14*1), AX
	A4ROW(Z10, Z11, Z12, Z13)
	LEAQ (SI)(R14*2), AX
	A4ROW(Z14, Z15, Z16, Z17)
	LOADD(0)
	A4B(Z6, Z10, Z14)
	LOADD(64)
	A4B(Z7, Z11, Z15)
	LOADD(128)
	A4B(Z8, Z12, Z16)
	LOADD(192)
	A4B(Z9, Z13, Z17)
	LEAQ (SI)(R14*2), AX
	ADDQ R14, AX
	A4ROW(Z6, Z7, Z8, Z9)
	LEAQ (SI)(R14*4), AX
	A4ROW(Z10, Z11, Z12, Z13)
	ADDQ R14, AX
	A4ROW(Z14, Z15, Z16, Z17)
	ADDQ $256, DI
	ADDQ ldm+48(FP), SI
	DECQ CX
	JNZ  ytj
	LEAQ (BX)(R8*4), BX
	DECQ DX
	JNZ  yti
	VZEROUPPER
	RET

// LOADV loads dV_ξ for ξ = 6k + l, k = 0…5 (column l of the tile at AX:
// R14 = 6·xs, R15 = 18·xs, R12 = 30·xs) into Z0–Z5.
#define LOADV LOADM

// B05 computes rows 0 and 5 of B (b6 in package conv) down a column in
// Z0–Z5: 4·v0 and v5. B13 rows 1 and 3, B24 rows 2 and 4.
#define B05(p, q) \
	VMULPS  Z30, Z0, p; \
	VMOVAPS Z5, q

#define B13(p, q) \
	VSUBPS Z2, Z1, Z18; \
	VADDPS Z5, Z18, Z18; \
	VMULPS Z30, Z18, Z18; \
	VSUBPS Z3, Z4, Z19; \
	VMULPS Z29, Z19, Z19; \
	VADDPS Z19, Z18, p; \
	VSUBPS Z1, Z2, Z18; \
	VSUBPS Z4, Z3, Z19; \
	VMULPS Z29, Z19, Z19; \
	VADDPS Z19, Z18, Z18; \
	VMULPS Z31, Z5, Z19; \
	VSUBPS Z19, Z18, q

#define B24(p, q) \
	VADDPS Z2, Z1, Z18; \
	VMULPS Z30, Z18, Z19; \
	VMULPS Z31, Z0, Z20; \
	VSUBPS Z20, Z19, Z19; \
	VADDPS Z4, Z3, Z20; \
	VSUBPS Z20, Z19, p; \
	VSUBPS Z18, Z0, Z19; \
	VADDPS Z20, Z19, q

// BROWADD adds b6(x0, …, x5) into the six positions at 0(r), 64(r), …,
// 320(r).
#define BROWADD(x0, x1, x2, x3, x4, x5, r) \
	VMULPS  Z30, x0, Z18; \
	VADDPS  (r), Z18, Z18; \
	VMOVUPS Z18, (r); \
	VSUBPS  x2, x1, Z19; \
	VADDPS  x5, Z19, Z19; \
	VMULPS  Z30, Z19, Z19; \
	VSUBPS  x3, x4, Z20; \
	VMULPS  Z29, Z20, Z20; \
	VADDPS  Z20, Z19, Z19; \
	VADDPS  64(r), Z19, Z19; \
	VMOVUPS Z19, 64(r); \
	VADDPS  x2, x1, Z20; \
	VMULPS  Z30, Z20, Z21; \
	VMULPS  Z31, x0, Z22; \
	VSUBPS  Z22, Z21, Z21; \
	VADDPS  x4, x3, Z22; \
	VSUBPS  Z22, Z21, Z21; \
	VADDPS  128(r), Z21, Z21; \
	VMOVUPS Z21, 128(r); \
	VSUBPS  x1, x2, Z23; \
	VSUBPS  x4, x3, Z24; \
	VMULPS  Z29, Z24, Z24; \
	VADDPS  Z24, Z23, Z23; \
	VMULPS  Z31, x5, Z24; \
	VSUBPS  Z24, Z23, Z23; \
	VADDPS  192(r), Z23, Z23; \
	VMOVUPS Z23, 192(r); \
	VSUBPS  Z20, x0, Z24; \
	VADDPS  Z22, Z24, Z24; \
	VADDPS  256(r), Z24, Z24; \
	VMOVUPS Z24, 256(r); \
	VADDPS  320(r), x5, Z25; \
	VMOVUPS Z25, 320(r)

// COLV runs BOP (B05, B13 or B24) down the six columns of dV of the tile
// at SI into the register pairs (Z6, Z12) … (Z11, Z17) (R11 = xs, R13 =
// 3·xs, R9 = 5·xs).
#define COLV(BOP) \
	MOVQ SI, AX; \
	LOADV; \
	BOP(Z6, Z12); \
	LEAQ (SI)(R11*1), AX; \
	LOADV; \
	BOP(Z7, Z13); \
	LEAQ (SI)(R11*2), AX; \
	LOADV; \
	BOP(Z8, Z14); \
	LEAQ (SI)(R13*1), AX; \
	LOADV; \
	BOP(Z9, Z15); \
	LEAQ (SI)(R11*4), AX; \
	LOADV; \
	BOP(Z10, Z16); \
	LEAQ (SI)(R9*1), AX; \
	LOADV; \
	BOP(Z11, Z17)

// func Dx43(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr)
//
// Dx43 adds B dV Bᵀ of th×tw tiles into xbuf (the tile (ti, tj)'s 6×6
// receptive field at xbuf + 4ti·xrow + 4tj·64), rows of tiles in order and
// each row's tiles from the last to the first, which is the order of
// package conv's winoInputGrad4 at every position.
TEXT ·Dx43(SB), NOSPLIT, $0-64
	MOVQ xs+8(FP), R11
	MOVQ tw+32(FP), AX
	DECQ AX
	MOVQ AX, CX
	IMULQ ldv+16(FP), AX
	MOVQ dvt+0(FP), SI
	ADDQ AX, SI          // the first row's last tile
	MOVQ xbuf+40(FP), BX
	SHLQ $8, CX
	ADDQ CX, BX          // its receptive field
	MOVQ xrow+48(FP), R8
	LEAQ (R8)(R8*2), R10
	LEAQ (R11)(R11*2), R13
	LEAQ (R11)(R11*4), R9
	LEAQ (R13)(R13*1), R14
	LEAQ (R14)(R14*2), R15
	LEAQ (R14)(R14*4), R12
	CONSTS
	MOVQ th+24(FP), DX

xti:
	MOVQ BX, DI
	MOVQ tw+32(FP), CX

xtj:
	COLV(B05)
	BROWADD(Z6, Z7, Z8, Z9, Z10, Z11, DI)
	LEAQ (DI)(R8*4), AX
	ADDQ R8, AX
	BROWADD(Z12, Z13, Z14, Z15, Z16, Z17, AX)
	COLV(B13)
	LEAQ (DI)(R8*1), AX
	BROWADD(Z6, Z7, Z8, Z9, Z10, Z11, AX)
	LEAQ (DI)(R10*1), AX
	BROWADD(Z12, Z13, Z14, Z15, Z16, Z17, AX)
	COLV(B24)
	LEAQ (DI)(R8*2), AX
	BROWADD(Z6, Z7, Z8, Z9, Z10, Z11, AX)
	LEAQ (DI)(R8*4), AX
	BROWADD(Z12, Z13, Z14, Z15, Z16, Z17, AX)
	SUBQ $256, DI
	SUBQ ldv+16(FP), SI
	DECQ CX
	JNZ  xtj
	// SI is one tile before the row's first: on to the next row's last.
	MOVQ tw+32(FP), AX
	SHLQ $1, AX
	IMULQ ldv+16(FP), AX
	ADDQ AX, SI
	LEAQ (BX)(R8*4), BX
	DECQ DX
	JNZ  xti
	VZEROUPPER
	RET

// F(2×2, 3×3): 4×4 receptive fields, 2×2 outputs, 16 transformed values
// ξ = 4k + l (winograd.go in package conv).

// WCOL is winoCol (Bᵀ down a column of four: d0−d2, d1+d2, d2−d1, d1−d3)
// of the column at off(DI) (rows R8 apart, R9 = 3·R8) into k0…k3.
#define WCOL(off, k0, k1, k2, k3) \
	VMOVUPS off(DI), Z0; \
	VMOVUPS off(DI)(R8*1), Z1; \
	VMOVUPS off(DI)(R8*2), Z2; \
	VMOVUPS off(DI)(R9*1), Z3; \
	VSUBPS  Z2, Z0, k0; \
	VADDPS  Z2, Z1, k1; \
	VSUBPS  Z1, Z2, k2; \
	VSUBPS  Z3, Z1, k3

// WROW stores a−c, b+c, c−b and b−d at (AX), (AX)+xs, (AX)+2xs and
// (AX)+3xs (R11 = xs, R12 = 3·xs).
#define WROW(a, b, c, d) \
	VSUBPS  c, a, Z0; \
	VMOVUPS Z0, (AX); \
	VADDPS  c, b, Z1; \
	VMOVUPS Z1, (AX)(R11*1); \
	VSUBPS  b, c, Z2; \
	VMOVUPS Z2, (AX)(R11*2); \
	VSUBPS  d, b, Z3; \
	VMOVUPS Z3, (AX)(R12*1)

// func In23(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr)
TEXT ·In23(SB), NOSPLIT, $0-64
	MOVQ buf+0(FP), BX
	MOVQ brow+8(FP), R8
	MOVQ vt+32(FP), SI
	MOVQ xs+40(FP), R11
	LEAQ (R8)(R8*2), R9
	LEAQ (R11)(R11*2), R12
	LEAQ (R11*4), R13
	MOVQ th+16(FP), DX

jti:
	MOVQ BX, DI
	MOVQ tw+24(FP), CX

jtj:
	WCOL(0, Z16, Z17, Z18, Z19)
	WCOL(64, Z20, Z21, Z22, Z23)
	WCOL(128, Z24, Z25, Z26, Z27)
	WCOL(192, Z28, Z29, Z30, Z31)
	MOVQ SI, AX
	WROW(Z16, Z20, Z24, Z28)
	ADDQ R13, AX
	WROW(Z17, Z21, Z25, Z29)
	ADDQ R13, AX
	WROW(Z18, Z22, Z26, Z30)
	ADDQ R13, AX
	WROW(Z19, Z23, Z27, Z31)
	ADDQ $128, DI
	ADDQ ldv+48(FP), SI
	DECQ CX
	JNZ  jtj
	LEAQ (BX)(R8*2), BX
	DECQ DX
	JNZ  jti
	VZEROUPPER
	RET

// OCOL computes s0 = m0+m1+m2 and s1 = m1−m2−m3 of M_ξ, ξ = l, 4+l, 8+l,
// 12+l, of the tile at AX (R13 = 4·xs, R14 = 8·xs, R15 = 12·xs).
#define OCOL(s0, s1) \
	VMOVUPS (AX), Z0; \
	VMOVUPS (AX)(R13*1), Z1; \
	VMOVUPS (AX)(R14*1), Z2; \
	VMOVUPS (AX)(R15*1), Z3; \
	VADDPS  Z1, Z0, Z4; \
	VADDPS  Z2, Z4, s0; \
	VSUBPS  Z2, Z1, Z5; \
	VSUBPS  Z3, Z5, s1

// OROW stores s0+s1+s2 + bias and s1−s2−s3 + bias (Z31) at 0(r) and 64(r).
#define OROW(x0, x1, x2, x3, r) \
	VADDPS  x1, x0, Z0; \
	VADDPS  x2, Z0, Z0; \
	VADDPS  Z31, Z0, Z0; \
	VMOVUPS Z0, (r); \
	VSUBPS  x2, x1, Z1; \
	VSUBPS  x3, Z1, Z1; \
	VADDPS  Z31, Z1, Z1; \
	VMOVUPS Z1, 64(r)

// func Out23(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr)
TEXT ·Out23(SB), NOSPLIT, $0-72
	MOVQ mt+0(FP), SI
	MOVQ xs+8(FP), R11
	MOVQ bias+24(FP), AX
	VMOVUPS (AX), Z31
	MOVQ obuf+48(FP), BX
	MOVQ orow+56(FP), R8
	LEAQ (R11)(R11*2), R12
	LEAQ (R11*4), R13
	LEAQ (R11*8), R14
	LEAQ (R13)(R14*1), R15
	MOVQ th+32(FP), DX

pti:
	MOVQ BX, DI
	MOVQ tw+40(FP), CX

ptj:
	MOVQ SI, AX
	OCOL(Z16, Z20)
	LEAQ (SI)(R11*1), AX
	OCOL(Z17, Z21)
	LEAQ (SI)(R11*2), AX
	OCOL(Z18, Z22)
	LEAQ (SI)(R12*1), AX
	OCOL(Z19, Z23)
	OROW(Z16, Z17, Z18, Z19, DI)
	LEAQ (DI)(R8*1), AX
	OROW(Z20, Z21, Z22, Z23, AX)
	ADDQ $128, DI
	ADDQ ldm+16(FP), SI
	DECQ CX
	JNZ  ptj
	LEAQ (BX)(R8*2), BX
	DECQ DX
	JNZ  pti
	VZEROUPPER
	RET

// DYROW stores re, re+ro, re−ro and 0−ro (Z31 = 0) at (AX), (AX)+xs,
// (AX)+2xs and (AX)+3xs.
#define DYROW(re, ro) \
	VMOVUPS re, (AX); \
	VADDPS  ro, re, Z4; \
	VMOVUPS Z4, (AX)(R11*1); \
	VSUBPS  ro, re, Z5; \
	VMOVUPS Z5, (AX)(R11*2); \
	VSUBPS  ro, Z31, Z6; \
	VMOVUPS Z6, (AX)(R12*1)

// func Dy23(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr)
TEXT ·Dy23(SB), NOSPLIT, $0-64
	MOVQ dbuf+0(FP), BX
	MOVQ drow+8(FP), R8
	MOVQ dmt+32(FP), SI
	MOVQ xs+40(FP), R11
	LEAQ (R11)(R11*2), R12
	LEAQ (R11*4), R13
	VPXORD Z31, Z31, Z31
	MOVQ th+16(FP), DX

qti:
	MOVQ BX, DI
	MOVQ tw+24(FP), CX

qtj:
	VMOVUPS (DI), Z0           // e0
	VMOVUPS (DI)(R8*1), Z1     // e1
	VMOVUPS 64(DI), Z2         // o0
	VMOVUPS 64(DI)(R8*1), Z3   // o1
	// re = (e0, e0+e1, e0−e1, 0−e1) in Z16–Z19, ro likewise in Z20–Z23.
	VMOVAPS Z0, Z16
	VADDPS  Z1, Z0, Z17
	VSUBPS  Z1, Z0, Z18
	VSUBPS  Z1, Z31, Z19
	VMOVAPS Z2, Z20
	VADDPS  Z3, Z2, Z21
	VSUBPS  Z3, Z2, Z22
	VSUBPS  Z3, Z31, Z23
	MOVQ    SI, AX
	DYROW(Z16, Z20)
	ADDQ    R13, AX
	DYROW(Z17, Z21)
	ADDQ    R13, AX
	DYROW(Z18, Z22)
	ADDQ    R13, AX
	DYROW(Z19, Z23)
	ADDQ $128, DI
	ADDQ ldm+48(FP), SI
	DECQ CX
	JNZ  qtj
	LEAQ (BX)(R8*2), BX
	DECQ DX
	JNZ  qti
	VZEROUPPER
	RET

// BCOL is winoBCol (B down a column of four: d0, d1−d2+d3, d1+d2−d0,
// 0−d3; Z31 = 0) of dV_ξ, ξ = l, 4+l, 8+l, 12+l, of the tile at AX (R13 =
// 4·xs, R14 = 8·xs, R15 = 12·xs) into r0…r3.
#define BCOL(r0, r1, r2, r3) \
	VMOVUPS (AX), r0; \
	VMOVUPS (AX)(R13*1), Z1; \
	VMOVUPS (AX)(R14*1), Z2; \
	VMOVUPS (AX)(R15*1), Z3; \
	VSUBPS  Z2, Z1, Z4; \
	VADDPS  Z3, Z4, r1; \
	VADDPS  Z2, Z1, Z5; \
	VSUBPS  r0, Z5, r2; \
	VSUBPS  Z3, Z31, r3

// BRADD adds winoBCol(x0, x1, x2, x3) into the positions at 0(r), 64(r),
// 128(r) and 192(r).
#define BRADD(x0, x1, x2, x3, r) \
	VADDPS  (r), x0, Z0; \
	VMOVUPS Z0, (r); \
	VSUBPS  x2, x1, Z1; \
	VADDPS  x3, Z1, Z1; \
	VADDPS  64(r), Z1, Z1; \
	VMOVUPS Z1, 64(r); \
	VADDPS  x2, x1, Z2; \
	VSUBPS  x0, Z2, Z2; \
	VADDPS  128(r), Z2, Z2; \
	VMOVUPS Z2, 128(r); \
	VSUBPS  x3, Z31, Z3; \
	VADDPS  192(r), Z3, Z3; \
	VMOVUPS Z3, 192(r)

// func Dx23(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr)
//
// Dx23 adds B dV Bᵀ of th×tw tiles into xbuf (tile (ti, tj)'s 4×4
// receptive field at xbuf + 2ti·xrow + 2tj·64), in winoInputGrad's order:
// the rows of tiles in order, each row's tiles from last to first.
TEXT ·Dx23(SB), NOSPLIT, $0-64
	MOVQ xs+8(FP), R11
	MOVQ tw+32(FP), AX
	DECQ AX
	MOVQ AX, CX
	IMULQ ldv+16(FP), AX
	MOVQ dvt+0(FP), SI
	ADDQ AX, SI          // the first row's last tile
	MOVQ xbuf+40(FP), BX
	SHLQ $7, CX
	ADDQ CX, BX          // its receptive field
	MOVQ xrow+48(FP), R8
	LEAQ (R8)(R8*2), R10
	LEAQ (R11)(R11*2), R12
	LEAQ (R11*4), R13
	LEAQ (R11*8), R14
	LEAQ (R13)(R14*1), R15
	VPXORD Z31, Z31, Z31
	MOVQ th+24(FP), DX

zti:
	MOVQ BX, DI
	MOVQ tw+32(FP), CX

ztj:
	MOVQ SI, AX
	BCOL(Z16, Z20, Z24, Z28)
	LEAQ (SI)(R11*1), AX
	BCOL(Z17, Z21, Z25, Z29)
	LEAQ (SI)(R11*2), AX
	BCOL(Z18, Z22, Z26, Z30)
	LEAQ (SI)(R12*1), AX
	BCOL(Z19, Z23, Z27, Z6)
	BRADD(Z16, Z17, Z18, Z19, DI)
	LEAQ (DI)(R8*1), AX
	BRADD(Z20, Z21, Z22, Z23, AX)
	LEAQ (DI)(R8*2), AX
	BRADD(Z24, Z25, Z26, Z27, AX)
	LEAQ (DI)(R10*1), AX
	BRADD(Z28, Z29, Z30, Z6, AX)
	SUBQ $128, DI
	SUBQ ldv+16(FP), SI
	DECQ CX
	JNZ  ztj
	MOVQ tw+32(FP), AX
	SHLQ $1, AX
	IMULQ ldv+16(FP), AX
	ADDQ AX, SI
	LEAQ (BX)(R8*2), BX
	DECQ DX
	JNZ  zti
	VZEROUPPER
	RET

// ZERO9TO15 clears Z9–Z15, the rows a 9-row transpose does not use.
#define ZERO9TO15 \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15

// func Col33(buf *float32, brow uintptr, ho, wo, s int, colt *float32, ldcol uintptr)
//
// Col33 writes the 3×3 receptive fields of a convolution of stride s over
// 16 channels of a padded plane (buf: positions 64 bytes apart, rows brow
// apart) as rows of im2col's transpose: output position p = i·wo + j
// gets channel c's 9 values, x[c][s·i+u][s·j+v] in the order of u then v,
// at colt + p·ldcol + 36c.
TEXT ·Col33(SB), NOSPLIT, $0-56
	MOVQ buf+0(FP), DI
	MOVQ brow+8(FP), R8
	MOVQ s+32(FP), AX
	MOVQ AX, R9
	IMULQ R8, R9          // s rows
	MOVQ AX, R10
	SHLQ $6, R10          // s positions
	MOVQ colt+40(FP), BX
	MOVQ ldcol+48(FP), R11
	MOVL $0x1ff, AX
	KMOVW AX, K1
	MOVQ ho+16(FP), DX

cri:
	MOVQ DI, SI
	MOVQ wo+24(FP), CX

crj:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS (SI)(R8*1), Z3
	VMOVUPS 64(SI)(R8*1), Z4
	VMOVUPS 128(SI)(R8*1), Z5
	VMOVUPS (SI)(R8*2), Z6
	VMOVUPS 64(SI)(R8*2), Z7
	VMOVUPS 128(SI)(R8*2), Z8
	ZERO9TO15
	TRANSPOSE16
	VMOVUPS Z0, K1, (BX)
	VMOVUPS Z1, K1, 36(BX)
	VMOVUPS Z2, K1, 72(BX)
	VMOVUPS Z3, K1, 108(BX)
	VMOVUPS Z4, K1, 144(BX)
	VMOVUPS Z5, K1, 180(BX)
	VMOVUPS Z6, K1, 216(BX)
	VMOVUPS Z7, K1, 252(BX)
	VMOVUPS Z8, K1, 288(BX)
	VMOVUPS Z9, K1, 324(BX)
	VMOVUPS Z10, K1, 360(BX)
	VMOVUPS Z11, K1, 396(BX)
	VMOVUPS Z12, K1, 432(BX)
	VMOVUPS Z13, K1, 468(BX)
	VMOVUPS Z14, K1, 504(BX)
	VMOVUPS Z15, K1, 540(BX)
	ADDQ R10, SI
	ADDQ R11, BX
	DECQ CX
	JNZ  crj
	ADDQ R9, DI
	DECQ DX
	JNZ  cri
	VZEROUPPER
	RET

// UADD adds z into the position at off(r).
#define UADD(z, off, r) \
	VADDPS  off(r), z, z; \
	VMOVUPS z, off(r)

// func Uncol33(colt *float32, ldcol uintptr, ho, wo, s int, buf *float32, brow uintptr)
//
// Uncol33 is Col33's adjoint: it adds each output position's 9·16 values
// back into the receptive field in buf, the positions from the last to
// the first, so that every position of buf receives its additions in the
// order of (u, v), as im2col's col2im adds them.
TEXT ·Uncol33(SB), NOSPLIT, $0-56
	MOVQ brow+48(FP), R8
	MOVQ s+32(FP), AX
	MOVQ AX, R9
	IMULQ R8, R9          // s rows
	MOVQ AX, R10
	SHLQ $6, R10          // s positions
	MOVQ ldcol+8(FP), R11
	// BX: the last position's row of colt; DI: its receptive field's row
	// of tiles in buf, SI: the field.
	MOVQ ho+16(FP), AX
	IMULQ wo+24(FP), AX
	DECQ AX
	IMULQ R11, AX
	MOVQ colt+0(FP), BX
	ADDQ AX, BX
	MOVQ ho+16(FP), AX
	DECQ AX
	IMULQ R9, AX
	MOVQ buf+40(FP), DI
	ADDQ AX, DI
	MOVQ wo+24(FP), AX
	DECQ AX
	IMULQ R10, AX
	MOVQ AX, R12          // the last column's offset
	MOVL $0x1ff, AX
	KMOVW AX, K1
	MOVQ ho+16(FP), DX

uri:
	LEAQ (DI)(R12*1), SI
	MOVQ wo+24(FP), CX

urj:
	VMOVUPS.Z (BX), K1, Z0
	VMOVUPS.Z 36(BX), K1, Z1
	VMOVUPS.Z 72(BX), K1, Z2
	VMOVUPS.Z 108(BX), K1, Z3
	VMOVUPS.Z 144(BX), K1, Z4
	VMOVUPS.Z 180(BX), K1, Z5
	VMOVUPS.Z 216(BX), K1, Z6
	VMOVUPS.Z 252(BX), K1, Z7
	VMOVUPS.Z 288(BX), K1, Z8
	VMOVUPS.Z 324(BX), K1, Z9
	VMOVUPS.Z 360(BX), K1, Z10
	VMOVUPS.Z 396(BX), K1, Z11
	VMOVUPS.Z 432(BX), K1, Z12
	VMOVUPS.Z 468(BX), K1, Z13
	VMOVUPS.Z 504(BX), K1, Z14
	VMOVUPS.Z 540(BX), K1, Z15
	TRANSPOSE16
	UADD(Z0, 0, SI)
	UADD(Z1, 64, SI)
	UADD(Z2, 128, SI)
	LEAQ (SI)(R8*1), AX
	UADD(Z3, 0, AX)
	UADD(Z4, 64, AX)
	UADD(Z5, 128, AX)
	LEAQ (SI)(R8*2), AX
	UADD(Z6, 0, AX)
	UADD(Z7, 64, AX)
	UADD(Z8, 128, AX)
	SUBQ R10, SI
	SUBQ R11, BX
	DECQ CX
	JNZ  urj
	SUBQ R9, DI
	DECQ DX
	JNZ  uri
	VZEROUPPER
	RET

// F(4×4, 5×5): 8×8 receptive fields, 4×4 outputs, 64 values ξ = 8k + l
// (winograd45.go in package conv). A tile's 64 first-stage values go
// through a scratch area (64 vectors, 4 KB, from the caller), as the AVX2
// versions' go through a stack buffer.

// BCONST broadcasts the float32 with bits b into every lane of z.
#define BCONST(b, z) \
	MOVL         b, AX; \
	VPBROADCASTD AX, z

// BT8 is bt8 on Z0–Z7 into Z8–Z15 (constants 4.25 Z23, 1.25 Z24, 2.5 Z25,
// 0.25 Z26, 0.5 Z27, 2 Z28, 4 Z29, 5 Z30, 5.25 Z31; temps Z16–Z18).
#define BT8 \
	VADDPS Z6, Z2, Z16; \
	VMULPS Z23, Z4, Z17; \
	VSUBPS Z17, Z16, Z16; \
	VADDPS Z5, Z1, Z17; \
	VMULPS Z23, Z3, Z18; \
	VSUBPS Z18, Z17, Z17; \
	VADDPS Z17, Z16, Z9; \
	VSUBPS Z17, Z16, Z10; \
	VMULPS Z26, Z2, Z16; \
	VMULPS Z24, Z4, Z17; \
	VSUBPS Z17, Z16, Z16; \
	VADDPS Z6, Z16, Z16; \
	VMULPS Z27, Z1, Z17; \
	VMULPS Z25, Z3, Z18; \
	VSUBPS Z18, Z17, Z17; \
	VMULPS Z28, Z5, Z18; \
	VADDPS Z18, Z17, Z17; \
	VADDPS Z17, Z16, Z11; \
	VSUBPS Z17, Z16, Z12; \
	VMULPS Z29, Z2, Z16; \
	VMULPS Z30, Z4, Z17; \
	VSUBPS Z17, Z16, Z16; \
	VADDPS Z6, Z16, Z16; \
	VMULPS Z28, Z1, Z17; \
	VMULPS Z25, Z3, Z18; \
	VSUBPS Z18, Z17, Z17; \
	VMULPS Z27, Z5, Z18; \
	VADDPS Z18, Z17, Z17; \
	VADDPS Z17, Z16, Z13; \
	VSUBPS Z17, Z16, Z14; \
	VSUBPS Z6, Z0, Z16; \
	VSUBPS Z2, Z4, Z17; \
	VMULPS Z31, Z17, Z17; \
	VADDPS Z17, Z16, Z8; \
	VSUBPS Z1, Z7, Z16; \
	VSUBPS Z5, Z3, Z17; \
	VMULPS Z31, Z17, Z17; \
	VADDPS Z17, Z16, Z15

#define BT8CONSTS \
	BCONST($0x40880000, Z23); \
	BCONST($0x3fa00000, Z24); \
	BCONST($0x40200000, Z25); \
	BCONST($0x3e800000, Z26); \
	BCONST($0x3f000000, Z27); \
	BCONST($0x40000000, Z28); \
	BCONST($0x40800000, Z29); \
	BCONST($0x40a00000, Z30); \
	BCONST($0x40a80000, Z31)

// COL8(off) loads rows 0–7 of the column at off(DI) (rows R8 apart; R9 =
// 3·R8, R10 = 5·R8, R11 = 7·R8) into Z0–Z7.
#define COL8(off) \
	VMOVUPS off(DI), Z0; \
	VMOVUPS off(DI)(R8*1), Z1; \
	VMOVUPS off(DI)(R8*2), Z2; \
	VMOVUPS off(DI)(R9*1), Z3; \
	VMOVUPS off(DI)(R8*4), Z4; \
	VMOVUPS off(DI)(R10*1), Z5; \
	VMOVUPS off(DI)(R9*2), Z6; \
	VMOVUPS off(DI)(R11*1), Z7

// SCRCOL(off) stores Z8–Z15 (the values k = 0…7 of one column) down a
// column of the scratch at off(BX), 512 bytes apart.
#define SCRCOL(off) \
	VMOVUPS Z8, off(BX); \
	VMOVUPS Z9, off+512(BX); \
	VMOVUPS Z10, off+1024(BX); \
	VMOVUPS Z11, off+1536(BX); \
	VMOVUPS Z12, off+2048(BX); \
	VMOVUPS Z13, off+2560(BX); \
	VMOVUPS Z14, off+3072(BX); \
	VMOVUPS Z15, off+3584(BX)

// SCRROW(off) loads a row of the scratch, 8 vectors at off(BX), 64 apart.
#define SCRROW(off) \
	VMOVUPS off(BX), Z0; \
	VMOVUPS off+64(BX), Z1; \
	VMOVUPS off+128(BX), Z2; \
	VMOVUPS off+192(BX), Z3; \
	VMOVUPS off+256(BX), Z4; \
	VMOVUPS off+320(BX), Z5; \
	VMOVUPS off+384(BX), Z6; \
	VMOVUPS off+448(BX), Z7

// XSROW stores Z8–Z15 at (AX), (AX)+xs, …, (AX)+7·xs (R12 = xs, R13 =
// 3·xs, R14 = 5·xs, R15 = 7·xs) and moves AX on by 8·xs.
#define XSROW \
	VMOVUPS Z8, (AX); \
	VMOVUPS Z9, (AX)(R12*1); \
	VMOVUPS Z10, (AX)(R12*2); \
	VMOVUPS Z11, (AX)(R13*1); \
	VMOVUPS Z12, (AX)(R12*4); \
	VMOVUPS Z13, (AX)(R14*1); \
	VMOVUPS Z14, (AX)(R13*2); \
	VMOVUPS Z15, (AX)(R15*1); \
	LEAQ    (AX)(R12*8), AX

// STRIDES8 sets R8–R11 to 1, 3, 5, 7 times the register r and R12–R15
// to 1, 3, 5, 7 times x.
#define STRIDES8(r, x) \
	MOVQ r, R8; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11; \
	MOVQ x, R12; \
	LEAQ (R12)(R12*2), R13; \
	LEAQ (R12)(R12*4), R14; \
	LEAQ (R13)(R12*4), R15

// func In45(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, scratch *float32)
//
// Stage 1: bt8 down the field's columns q into the scratch at (8k+q)·64;
// stage 2: bt8 along its rows k into vt + (8k+l)·xs.
TEXT ·In45(SB), NOSPLIT, $0-64
	STRIDES8(brow+8(FP), xs+40(FP))
	BT8CONSTS
	MOVQ scratch+56(FP), BX
	MOVQ buf+0(FP), DI
	MOVQ vt+32(FP), SI
	MOVQ th+16(FP), DX

kti:
	MOVQ tw+24(FP), CX

ktj:
	COL8(0)
	BT8
	SCRCOL(0)
	COL8(64)
	BT8
	SCRCOL(64)
	COL8(128)
	BT8
	SCRCOL(128)
	COL8(192)
	BT8
	SCRCOL(192)
	COL8(256)
	BT8
	SCRCOL(256)
	COL8(320)
	BT8
	SCRCOL(320)
	COL8(384)
	BT8
	SCRCOL(384)
	COL8(448)
	BT8
	SCRCOL(448)
	MOVQ SI, AX
	SCRROW(0)
	BT8
	XSROW
	SCRROW(512)
	BT8
	XSROW
	SCRROW(1024)
	BT8
	XSROW
	SCRROW(1536)
	BT8
	XSROW
	SCRROW(2048)
	BT8
	XSROW
	SCRROW(2560)
	BT8
	XSROW
	SCRROW(3072)
	BT8
	XSROW
	SCRROW(3584)
	BT8
	XSROW
	ADDQ $256, DI
	ADDQ ldv+48(FP), SI
	DECQ CX
	JNZ  ktj
	// On to the next row of tiles: back tw tiles, down 4 rows.
	MOVQ tw+24(FP), AX
	SHLQ $8, AX
	SUBQ AX, DI
	LEAQ (DI)(R8*4), DI
	DECQ DX
	JNZ  kti
	VZEROUPPER
	RET

// LOADXI loads value ξ = 8k + l, k = 0…7, of the tile at AX + l·xs (R8 =
// 8·xs, R9 = 24·xs, R10 = 40·xs, R11 = 56·xs) into Z0–Z7.
#define LOADXI \
	VMOVUPS (AX), Z0; \
	VMOVUPS (AX)(R8*1), Z1; \
	VMOVUPS (AX)(R8*2), Z2; \
	VMOVUPS (AX)(R9*1), Z3; \
	VMOVUPS (AX)(R8*4), Z4; \
	VMOVUPS (AX)(R10*1), Z5; \
	VMOVUPS (AX)(R9*2), Z6; \
	VMOVUPS (AX)(R11*1), Z7

// XICOL(l) sets AX to column l's first value, SI + l·xs (R12 = xs, R13 =
// 3·xs, R14 = 5·xs, R15 = 7·xs).
#define XICOL0 MOVQ SI, AX
#define XICOL1 LEAQ (SI)(R12*1), AX
#define XICOL2 LEAQ (SI)(R12*2), AX
#define XICOL3 LEAQ (SI)(R13*1), AX
#define XICOL4 LEAQ (SI)(R12*4), AX
#define XICOL5 LEAQ (SI)(R14*1), AX
#define XICOL6 LEAQ (SI)(R13*2), AX
#define XICOL7 LEAQ (SI)(R15*1), AX

// AT48 is at48 on Z0–Z7 into Z8–Z11 (constants 2 Z25, 0.5 Z26, 4 Z27,
// 0.25 Z28, 8 Z29, 0.125 Z30; temps Z16–Z22).
#define AT48 \
	VADDPS Z2, Z1, Z16; \
	VSUBPS Z2, Z1, Z17; \
	VADDPS Z4, Z3, Z18; \
	VSUBPS Z4, Z3, Z19; \
	VADDPS Z6, Z5, Z20; \
	VSUBPS Z6, Z5, Z21; \
	VADDPS Z16, Z0, Z8; \
	VADDPS Z18, Z8, Z8; \
	VADDPS Z20, Z8, Z8; \
	VMULPS Z25, Z19, Z22; \
	VADDPS Z22, Z17, Z9; \
	VMULPS Z26, Z21, Z22; \
	VADDPS Z22, Z9, Z9; \
	VMULPS Z27, Z18, Z22; \
	VADDPS Z22, Z16, Z10; \
	VMULPS Z28, Z20, Z22; \
	VADDPS Z22, Z10, Z10; \
	VMULPS Z29, Z19, Z22; \
	VADDPS Z22, Z17, Z11; \
	VMULPS Z30, Z21, Z22; \
	VADDPS Z22, Z11, Z11; \
	VADDPS Z7, Z11, Z11

// SCR4(off) stores Z8–Z11 down a column of the scratch at off(BX).
#define SCR4(off) \
	VMOVUPS Z8, off(BX); \
	VMOVUPS Z9, off+512(BX); \
	VMOVUPS Z10, off+1024(BX); \
	VMOVUPS Z11, off+1536(BX)

// OUT4 stores Z8–Z11 plus the bias (Z31) at 0(AX), 64(AX), 128(AX),
// 192(AX).
#define OUT4 \
	VADDPS  Z31, Z8, Z8; \
	VMOVUPS Z8, (AX); \
	VADDPS  Z31, Z9, Z9; \
	VMOVUPS Z9, 64(AX); \
	VADDPS  Z31, Z10, Z10; \
	VMOVUPS Z10, 128(AX); \
	VADDPS  Z31, Z11, Z11; \
	VMOVUPS Z11, 192(AX)

// func Out45(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, scratch *float32)
TEXT ·Out45(SB), NOSPLIT, $0-72
	MOVQ xs+8(FP), AX
	SHLQ $3, AX
	STRIDES8(AX, xs+8(FP))
	BCONST($0x40000000, Z25)
	BCONST($0x3f000000, Z26)
	BCONST($0x40800000, Z27)
	BCONST($0x3e800000, Z28)
	BCONST($0x41000000, Z29)
	BCONST($0x3e000000, Z30)
	MOVQ bias+24(FP), AX
	VMOVUPS (AX), Z31
	MOVQ scratch+64(FP), BX
	MOVQ obuf+48(FP), DI
	MOVQ mt+0(FP), SI
	MOVQ th+32(FP), DX

oti5:
	MOVQ tw+40(FP), CX

otj5:
	XICOL0
	LOADXI
	AT48
	SCR4(0)
	XICOL1
	LOADXI
	AT48
	SCR4(64)
	XICOL2
	LOADXI
	AT48
	SCR4(128)
	XICOL3
	LOADXI
	AT48
	SCR4(192)
	XICOL4
	LOADXI
	AT48
	SCR4(256)
	XICOL5
	LOADXI
	AT48
	SCR4(320)
	XICOL6
	LOADXI
	AT48
	SCR4(384)
	XICOL7
	LOADXI
	AT48
	SCR4(448)
	MOVQ DI, AX
	SCRROW(0)
	AT48
	OUT4
	ADDQ orow+56(FP), AX
	SCRROW(512)
	AT48
	OUT4
	ADDQ orow+56(FP), AX
	SCRROW(1024)
	AT48
	OUT4
	ADDQ orow+56(FP), AX
	SCRROW(1536)
	AT48
	OUT4
	ADDQ $256, DI
	ADDQ ldm+16(FP), SI
	DECQ CX
	JNZ  otj5
	// Back tw tiles, down 4 rows.
	MOVQ tw+40(FP), AX
	SHLQ $8, AX
	SUBQ AX, DI
	MOVQ orow+56(FP), AX
	SHLQ $2, AX
	ADDQ AX, DI
	DECQ DX
	JNZ  oti5
	VZEROUPPER
	RET

// A8 is a8 on Z0–Z3 into Z8–Z15 (constants 2 Z25, 0.5 Z26, 4 Z27, 0.25
// Z28, 8 Z29, 0.125 Z30; temps Z16–Z22).
#define A8 \
	VADDPS  Z2, Z0, Z16; \
	VADDPS  Z3, Z1, Z17; \
	VMULPS  Z27, Z2, Z18; \
	VADDPS  Z18, Z0, Z18; \
	VMULPS  Z25, Z1, Z19; \
	VMULPS  Z29, Z3, Z20; \
	VADDPS  Z20, Z19, Z19; \
	VMULPS  Z28, Z2, Z20; \
	VADDPS  Z20, Z0, Z20; \
	VMULPS  Z26, Z1, Z21; \
	VMULPS  Z30, Z3, Z22; \
	VADDPS  Z22, Z21, Z21; \
	VMOVAPS Z0, Z8; \
	VADDPS  Z17, Z16, Z9; \
	VSUBPS  Z17, Z16, Z10; \
	VADDPS  Z19, Z18, Z11; \
	VSUBPS  Z19, Z18, Z12; \
	VADDPS  Z21, Z20, Z13; \
	VSUBPS  Z21, Z20, Z14; \
	VMOVAPS Z3, Z15

// DCOL4(off) loads rows 0–3 of column off of the gradients at DI (rows R8
// apart... here R10 = drow, R11 = 3·drow) into Z0–Z3.
#define DCOL4(off) \
	VMOVUPS off(DI), Z0; \
	VMOVUPS off(DI)(R10*1), Z1; \
	VMOVUPS off(DI)(R10*2), Z2; \
	VMOVUPS off(DI)(R11*1), Z3

// SCRROW4(off) loads four vectors of a scratch row at off(BX).
#define SCRROW4(off) \
	VMOVUPS off(BX), Z0; \
	VMOVUPS off+64(BX), Z1; \
	VMOVUPS off+128(BX), Z2; \
	VMOVUPS off+192(BX), Z3

// func Dy45(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, scratch *float32)
TEXT ·Dy45(SB), NOSPLIT, $0-64
	STRIDES8(xs+40(FP), xs+40(FP))
	MOVQ drow+8(FP), R10
	LEAQ (R10)(R10*2), R11
	BCONST($0x40000000, Z25)
	BCONST($0x3f000000, Z26)
	BCONST($0x40800000, Z27)
	BCONST($0x3e800000, Z28)
	BCONST($0x41000000, Z29)
	BCONST($0x3e000000, Z30)
	MOVQ scratch+56(FP), BX
	MOVQ dbuf+0(FP), DI
	MOVQ dmt+32(FP), SI
	MOVQ th+16(FP), DX

yti5:
	MOVQ tw+24(FP), CX

ytj5:
	DCOL4(0)
	A8
	SCRCOL(0)
	DCOL4(64)
	A8
	SCRCOL(64)
	DCOL4(128)
	A8
	SCRCOL(128)
	DCOL4(192)
	A8
	SCRCOL(192)
	MOVQ SI, AX
	SCRROW4(0)
	A8
	XSROW
	SCRROW4(512)
	A8
	XSROW
	SCRROW4(1024)
	A8
	XSROW
	SCRROW4(1536)
	A8
	XSROW
	SCRROW4(2048)
	A8
	XSROW
	SCRROW4(2560)
	A8
	XSROW
	SCRROW4(3072)
	A8
	XSROW
	SCRROW4(3584)
	A8
	XSROW
	ADDQ $256, DI
	ADDQ ldm+48(FP), SI
	DECQ CX
	JNZ  ytj5
	MOVQ tw+24(FP), AX
	SHLQ $8, AX
	SUBQ AX, DI
	LEAQ (DI)(R10*4), DI
	DECQ DX
	JNZ  yti5
	VZEROUPPER
	RET

// B8 is b8 on Z0–Z7 into Z8–Z15 (BT8CONSTS' constants; temps Z16–Z22).
#define B8 \
	VSUBPS  Z2, Z1, Z16; \
	VADDPS  Z2, Z1, Z17; \
	VSUBPS  Z4, Z3, Z18; \
	VADDPS  Z4, Z3, Z19; \
	VSUBPS  Z6, Z5, Z20; \
	VADDPS  Z6, Z5, Z21; \
	VMOVAPS Z0, Z8; \
	VMULPS  Z27, Z18, Z22; \
	VADDPS  Z22, Z16, Z9; \
	VMULPS  Z28, Z20, Z22; \
	VADDPS  Z22, Z9, Z9; \
	VSUBPS  Z7, Z9, Z9; \
	VMULPS  Z26, Z19, Z22; \
	VADDPS  Z22, Z17, Z10; \
	VMULPS  Z29, Z21, Z22; \
	VADDPS  Z22, Z10, Z10; \
	VMULPS  Z31, Z0, Z22; \
	VSUBPS  Z22, Z10, Z10; \
	VMULPS  Z31, Z7, Z11; \
	VMULPS  Z23, Z16, Z22; \
	VSUBPS  Z22, Z11, Z11; \
	VADDPS  Z20, Z18, Z22; \
	VMULPS  Z25, Z22, Z22; \
	VSUBPS  Z22, Z11, Z11; \
	VMULPS  Z31, Z0, Z12; \
	VMULPS  Z23, Z17, Z22; \
	VSUBPS  Z22, Z12, Z12; \
	VMULPS  Z24, Z19, Z22; \
	VSUBPS  Z22, Z12, Z12; \
	VMULPS  Z30, Z21, Z22; \
	VSUBPS  Z22, Z12, Z12; \
	VMULPS  Z28, Z18, Z22; \
	VADDPS  Z22, Z16, Z13; \
	VMULPS  Z27, Z20, Z22; \
	VADDPS  Z22, Z13, Z13; \
	VMULPS  Z31, Z7, Z22; \
	VSUBPS  Z22, Z13, Z13; \
	VADDPS  Z19, Z17, Z14; \
	VADDPS  Z21, Z14, Z14; \
	VSUBPS  Z0, Z14, Z14; \
	VMOVAPS Z7, Z15

// ADD8 adds Z8–Z15 into the eight positions at 0(AX), 64(AX), …, 448(AX).
#define ADD8 \
	VADDPS  (AX), Z8, Z8; \
	VMOVUPS Z8, (AX); \
	VADDPS  64(AX), Z9, Z9; \
	VMOVUPS Z9, 64(AX); \
	VADDPS  128(AX), Z10, Z10; \
	VMOVUPS Z10, 128(AX); \
	VADDPS  192(AX), Z11, Z11; \
	VMOVUPS Z11, 192(AX); \
	VADDPS  256(AX), Z12, Z12; \
	VMOVUPS Z12, 256(AX); \
	VADDPS  320(AX), Z13, Z13; \
	VMOVUPS Z13, 320(AX); \
	VADDPS  384(AX), Z14, Z14; \
	VMOVUPS Z14, 384(AX); \
	VADDPS  448(AX), Z15, Z15; \
	VMOVUPS Z15, 448(AX)

// func Dx45(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, scratch *float32)
//
// Dx45 adds B dV Bᵀ of th×tw tiles into xbuf (tile (ti, tj)'s 8×8 field
// at xbuf + 4ti·xrow + 4tj·64), in winoInputGrad4's order: the rows of
// tiles in order, each row's tiles from last to first.
TEXT ·Dx45(SB), NOSPLIT, $0-64
	MOVQ xs+8(FP), AX
	SHLQ $3, AX
	STRIDES8(AX, xs+8(FP))
	BT8CONSTS
	MOVQ scratch+56(FP), BX
	MOVQ tw+32(FP), AX
	DECQ AX
	MOVQ AX, CX
	IMULQ ldv+16(FP), AX
	MOVQ dvt+0(FP), SI
	ADDQ AX, SI          // the first row's last tile
	MOVQ xbuf+40(FP), DI
	SHLQ $8, CX
	ADDQ CX, DI          // its receptive field
	MOVQ th+24(FP), DX

xti5:
	MOVQ tw+32(FP), CX

xtj5:
	XICOL0
	LOADXI
	B8
	SCRCOL(0)
	XICOL1
	LOADXI
	B8
	SCRCOL(64)
	XICOL2
	LOADXI
	B8
	SCRCOL(128)
	XICOL3
	LOADXI
	B8
	SCRCOL(192)
	XICOL4
	LOADXI
	B8
	SCRCOL(256)
	XICOL5
	LOADXI
	B8
	SCRCOL(320)
	XICOL6
	LOADXI
	B8
	SCRCOL(384)
	XICOL7
	LOADXI
	B8
	SCRCOL(448)
	MOVQ DI, AX
	SCRROW(0)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(512)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(1024)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(1536)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(2048)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(2560)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(3072)
	B8
	ADD8
	ADDQ xrow+48(FP), AX
	SCRROW(3584)
	B8
	ADD8
	SUBQ $256, DI
	SUBQ ldv+16(FP), SI
	DECQ CX
	JNZ  xtj5
	// SI is a tile before the row's first: on to the next row's last; DI
	// back to the next row's last field.
	MOVQ tw+32(FP), AX
	SHLQ $1, AX
	IMULQ ldv+16(FP), AX
	ADDQ AX, SI
	MOVQ tw+32(FP), AX
	SHLQ $8, AX
	ADDQ AX, DI
	MOVQ xrow+48(FP), AX
	SHLQ $2, AX
	ADDQ AX, DI
	DECQ DX
	JNZ  xti5
	VZEROUPPER
	RET

// func CopyRuns(dst, src *float32, sstride uintptr, runs, w int)
//
// CopyRuns copies runs runs of w floats, sstride bytes apart from src, one
// after another to dst: im2col's rows without padding.
TEXT ·CopyRuns(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ sstride+16(FP), R8
	MOVQ runs+24(FP), R9
	MOVQ w+32(FP), R10
	TESTQ R9, R9
	JLE  crdone
	TESTQ R10, R10
	JLE  crdone
	// K1: the lanes of a run's last, partial step (all 16 if none).
	MOVQ R10, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	TESTQ CX, CX
	JNE  crmask
	MOVL $0xffff, AX
crmask:
	KMOVW AX, K1
	// R11: the run's whole steps of 16 (the last one, full or partial, apart).
	LEAQ -1(R10), R11
	SHRQ $4, R11

crrun:
	MOVQ SI, AX
	MOVQ R11, CX
	TESTQ CX, CX
	JEQ  crlast
crstep:
	VMOVUPS (AX), Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, AX
	ADDQ $64, DI
	DECQ CX
	JNZ  crstep
crlast:
	VMOVUPS.Z (AX), K1, Z0
	VMOVUPS Z0, K1, (DI)
	// DI moves on by the partial step's floats: w − 16·R11.
	MOVQ R11, CX
	SHLQ $4, CX
	NEGQ CX
	ADDQ R10, CX
	LEAQ (DI)(CX*4), DI
	ADDQ R8, SI
	DECQ R9
	JNZ  crrun

crdone:
	VZEROUPPER
	RET

// func AddRuns(dst *float32, dstride uintptr, src *float32, runs, w int)
//
// AddRuns adds runs runs of w floats, one after another from src, into
// dst's runs dstride bytes apart: col2im's rows without padding, one
// addition per element.
TEXT ·AddRuns(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dstride+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ runs+24(FP), R9
	MOVQ w+32(FP), R10
	TESTQ R9, R9
	JLE  ardone
	TESTQ R10, R10
	JLE  ardone
	MOVQ R10, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	TESTQ CX, CX
	JNE  armask
	MOVL $0xffff, AX
armask:
	KMOVW AX, K1
	LEAQ -1(R10), R11
	SHRQ $4, R11

arrun:
	MOVQ DI, AX
	MOVQ R11, CX
	TESTQ CX, CX
	JEQ  arlast
arstep:
	VMOVUPS (SI), Z0
	VADDPS  (AX), Z0, Z0
	VMOVUPS Z0, (AX)
	ADDQ $64, AX
	ADDQ $64, SI
	DECQ CX
	JNZ  arstep
arlast:
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (AX), K1, Z1
	VADDPS    Z0, Z1, Z1
	VMOVUPS   Z1, K1, (AX)
	MOVQ R11, CX
	SHLQ $4, CX
	NEGQ CX
	ADDQ R10, CX
	LEAQ (SI)(CX*4), SI
	ADDQ R8, DI
	DECQ R9
	JNZ  arrun

ardone:
	VZEROUPPER
	RET

// func Col2imRows(dx *float32, h, w int, col *float32, ldcol uintptr, k, ho, wo int)
//
// Col2imRows writes one channel's plane of dx (h×w, w ≤ 16) from its k²
// rows of a column matrix (col: row (u, v) at col + (u·k+v)·ldcol, output
// row i of it at + 4·i·wo) of a stride-1 convolution without padding:
// each row y of dx is summed in a register, the contributions in the order
// of (u, v), each a masked add of its run shifted to lanes v…v+wo−1, so
// that every entry sees col2im's additions in col2im's order from +0.
TEXT ·Col2imRows(SB), NOSPLIT, $0-64
	MOVQ dx+0(FP), DI
	MOVQ col+24(FP), SI
	MOVQ ldcol+32(FP), R8
	MOVQ k+40(FP), R9
	MOVQ wo+56(FP), R10
	// R11: the mask of a run at lane 0, (1 << wo) − 1; K2: the row's w lanes.
	MOVQ R10, CX
	MOVL $1, R11
	SHLL CX, R11
	DECL R11
	MOVQ w+16(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K2
	XORQ DX, DX              // y

c2y:
	VPXORD Z0, Z0, Z0
	XORQ BX, BX              // u

c2u:
	// i = y − u, within [0, ho)?
	MOVQ DX, AX
	SUBQ BX, AX
	JL   c2unext
	CMPQ AX, ho+48(FP)
	JGE  c2unext
	// R12: row (u, 0) of col at output row i: col + u·k·ldcol + 4·i·wo.
	IMULQ R10, AX
	SHLQ $2, AX
	MOVQ BX, R12
	IMULQ R9, R12
	IMULQ R8, R12
	ADDQ SI, R12
	ADDQ AX, R12
	XORQ R13, R13            // v

c2v:
	// K1: lanes v…v+wo−1; the run loaded from 4v bytes before its start.
	MOVQ R13, CX
	MOVL R11, AX
	SHLL CX, AX
	KMOVW AX, K1
	MOVQ R13, R14
	SHLQ $2, R14
	MOVQ R12, R15
	SUBQ R14, R15
	VMOVUPS.Z (R15), K1, Z1
	VADDPS    Z1, Z0, K1, Z0
	ADDQ R8, R12
	INCQ R13
	CMPQ R13, R9
	JLT  c2v

c2unext:
	INCQ BX
	CMPQ BX, R9
	JLT  c2u
	VMOVUPS Z0, K2, (DI)
	MOVQ w+16(FP), AX
	LEAQ (DI)(AX*4), DI
	INCQ DX
	CMPQ DX, h+8(FP)
	JLT  c2y
	VZEROUPPER
	RET
