//go:build goexperiment.simd && amd64

package vector

import (
	"math"
	"simd/archsimd"
)

// AVX2 versions of the float32 inner loops, for CPUs without AVX-512:
// vectors of 8 float32 or 4 float64 lanes. The elementwise ones compute
// what the portable loops compute, bit for bit, as the AVX-512 ones do. The
// float64 sums keep the AVX-512 kernels' 16 lanes per channel, as four
// 4-lane accumulators, and add them in the same order, so a step's sums,
// and so its weights, are the same with either instruction set
// (TestVecKernels compares the sets bit for bit where a CPU runs both).

// addVecAVX2 is the vector set's add (addAVX2 is package conv's
// dst += src, in winograd_avx2.go).
func addVecAVX2(y, a, b []float32) {
	n := len(y)
	a, b = a[:n], b[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		archsimd.LoadFloat32x8Slice(a[i:]).Add(archsimd.LoadFloat32x8Slice(b[i:])).StoreSlice(y[i:])
	}
	if i < n {
		archsimd.LoadFloat32x8SlicePart(a[i:]).Add(archsimd.LoadFloat32x8SlicePart(b[i:])).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func reluAVX2(y, x []float32) {
	n := len(y)
	x = x[:n]
	var zero archsimd.Float32x8
	i := 0
	for ; i+8 <= n; i += 8 {
		xv := archsimd.LoadFloat32x8Slice(x[i:])
		xv.Merge(zero, xv.Greater(zero).Or(xv.IsNaN())).StoreSlice(y[i:])
	}
	if i < n {
		xv := archsimd.LoadFloat32x8SlicePart(x[i:])
		xv.Merge(zero, xv.Greater(zero).Or(xv.IsNaN())).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func reluDxAVX2(dx, x, dy []float32) {
	n := len(dx)
	x, dy = x[:n], dy[:n]
	var zero archsimd.Float32x8
	i := 0
	for ; i+8 <= n; i += 8 {
		xv, dv := archsimd.LoadFloat32x8Slice(x[i:]), archsimd.LoadFloat32x8Slice(dy[i:])
		dv.Merge(zero, xv.Greater(zero)).StoreSlice(dx[i:])
	}
	if i < n {
		xv, dv := archsimd.LoadFloat32x8SlicePart(x[i:]), archsimd.LoadFloat32x8SlicePart(dy[i:])
		dv.Merge(zero, xv.Greater(zero)).StoreSlicePart(dx[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func preluAVX2(y, x, d []float32, a float32) {
	n := len(y)
	x, d = x[:n], d[:n]
	av := archsimd.BroadcastFloat32x8(a)
	var zero archsimd.Float32x8
	i := 0
	for ; i+8 <= n; i += 8 {
		xv, dv := archsimd.LoadFloat32x8Slice(x[i:]), archsimd.LoadFloat32x8Slice(d[i:])
		pos := xv.Greater(zero) // false for NaN
		dp, dn := dv.Merge(zero, pos), zero.Merge(dv, pos)
		dp.Add(dn.Mul(av)).StoreSlice(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	if i < n {
		PReLUGo(y[i:], x[i:], d[i:], a)
	}
}

func bnAffineAVX2(y, x, s, b []float32, hw int) {
	x = x[:len(y)]
	c := len(s)
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		ys, xs := y[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		sv, bv := archsimd.BroadcastFloat32x8(s[ch]), archsimd.BroadcastFloat32x8(b[ch])
		i := 0
		for ; i+8 <= hw; i += 8 {
			archsimd.LoadFloat32x8Slice(xs[i:]).Mul(sv).Add(bv).StoreSlice(ys[i:])
		}
		if i < hw {
			archsimd.LoadFloat32x8SlicePart(xs[i:]).Mul(sv).Add(bv).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// relu8 is reluAVX2's step: v where v > 0 or NaN, else +0.
func relu8(v, zero archsimd.Float32x8) archsimd.Float32x8 {
	return v.Merge(zero, v.Greater(zero).Or(v.IsNaN()))
}

func bnAffineReLUAVX2(y, x, s, b []float32, hw int) {
	x = x[:len(y)]
	c := len(s)
	var zero archsimd.Float32x8
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		ys, xs := y[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		sv, bv := archsimd.BroadcastFloat32x8(s[ch]), archsimd.BroadcastFloat32x8(b[ch])
		i := 0
		for ; i+8 <= hw; i += 8 {
			relu8(archsimd.LoadFloat32x8Slice(xs[i:]).Mul(sv).Add(bv), zero).StoreSlice(ys[i:])
		}
		if i < hw {
			relu8(archsimd.LoadFloat32x8SlicePart(xs[i:]).Mul(sv).Add(bv), zero).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

func addReLUAVX2(y, a, b []float32) {
	n := len(y)
	a, b = a[:n], b[:n]
	var zero archsimd.Float32x8
	i := 0
	for ; i+8 <= n; i += 8 {
		relu8(archsimd.LoadFloat32x8Slice(a[i:]).Add(archsimd.LoadFloat32x8Slice(b[i:])), zero).StoreSlice(y[i:])
	}
	if i < n {
		relu8(archsimd.LoadFloat32x8SlicePart(a[i:]).Add(archsimd.LoadFloat32x8SlicePart(b[i:])), zero).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func bnDxAVX2(y, dy, x, a, b, k []float32, hw int) {
	dy, x = dy[:len(y)], x[:len(y)]
	c := len(a)
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		ys, ds, xs := y[p*hw:(p+1)*hw], dy[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		av, bv, kv := archsimd.BroadcastFloat32x8(a[ch]), archsimd.BroadcastFloat32x8(b[ch]), archsimd.BroadcastFloat32x8(k[ch])
		i := 0
		for ; i+8 <= hw; i += 8 {
			d, v := archsimd.LoadFloat32x8Slice(ds[i:]), archsimd.LoadFloat32x8Slice(xs[i:])
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlice(ys[i:])
		}
		if i < hw {
			d, v := archsimd.LoadFloat32x8SlicePart(ds[i:]), archsimd.LoadFloat32x8SlicePart(xs[i:])
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// bnDxReLUAVX2 is bnDxReLUAVX in 8 lanes.
func bnDxReLUAVX2(y, dy, x, a, b, k, s, t []float32, hw int) {
	dy, x = dy[:len(y)], x[:len(y)]
	c := len(a)
	var zero archsimd.Float32x8
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		ys, ds, xs := y[p*hw:(p+1)*hw], dy[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		av, bv, kv := archsimd.BroadcastFloat32x8(a[ch]), archsimd.BroadcastFloat32x8(b[ch]), archsimd.BroadcastFloat32x8(k[ch])
		sv, tv := archsimd.BroadcastFloat32x8(s[ch]), archsimd.BroadcastFloat32x8(t[ch])
		i := 0
		for ; i+8 <= hw; i += 8 {
			d, v := archsimd.LoadFloat32x8Slice(ds[i:]), archsimd.LoadFloat32x8Slice(xs[i:])
			d = d.Merge(zero, v.Mul(sv).Add(tv).Greater(zero))
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlice(ys[i:])
		}
		if i < hw {
			d, v := archsimd.LoadFloat32x8SlicePart(ds[i:]), archsimd.LoadFloat32x8SlicePart(xs[i:])
			d = d.Merge(zero, v.Mul(sv).Add(tv).Greater(zero))
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// The sums hold the AVX-512 kernels' 16 float64 lanes (two 8-lane vectors
// s0, s1) in four 4-lane vectors: q0, q1 are s0's halves, q2, q3 s1's.
// (Four variables, not an array: Go keeps arrays of vectors in memory.)
// Each channel's vector loop runs without scalar float code in between:
// the planes' scalar tails are summed after ClearAVXUpperBits. A scalar
// load of the mean into a register whose upper half a vector op had set
// made channelDot 20 times slower on a Zen 3.

// load4 converts the 16 float32 at x[i:] to float64, 4 lanes a vector
// (two 8-lane loads, split).
func load4(x []float32, i int) (archsimd.Float64x4, archsimd.Float64x4, archsimd.Float64x4, archsimd.Float64x4) {
	v, w := archsimd.LoadFloat32x8Slice(x[i:]), archsimd.LoadFloat32x8Slice(x[i+8:])
	return v.GetLo().ConvertToFloat64(), v.GetHi().ConvertToFloat64(), w.GetLo().ConvertToFloat64(), w.GetHi().ConvertToFloat64()
}

// store16 stores the 16 lanes as the AVX-512 kernels' s0 + s1, the 8 lanes
// sumLanes adds.
func store16(l *[8]float64, q0, q1, q2, q3 archsimd.Float64x4) {
	q0.Add(q2).Store((*[4]float64)(l[:4]))
	q1.Add(q3).Store((*[4]float64)(l[4:]))
}

func channelSumAVX2(sum []float64, x []float32, c, hw int) {
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	for ch := range c {
		var s0, s1, s2, s3 archsimd.Float64x4
		for p := ch; p < planes; p += c {
			xs := x[p*hw : p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				v0, v1, v2, v3 := load4(xs, i)
				s0, s1, s2, s3 = s0.Add(v0), s1.Add(v1), s2.Add(v2), s3.Add(v3)
			}
		}
		var l [8]float64
		store16(&l, s0, s1, s2, s3)
		archsimd.ClearAVXUpperBits()
		var tail float64
		for p := ch; f < hw && p < planes; p += c {
			for _, v := range x[p*hw+f : (p+1)*hw] {
				tail += float64(v)
			}
		}
		sum[ch] = sumLanes(&l) + tail
	}
}

func channelSqDevAVX2(ss []float64, x []float32, mean []float64, hw int) {
	c := len(mean)
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	for ch := range c {
		mv := archsimd.BroadcastFloat64x4(mean[ch])
		var s0, s1, s2, s3 archsimd.Float64x4
		for p := ch; p < planes; p += c {
			xs := x[p*hw : p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				v0, v1, v2, v3 := load4(xs, i)
				d0, d1, d2, d3 := v0.Sub(mv), v1.Sub(mv), v2.Sub(mv), v3.Sub(mv)
				s0, s1, s2, s3 = s0.Add(d0.Mul(d0)), s1.Add(d1.Mul(d1)), s2.Add(d2.Mul(d2)), s3.Add(d3.Mul(d3))
			}
		}
		var l [8]float64
		store16(&l, s0, s1, s2, s3)
		archsimd.ClearAVXUpperBits()
		m := mean[ch]
		var tail float64
		for p := ch; f < hw && p < planes; p += c {
			for _, v := range x[p*hw+f : (p+1)*hw] {
				d := float64(v) - m
				tail += d * d
			}
		}
		ss[ch] = sumLanes(&l) + tail
	}
}

func channelDotAVX2(sdy, sdyx []float64, x, dy []float32, mean []float64, hw int) {
	c := len(mean)
	dy = dy[:len(x)]
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	for ch := range c {
		mv := archsimd.BroadcastFloat64x4(mean[ch])
		var a0, a1, a2, a3, b0, b1, b2, b3 archsimd.Float64x4
		for p := ch; p < planes; p += c {
			xs, ds := x[p*hw:p*hw+f], dy[p*hw:p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				// A quarter of the step at a time, so that the 8 sums, the
				// loaded halves and the mean fit in the 16 vector registers.
				dv, xv := archsimd.LoadFloat32x8Slice(ds[i:]), archsimd.LoadFloat32x8Slice(xs[i:])
				d, v := dv.GetLo().ConvertToFloat64(), xv.GetLo().ConvertToFloat64().Sub(mv)
				a0, b0 = a0.Add(d), b0.Add(d.Mul(v))
				d, v = dv.GetHi().ConvertToFloat64(), xv.GetHi().ConvertToFloat64().Sub(mv)
				a1, b1 = a1.Add(d), b1.Add(d.Mul(v))
				dv, xv = archsimd.LoadFloat32x8Slice(ds[i+8:]), archsimd.LoadFloat32x8Slice(xs[i+8:])
				d, v = dv.GetLo().ConvertToFloat64(), xv.GetLo().ConvertToFloat64().Sub(mv)
				a2, b2 = a2.Add(d), b2.Add(d.Mul(v))
				d, v = dv.GetHi().ConvertToFloat64(), xv.GetHi().ConvertToFloat64().Sub(mv)
				a3, b3 = a3.Add(d), b3.Add(d.Mul(v))
			}
		}
		var la, lb [8]float64
		store16(&la, a0, a1, a2, a3)
		store16(&lb, b0, b1, b2, b3)
		archsimd.ClearAVXUpperBits()
		m := mean[ch]
		var ta, tb float64
		for p := ch; f < hw && p < planes; p += c {
			for i := p*hw + f; i < (p+1)*hw; i++ {
				d := float64(dy[i])
				ta += d
				tb += d * (float64(x[i]) - m)
			}
		}
		sdy[ch], sdyx[ch] = sumLanes(&la)+ta, sumLanes(&lb)+tb
	}
}

// channelDotReLUAVX2 is channelDotAVX2 of dy masked by the forward pass's
// ReLU (bnDxReLUAVX): each half step masked in float32, then split.
func channelDotReLUAVX2(sdy, sdyx []float64, x, dy []float32, mean []float64, s, t []float32, hw int) {
	c := len(mean)
	dy = dy[:len(x)]
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	var zero archsimd.Float32x8
	for ch := range c {
		mv := archsimd.BroadcastFloat64x4(mean[ch])
		sv, tv := archsimd.BroadcastFloat32x8(s[ch]), archsimd.BroadcastFloat32x8(t[ch])
		var a0, a1, a2, a3, b0, b1, b2, b3 archsimd.Float64x4
		for p := ch; p < planes; p += c {
			xs, ds := x[p*hw:p*hw+f], dy[p*hw:p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				xv := archsimd.LoadFloat32x8Slice(xs[i:])
				dv := archsimd.LoadFloat32x8Slice(ds[i:]).Merge(zero, xv.Mul(sv).Add(tv).Greater(zero))
				d, v := dv.GetLo().ConvertToFloat64(), xv.GetLo().ConvertToFloat64().Sub(mv)
				a0, b0 = a0.Add(d), b0.Add(d.Mul(v))
				d, v = dv.GetHi().ConvertToFloat64(), xv.GetHi().ConvertToFloat64().Sub(mv)
				a1, b1 = a1.Add(d), b1.Add(d.Mul(v))
				xv = archsimd.LoadFloat32x8Slice(xs[i+8:])
				dv = archsimd.LoadFloat32x8Slice(ds[i+8:]).Merge(zero, xv.Mul(sv).Add(tv).Greater(zero))
				d, v = dv.GetLo().ConvertToFloat64(), xv.GetLo().ConvertToFloat64().Sub(mv)
				a2, b2 = a2.Add(d), b2.Add(d.Mul(v))
				d, v = dv.GetHi().ConvertToFloat64(), xv.GetHi().ConvertToFloat64().Sub(mv)
				a3, b3 = a3.Add(d), b3.Add(d.Mul(v))
			}
		}
		var la, lb [8]float64
		store16(&la, a0, a1, a2, a3)
		store16(&lb, b0, b1, b2, b3)
		archsimd.ClearAVXUpperBits()
		ta, tb := dotTails(x, dy, mean[ch], s[ch], t[ch], ch, c, planes, hw, f)
		sdy[ch], sdyx[ch] = sumLanes(&la)+ta, sumLanes(&lb)+tb
	}
}

// negPart is x with +0 where x > 0 (NaN kept), as negDot, in float64.
func negPart(x []float32, i int) archsimd.Float64x4 {
	var zero archsimd.Float32x4
	xv := archsimd.LoadFloat32x4Slice(x[i:])
	return zero.Merge(xv, xv.Greater(zero)).ConvertToFloat64()
}

func negDotAVX2(x, dy []float32) float64 {
	dy = dy[:len(x)]
	var s0, s1, s2, s3 archsimd.Float64x4
	i := 0
	for ; i+16 <= len(x); i += 16 {
		d0, d1, d2, d3 := load4(dy, i)
		s0, s1 = s0.Add(negPart(x, i).Mul(d0)), s1.Add(negPart(x, i+4).Mul(d1))
		s2, s3 = s2.Add(negPart(x, i+8).Mul(d2)), s3.Add(negPart(x, i+12).Mul(d3))
	}
	var l [8]float64
	store16(&l, s0, s1, s2, s3)
	archsimd.ClearAVXUpperBits()
	r := sumLanes(&l)
	for ; i < len(x); i++ {
		b := math.Float32bits(x[i])
		r += float64(math.Float32frombits(b&^PosMask(b))) * float64(dy[i])
	}
	return r
}

// Constants of maxPoolAVX2, loaded from arrays (see avx512.go).
var (
	// grouped is where the 8 windows of a step sit after SelectFromPairGrouped
	// splits two rows of 8 into their even and odd elements, half by half:
	// windows 0, 1, 4, 5 | 2, 3, 6, 7. Its entries are also the windows'
	// first columns divided by 2, and the permutation that puts the windows
	// back in order (it is its own inverse).
	grouped  = [8]int32{0, 1, 4, 5, 2, 3, 6, 7}
	abs31    = [8]int32{0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff}
	infBits8 = [8]int32{0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000}
)

// signedKey is floatKey with its top bit flipped, on 8 lanes: ordered as
// floatKey is, but by signed comparison, which AVX2 has (b for b ≥ 0,
// b ^ 0x7fffffff for negative b, 0x7fffffff for every NaN).
func signedKey(v archsimd.Float32x8, abs, inf archsimd.Int32x8) archsimd.Int32x8 {
	b := v.AsInt32x8()
	key := b.Xor(b.ShiftAllRight(31).And(abs))
	return abs.Merge(key, b.And(abs).Greater(inf))
}

// maxPoolAVX2 is maxPool32 with 8 windows per step, as maxPoolAVX, with
// AVX2's in-half shuffles: the windows are pooled in the order grouped
// gives and put back in order at the end.
func maxPoolAVX2(y []float32, arg []int32, x []float32, planes, h, w int) {
	ho, wo := h/2, w/2
	perm := archsimd.LoadInt32x8(&grouped)
	abs, inf := archsimd.LoadInt32x8(&abs31), archsimd.LoadInt32x8(&infBits8)
	cols := perm.Add(perm) // each window's first column, in grouped order
	offs := [3]archsimd.Int32x8{archsimd.BroadcastInt32x8(1), archsimd.BroadcastInt32x8(int32(w)), archsimd.BroadcastInt32x8(int32(w + 1))}
	for p := 0; p < planes; p++ {
		for i := 0; i < ho; i++ {
			r := p*h*w + 2*i*w
			o := (p*ho + i) * wo
			r0, r1 := x[r:r+w], x[r+w:r+2*w]
			for j := 0; j < wo; j += 8 {
				a0, a1 := archsimd.LoadFloat32x8SlicePart(r0[2*j:]), archsimd.LoadFloat32x8SlicePart(r0[min(2*j+8, w):])
				b0, b1 := archsimd.LoadFloat32x8SlicePart(r1[2*j:]), archsimd.LoadFloat32x8SlicePart(r1[min(2*j+8, w):])
				at := archsimd.BroadcastInt32x8(int32(r + 2*j)).Add(cols)
				best, bestArg := a0.SelectFromPairGrouped(0, 2, 4, 6, a1), at
				bestKey := signedKey(best, abs, inf)
				for e, v := range [3]archsimd.Float32x8{a0.SelectFromPairGrouped(1, 3, 5, 7, a1), b0.SelectFromPairGrouped(0, 2, 4, 6, b1), b0.SelectFromPairGrouped(1, 3, 5, 7, b1)} {
					key := signedKey(v, abs, inf)
					m := key.Greater(bestKey)
					best, bestKey = v.Merge(best, m), key.Merge(bestKey, m)
					bestArg = at.Add(offs[e]).Merge(bestArg, m)
				}
				best.AsInt32x8().Permute(perm.AsUint32x8()).AsFloat32x8().StoreSlicePart(y[o+j : o+wo])
				bestArg.Permute(perm.AsUint32x8()).StoreSlicePart(arg[o+j : o+wo])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}
