//go:build goexperiment.simd && amd64

package conv

import (
	"math"
	"simd/archsimd"

	"github.com/flsweep/flsweep/internal/packed"
)

// AVX2 versions of the Winograd transforms (winograd.go): 8 tiles at a
// time, and the last n mod 8 in the portable loops. Each lane computes the
// portable loop's expression in its order, with no fused multiply-adds and
// negation as 0 − x, so the bits are the same.
//
// Vectors live in named variables, never in arrays: Go 1.26 keeps arrays
// of vectors in memory. A first version with [4]Float32x8 temporaries (and
// partial loads for every run's last vector) ran the input transform at
// half the portable loop's speed.

func init() {
	if archsimd.X86.AVX2() {
		winoRows32 = winoRows[float32]{in: winoInAVX2, out: winoOutAVX2, dy: winoDyAVX2, dx: winoDxAVX2, add: addAVX2, split: splitAVX2, merge: mergeAVX2}
		stage32 = stageAVX2
		unstage32 = unstageAVX2
	}
}

type f8 = archsimd.Float32x8

func ld8(s []float32, j int) f8 { return archsimd.LoadFloat32x8Slice(s[j:]) }

// tail8 returns the start of the tiles the vector loops leave to the
// portable ones.
func tail8(n int) int { return n &^ 7 }

func winoInAVX2(v []float32, vs, n int, e, o, e1, o1 []float32, s int) {
	k := tail8(n)
	for j := 0; j < k; j += 8 {
		// Bᵀ down the columns E[j], O[j], E[j+1], O[j+1]: a, b, c, d.
		a0, a1, a2, a3 := col8(e, s, j)
		b0, b1, b2, b3 := col8(o, s, j)
		c0, c1, c2, c3 := col8(e1, s, j)
		d0, d1, d2, d3 := col8(o1, s, j)
		inRow8(v[j:], vs, a0, b0, c0, d0)
		inRow8(v[4*vs+j:], vs, a1, b1, c1, d1)
		inRow8(v[8*vs+j:], vs, a2, b2, c2, d2)
		inRow8(v[12*vs+j:], vs, a3, b3, c3, d3)
	}
	archsimd.ClearAVXUpperBits()
	winoInFrom(v, vs, n, e, o, e1, o1, s, k)
}

// col8 is winoCol on vectors: Bᵀ down the four rows of x, s apart, at j.
func col8(x []float32, s, j int) (f8, f8, f8, f8) {
	x0, x1, x2, x3 := ld8(x, j), ld8(x, s+j), ld8(x, 2*s+j), ld8(x, 3*s+j)
	return x0.Sub(x2), x1.Add(x2), x2.Sub(x1), x1.Sub(x3)
}

// inRow8 stores row k of a tile's transform, a−c, b+c, c−b, b−d, at v[0],
// v[vs], v[2·vs], v[3·vs].
func inRow8(v []float32, vs int, a, b, c, d f8) {
	a.Sub(c).StoreSlice(v)
	b.Add(c).StoreSlice(v[vs:])
	c.Sub(b).StoreSlice(v[2*vs:])
	b.Sub(d).StoreSlice(v[3*vs:])
}

func winoOutAVX2(y []float32, n int, m []float32, ms int, bias float32) {
	k := tail8(n)
	bv := archsimd.BroadcastFloat32x8(bias)
	y0, y1, y2, y3 := y[:n], y[n:][:n], y[2*n:][:n], y[3*n:][:n]
	for j := 0; j < k; j += 8 {
		p0, q0 := outCol8(m[j:], ms)
		p1, q1 := outCol8(m[ms+j:], ms)
		p2, q2 := outCol8(m[2*ms+j:], ms)
		p3, q3 := outCol8(m[3*ms+j:], ms)
		p0.Add(p1).Add(p2).Add(bv).StoreSlice(y0[j:])
		p1.Sub(p2).Sub(p3).Add(bv).StoreSlice(y1[j:])
		q0.Add(q1).Add(q2).Add(bv).StoreSlice(y2[j:])
		q1.Sub(q2).Sub(q3).Add(bv).StoreSlice(y3[j:])
	}
	archsimd.ClearAVXUpperBits()
	winoOutFrom(y, n, m, ms, bias, k)
}

// outCol8 is Aᵀ down column l of M, m[0], m[4·ms], m[8·ms], m[12·ms]:
// m0+m1+m2 and m1−m2−m3.
func outCol8(m []float32, ms int) (f8, f8) {
	m0, m1, m2, m3 := ld8(m, 0), ld8(m, 4*ms), ld8(m, 8*ms), ld8(m, 12*ms)
	return m0.Add(m1).Add(m2), m1.Sub(m2).Sub(m3)
}

func winoDyAVX2(dm []float32, ms, n int, e, o []float32) {
	k := tail8(n)
	var zero f8
	for j := 0; j < k; j += 8 {
		e0, e1, o0, o1 := ld8(e, j), ld8(e, n+j), ld8(o, j), ld8(o, n+j)
		dyRow8(dm[j:], ms, e0, o0)
		dyRow8(dm[4*ms+j:], ms, e0.Add(e1), o0.Add(o1))
		dyRow8(dm[8*ms+j:], ms, e0.Sub(e1), o0.Sub(o1))
		dyRow8(dm[12*ms+j:], ms, zero.Sub(e1), zero.Sub(o1))
	}
	archsimd.ClearAVXUpperBits()
	winoDyFrom(dm, ms, n, e, o, k)
}

// dyRow8 stores row k of A dY Aᵀ, re, re+ro, re−ro, 0−ro, at dm[0],
// dm[ms], dm[2·ms], dm[3·ms].
func dyRow8(dm []float32, ms int, re, ro f8) {
	var zero f8
	re.StoreSlice(dm)
	re.Add(ro).StoreSlice(dm[ms:])
	re.Sub(ro).StoreSlice(dm[2*ms:])
	zero.Sub(ro).StoreSlice(dm[3*ms:])
}

func winoDxAVX2(c []float32, n int, dv []float32, vs int) {
	k := tail8(n)
	for j := 0; j < k; j += 8 {
		// B dV, column l: r0l..r3l.
		r00, r10, r20, r30 := bcol8(ld8(dv, j), ld8(dv, 4*vs+j), ld8(dv, 8*vs+j), ld8(dv, 12*vs+j))
		r01, r11, r21, r31 := bcol8(ld8(dv, vs+j), ld8(dv, 5*vs+j), ld8(dv, 9*vs+j), ld8(dv, 13*vs+j))
		r02, r12, r22, r32 := bcol8(ld8(dv, 2*vs+j), ld8(dv, 6*vs+j), ld8(dv, 10*vs+j), ld8(dv, 14*vs+j))
		r03, r13, r23, r33 := bcol8(ld8(dv, 3*vs+j), ld8(dv, 7*vs+j), ld8(dv, 11*vs+j), ld8(dv, 15*vs+j))
		dxRow8(c[j:], n, r00, r01, r02, r03)
		dxRow8(c[4*n+j:], n, r10, r11, r12, r13)
		dxRow8(c[8*n+j:], n, r20, r21, r22, r23)
		dxRow8(c[12*n+j:], n, r30, r31, r32, r33)
	}
	archsimd.ClearAVXUpperBits()
	winoDxFrom(c, n, dv, vs, k)
}

// bcol8 is winoBCol on vectors: d0, d1−d2+d3, d1+d2−d0, 0−d3.
func bcol8(d0, d1, d2, d3 f8) (f8, f8, f8, f8) {
	var zero f8
	return d0, d1.Sub(d2).Add(d3), d1.Add(d2).Sub(d0), zero.Sub(d3)
}

// dxRow8 stores row a of B dV Bᵀ at c[0], c[n], c[2n], c[3n].
func dxRow8(c []float32, n int, r0, r1, r2, r3 f8) {
	c0, c1, c2, c3 := bcol8(r0, r1, r2, r3)
	c0.StoreSlice(c)
	c1.StoreSlice(c[n:])
	c2.StoreSlice(c[2*n:])
	c3.StoreSlice(c[3*n:])
}

func addAVX2(dst, src []float32) {
	n := len(src)
	k := tail8(n)
	for j := 0; j < k; j += 8 {
		ld8(dst, j).Add(ld8(src, j)).StoreSlice(dst[j:])
	}
	archsimd.ClearAVXUpperBits()
	addGo(dst[k:], src[k:])
}

// halves orders the lanes (0, 1, 4, 5, 2, 3, 6, 7): split's and merge's
// in-lane shuffles work on 128-bit halves.
var halves = [8]uint32{0, 1, 4, 5, 2, 3, 6, 7}

// splitAVX2 is splitGo 16 floats at a time, then 8 (x as its own pair,
// the low halves kept), then the rest one by one.
func splitAVX2(ev, od, src []float32) {
	k := len(src) &^ 7
	idx := archsimd.LoadUint32x8(&halves)
	i := 0
	for ; i+16 <= k; i += 16 {
		x, y := ld8(src, i), ld8(src, i+8)
		// Within each half: x's even (odd) lanes, then y's.
		x.SelectFromPairGrouped(0, 2, 4, 6, y).Permute(idx).StoreSlice(ev[i/2:])
		x.SelectFromPairGrouped(1, 3, 5, 7, y).Permute(idx).StoreSlice(od[i/2:])
	}
	if i < k {
		x := ld8(src, i)
		x.SelectFromPairGrouped(0, 2, 4, 6, x).Permute(idx).GetLo().StoreSlice(ev[i/2:])
		x.SelectFromPairGrouped(1, 3, 5, 7, x).Permute(idx).GetLo().StoreSlice(od[i/2:])
	}
	archsimd.ClearAVXUpperBits()
	splitGo(ev[k/2:], od[k/2:], src[k:])
}

// mergeAVX2 is mergeGo 16 floats at a time, then 8 (4 of each half, in the
// vectors' low halves), then the rest one by one.
func mergeAVX2(dst, ev, od []float32) {
	k := len(dst) &^ 7
	idx := archsimd.LoadUint32x8(&halves)
	i := 0
	for ; i+16 <= k; i += 16 {
		e, o := ld8(ev, i/2).Permute(idx), ld8(od, i/2).Permute(idx)
		e.SelectFromPairGrouped(0, 4, 1, 5, o).StoreSlice(dst[i:])
		e.SelectFromPairGrouped(2, 6, 3, 7, o).StoreSlice(dst[i+8:])
	}
	if i < k {
		var z f8
		e := z.SetLo(archsimd.LoadFloat32x4Slice(ev[i/2:])).Permute(idx)
		o := z.SetLo(archsimd.LoadFloat32x4Slice(od[i/2:])).Permute(idx)
		e.SelectFromPairGrouped(0, 4, 1, 5, o).StoreSlice(dst[i:])
	}
	archsimd.ClearAVXUpperBits()
	mergeGo(dst[k:], ev[k/2:], od[k/2:])
}

func stageAVX2(st []float32, ls, t int, h [8][]float32, s, a int) {
	for r := range a {
		for q := range a {
			ld8(h[q], r*s).StoreSlice(st[(q*a+r)*ls+t:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// unstageAVX2 is unstage with a half-row (s ≤ 8 floats) as one vector: the
// runs of half q = 2k+p at shift k add in k's order, each loaded from
// t−k so that its floats line up with the half-row's, and with −0 in the
// lanes outside it (x + −0 is x for every x, −0 included), so each float
// gets unstage's adds in unstage's order: the same bits. The lanes past the
// half-row (the next row's first floats, or the planes' padding) add −0
// only and are stored back unchanged.
func unstageAVX2(pe, po []float32, s, row0 int, cb []float32, L, t, tw, a int) {
	if s > 8 {
		unstage(pe, po, s, row0, cb, L, t, tw, a)
		return
	}
	m0, z0 := runMask(tw, 0)
	m1, z1 := runMask(tw, 1)
	m2, z2 := runMask(tw, 2)
	run := func(i int, m, z archsimd.Int32x8) f8 { return maskedRun(cb, i, m, z) }
	for r := range a {
		row := row0 + r*s
		base := a * r * L
		e, o := ld8(pe, row), ld8(po, row)
		e = e.Add(run(base+t, m0, z0))
		o = o.Add(run(base+L+t, m0, z0))
		e = e.Add(run(base+2*L+t-1, m1, z1))
		o = o.Add(run(base+3*L+t-1, m1, z1))
		if a == 6 {
			e = e.Add(run(base+4*L+t-2, m2, z2))
			o = o.Add(run(base+5*L+t-2, m2, z2))
		}
		e.StoreSlice(pe[row:])
		o.StoreSlice(po[row:])
	}
	archsimd.ClearAVXUpperBits()
}

// runMask returns the masks that keep a run of tw floats loaded k floats
// early: m is all ones in lanes k ≤ i < k+tw, z the sign bit (−0) in the
// others (maskedRun).
func runMask(tw, k int) (m, z archsimd.Int32x8) {
	var mt, zt [8]int32
	for i := range 8 {
		if i >= k && i < k+tw {
			mt[i] = -1
		} else {
			zt[i] = math.MinInt32
		}
	}
	return archsimd.LoadInt32x8(&mt), archsimd.LoadInt32x8(&zt)
}

// maskedRun loads 8 floats of cb from i with the lanes outside runMask's
// run set to −0, which adds nothing to any float (−0 included).
func maskedRun(cb []float32, i int, m, z archsimd.Int32x8) f8 {
	return ld8(cb, i).AsInt32x8().And(m).Or(z).AsFloat32x8()
}

// st6 stores x0…x5 at t[0], t[d], …, t[5·d]; st8 x0…x7 to t[7·d].
func st6(t []float32, d int, x0, x1, x2, x3, x4, x5 f8) {
	x0.StoreSlice(t)
	x1.StoreSlice(t[d:])
	x2.StoreSlice(t[2*d:])
	x3.StoreSlice(t[3*d:])
	x4.StoreSlice(t[4*d:])
	x5.StoreSlice(t[5*d:])
}

func st8(t []float32, d int, x0, x1, x2, x3, x4, x5, x6, x7 f8) {
	st6(t, d, x0, x1, x2, x3, x4, x5)
	x6.StoreSlice(t[6*d:])
	x7.StoreSlice(t[7*d:])
}

func init() {
	if archsimd.X86.AVX2() {
		wino23W32.w, wino23W32.wg = winoWeightsAVX2, winoWeightsGradAVX2
	}
}

// g4v is the vector form of one step of winoWeights: G applied to three
// taps, (g0, (g0+g2)/2 + g1/2, (g0+g2)/2 − g1/2, g2), in its order.
func g4v(g0, g1, g2, half f8) (f8, f8, f8, f8) {
	h, q := g0.Add(g2).Mul(half), g1.Mul(half)
	return g0, h.Add(q), h.Sub(q), g2
}

// winoWeightsAVX2 is winoWeights 8 filters at a time: a block of wBlock
// filters is laid out tap-major on the stack (packed.Transpose), and each
// vector lane computes the portable expressions in their order.
func winoWeightsAVX2(w []float32, cout, cin int, u []float32) {
	oc := cout * cin
	k := tail8(oc)
	var tmp [9 * wBlock]float32
	var blk [16 * wBlock]float32 // the block's 16 rows of U, stored whole (wBlock)
	for i0 := 0; i0 < k; i0 += wBlock {
		nb := min(wBlock, k-i0)
		packed.Transpose(tmp[:9*nb], w[i0*9:][:9*nb], nb, 9, 9)
		half := archsimd.BroadcastFloat32x8(0.5)
		for b := 0; b < nb; b += 8 {
			tap := func(j int) f8 { return ld8(tmp[:], j*nb+b) }
			// G down the filter's columns v: t[k][v].
			a0, a1, a2, a3 := g4v(tap(0), tap(3), tap(6), half)
			b0, b1, b2, b3 := g4v(tap(1), tap(4), tap(7), half)
			c0, c1, c2, c3 := g4v(tap(2), tap(5), tap(8), half)
			row := func(x int, t0, t1, t2 f8) {
				r0, r1, r2, r3 := g4v(t0, t1, t2, half)
				r0.StoreSlice(blk[(4*x)*nb+b:])
				r1.StoreSlice(blk[(4*x+1)*nb+b:])
				r2.StoreSlice(blk[(4*x+2)*nb+b:])
				r3.StoreSlice(blk[(4*x+3)*nb+b:])
			}
			row(0, a0, b0, c0)
			row(1, a1, b1, c1)
			row(2, a2, b2, c2)
			row(3, a3, b3, c3)
		}
		archsimd.ClearAVXUpperBits()
		for x := range 16 {
			copy(u[x*oc+i0:][:nb], blk[x*nb:][:nb])
		}
	}
	winoWeightsFrom(w, cout, cin, u, k)
}

// gt4v is one step of winoWeightsGrad on vectors: (d0 + s, m, s + d3) with
// s = (d1+d2)/2, m = (d1−d2)/2.
func gt4v(d0, d1, d2, d3, half f8) (f8, f8, f8) {
	s, m := d1.Add(d2).Mul(half), d1.Sub(d2).Mul(half)
	return d0.Add(s), m, s.Add(d3)
}

// winoWeightsGradAVX2 is winoWeightsGrad 8 filters at a time, a block of
// wBlock filters' taps gathered tap-major on the stack and laid out by
// packed.Transpose.
func winoWeightsGradAVX2(du []float32, cout, cin int, dw []float32) {
	oc := cout * cin
	k := tail8(oc)
	var tmp [9 * wBlock]float32
	var blk [16 * wBlock]float32 // the block's 16 rows of dU, read whole
	for i0 := 0; i0 < k; i0 += wBlock {
		nb := min(wBlock, k-i0)
		for x := range 16 {
			copy(blk[x*nb:][:nb], du[x*oc+i0:][:nb])
		}
		half := archsimd.BroadcastFloat32x8(0.5)
		for b := 0; b < nb; b += 8 {
			col := func(l int) (f8, f8, f8) {
				return gt4v(ld8(blk[:], l*nb+b), ld8(blk[:], (4+l)*nb+b), ld8(blk[:], (8+l)*nb+b), ld8(blk[:], (12+l)*nb+b), half)
			}
			// Gᵀ down the four columns l of dU: t[u][l].
			a0, b0, c0 := col(0)
			a1, b1, c1 := col(1)
			a2, b2, c2 := col(2)
			a3, b3, c3 := col(3)
			row := func(x int, d0, d1, d2, d3 f8) {
				g0, g1, g2 := gt4v(d0, d1, d2, d3, half)
				g0.StoreSlice(tmp[(3*x)*nb+b:])
				g1.StoreSlice(tmp[(3*x+1)*nb+b:])
				g2.StoreSlice(tmp[(3*x+2)*nb+b:])
			}
			row(0, a0, a1, a2, a3)
			row(1, b0, b1, b2, b3)
			row(2, c0, c1, c2, c3)
		}
		archsimd.ClearAVXUpperBits()
		packed.Transpose(dw[i0*9:][:9*nb], tmp[:9*nb], 9, nb, nb)
	}
	winoWeightsGradFrom(du, cout, cin, dw, k)
}
