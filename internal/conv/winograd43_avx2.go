//go:build goexperiment.simd && amd64

package conv

import (
	"simd/archsimd"

	"github.com/flsweep/flsweep/internal/mem"
)

// AVX2 versions of F(4×4, 3×3)'s output and output-gradient transforms
// (winograd43.go), 8 tiles at a time with the portable expressions in
// their order, so the same bits; each in passes over pairs of rows that
// share their intermediate sums, as F(2×2, 5×5)'s (winograd5_avx2.go).

func init() {
	if archsimd.X86.AVX2() {
		wino43Fns32 = wino43Fns[float32]{out: wino43OutAVX2, dy: wino43DyAVX2, w: wino43WeightsAVX2, wg: wino43WeightsGradAVX2, split4: phaseSplitAVX2, merge4: phaseMergeAVX2,
			stagePlane: wino4StageAVX2, unstagePlane: wino4UnstageAVX2, tilesShort: wino4TilesAVX2}
	}
}

// at02 and at13 are rows 0 and 2, 1 and 3 of at4.
func at02(m0, m1, m2, m3, m4 f8) (f8, f8) {
	s, s2 := m1.Add(m2), m3.Add(m4)
	return m0.Add(s).Add(s2), s.Add(bc8(4).Mul(s2))
}

func at13(m1, m2, m3, m4, m5 f8) (f8, f8) {
	d, d2 := m1.Sub(m2), m3.Sub(m4)
	return d.Add(bc8(2).Mul(d2)), d.Add(bc8(8).Mul(d2)).Add(m5)
}

// outRow4 stores at4(s0, …, s5) + bias at y[0], y[n], y[2n], y[3n].
func outRow4(y []float32, n int, bias, s0, s1, s2, s3, s4, s5 f8) {
	r0, r2 := at02(s0, s1, s2, s3, s4)
	r1, r3 := at13(s1, s2, s3, s4, s5)
	r0.Add(bias).StoreSlice(y)
	r1.Add(bias).StoreSlice(y[n:])
	r2.Add(bias).StoreSlice(y[2*n:])
	r3.Add(bias).StoreSlice(y[3*n:])
}

func wino43OutAVX2(y []float32, n int, m []float32, ms int, bias float32) {
	k := tail8(n)
	bv := bc8(bias)
	col := func(l, r, j int) f8 { return ld8(m, (6*r+l)*ms+j) }
	for j := 0; j < k; j += 8 {
		a0, c0 := at02(col(0, 0, j), col(0, 1, j), col(0, 2, j), col(0, 3, j), col(0, 4, j))
		a1, c1 := at02(col(1, 0, j), col(1, 1, j), col(1, 2, j), col(1, 3, j), col(1, 4, j))
		a2, c2 := at02(col(2, 0, j), col(2, 1, j), col(2, 2, j), col(2, 3, j), col(2, 4, j))
		a3, c3 := at02(col(3, 0, j), col(3, 1, j), col(3, 2, j), col(3, 3, j), col(3, 4, j))
		a4v, c4 := at02(col(4, 0, j), col(4, 1, j), col(4, 2, j), col(4, 3, j), col(4, 4, j))
		a5, c5 := at02(col(5, 0, j), col(5, 1, j), col(5, 2, j), col(5, 3, j), col(5, 4, j))
		outRow4(y[j:], n, bv, a0, a1, a2, a3, a4v, a5)
		outRow4(y[8*n+j:], n, bv, c0, c1, c2, c3, c4, c5)
		b0, d0 := at13(col(0, 1, j), col(0, 2, j), col(0, 3, j), col(0, 4, j), col(0, 5, j))
		b1, d1 := at13(col(1, 1, j), col(1, 2, j), col(1, 3, j), col(1, 4, j), col(1, 5, j))
		b2, d2 := at13(col(2, 1, j), col(2, 2, j), col(2, 3, j), col(2, 4, j), col(2, 5, j))
		b3, d3 := at13(col(3, 1, j), col(3, 2, j), col(3, 3, j), col(3, 4, j), col(3, 5, j))
		b4, d4 := at13(col(4, 1, j), col(4, 2, j), col(4, 3, j), col(4, 4, j), col(4, 5, j))
		b5, d5 := at13(col(5, 1, j), col(5, 2, j), col(5, 3, j), col(5, 4, j), col(5, 5, j))
		outRow4(y[4*n+j:], n, bv, b0, b1, b2, b3, b4, b5)
		outRow4(y[12*n+j:], n, bv, d0, d1, d2, d3, d4, d5)
	}
	archsimd.ClearAVXUpperBits()
	wino43OutFrom(y, n, m, ms, bias, k)
}

// a12 and a34 are rows 1 and 2, 3 and 4 of a4 (rows 0 and 5 are y0 and
// y3).

func a12(y0, y1, y2, y3 f8) (f8, f8) {
	e, o := y0.Add(y2), y1.Add(y3)
	return e.Add(o), e.Sub(o)
}

func a34(y0, y1, y2, y3 f8) (f8, f8) {
	e4, o4 := y0.Add(bc8(4).Mul(y2)), bc8(2).Mul(y1).Add(bc8(8).Mul(y3))
	return e4.Add(o4), e4.Sub(o4)
}

// aRow6 stores a4(c0, c1, c2, c3) at dm[0], dm[ms], …, dm[5·ms].
func aRow6(dm []float32, ms int, c0, c1, c2, c3 f8) {
	c0.StoreSlice(dm)
	r1, r2 := a12(c0, c1, c2, c3)
	r1.StoreSlice(dm[ms:])
	r2.StoreSlice(dm[2*ms:])
	r3, r4 := a34(c0, c1, c2, c3)
	r3.StoreSlice(dm[3*ms:])
	r4.StoreSlice(dm[4*ms:])
	c3.StoreSlice(dm[5*ms:])
}

func wino43DyAVX2(dm []float32, ms, n int, d []float32) {
	k := tail8(n)
	for j := 0; j < k; j += 8 {
		// Column b of dY: rows d[b], d[4+b], d[8+b], d[12+b] (n apart).
		p := func(a, b int) f8 { return ld8(d, (4*a+b)*n+j) }
		// Rows 0 and 5 of A dY: dY's rows 0 and 3.
		aRow6(dm[j:], ms, p(0, 0), p(0, 1), p(0, 2), p(0, 3))
		aRow6(dm[30*ms+j:], ms, p(3, 0), p(3, 1), p(3, 2), p(3, 3))
		e0, f0 := a12(p(0, 0), p(1, 0), p(2, 0), p(3, 0))
		e1, f1 := a12(p(0, 1), p(1, 1), p(2, 1), p(3, 1))
		e2, f2 := a12(p(0, 2), p(1, 2), p(2, 2), p(3, 2))
		e3, f3 := a12(p(0, 3), p(1, 3), p(2, 3), p(3, 3))
		aRow6(dm[6*ms+j:], ms, e0, e1, e2, e3)
		aRow6(dm[12*ms+j:], ms, f0, f1, f2, f3)
		g0, h0 := a34(p(0, 0), p(1, 0), p(2, 0), p(3, 0))
		g1, h1 := a34(p(0, 1), p(1, 1), p(2, 1), p(3, 1))
		g2, h2 := a34(p(0, 2), p(1, 2), p(2, 2), p(3, 2))
		g3v, h3 := a34(p(0, 3), p(1, 3), p(2, 3), p(3, 3))
		aRow6(dm[18*ms+j:], ms, g0, g1, g2, g3v)
		aRow6(dm[24*ms+j:], ms, h0, h1, h2, h3)
	}
	archsimd.ClearAVXUpperBits()
	wino43DyFrom(dm, ms, n, d, k)
}

// g3v is g3 on vectors.
func g3v(g0, g1, g2 f8) (f8, f8, f8, f8, f8, f8) {
	c6, c24 := bc8(6), bc8(24)
	se := g0.Add(g2)
	te, to := g0.Add(bc8(4).Mul(g2)), bc8(2).Mul(g1)
	return g0.Div(bc8(4)), se.Add(g1).Div(c6), se.Sub(g1).Div(c6), te.Add(to).Div(c24), te.Sub(to).Div(c24), g2
}

// gRow8 stores g3v(t0, t1, t2) at u[0], u[oc], …, u[5·oc].
func gRow8(u []float32, oc int, t0, t1, t2 f8) {
	r0, r1, r2, r3, r4, r5 := g3v(t0, t1, t2)
	st6(u, oc, r0, r1, r2, r3, r4, r5)
}

// wino43WeightsAVX2 transforms 8 filters at a time from their taps laid
// out tap-major in tmp (tmp[j·oc + i] = w[9i + j]).
func wino43WeightsAVX2(w []float32, cout, cin int, u, tmp []float32) {
	oc := cout * cin
	k := tail8(oc)
	for i := range k {
		f := w[i*9:][:9]
		for j, x := range f {
			tmp[j*oc+i] = x
		}
	}
	tap := func(j, i int) f8 { return ld8(tmp, j*oc+i) }
	for i := 0; i < k; i += 8 {
		// G down the three columns v of the filter: t[k][v].
		a0, a1, a2, a3, a4v, a5 := g3v(tap(0, i), tap(3, i), tap(6, i))
		b0, b1, b2, b3, b4, b5 := g3v(tap(1, i), tap(4, i), tap(7, i))
		c0, c1, c2, c3, c4, c5 := g3v(tap(2, i), tap(5, i), tap(8, i))
		gRow8(u[i:], oc, a0, b0, c0)
		gRow8(u[6*oc+i:], oc, a1, b1, c1)
		gRow8(u[12*oc+i:], oc, a2, b2, c2)
		gRow8(u[18*oc+i:], oc, a3, b3, c3)
		gRow8(u[24*oc+i:], oc, a4v, b4, c4)
		gRow8(u[30*oc+i:], oc, a5, b5, c5)
	}
	archsimd.ClearAVXUpperBits()
	wino43WeightsFrom(w, cout, cin, u, k)
}

// gt3v is gt3 on vectors.
func gt3v(d0, d1, d2, d3, d4, d5 f8) (f8, f8, f8) {
	c6, c24 := bc8(6), bc8(24)
	p, q := d1.Add(d2).Div(c6), d1.Sub(d2).Div(c6)
	r, t := d3.Add(d4).Div(c24), d3.Sub(d4).Div(c24)
	return d0.Div(bc8(4)).Add(p).Add(r), q.Add(bc8(2).Mul(t)), p.Add(bc8(4).Mul(r)).Add(d5)
}

// wino43WeightsGradAVX2 transforms 8 filters' gradients at a time into
// tmp tap-major (tmp[j·oc + i] = dw[9i + j]), then lays them out.
func wino43WeightsGradAVX2(du []float32, cout, cin int, dw, tmp []float32) {
	oc := cout * cin
	k := tail8(oc)
	col := func(l, i int) (f8, f8, f8) {
		return gt3v(ld8(du, l*oc+i), ld8(du, (6+l)*oc+i), ld8(du, (12+l)*oc+i), ld8(du, (18+l)*oc+i), ld8(du, (24+l)*oc+i), ld8(du, (30+l)*oc+i))
	}
	for i := 0; i < k; i += 8 {
		// Gᵀ down the six columns l of dU: t[u][l].
		a0, b0, c0 := col(0, i)
		a1, b1, c1 := col(1, i)
		a2, b2, c2 := col(2, i)
		a3, b3, c3 := col(3, i)
		a4v, b4, c4 := col(4, i)
		a5, b5, c5 := col(5, i)
		// Row by row (not a range over an array of the rows: Go copies
		// such an array with legacy-SSE moves, internal/vector/avx512.go).
		gtRow := func(u int, m0, m1, m2, m3, m4, m5 f8) {
			g0, g1, g2 := gt3v(m0, m1, m2, m3, m4, m5)
			g0.StoreSlice(tmp[(3*u)*oc+i:])
			g1.StoreSlice(tmp[(3*u+1)*oc+i:])
			g2.StoreSlice(tmp[(3*u+2)*oc+i:])
		}
		gtRow(0, a0, a1, a2, a3, a4v, a5)
		gtRow(1, b0, b1, b2, b3, b4, b5)
		gtRow(2, c0, c1, c2, c3, c4, c5)
	}
	archsimd.ClearAVXUpperBits()
	for i := range k {
		f := dw[i*9:][:9]
		for j := range f {
			f[j] = tmp[j*oc+i]
		}
	}
	wino43WeightsGradFrom(du, cout, cin, dw, k)
}

// quads orders the lanes (0, 4, 1, 5, 2, 6, 3, 7), unquads back.
var (
	quads   = [8]uint32{0, 4, 1, 5, 2, 6, 3, 7}
	unquads = [8]uint32{0, 2, 4, 6, 1, 3, 5, 7}
)

// transpose4 transposes the 4×4 blocks that x0…x3 form in each 128-bit
// half: lane e of output j's half is lane j of input e's half.
func transpose4(x0, x1, x2, x3 f8) (f8, f8, f8, f8) {
	t0 := x0.SelectFromPairGrouped(0, 1, 4, 5, x1) // x0[0] x0[1] x1[0] x1[1]
	t1 := x0.SelectFromPairGrouped(2, 3, 6, 7, x1)
	t2 := x2.SelectFromPairGrouped(0, 1, 4, 5, x3)
	t3 := x2.SelectFromPairGrouped(2, 3, 6, 7, x3)
	return t0.SelectFromPairGrouped(0, 2, 4, 6, t2), t0.SelectFromPairGrouped(1, 3, 5, 7, t2),
		t1.SelectFromPairGrouped(0, 2, 4, 6, t3), t1.SelectFromPairGrouped(1, 3, 5, 7, t3)
}

// phaseSplitAVX2 is phaseSplit 32 floats at a time: in the 4×4 blocks of
// their halves, column p holds phase p (transpose4), which quads puts in
// order; then 16 floats in the low halves, and the rest in phaseSplit.
func phaseSplitAVX2(ph [4][]float32, src []float32) {
	i, n := 0, len(src)
	if n >= 16 {
		idx := archsimd.LoadUint32x8(&quads)
		for ; i+32 <= n; i += 32 {
			y0, y1, y2, y3 := transpose4(ld8(src, i), ld8(src, i+8), ld8(src, i+16), ld8(src, i+24))
			y0.Permute(idx).StoreSlice(ph[0][i/4:])
			y1.Permute(idx).StoreSlice(ph[1][i/4:])
			y2.Permute(idx).StoreSlice(ph[2][i/4:])
			y3.Permute(idx).StoreSlice(ph[3][i/4:])
		}
		if i+16 <= n {
			x0, x1 := ld8(src, i), ld8(src, i+8)
			y0, y1, y2, y3 := transpose4(x0, x1, x0, x1)
			y0.Permute(idx).GetLo().StoreSlice(ph[0][i/4:])
			y1.Permute(idx).GetLo().StoreSlice(ph[1][i/4:])
			y2.Permute(idx).GetLo().StoreSlice(ph[2][i/4:])
			y3.Permute(idx).GetLo().StoreSlice(ph[3][i/4:])
			i += 16
		}
		archsimd.ClearAVXUpperBits()
	}
	phaseSplit(phasesFrom(ph, i/4), src[i:])
}

// phasesFrom returns the phases from index j on.
func phasesFrom(ph [4][]float32, j int) [4][]float32 {
	return [4][]float32{ph[0][j:], ph[1][j:], ph[2][j:], ph[3][j:]}
}

// phaseMergeAVX2 is phaseMerge, phaseSplitAVX2 backwards.
func phaseMergeAVX2(dst []float32, ph [4][]float32) {
	i, n := 0, len(dst)
	if n >= 16 {
		idx := archsimd.LoadUint32x8(&unquads)
		for ; i+32 <= n; i += 32 {
			x0, x1, x2, x3 := transpose4(ld8(ph[0], i/4).Permute(idx), ld8(ph[1], i/4).Permute(idx),
				ld8(ph[2], i/4).Permute(idx), ld8(ph[3], i/4).Permute(idx))
			x0.StoreSlice(dst[i:])
			x1.StoreSlice(dst[i+8:])
			x2.StoreSlice(dst[i+16:])
			x3.StoreSlice(dst[i+24:])
		}
		if i+16 <= n {
			var z f8
			lo := func(p int) f8 { return z.SetLo(archsimd.LoadFloat32x4Slice(ph[p][i/4:])).Permute(idx) }
			x0, x1, _, _ := transpose4(lo(0), lo(1), lo(2), lo(3))
			x0.StoreSlice(dst[i:])
			x1.StoreSlice(dst[i+8:])
			i += 16
		}
		archsimd.ClearAVXUpperBits()
	}
	phaseMerge(dst[i:], phasesFrom(ph, i/4))
}

// wino4StageAVX2 is wino4Stage without the phases in memory, for padding
// up to 4 (more takes wino4Stage): each padded row (at most
// 32 floats, since short rows have at most 7 tiles) is loaded, zeros past
// the input row, into four vectors of its phases at j (lane j of phase q
// is column 4j+q) and four at j+1, and a tile row's α runs for that row
// are stores of those vectors. Padded row 4·ti+r serves tile row ti (r <
// 4) and, for r ≥ 4, tile row ti−1 (α = 8, or r < 6 for α = 6); each
// staging row is still written in increasing t.
func wino4StageAVX2(g Geom, ws *mem.Workspace[float32], plane, st []float32, ls, t0 int) {
	if g.P > 4 {
		wino4Stage(g, ws, plane, st, ls, t0)
		return
	}
	th, tw, a := g.th(), g.tw(), g.alpha()
	up, keep := padShift(g.P)
	idx := archsimd.LoadUint32x8(&quads)
	for y := range 4*th + a - 4 {
		var e0, e1, e2, e3, f0, f1, f2, f3 f8
		if iy := y - g.P; iy >= 0 && iy < g.H {
			// Padded column X is the row's X−p: its first vector is the
			// row's first floats moved up p lanes, zeros below.
			row := plane[iy*g.W:][:g.W]
			part := func(i int) f8 { return archsimd.LoadFloat32x8SlicePart(row[min(i-g.P, g.W):]) }
			first := part(g.P).Permute(up).AsInt32x8().And(keep).AsFloat32x8()
			e0, e1, e2, e3 = transpose4(first, part(8), part(16), part(24))
			f0, f1, f2, f3 = transpose4(part(4), part(12), part(20), part(28))
			e0, e1, e2, e3 = e0.Permute(idx), e1.Permute(idx), e2.Permute(idx), e3.Permute(idx)
			f0, f1, f2, f3 = f0.Permute(idx), f1.Permute(idx), f2.Permute(idx), f3.Permute(idx)
		}
		ti, r := y/4, y%4
		if ti >= 1 && r+4 < a {
			stageRuns(st[(r+4)*ls+t0+(ti-1)*tw:], a*ls, a, e0, e1, e2, e3, f0, f1, f2, f3)
		}
		if ti < th {
			stageRuns(st[r*ls+t0+ti*tw:], a*ls, a, e0, e1, e2, e3, f0, f1, f2, f3)
		}
	}
	archsimd.ClearAVXUpperBits()
}

// stageRuns stores the first α of a padded row's eight phase vectors at
// st[0], st[d], ….
func stageRuns(st []float32, d, a int, e0, e1, e2, e3, f0, f1, f2, f3 f8) {
	if a == 8 {
		st8(st, d, e0, e1, e2, e3, f0, f1, f2, f3)
		return
	}
	st6(st, d, e0, e1, e2, e3, f0, f1)
}

// wino4UnstageAVX2 is wino4Unstage with each padded row's phases in four
// vectors: the runs of its tile rows (ti−1's row r+4 first, then ti's row
// r, as phaseAdds takes them) add in q's order into phase q mod 4, the
// runs of q ≥ 4 loaded one float early so that they line up with lane
// j+1, and with −0 in the lanes outside the run (x + −0 is x for every x,
// −0 included), so each float gets phaseAdds' sums in their order: the
// same bits. The phases then go back into the row by (partial) stores.
func wino4UnstageAVX2(g Geom, ws *mem.Workspace[float32], cb []float32, L, t0 int, plane []float32) {
	if g.P > 4 {
		wino4Unstage(g, ws, cb, L, t0, plane)
		return
	}
	th, tw, a := g.th(), g.tw(), g.alpha()
	down := padShiftDown(g.P)
	m0, z0 := runMask(tw, 0)
	m1, z1 := runMask(tw, 1)
	idx := archsimd.LoadUint32x8(&unquads)
	for y := range 4*th + a - 4 {
		var e0, e1, e2, e3 f8
		ti, r := y/4, y%4
		if ti >= 1 && r+4 < a {
			e0, e1, e2, e3 = addRuns(e0, e1, e2, e3, cb, a*(r+4)*L+t0+(ti-1)*tw, L, a, m0, z0, m1, z1)
		}
		if ti < th {
			e0, e1, e2, e3 = addRuns(e0, e1, e2, e3, cb, a*r*L+t0+ti*tw, L, a, m0, z0, m1, z1)
		}
		iy := y - g.P
		if iy < 0 || iy >= g.H {
			continue
		}
		// Padded column X goes to the row's X−p: the first vector's lanes
		// from p on, moved down p lanes, then the others from 8−p on.
		row := plane[iy*g.W:][:g.W]
		x0, x1, x2, x3 := transpose4(e0.Permute(idx), e1.Permute(idx), e2.Permute(idx), e3.Permute(idx))
		x0.Permute(down).StoreSlicePart(row[:min(8-g.P, g.W)])
		x1.StoreSlicePart(row[min(8-g.P, g.W):])
		x2.StoreSlicePart(row[min(16-g.P, g.W):])
		x3.StoreSlicePart(row[min(24-g.P, g.W):])
	}
	archsimd.ClearAVXUpperBits()
}

// addRuns adds a tile row's α runs for one padded row, from cb[i] (runs
// q < 4, L apart) and cb[i+4·L−1] on (runs q ≥ 4, one float early), to
// its phases e0…e3 (runMask's masks for shifts 0 and 1).
func addRuns(e0, e1, e2, e3 f8, cb []float32, i, L, a int, m0, z0, m1, z1 archsimd.Int32x8) (f8, f8, f8, f8) {
	run := func(i int, m, z archsimd.Int32x8) f8 { return maskedRun(cb, i, m, z) }
	e0 = e0.Add(run(i, m0, z0))
	e1 = e1.Add(run(i+L, m0, z0))
	e2 = e2.Add(run(i+2*L, m0, z0))
	e3 = e3.Add(run(i+3*L, m0, z0))
	e0 = e0.Add(run(i+4*L-1, m1, z1))
	e1 = e1.Add(run(i+5*L-1, m1, z1))
	if a == 8 {
		e2 = e2.Add(run(i+6*L-1, m1, z1))
		e3 = e3.Add(run(i+7*L-1, m1, z1))
	}
	return e0, e1, e2, e3
}

// wino4TilesAVX2 is wino4TilesShort with a row of at most 28 floats (short
// rows of tiles) as four vectors: split loads the plane's row (zeros past
// its end, as wino4Tiles leaves them) and stores its four phases' first
// tw lanes; merge loads the four phase rows (8 floats each: the output
// buffer has 8 more) and stores the row's wo floats.
func wino4TilesAVX2(g Geom, plane, d []float32, L, t0 int, split bool) {
	wino4TilesVec(plane, d, L, t0, split, g.tw(), g.th(), g.Wo, g.Ho)
}

// wino4TilesVec is wino4TilesAVX2 on the geometry's numbers: g.th() and
// g.tw() copy g with legacy-SSE moves, which must not run after the
// first vector instruction (internal/vector/avx512.go), and where they were in the
// same function the compiler placed a vector zeroing before them.
//
//go:noinline
func wino4TilesVec(plane, d []float32, L, t0 int, split bool, tw, th, wo, ho int) {
	qi, ui := archsimd.LoadUint32x8(&quads), archsimd.LoadUint32x8(&unquads)
	for ti := range th {
		for a := range min(4, ho-4*ti) {
			row, o := plane[(4*ti+a)*wo:][:wo], d[4*a*L+t0+ti*tw:]
			if split {
				part := func(i int) f8 { return archsimd.LoadFloat32x8SlicePart(row[min(i, wo):]) }
				y0, y1, y2, y3 := transpose4(part(0), part(8), part(16), part(24))
				y0.Permute(qi).StoreSlicePart(o[:tw])
				y1.Permute(qi).StoreSlicePart(o[L:][:tw])
				y2.Permute(qi).StoreSlicePart(o[2*L:][:tw])
				y3.Permute(qi).StoreSlicePart(o[3*L:][:tw])
				continue
			}
			x0, x1, x2, x3 := transpose4(ld8(o, 0).Permute(ui), ld8(o, L).Permute(ui), ld8(o, 2*L).Permute(ui), ld8(o, 3*L).Permute(ui))
			x0.StoreSlicePart(row)
			x1.StoreSlicePart(row[min(8, wo):])
			x2.StoreSlicePart(row[min(16, wo):])
			x3.StoreSlicePart(row[min(24, wo):])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// padShift returns the lane indices that move a vector up p lanes (lane i
// from lane i−p) and the mask that keeps lanes p and up: the first
// vector of a row padded by p on the left.
func padShift(p int) (up archsimd.Uint32x8, keep archsimd.Int32x8) {
	var ui [8]uint32
	var ki [8]int32
	for i := range 8 {
		ui[i] = uint32((i - p + 8) % 8)
		if i >= p {
			ki[i] = -1
		}
	}
	return archsimd.LoadUint32x8(&ui), archsimd.LoadInt32x8(&ki)
}

// padShiftDown returns the lane indices that move a vector down p lanes
// (lane i from lane i+p).
func padShiftDown(p int) archsimd.Uint32x8 {
	var di [8]uint32
	for i := range 8 {
		di[i] = uint32((i + p) % 8)
	}
	return archsimd.LoadUint32x8(&di)
}
