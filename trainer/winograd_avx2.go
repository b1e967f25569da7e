//go:build goexperiment.simd && amd64

package trainer

import "simd/archsimd"

// AVX2 versions of the Winograd row transforms (winograd.go): 8 tiles of a
// row at a time, and the last n mod 8 in the portable loops. Each lane
// computes the portable loop's expression in its order, with no fused
// multiply-adds and negation as 0 − x, so the bits are the same.
//
// Vectors live in named variables, never in arrays: Go 1.26 keeps arrays
// of vectors in memory (a [4]Float32x8 temporary made the input
// transform twice as slow as the portable loop).

func init() {
	if archsimd.X86.AVX2() {
		winoRows32 = winoRows[float32]{in: winoInAVX2, out: winoOutAVX2, dy: winoDyAVX2, dx: winoDxAVX2}
	}
}

type f8 = archsimd.Float32x8

func ld8(s []float32, j int) f8 { return archsimd.LoadFloat32x8Slice(s[j:]) }

// tail8 returns the start of the tiles the vector loops leave to the
// portable ones, and those tiles' slices.
func tail8(n int) int { return n &^ 7 }

func winoInAVX2(v *[16][]float32, e, o *[4][]float32) {
	n := len(v[0])
	m := tail8(n)
	e0, e1, e2, e3 := e[0][:n+1], e[1][:n+1], e[2][:n+1], e[3][:n+1]
	o0, o1, o2, o3 := o[0][:n+1], o[1][:n+1], o[2][:n+1], o[3][:n+1]
	for j := 0; j < m; j += 8 {
		// Bᵀ down the columns E[j], O[j], E[j+1], O[j+1]: a, b, c, d.
		x0, x1, x2, x3 := ld8(e0, j), ld8(e1, j), ld8(e2, j), ld8(e3, j)
		a0, a1, a2, a3 := x0.Sub(x2), x1.Add(x2), x2.Sub(x1), x1.Sub(x3)
		x0, x1, x2, x3 = ld8(o0, j), ld8(o1, j), ld8(o2, j), ld8(o3, j)
		b0, b1, b2, b3 := x0.Sub(x2), x1.Add(x2), x2.Sub(x1), x1.Sub(x3)
		x0, x1, x2, x3 = ld8(e0, j+1), ld8(e1, j+1), ld8(e2, j+1), ld8(e3, j+1)
		c0, c1, c2, c3 := x0.Sub(x2), x1.Add(x2), x2.Sub(x1), x1.Sub(x3)
		x0, x1, x2, x3 = ld8(o0, j+1), ld8(o1, j+1), ld8(o2, j+1), ld8(o3, j+1)
		d0, d1, d2, d3 := x0.Sub(x2), x1.Add(x2), x2.Sub(x1), x1.Sub(x3)
		inRow8(v[0:4], j, a0, b0, c0, d0)
		inRow8(v[4:8], j, a1, b1, c1, d1)
		inRow8(v[8:12], j, a2, b2, c2, d2)
		inRow8(v[12:16], j, a3, b3, c3, d3)
	}
	archsimd.ClearAVXUpperBits()
	if m < n {
		var vt [16][]float32
		for i := range vt {
			vt[i] = v[i][m:]
		}
		var et, ot [4][]float32
		for a := range 4 {
			et[a], ot[a] = e[a][m:], o[a][m:]
		}
		winoInGo(&vt, &et, &ot)
	}
}

// inRow8 stores row k of a tile's transform: a−c, b+c, c−b, b−d.
func inRow8(v [][]float32, j int, a, b, c, d f8) {
	a.Sub(c).StoreSlice(v[0][j:])
	b.Add(c).StoreSlice(v[1][j:])
	c.Sub(b).StoreSlice(v[2][j:])
	b.Sub(d).StoreSlice(v[3][j:])
}

func winoOutAVX2(y *[4][]float32, m *[16][]float32, bias float32) {
	n := len(y[0])
	k := tail8(n)
	bv := archsimd.BroadcastFloat32x8(bias)
	for j := 0; j < k; j += 8 {
		p0, q0 := outCol8(m, 0, j)
		p1, q1 := outCol8(m, 1, j)
		p2, q2 := outCol8(m, 2, j)
		p3, q3 := outCol8(m, 3, j)
		p0.Add(p1).Add(p2).Add(bv).StoreSlice(y[0][j:])
		p1.Sub(p2).Sub(p3).Add(bv).StoreSlice(y[1][j:])
		q0.Add(q1).Add(q2).Add(bv).StoreSlice(y[2][j:])
		q1.Sub(q2).Sub(q3).Add(bv).StoreSlice(y[3][j:])
	}
	archsimd.ClearAVXUpperBits()
	if k < n {
		var mt [16][]float32
		for i := range mt {
			mt[i] = m[i][k:]
		}
		yt := [4][]float32{y[0][k:], y[1][k:], y[2][k:], y[3][k:]}
		winoOutGo(&yt, &mt, bias)
	}
}

// outCol8 is Aᵀ down column l of M at j: m0+m1+m2 and m1−m2−m3.
func outCol8(m *[16][]float32, l, j int) (f8, f8) {
	m0, m1, m2, m3 := ld8(m[l], j), ld8(m[4+l], j), ld8(m[8+l], j), ld8(m[12+l], j)
	return m0.Add(m1).Add(m2), m1.Sub(m2).Sub(m3)
}

func winoDyAVX2(dm *[16][]float32, e, o *[2][]float32) {
	n := len(dm[0])
	k := tail8(n)
	var zero f8
	for j := 0; j < k; j += 8 {
		e0, e1, o0, o1 := ld8(e[0], j), ld8(e[1], j), ld8(o[0], j), ld8(o[1], j)
		dyRow8(dm[0:4], j, e0, o0)
		dyRow8(dm[4:8], j, e0.Add(e1), o0.Add(o1))
		dyRow8(dm[8:12], j, e0.Sub(e1), o0.Sub(o1))
		dyRow8(dm[12:16], j, zero.Sub(e1), zero.Sub(o1))
	}
	archsimd.ClearAVXUpperBits()
	if k < n {
		var dt [16][]float32
		for i := range dt {
			dt[i] = dm[i][k:]
		}
		et, ot := [2][]float32{e[0][k:], e[1][k:]}, [2][]float32{o[0][k:], o[1][k:]}
		winoDyGo(&dt, &et, &ot)
	}
}

// dyRow8 stores row k of A dY Aᵀ: re, re+ro, re−ro, 0−ro.
func dyRow8(dm [][]float32, j int, re, ro f8) {
	var zero f8
	re.StoreSlice(dm[0][j:])
	re.Add(ro).StoreSlice(dm[1][j:])
	re.Sub(ro).StoreSlice(dm[2][j:])
	zero.Sub(ro).StoreSlice(dm[3][j:])
}

func winoDxAVX2(e, o *[4][]float32, dv *[16][]float32, tmp []float32) {
	n := len(dv[0])
	k := tail8(n)
	for j := 0; j < k; j += 8 {
		// B dV, column l: r0l..r3l.
		r00, r10, r20, r30 := bcol8(ld8(dv[0], j), ld8(dv[4], j), ld8(dv[8], j), ld8(dv[12], j))
		r01, r11, r21, r31 := bcol8(ld8(dv[1], j), ld8(dv[5], j), ld8(dv[9], j), ld8(dv[13], j))
		r02, r12, r22, r32 := bcol8(ld8(dv[2], j), ld8(dv[6], j), ld8(dv[10], j), ld8(dv[14], j))
		r03, r13, r23, r33 := bcol8(ld8(dv[3], j), ld8(dv[7], j), ld8(dv[11], j), ld8(dv[15], j))
		dxRow8(e[0], o[0], tmp[0:], n, j, r00, r01, r02, r03)
		dxRow8(e[1], o[1], tmp[2*n:], n, j, r10, r11, r12, r13)
		dxRow8(e[2], o[2], tmp[4*n:], n, j, r20, r21, r22, r23)
		dxRow8(e[3], o[3], tmp[6*n:], n, j, r30, r31, r32, r33)
	}
	if k < n {
		for a := range 4 {
			winoDxTail(e[a], o[a], tmp[2*a*n:], n, k, dv, a)
		}
	}
	for a := range 4 {
		addShifted8(e[a][1:], tmp[(2*a)*n:][:n])
		addShifted8(o[a][1:], tmp[(2*a+1)*n:][:n])
	}
	archsimd.ClearAVXUpperBits()
}

// winoDxTail is winoDxGo's first pass for row a, tiles [k, n).
func winoDxTail(e, o, tmp []float32, n, k int, dv *[16][]float32, a int) {
	for j := k; j < n; j++ {
		var r [4]float32
		for l := range 4 {
			c := winoBCol(dv[l][j], dv[4+l][j], dv[8+l][j], dv[12+l][j])
			r[l] = c[a]
		}
		c := winoBCol(r[0], r[1], r[2], r[3])
		e[j] += c[0]
		o[j] += c[1]
		tmp[j], tmp[n+j] = c[2], c[3]
	}
}

// bcol8 is winoBCol on vectors: d0, d1−d2+d3, d1+d2−d0, 0−d3.
func bcol8(d0, d1, d2, d3 f8) (f8, f8, f8, f8) {
	var zero f8
	return d0, d1.Sub(d2).Add(d3), d1.Add(d2).Sub(d0), zero.Sub(d3)
}

// dxRow8 adds row a of B dV Bᵀ: its columns 0 and 1 into e and o at j, and
// keeps columns 2 and 3 in tmp (2 rows of n) for the shifted pass.
func dxRow8(e, o, tmp []float32, n, j int, r0, r1, r2, r3 f8) {
	c0, c1, c2, c3 := bcol8(r0, r1, r2, r3)
	ld8(e, j).Add(c0).StoreSlice(e[j:])
	ld8(o, j).Add(c1).StoreSlice(o[j:])
	c2.StoreSlice(tmp[j:])
	c3.StoreSlice(tmp[n+j:])
}

// addShifted8 is winoAddShifted: dst[j] += src[j].
func addShifted8(dst, src []float32) {
	n := len(src)
	k := tail8(n)
	for j := 0; j < k; j += 8 {
		ld8(dst, j).Add(ld8(src, j)).StoreSlice(dst[j:])
	}
	for j := k; j < n; j++ {
		dst[j] += src[j]
	}
}
