// Package packed is the trainer's float32 matrix product on CPUs with
// AVX-512 or AVX2, in both of its builds: register-blocked kernels in Go
// assembly (kernel_amd64.s, kernel_avx2_amd64.s) and the blocking around
// them.
//
// The main kernel multiplies a panel of mr rows of op(A) by a panel of nr
// columns of op(B) into an mr×nr block of C held in registers (14×32 with
// AVX-512, 6×16 with AVX2), laid out as BLIS and OpenBLAS lay out theirs:
// op(A) is copied in blocks of MC rows and KC columns into panels, and a B
// panel (KC·nr floats, 32 or 16 KB) stays in L1 while the kernel sweeps the
// A block (at most MC·KC floats, 336 KB) from L2. B stored k×n is read in
// place, one row of nr floats per step (with AVX2 only when C has fewer
// than packMinM rows); Bᵀ and a last, partial panel are packed. A stored
// m×k is read in place too when alpha is 1 and C has fewer than NC columns
// (kernA), all but a last, partial panel; with AVX-512 such a panel of at
// most 8 rows runs through an 8-row kernel (kernEdge), straight into C
// when it has exactly 8. C = A·Bᵀ with A and B both read along their rows
// (the linear layers' forward pass in training, the convolutions' weight
// gradients) goes to a dot-product kernel that needs no packing where C is
// small (fewer than transMinM rows or transMinN columns); larger ones pack
// Bᵀ with 8×8 AVX2 transposes and run the main kernel.
//
// Sums run along k in a fixed order (within a block of KC or DK, then block
// after block into C) that does not depend on the kernels' register
// blocking, so results depend on the shapes and values only: never on
// timing, and not on whether the CPU has AVX-512 or AVX2. They differ in
// rounding from gonum's and OpenBLAS's products.
//
// It lives in its own package because a package using cgo (the trainer's
// OpenBLAS build) cannot hold Go assembly.
package packed

const (
	MR = 14   // most rows of C a kernel call computes (AVX-512)
	NR = 32   // most columns of C a kernel call computes (AVX-512: two 16-lane vectors)
	KC = 256  // depth of a packed block
	MC = 336  // rows of op(A) packed at once (24 panels of 14, 56 of 6)
	NC = 1024 // columns of op(B) packed at once (32 panels of 32, 64 of 16)
)

// kernels is one instruction set's pair of kernels and their blocks: kern
// computes an mr×nr block of C from packed panels, dot a dm×dn block of
// A·Bᵀ (tail: the lanes of a last, partial step of 16).
type kernels struct {
	name           string
	mr, nr, dm, dn int
	kern           func(k int, a, b, c *float32, ldb, ldc int, add bool)
	// kernA, if not nil, is kern with A's panel read in place (lda floats
	// between its rows) instead of packed, for op(A) = A and alpha 1, where
	// packing would only copy, and n < NC, where few B panels share a
	// packed A block. The trainer's evaluation forward pass multiplies its
	// whole input batch by the transposed weights (n = 200 for the MLP);
	// packing that input took 6% of the demo's CPU time (2.4 of 37 s),
	// 1.2% after. The convolutions' forward products (n ≥ 1,024) ran
	// about 2% slower with A in place (ResNet-18, BenchmarkTrainResNet18).
	kernA func(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)
	// kernAT, if not nil, is kern with a transposed A's panel read in
	// place: for op(A) = Aᵀ and alpha 1 a panel's step is mr contiguous
	// floats, as packed, only lda apart instead of mr. The channel-lane
	// Winograd weight gradients (dM_ξᵀ)ᵀ·V_ξᵀ packed their 64-row A
	// transposed: a third of a 64×64×256 product's time (package conv,
	// winograd_cl.go). Used where lda is not a multiple of 32 floats: rows
	// a power of two apart fold a panel's steps into a few L1 sets (a
	// first kern14x32t, on ResNet-18's tile-lane products, ran 0.97×).
	kernAT func(k int, a *float32, lda int, b, c *float32, ldb, ldc int, add bool)
	// kernEdge, if not nil, is kern for the top edgeRows rows of a panel
	// only, for an edge panel of at most edgeRows rows, whose other rows
	// kern would compute from zeros and throw away (into the edge tile).
	kernEdge func(k int, a, b, c *float32, ldb, ldc int, add bool)
	edgeRows int
	dot      func(k16, tail int, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
	// packMinM is the fewest rows of C for which B stored k×n is packed
	// rather than read in place (0: always in place), when B's rows are a
	// multiple of 32 floats (128 bytes) apart. With AVX2, whose B panel
	// rows are 64 bytes, a panel read in place from rows a power of two
	// apart thrashes a few L1 sets, which packing avoids where many A
	// panels reuse the B panel (BenchmarkSgemm: 512³ at 68 GFLOP/s in
	// place, 82 packed); below packMinM rows packing does not pay (the
	// MLP's 50×784×200 at 76 in place, 60 packed). Rows at other distances
	// spread over the sets and stay in place: the CIFAR CNN's convolution
	// 64×1100×1600 ran at 52 packed, 73 in place.
	packMinM int
}

// Available reports whether the CPU runs the kernels (AVX-512, or AVX2
// with FMA); Kernels names the set Sgemm uses.
var Available = len(kernelSets) > 0

func Kernels() string {
	if !Available {
		return ""
	}
	return kernelSets[0].name
}

// Buffers holds a caller's packed blocks and edge tile between products, so
// that a product allocates nothing once they have grown. One goroutine at a
// time may use a Buffers.
type Buffers struct {
	a, b []float32
	tile [MR * NR]float32
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major A, B and C
// (rows lda, ldb, ldc apart), where op(X) is X, or Xᵀ when tX; op(A) is
// m×k, op(B) k×n. With beta 0, C is written, not read (NaNs there do not
// survive, as in BLAS); alpha scales A as it is packed (or each dot
// product). It needs the kernels: call it only when Available.
func Sgemm(buf *Buffers, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(kernelSets[0], buf, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemm is Sgemm with the kernels ks.
func sgemm(ks *kernels, buf *Buffers, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	switch {
	case alpha == 0 || k == 0:
		ScaleRows(beta, c, m, n, ldc)
	case tB && !tA && k >= dotMinK && (m < transMinM || n < transMinN):
		// The dot-product kernel adds into C, scaled (or cleared) first:
		// one pass over C against at least dotMinK steps per entry.
		ScaleRows(beta, c, m, n, ldc)
		dotProduct(ks, buf, m, n, k, alpha, a, lda, b, ldb, c, ldc)
	default:
		// With beta 0 the first block along k writes C instead of adding.
		if beta != 0 {
			ScaleRows(beta, c, m, n, ldc)
		}
		product(ks, buf, tA, tB, m, n, k, alpha, a, lda, b, ldb, c, ldc, beta == 0)
	}
}

// ReadAInPlace lets product read A's whole panels in place where the
// kernel set can (kernA); false packs every panel. The bits are the same
// either way; it is a switch for timing the two (make bench-ab).
var ReadAInPlace = true

// ReadATInPlace lets product read a transposed A's whole panels in place
// where the kernel set can (kernAT); false packs them. The bits are the
// same either way; it is a switch for timing the two (make bench-ab).
var ReadATInPlace = true

// EdgeKernel lets product compute edge panels of few rows by the kernel
// set's kernEdge where it has one; false computes them by kern. The bits
// are the same either way; it is a switch for timing the two (make
// bench-ab).
var EdgeKernel = true

// product adds alpha·op(A)·op(B) into C through packed blocks (set: writes
// it over C).
func product(ks *kernels, buf *Buffers, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, set bool) {
	MRk, NRk := ks.mr, ks.nr
	inPlace := !tB && (ks.packMinM == 0 || m < ks.packMinM || ldb%32 != 0)       // B's whole panels are read where they are
	inA := ReadAInPlace && ks.kernA != nil && !tA && alpha == 1 && n < NC        // so are A's whole panels
	inAT := ReadATInPlace && ks.kernAT != nil && tA && alpha == 1 && lda%32 != 0 // and a transposed A's
	edgeKern := EdgeKernel && ks.kernEdge != nil                                 // panels of few rows by kernEdge
	for jc := 0; jc < n; jc += NC {
		nc := min(NC, n-jc)
		for pc := 0; pc < k; pc += KC {
			kc := min(KC, k-pc)
			add := pc > 0 || !set
			bp := grow(&buf.b, panels(nc, NRk)*kc*NRk)
			if !inPlace {
				packB(bp, NRk, tB, b, ldb, pc, kc, jc, nc)
			} else if full := nc - nc%NRk; full < nc {
				// Whole panels of B stored k×n are read in place; only a last,
				// partial one is packed (with its zero columns).
				packB(bp[full*kc:], NRk, tB, b, ldb, pc, kc, jc+full, nc-full)
			}
			for ic := 0; ic < m; ic += MC {
				mc := min(MC, m-ic)
				ap := grow(&buf.a, panels(mc, MRk)*kc*MRk)
				full := mc - mc%MRk // rows in whole panels
				if !inA && !inAT {
					packA(ap, MRk, tA, alpha, a, lda, ic, mc, pc, kc)
				} else if full < mc {
					packA(ap[full*kc:], MRk, tA, alpha, a, lda, ic+full, mc-full, pc, kc)
				}
				for jr := 0; jr < nc; jr += NRk {
					nr := min(NRk, nc-jr)
					bpan, bld := bp[jr*kc:], NRk
					if inPlace && nr == NRk {
						bpan, bld = b[pc*ldb+jc+jr:], ldb
						_ = bpan[(kc-1)*ldb+NRk-1] // the kernel reads this far
					}
					for ir := 0; ir < mc; ir += MRk {
						mr := min(MRk, mc-ir)
						ci := (ic+ir)*ldc + jc + jr
						// The kernel computes rows rows; a block of that many
						// rows and whole columns is written into C, any other
						// goes through the tile.
						short := edgeKern && mr <= ks.edgeRows
						rows := MRk
						if short {
							rows = ks.edgeRows
						}
						edge := mr < rows || nr < NRk
						dst, dld, dadd := buf.tile[:MRk*NRk], NRk, false
						if !edge {
							dst, dld, dadd = c[ci:ci+(mr-1)*ldc+NRk], ldc, add
						}
						if inA && ir < full {
							ai := (ic+ir)*lda + pc
							_ = a[ai+(MRk-1)*lda+kc-1] // the kernel reads this far
							ks.kernA(kc, &a[ai], lda, &bpan[0], &dst[0], bld, dld, dadd)
						} else if inAT && ir < full {
							ai := pc*lda + ic + ir
							_ = a[ai+(kc-1)*lda+MRk-1] // the kernel reads this far
							ks.kernAT(kc, &a[ai], lda, &bpan[0], &dst[0], bld, dld, dadd)
						} else if short {
							ks.kernEdge(kc, &ap[ir*kc], &bpan[0], &dst[0], bld, dld, dadd)
						} else {
							ks.kern(kc, &ap[ir*kc], &bpan[0], &dst[0], bld, dld, dadd)
						}
						if edge {
							addTile(c[ci:], ldc, dst, NRk, mr, nr, add)
						}
					}
				}
			}
		}
	}
}

// addTile adds the first mr×nr entries of tile (rows ld apart) into C at c
// (rows ldc apart), or writes them there when !add: an edge block's way
// into C.
func addTile(c []float32, ldc int, tile []float32, ld, mr, nr int, add bool) {
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		if !add {
			copy(row, tile[i*ld:])
			continue
		}
		for j, v := range tile[i*ld : i*ld+nr] {
			row[j] += v
		}
	}
}

// dotMinK is the shortest k for which a C = A·Bᵀ (both operands read along
// their rows) smaller than transMinM×transMinN goes to the dot-product
// kernel instead of packing Bᵀ.
const dotMinK = 64

// transMinM and transMinN are the fewest rows and columns of C = A·Bᵀ
// (k ≥ dotMinK) for which Bᵀ is packed and the main kernel runs instead of
// the dot-product kernel: packing Bᵀ costs n·k moves in 8×8 transposes, and
// the main kernel, with its 6×16 block of C in registers, loads fewer
// operands per multiply-add than the dot kernel's 4×3. AVX2, one thread,
// GFLOP/s with the dot kernel against packed (m×n×k): 256×256×1024 (a
// Winograd weight gradient of ResNet-18) 56 against 86, 512×512×200 56
// against 91, 64×576×1024 57 against 78, 50×200×784 (the MLP's forward
// pass in training) 61 against 70, 48×100×500 66 against 69; below the
// bounds the dot kernel wins: 16×128×1600 61 against 58, 6×150×3136 44
// against 36, and 50×24×784 63 against 48, where the main kernel's
// 16-column panels are half empty.
const transMinM, transMinN = 48, 64

// TransMinM and TransMinN are transMinM and transMinN for callers that
// depend on which kernel a product of A·Bᵀ takes (the trainer's
// channel-lane Winograd keeps to shapes where its products and the
// tile-lane ones take the same).
const TransMinM, TransMinN = transMinM, transMinN

// The dot-product kernel computes dm×dn blocks of C (4×6 with AVX-512, 4×3
// with AVX2), DK deep at a time so that its rows (at most 20 KB) stay in
// L1.
const DK = 512

// dotProduct adds alpha·A·Bᵀ into C for A stored m×k and B stored n×k,
// without packing: each dm×dn block of C is dm·dn dot products of rows,
// summed in 16 lanes along k and then across the lanes. The last, partial
// block row and column read copies of their rows padded with zero rows and
// write through the edge tile.
func dotProduct(ks *kernels, buf *Buffers, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	DM, DN := ks.dm, ks.dn
	mf, nf := m-m%DM, n-n%DN // rows and columns in full blocks
	var ea, eb []float32     // the padded copies of the partial blocks' rows
	if mf < m {
		ea = padRows(&buf.a, a, lda, mf, m, DM, k)
	}
	if nf < n {
		eb = padRows(&buf.b, b, ldb, nf, n, DN, k)
	}
	for pc := 0; pc < k; pc += DK {
		kc := min(DK, k-pc)
		k16, tail := kc/16, kc%16
		for j := 0; j < n; j += DN {
			bs, bld := b[j*ldb+pc:], ldb // row j of B, from column pc
			if j >= nf {
				bs, bld = eb[pc:], k
			}
			_ = bs[(DN-1)*bld+kc-1] // the kernel reads this far
			for i := 0; i < m; i += DM {
				as, ald := a[i*lda+pc:], lda
				if i >= mf {
					as, ald = ea[pc:], k
				}
				_ = as[(DM-1)*ald+kc-1]
				if i < mf && j < nf {
					_ = c[(i+DM-1)*ldc+j+DN-1]
					ks.dot(k16, tail, alpha, &as[0], ald, &bs[0], bld, &c[i*ldc+j], ldc)
					continue
				}
				tile := buf.tile[:DM*DN]
				clear(tile)
				ks.dot(k16, tail, alpha, &as[0], ald, &bs[0], bld, &tile[0], DN)
				for r := range min(DM, m-i) {
					row := c[(i+r)*ldc+j:][:min(DN, n-j)]
					for q := range row {
						row[q] += tile[r*DN+q]
					}
				}
			}
		}
	}
}

// padRows copies rows r0…r1−1 (each k long, ld apart) of x into the first
// rows of a rows×k matrix in *dst whose other rows are zeros.
func padRows(dst *[]float32, x []float32, ld, r0, r1, rows, k int) []float32 {
	out := grow(dst, rows*k)
	for r := range rows {
		if r0+r < r1 {
			copy(out[r*k:(r+1)*k], x[(r0+r)*ld:][:k])
		} else {
			clear(out[r*k : (r+1)*k])
		}
	}
	return out
}

// panels is the number of panels of width w that cover d.
func panels(d, w int) int { return (d + w - 1) / w }

// ScaleRows multiplies the m×n matrix c (rows ldc apart) by beta; beta 0
// clears it, so NaNs in c do not survive, as BLAS promises.
func ScaleRows(beta float32, c []float32, m, n, ldc int) {
	if beta == 1 {
		return
	}
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packA copies alpha times rows i0…i0+mc−1, columns p0…p0+kc−1 of op(A) into
// dst as panels of w rows: panel r holds, for each column p, the w values
// of rows r·w… in order, rows past mc as zeros.
func packA(dst []float32, w int, tA bool, alpha float32, a []float32, lda, i0, mc, p0, kc int) {
	for ir := 0; ir < mc; ir += w {
		mr := min(w, mc-ir)
		pan := dst[ir*kc : (ir+w)*kc]
		if tA { // A is stored k×m: a column of op(A)'s panel is contiguous
			// Whole panels with alpha 1 are moves, element by element: an
			// array assignment ([6]float32, [14]float32) compiles to a
			// memmove call per step, as the arrays may overlap, and a
			// loop over the step to a bounds check per value. 24 panels of
			// 256 steps from rows 512 floats apart (a throwaway benchmark,
			// one run): AVX2's 6-row steps 18.9 µs as arrays, 9.7 element
			// by element; AVX-512's 14-row ones 45 in a loop, 23 by copy,
			// 16 element by element.
			if alpha == 1 && mr == 6 && w == 6 { // AVX2's
				for p := range kc {
					d, s := (*[6]float32)(pan[p*6:]), (*[6]float32)(a[(p0+p)*lda+i0+ir:])
					d[0], d[1], d[2], d[3], d[4], d[5] = s[0], s[1], s[2], s[3], s[4], s[5]
				}
				continue
			}
			if alpha == 1 && mr == MR && w == MR { // AVX-512's
				for p := range kc {
					d, s := (*[MR]float32)(pan[p*MR:]), (*[MR]float32)(a[(p0+p)*lda+i0+ir:])
					d[0], d[1], d[2], d[3], d[4], d[5], d[6] = s[0], s[1], s[2], s[3], s[4], s[5], s[6]
					d[7], d[8], d[9], d[10], d[11], d[12], d[13] = s[7], s[8], s[9], s[10], s[11], s[12], s[13]
				}
				continue
			}
			for p := range kc {
				src := a[(p0+p)*lda+i0+ir:][:mr]
				d := pan[p*w : (p+1)*w]
				for i, v := range src {
					d[i] = alpha * v
				}
				clear(d[mr:])
			}
			continue
		}
		// A is stored m×k: gather the panel's rows column by column, so
		// that the writes are contiguous.
		var rows [MR][]float32
		for i := range mr {
			rows[i] = a[(i0+ir+i)*lda+p0:][:kc]
		}
		for i := mr; i < w; i++ {
			rows[i] = zeros(kc)
		}
		switch w {
		case MR: // AVX-512's panels, as AVX2's below
			r0, r1, r2, r3, r4, r5, r6 := rows[0][:kc], rows[1][:kc], rows[2][:kc], rows[3][:kc], rows[4][:kc], rows[5][:kc], rows[6][:kc]
			r7, r8, r9, r10, r11, r12, r13 := rows[7][:kc], rows[8][:kc], rows[9][:kc], rows[10][:kc], rows[11][:kc], rows[12][:kc], rows[13][:kc]
			for p := range kc {
				d := (*[MR]float32)(pan[p*MR:])
				d[0], d[1], d[2], d[3] = alpha*r0[p], alpha*r1[p], alpha*r2[p], alpha*r3[p]
				d[4], d[5], d[6], d[7] = alpha*r4[p], alpha*r5[p], alpha*r6[p], alpha*r7[p]
				d[8], d[9], d[10], d[11] = alpha*r8[p], alpha*r9[p], alpha*r10[p], alpha*r11[p]
				d[12], d[13] = alpha*r12[p], alpha*r13[p]
			}
		case 6: // AVX2's panels, row by row without bounds checks
			r0, r1, r2, r3, r4, r5 := rows[0][:kc], rows[1][:kc], rows[2][:kc], rows[3][:kc], rows[4][:kc], rows[5][:kc]
			for p := range kc {
				d := (*[6]float32)(pan[p*6:])
				d[0], d[1], d[2] = alpha*r0[p], alpha*r1[p], alpha*r2[p]
				d[3], d[4], d[5] = alpha*r3[p], alpha*r4[p], alpha*r5[p]
			}
		default:
			panic("packed: no A panels of this height")
		}
	}
}

// packB copies rows p0…p0+kc−1, columns j0…j0+nc−1 of op(B) into dst as
// panels of w columns (a multiple of 8): panel r holds, for each row p, the
// w values of columns r·w… in order, columns past nc as zeros.
func packB(dst []float32, w int, tB bool, b []float32, ldb, p0, kc, j0, nc int) {
	for jr := 0; jr < nc; jr += w {
		nr := min(w, nc-jr)
		pan := dst[jr*kc : (jr+w)*kc]
		if !tB { // B is stored k×n: a row of the panel is contiguous
			for p := range kc {
				d := pan[p*w : (p+1)*w]
				copy(d, b[(p0+p)*ldb+j0+jr:][:nr])
				clear(d[nr:])
			}
			continue
		}
		// B is stored n×k: 8 of the panel's columns at a time, row by row,
		// so that each write fills 32 contiguous bytes. With AVX2, 8 whole
		// columns go through 8×8 blocks of shuffles (all but the last kc%8
		// rows); the rest are gathered one float at a time.
		for j := 0; j < w; j += 8 {
			p8 := 0
			if haveAVX2 && j+8 <= nr {
				p8 = kc - kc%8
				if p8 > 0 {
					_, _ = b[(j0+jr+j+7)*ldb+p0+p8-1], pan[(p8-1)*w+j+7]
					transposeStrip(&pan[j], w, &b[(j0+jr+j)*ldb+p0], ldb, p8/8)
				}
			}
			var cols [8][]float32
			for q := range cols {
				if jj := jr + j + q; jj < nc {
					cols[q] = b[(j0+jj)*ldb+p0:][:kc]
				} else {
					cols[q] = zeros(kc)
				}
			}
			for p := p8; p < kc; p++ {
				d := (*[8]float32)(pan[p*w+j:])
				d[0], d[1], d[2], d[3] = cols[0][p], cols[1][p], cols[2][p], cols[3][p]
				d[4], d[5], d[6], d[7] = cols[4][p], cols[5][p], cols[6][p], cols[7][p]
			}
		}
	}
}

// grow returns (*buf)[:n], reallocating when its capacity is short.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

// zeroRow is read, never written, by the packers for the rows and columns
// past a matrix's edge.
var zeroRow [KC]float32

func zeros(n int) []float32 { return zeroRow[:n] }
