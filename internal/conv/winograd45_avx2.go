//go:build goexperiment.simd && amd64

package conv

import "simd/archsimd"

// AVX2 versions of F(4×4, 5×5)'s transforms (winograd45.go), 8 tiles at a
// time and the last n mod 8 in the portable loops, each lane computing
// the portable expression in its order (no fused multiply-adds), so the
// bits are the same. A tile's 64 transformed values do not fit in the 16
// vector registers: the first (column) stage of each transform stores its
// vectors in a small buffer of floats (in L1), which the second (row)
// stage reads back. Arrays of vectors would live in memory as well, and
// Go 1.26 moves them less directly.

func init() {
	if archsimd.X86.AVX2() {
		wino45Alg32 = winoAlg[float32]{a: 8, in: wino45InAVX2, dx: wino45DxAVX2}
		wino45Fns32.out, wino45Fns32.dy = wino45OutAVX2, wino45DyAVX2
		wino45Fns32.w, wino45Fns32.wg = wino45WeightsAVX2, wino45WeightsGradAVX2
		wino45Fns32.split4, wino45Fns32.merge4 = phaseSplitAVX2, phaseMergeAVX2
		wino45Fns32.stagePlane, wino45Fns32.unstagePlane = wino4StageAVX2, wino4UnstageAVX2
		wino45Fns32.tilesShort = wino4TilesAVX2
	}
}

// bt8v is bt8 on vectors.
func bt8v(d0, d1, d2, d3, d4, d5, d6, d7 f8) (f8, f8, f8, f8, f8, f8, f8, f8) {
	c425, c125, c25 := bc8(4.25), bc8(1.25), bc8(2.5)
	a, b := d2.Add(d6).Sub(c425.Mul(d4)), d1.Add(d5).Sub(c425.Mul(d3))
	c := bc8(0.25).Mul(d2).Sub(c125.Mul(d4)).Add(d6)
	e := bc8(0.5).Mul(d1).Sub(c25.Mul(d3)).Add(bc8(2).Mul(d5))
	f := bc8(4).Mul(d2).Sub(bc8(5).Mul(d4)).Add(d6)
	h := bc8(2).Mul(d1).Sub(c25.Mul(d3)).Add(bc8(0.5).Mul(d5))
	c525 := bc8(5.25)
	return d0.Sub(d6).Add(c525.Mul(d4.Sub(d2))), a.Add(b), a.Sub(b), c.Add(e), c.Sub(e), f.Add(h), f.Sub(h),
		d7.Sub(d1).Add(c525.Mul(d3.Sub(d5)))
}

// b8v is b8 on vectors.
func b8v(v0, v1, v2, v3, v4, v5, v6, v7 f8) (f8, f8, f8, f8, f8, f8, f8, f8) {
	d1, s1 := v1.Sub(v2), v1.Add(v2)
	d2, s2 := v3.Sub(v4), v3.Add(v4)
	d3, s3 := v5.Sub(v6), v5.Add(v6)
	c05, c2, c4, c525, c425 := bc8(0.5), bc8(2), bc8(4), bc8(5.25), bc8(4.25)
	return v0,
		d1.Add(c05.Mul(d2)).Add(c2.Mul(d3)).Sub(v7),
		s1.Add(bc8(0.25).Mul(s2)).Add(c4.Mul(s3)).Sub(c525.Mul(v0)),
		c525.Mul(v7).Sub(c425.Mul(d1)).Sub(bc8(2.5).Mul(d2.Add(d3))),
		c525.Mul(v0).Sub(c425.Mul(s1)).Sub(bc8(1.25).Mul(s2)).Sub(bc8(5).Mul(s3)),
		d1.Add(c2.Mul(d2)).Add(c05.Mul(d3)).Sub(c525.Mul(v7)),
		s1.Add(s2).Add(s3).Sub(v0),
		v7
}

// at48v is at48 on vectors.
func at48v(m0, m1, m2, m3, m4, m5, m6, m7 f8) (f8, f8, f8, f8) {
	s1, d1 := m1.Add(m2), m1.Sub(m2)
	s2, d2 := m3.Add(m4), m3.Sub(m4)
	s3, d3 := m5.Add(m6), m5.Sub(m6)
	return m0.Add(s1).Add(s2).Add(s3), d1.Add(bc8(2).Mul(d2)).Add(bc8(0.5).Mul(d3)),
		s1.Add(bc8(4).Mul(s2)).Add(bc8(0.25).Mul(s3)), d1.Add(bc8(8).Mul(d2)).Add(bc8(0.125).Mul(d3)).Add(m7)
}

// a8v is a8 on vectors.
func a8v(y0, y1, y2, y3 f8) (f8, f8, f8, f8, f8, f8, f8, f8) {
	e1, o1 := y0.Add(y2), y1.Add(y3)
	e2, o2 := y0.Add(bc8(4).Mul(y2)), bc8(2).Mul(y1).Add(bc8(8).Mul(y3))
	e3, o3 := y0.Add(bc8(0.25).Mul(y2)), bc8(0.5).Mul(y1).Add(bc8(0.125).Mul(y3))
	return y0, e1.Add(o1), e1.Sub(o1), e2.Add(o2), e2.Sub(o2), e3.Add(o3), e3.Sub(o3), y3
}

// lds8 loads t[0], t[d], …, t[7·d].
func lds8(t []float32, d int) (f8, f8, f8, f8, f8, f8, f8, f8) {
	return ld8(t, 0), ld8(t, d), ld8(t, 2*d), ld8(t, 3*d), ld8(t, 4*d), ld8(t, 5*d), ld8(t, 6*d), ld8(t, 7*d)
}

func wino45InAVX2(v []float32, vs, n int, h [8][]float32, s int) {
	k := tail8(n)
	var buf [64 * 8]float32 // c[q][k] at (8k+q)·8
	t := buf[:]
	for j := 0; j < k; j += 8 {
		for q := range 8 {
			x := h[q][j:]
			r0, r1, r2, r3, r4, r5, r6, r7 := bt8v(lds8(x, s))
			st8(t[8*q:], 64, r0, r1, r2, r3, r4, r5, r6, r7)
		}
		for r := range 8 {
			x0, x1, x2, x3, x4, x5, x6, x7 := bt8v(lds8(t[64*r:], 8))
			st8(v[8*r*vs+j:], vs, x0, x1, x2, x3, x4, x5, x6, x7)
		}
	}
	archsimd.ClearAVXUpperBits()
	wino45InFrom(v, vs, n, h, s, k)
}

func wino45OutAVX2(y []float32, n int, m []float32, ms int, bias float32) {
	k := tail8(n)
	bv := bc8(bias)
	var buf [32 * 8]float32 // s[a][l] at (8a+l)·8
	t := buf[:]
	for j := 0; j < k; j += 8 {
		for l := range 8 {
			r0, r1, r2, r3 := at48v(lds8(m[l*ms+j:], 8*ms))
			r0.StoreSlice(t[8*l:])
			r1.StoreSlice(t[64+8*l:])
			r2.StoreSlice(t[128+8*l:])
			r3.StoreSlice(t[192+8*l:])
		}
		for a := range 4 {
			r0, r1, r2, r3 := at48v(lds8(t[64*a:], 8))
			o := y[4*a*n+j:]
			r0.Add(bv).StoreSlice(o)
			r1.Add(bv).StoreSlice(o[n:])
			r2.Add(bv).StoreSlice(o[2*n:])
			r3.Add(bv).StoreSlice(o[3*n:])
		}
	}
	archsimd.ClearAVXUpperBits()
	wino45OutFrom(y, n, m, ms, bias, k)
}

func wino45DyAVX2(dm []float32, ms, n int, d []float32) {
	k := tail8(n)
	var buf [32 * 8]float32 // c[b][k] at (4k+b)·8
	t := buf[:]
	for j := 0; j < k; j += 8 {
		for b := range 4 {
			x := d[b*n+j:]
			r0, r1, r2, r3, r4, r5, r6, r7 := a8v(ld8(x, 0), ld8(x, 4*n), ld8(x, 8*n), ld8(x, 12*n))
			st8(t[8*b:], 32, r0, r1, r2, r3, r4, r5, r6, r7)
		}
		for r := range 8 {
			x := t[32*r:]
			x0, x1, x2, x3, x4, x5, x6, x7 := a8v(ld8(x, 0), ld8(x, 8), ld8(x, 16), ld8(x, 24))
			st8(dm[8*r*ms+j:], ms, x0, x1, x2, x3, x4, x5, x6, x7)
		}
	}
	archsimd.ClearAVXUpperBits()
	wino45DyFrom(dm, ms, n, d, k)
}

func wino45DxAVX2(c []float32, n int, dv []float32, vs int) {
	k := tail8(n)
	var buf [64 * 8]float32 // r[a][l] at (8a+l)·8
	t := buf[:]
	for j := 0; j < k; j += 8 {
		for l := range 8 {
			r0, r1, r2, r3, r4, r5, r6, r7 := b8v(lds8(dv[l*vs+j:], 8*vs))
			st8(t[8*l:], 64, r0, r1, r2, r3, r4, r5, r6, r7)
		}
		for a := range 8 {
			x0, x1, x2, x3, x4, x5, x6, x7 := b8v(lds8(t[64*a:], 8))
			st8(c[8*a*n+j:], n, x0, x1, x2, x3, x4, x5, x6, x7)
		}
	}
	archsimd.ClearAVXUpperBits()
	wino45DxFrom(c, n, dv, vs, k)
}

// g8v is g8 on vectors.
func g8v(g0, g1, g2, g3, g4 f8) (f8, f8, f8, f8, f8, f8, f8, f8) {
	se, so := g0.Add(g2).Add(g4), g1.Add(g3)
	te, to := g0.Add(bc8(4).Mul(g2)).Add(bc8(16).Mul(g4)), bc8(2).Mul(g1).Add(bc8(8).Mul(g3))
	pe, po := bc8(32).Mul(g0).Add(bc8(8).Mul(g2)).Add(bc8(2).Mul(g4)), bc8(16).Mul(g1).Add(bc8(4).Mul(g3))
	c9, c90, c45 := bc8(-4.5), bc8(90), bc8(45)
	return g0, se.Add(so).Div(c9), se.Sub(so).Div(c9), te.Add(to).Div(c90), te.Sub(to).Div(c90),
		pe.Add(po).Div(c45), pe.Sub(po).Div(c45), g4
}

// gt8v is gt8 on vectors.
func gt8v(d0, d1, d2, d3, d4, d5, d6, d7 f8) (f8, f8, f8, f8, f8) {
	c9, c90, c45 := bc8(-4.5), bc8(90), bc8(45)
	p, q := d1.Add(d2).Div(c9), d1.Sub(d2).Div(c9)
	r, t := d3.Add(d4).Div(c90), d3.Sub(d4).Div(c90)
	w, z := d5.Add(d6).Div(c45), d5.Sub(d6).Div(c45)
	c2, c4, c8, c16 := bc8(2), bc8(4), bc8(8), bc8(16)
	return d0.Add(p).Add(r).Add(bc8(32).Mul(w)), q.Add(c2.Mul(t)).Add(c16.Mul(z)), p.Add(c4.Mul(r)).Add(c8.Mul(w)),
		q.Add(c8.Mul(t)).Add(c4.Mul(z)), p.Add(c16.Mul(r)).Add(c2.Mul(w)).Add(d7)
}

// wino45WeightsAVX2 is wino45Weights for whole blocks of wBlock filters, 8
// at a time: a block's taps go tap-major into tb (tb[j][b] = w[25(i0+b) +
// j]), G down the filters' columns into mid, G along its rows into the
// block's 64 runs, which are copied out as wino45Weights copies them. The
// last cout·cin mod wBlock filters take wino45WeightsFrom.
func wino45WeightsAVX2(w []float32, cout, cin int, u, _ []float32) {
	oc := cout * cin
	k := oc &^ (wBlock - 1)
	var tb [25][wBlock]float32
	var blk [64][wBlock]float32
	var mid [40 * 8]float32 // t[k][v] at (5k+v)·8
	t := mid[:]
	for i0 := 0; i0 < k; i0 += wBlock {
		for b := range wBlock {
			for j, x := range w[(i0+b)*25:][:25] {
				tb[j][b] = x
			}
		}
		for b := 0; b < wBlock; b += 8 {
			tap := func(j int) f8 { return ld8(tb[j][:], b) }
			for v := range 5 {
				r0, r1, r2, r3, r4, r5, r6, r7 := g8v(tap(v), tap(5+v), tap(10+v), tap(15+v), tap(20+v))
				st8(t[8*v:], 40, r0, r1, r2, r3, r4, r5, r6, r7)
			}
			for kk := range 8 {
				x := t[40*kk:]
				r0, r1, r2, r3, r4, r5, r6, r7 := g8v(ld8(x, 0), ld8(x, 8), ld8(x, 16), ld8(x, 24), ld8(x, 32))
				r0.StoreSlice(blk[8*kk][b:])
				r1.StoreSlice(blk[8*kk+1][b:])
				r2.StoreSlice(blk[8*kk+2][b:])
				r3.StoreSlice(blk[8*kk+3][b:])
				r4.StoreSlice(blk[8*kk+4][b:])
				r5.StoreSlice(blk[8*kk+5][b:])
				r6.StoreSlice(blk[8*kk+6][b:])
				r7.StoreSlice(blk[8*kk+7][b:])
			}
		}
		// The block's copies out and the next block's gathering are
		// scalar and memmove code: legacy SSE (internal/vector/avx512.go).
		archsimd.ClearAVXUpperBits()
		for x := range blk {
			copy(u[x*oc+i0:][:wBlock], blk[x][:])
		}
	}
	wino45WeightsFrom(w, cout, cin, u, k)
}

// wino45WeightsGradAVX2 is wino45WeightsGrad for whole blocks of wBlock
// filters, 8 at a time, wino45WeightsAVX2 backwards.
func wino45WeightsGradAVX2(du []float32, cout, cin int, dw, _ []float32) {
	oc := cout * cin
	k := oc &^ (wBlock - 1)
	var tb [25][wBlock]float32
	var blk [64][wBlock]float32
	var mid [40 * 8]float32 // t[u][l] at (8u+l)·8
	t := mid[:]
	for i0 := 0; i0 < k; i0 += wBlock {
		for x := range blk {
			copy(blk[x][:], du[x*oc+i0:][:wBlock])
		}
		for b := 0; b < wBlock; b += 8 {
			for l := range 8 {
				row := func(k int) f8 { return ld8(blk[8*k+l][:], b) }
				c0, c1, c2, c3, c4 := gt8v(row(0), row(1), row(2), row(3), row(4), row(5), row(6), row(7))
				c0.StoreSlice(t[8*l:])
				c1.StoreSlice(t[64+8*l:])
				c2.StoreSlice(t[128+8*l:])
				c3.StoreSlice(t[192+8*l:])
				c4.StoreSlice(t[256+8*l:])
			}
			for uu := range 5 {
				r0, r1, r2, r3, r4 := gt8v(lds8(t[64*uu:], 8))
				r0.StoreSlice(tb[5*uu][b:])
				r1.StoreSlice(tb[5*uu+1][b:])
				r2.StoreSlice(tb[5*uu+2][b:])
				r3.StoreSlice(tb[5*uu+3][b:])
				r4.StoreSlice(tb[5*uu+4][b:])
			}
		}
		archsimd.ClearAVXUpperBits() // as in wino45WeightsAVX2
		for b := range wBlock {
			g := dw[(i0+b)*25:][:25]
			for j := range g {
				g[j] = tb[j][b]
			}
		}
	}
	wino45WeightsGradFrom(du, cout, cin, dw, k)
}
