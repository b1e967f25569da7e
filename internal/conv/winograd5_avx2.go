//go:build goexperiment.simd && amd64

package conv

import "simd/archsimd"

// AVX2 versions of F(2×2, 5×5)'s transforms (winograd5.go), 8 tiles at a
// time and the last n mod 8 in the portable loops, with each lane
// computing the portable expression in its order (no fused multiply-adds),
// so the bits are the same. A tile's 36 transformed values would not fit
// in the 16 vector registers, so each transform runs in three passes over
// pairs of rows of its first (column) stage that read the same inputs:
// rows 0 and 5, 1 and 2, 3 and 4 of Bᵀ; rows 0 and 5, 1 and 3, 2 and 4 of
// B. Each pass keeps its pair for the six columns (12 vectors) and then
// finishes those two rows.

func init() {
	if archsimd.X86.AVX2() {
		wino5Alg32 = winoAlg[float32]{a: 6, in: wino5InAVX2, out: wino5OutAVX2, dy: wino5DyAVX2, dx: wino5DxAVX2}
	}
}

func bc8(x float32) f8 { return archsimd.BroadcastFloat32x8(x) }

// bt05, bt12 and bt34 are rows 0 and 5, 1 and 2, 3 and 4 of bt6 down the
// six rows of x, s apart, at j.
func bt05(x []float32, s, j int) (f8, f8) {
	c4, c5 := bc8(4), bc8(5)
	d0, d1, d2, d3, d4, d5 := ld8(x, j), ld8(x, s+j), ld8(x, 2*s+j), ld8(x, 3*s+j), ld8(x, 4*s+j), ld8(x, 5*s+j)
	return c4.Mul(d0).Sub(c5.Mul(d2)).Add(d4), c4.Mul(d1).Sub(c5.Mul(d3)).Add(d5)
}

func bt12(x []float32, s, j int) (f8, f8) {
	c4 := bc8(4)
	d1, d2, d3, d4 := ld8(x, s+j), ld8(x, 2*s+j), ld8(x, 3*s+j), ld8(x, 4*s+j)
	return c4.Mul(d1.Add(d2)).Sub(d3.Add(d4)), c4.Mul(d2.Sub(d1)).Add(d3.Sub(d4))
}

func bt34(x []float32, s, j int) (f8, f8) {
	c2 := bc8(2)
	d1, d2, d3, d4 := ld8(x, s+j), ld8(x, 2*s+j), ld8(x, 3*s+j), ld8(x, 4*s+j)
	return c2.Mul(d3.Sub(d1)).Add(d4.Sub(d2)), c2.Mul(d1.Sub(d3)).Add(d4.Sub(d2))
}

// btRow8 stores bt6(d0, …, d5) at v[0], v[vs], …, v[5·vs].
func btRow8(v []float32, vs int, d0, d1, d2, d3, d4, d5 f8) {
	c2, c4, c5 := bc8(2), bc8(4), bc8(5)
	c4.Mul(d0).Sub(c5.Mul(d2)).Add(d4).StoreSlice(v)
	c4.Mul(d1.Add(d2)).Sub(d3.Add(d4)).StoreSlice(v[vs:])
	c4.Mul(d2.Sub(d1)).Add(d3.Sub(d4)).StoreSlice(v[2*vs:])
	c2.Mul(d3.Sub(d1)).Add(d4.Sub(d2)).StoreSlice(v[3*vs:])
	c2.Mul(d1.Sub(d3)).Add(d4.Sub(d2)).StoreSlice(v[4*vs:])
	c4.Mul(d1).Sub(c5.Mul(d3)).Add(d5).StoreSlice(v[5*vs:])
}

func wino5InAVX2(v []float32, vs, n int, h [8][]float32, s int) {
	k := tail8(n)
	h0, h1, h2, h3, h4, h5 := h[0], h[1], h[2], h[3], h[4], h[5]
	for j := 0; j < k; j += 8 {
		a0, f0 := bt05(h0, s, j)
		a1, f1 := bt05(h1, s, j)
		a2, f2 := bt05(h2, s, j)
		a3, f3 := bt05(h3, s, j)
		a4, f4 := bt05(h4, s, j)
		a5, f5 := bt05(h5, s, j)
		btRow8(v[j:], vs, a0, a1, a2, a3, a4, a5)
		btRow8(v[30*vs+j:], vs, f0, f1, f2, f3, f4, f5)
		b0, c0 := bt12(h0, s, j)
		b1, c1 := bt12(h1, s, j)
		b2, c2 := bt12(h2, s, j)
		b3, c3 := bt12(h3, s, j)
		b4, c4 := bt12(h4, s, j)
		b5, c5 := bt12(h5, s, j)
		btRow8(v[6*vs+j:], vs, b0, b1, b2, b3, b4, b5)
		btRow8(v[12*vs+j:], vs, c0, c1, c2, c3, c4, c5)
		d0, e0 := bt34(h0, s, j)
		d1, e1 := bt34(h1, s, j)
		d2, e2 := bt34(h2, s, j)
		d3, e3 := bt34(h3, s, j)
		d4, e4 := bt34(h4, s, j)
		d5, e5 := bt34(h5, s, j)
		btRow8(v[18*vs+j:], vs, d0, d1, d2, d3, d4, d5)
		btRow8(v[24*vs+j:], vs, e0, e1, e2, e3, e4, e5)
	}
	archsimd.ClearAVXUpperBits()
	wino5InFrom(v, vs, n, h, s, k)
}

// at8 is at6 on vectors.
func at8(m0, m1, m2, m3, m4, m5 f8) (f8, f8) {
	return m0.Add(m1).Add(m2).Add(m3).Add(m4), m1.Sub(m2).Add(bc8(2).Mul(m3.Sub(m4))).Add(m5)
}

// atCol8 is at8 down column l of M: m[0], m[6·ms], …, m[30·ms].
func atCol8(m []float32, ms int) (f8, f8) {
	return at8(ld8(m, 0), ld8(m, 6*ms), ld8(m, 12*ms), ld8(m, 18*ms), ld8(m, 24*ms), ld8(m, 30*ms))
}

func wino5OutAVX2(y []float32, n int, m []float32, ms int, bias float32) {
	k := tail8(n)
	bv := bc8(bias)
	y0, y1, y2, y3 := y[:n], y[n:][:n], y[2*n:][:n], y[3*n:][:n]
	for j := 0; j < k; j += 8 {
		p0, q0 := atCol8(m[j:], ms)
		p1, q1 := atCol8(m[ms+j:], ms)
		p2, q2 := atCol8(m[2*ms+j:], ms)
		p3, q3 := atCol8(m[3*ms+j:], ms)
		p4, q4 := atCol8(m[4*ms+j:], ms)
		p5, q5 := atCol8(m[5*ms+j:], ms)
		r0, r1 := at8(p0, p1, p2, p3, p4, p5)
		r0.Add(bv).StoreSlice(y0[j:])
		r1.Add(bv).StoreSlice(y1[j:])
		r2, r3 := at8(q0, q1, q2, q3, q4, q5)
		r2.Add(bv).StoreSlice(y2[j:])
		r3.Add(bv).StoreSlice(y3[j:])
	}
	archsimd.ClearAVXUpperBits()
	wino5OutFrom(y, n, m, ms, bias, k)
}

// aRow8 stores a6(y0, y1) at dm[0], dm[ms], …, dm[5·ms].
func aRow8(dm []float32, ms int, y0, y1 f8) {
	c2 := bc8(2)
	y0.StoreSlice(dm)
	y0.Add(y1).StoreSlice(dm[ms:])
	y0.Sub(y1).StoreSlice(dm[2*ms:])
	y0.Add(c2.Mul(y1)).StoreSlice(dm[3*ms:])
	y0.Sub(c2.Mul(y1)).StoreSlice(dm[4*ms:])
	y1.StoreSlice(dm[5*ms:])
}

func wino5DyAVX2(dm []float32, ms, n int, e, o []float32) {
	k := tail8(n)
	c2 := bc8(2)
	for j := 0; j < k; j += 8 {
		e0, e1, o0, o1 := ld8(e, j), ld8(e, n+j), ld8(o, j), ld8(o, n+j)
		aRow8(dm[j:], ms, e0, o0)
		aRow8(dm[6*ms+j:], ms, e0.Add(e1), o0.Add(o1))
		aRow8(dm[12*ms+j:], ms, e0.Sub(e1), o0.Sub(o1))
		aRow8(dm[18*ms+j:], ms, e0.Add(c2.Mul(e1)), o0.Add(c2.Mul(o1)))
		aRow8(dm[24*ms+j:], ms, e0.Sub(c2.Mul(e1)), o0.Sub(c2.Mul(o1)))
		aRow8(dm[30*ms+j:], ms, e1, o1)
	}
	archsimd.ClearAVXUpperBits()
	wino5DyFrom(dm, ms, n, e, o, k)
}

// b13 and b24 are rows 1 and 3, 2 and 4 of b6 down column l of dV, whose
// rows are x[0], x[vs], …, x[5·vs] from j.
func b13(x []float32, vs, j int) (f8, f8) {
	c2, c4, c5 := bc8(2), bc8(4), bc8(5)
	v1, v2, v3, v4, v5 := ld8(x, vs+j), ld8(x, 2*vs+j), ld8(x, 3*vs+j), ld8(x, 4*vs+j), ld8(x, 5*vs+j)
	return c4.Mul(v1.Sub(v2).Add(v5)).Add(c2.Mul(v4.Sub(v3))),
		v2.Sub(v1).Add(c2.Mul(v3.Sub(v4))).Sub(c5.Mul(v5))
}

func b24(x []float32, vs, j int) (f8, f8) {
	c4, c5 := bc8(4), bc8(5)
	v0, v1, v2, v3, v4 := ld8(x, j), ld8(x, vs+j), ld8(x, 2*vs+j), ld8(x, 3*vs+j), ld8(x, 4*vs+j)
	return c4.Mul(v1.Add(v2)).Sub(c5.Mul(v0)).Sub(v3.Add(v4)),
		v0.Sub(v1.Add(v2)).Add(v3.Add(v4))
}

// bRow8 stores b6(v0, …, v5) at c[0], c[n], …, c[5n].
func bRow8(c []float32, n int, v0, v1, v2, v3, v4, v5 f8) {
	c2, c4, c5 := bc8(2), bc8(4), bc8(5)
	c4.Mul(v0).StoreSlice(c)
	c4.Mul(v1.Sub(v2).Add(v5)).Add(c2.Mul(v4.Sub(v3))).StoreSlice(c[n:])
	c4.Mul(v1.Add(v2)).Sub(c5.Mul(v0)).Sub(v3.Add(v4)).StoreSlice(c[2*n:])
	v2.Sub(v1).Add(c2.Mul(v3.Sub(v4))).Sub(c5.Mul(v5)).StoreSlice(c[3*n:])
	v0.Sub(v1.Add(v2)).Add(v3.Add(v4)).StoreSlice(c[4*n:])
	v5.StoreSlice(c[5*n:])
}

func wino5DxAVX2(c []float32, n int, dv []float32, vs int) {
	k := tail8(n)
	c4 := bc8(4)
	for j := 0; j < k; j += 8 {
		// Rows 0 and 5 of B dV: 4·dV[0][l] and dV[5][l].
		bRow8(c[j:], n, c4.Mul(ld8(dv, j)), c4.Mul(ld8(dv, vs+j)), c4.Mul(ld8(dv, 2*vs+j)),
			c4.Mul(ld8(dv, 3*vs+j)), c4.Mul(ld8(dv, 4*vs+j)), c4.Mul(ld8(dv, 5*vs+j)))
		bRow8(c[30*n+j:], n, ld8(dv, 30*vs+j), ld8(dv, 31*vs+j), ld8(dv, 32*vs+j),
			ld8(dv, 33*vs+j), ld8(dv, 34*vs+j), ld8(dv, 35*vs+j))
		p0, q0 := b13(dv, 6*vs, j)
		p1, q1 := b13(dv[vs:], 6*vs, j)
		p2, q2 := b13(dv[2*vs:], 6*vs, j)
		p3, q3 := b13(dv[3*vs:], 6*vs, j)
		p4, q4 := b13(dv[4*vs:], 6*vs, j)
		p5, q5 := b13(dv[5*vs:], 6*vs, j)
		bRow8(c[6*n+j:], n, p0, p1, p2, p3, p4, p5)
		bRow8(c[18*n+j:], n, q0, q1, q2, q3, q4, q5)
		r0, t0 := b24(dv, 6*vs, j)
		r1, t1 := b24(dv[vs:], 6*vs, j)
		r2, t2 := b24(dv[2*vs:], 6*vs, j)
		r3, t3 := b24(dv[3*vs:], 6*vs, j)
		r4, t4 := b24(dv[4*vs:], 6*vs, j)
		r5, t5 := b24(dv[5*vs:], 6*vs, j)
		bRow8(c[12*n+j:], n, r0, r1, r2, r3, r4, r5)
		bRow8(c[24*n+j:], n, t0, t1, t2, t3, t4, t5)
	}
	archsimd.ClearAVXUpperBits()
	wino5DxFrom(c, n, dv, vs, k)
}
