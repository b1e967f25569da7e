//go:build goexperiment.simd && amd64

package vector

import (
	"math"
	"simd/archsimd"
)

// AVX-512 versions of the float32 inner loops (see vector.go): vectors of
// 16 float32 or 8 float64 lanes, tails in masked loads and stores or in
// scalar code.
//
// The rule of Go 1.26's archsimd these and every vector kernel of the
// package follow: no legacy-SSE instruction between a kernel's first
// vector instruction and its ClearAVXUpperBits (VZEROUPPER). Go compiles
// its scalar float arithmetic, copies of structs and arrays of 16 bytes or
// more (a convGeom, a [4][]float32), small copy() calls (runtime.memmove)
// and BroadcastFloat32x16(0) to legacy-SSE instructions, and each one
// that runs while the upper halves of the vector registers hold data
// costs a state change: on the Intel Xeon (AVX-512, AMX) of issue 15's
// later measurements about 100 ns, against 1 for the vector step beside
// it (a throwaway benchmark: 1,000 steps of a vector add and one scalar
// float64 add took 107 µs, with a 32-byte copy() 109 µs, with a vector
// add instead 1.0 µs). So kernels read the geometry they need before
// their first vector instruction, run scalar tails after
// ClearAVXUpperBits (the sums below: all planes' vector parts, then the
// tails), and make zero vectors as zero values. Runs of 8 (im2col,
// col2im) stay scalar: masked 16-lane loads and stores were slower there.

func init() {
	if archsimd.X86.AVX512() {
		Sets = append(Sets, Set{
			Name: "AVX-512", Add: addAVX, ReLU: reluAVX, ReLUDx: reluDxAVX, PReLU: preluAVX,
			BNAffine: bnAffineAVX, BNAffineReLU: bnAffineReLUAVX, AddReLU: addReLUAVX, BNDx: bnDxAVX, MaxPool: maxPoolAVX,
			ChannelSum: channelSumAVX, ChannelSqDev: channelSqDevAVX, ChannelDot: channelDotAVX, NegDot: negDotAVX,
			BNDxReLU: bnDxReLUAVX, ChannelDotReLU: channelDotReLUAVX,
		})
	}
	if archsimd.X86.AVX2() {
		// avx2.go
		Sets = append(Sets, Set{
			Name: "AVX2", Add: addVecAVX2, ReLU: reluAVX2, ReLUDx: reluDxAVX2, PReLU: preluAVX2,
			BNAffine: bnAffineAVX2, BNAffineReLU: bnAffineReLUAVX2, AddReLU: addReLUAVX2, BNDx: bnDxAVX2, MaxPool: maxPoolAVX2,
			ChannelSum: channelSumAVX2, ChannelSqDev: channelSqDevAVX2, ChannelDot: channelDotAVX2, NegDot: negDotAVX2,
			BNDxReLU: bnDxReLUAVX2, ChannelDotReLU: channelDotReLUAVX2,
		})
	}
}

func addAVX(y, a, b []float32) {
	n := len(y)
	a, b = a[:n], b[:n]
	i := 0
	for ; i+16 <= n; i += 16 {
		archsimd.LoadFloat32x16Slice(a[i:]).Add(archsimd.LoadFloat32x16Slice(b[i:])).StoreSlice(y[i:])
	}
	if i < n {
		archsimd.LoadFloat32x16SlicePart(a[i:]).Add(archsimd.LoadFloat32x16SlicePart(b[i:])).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func reluAVX(y, x []float32) {
	n := len(y)
	x = x[:n]
	var zero archsimd.Float32x16
	i := 0
	for ; i+16 <= n; i += 16 {
		xv := archsimd.LoadFloat32x16Slice(x[i:])
		xv.Merge(zero, xv.Greater(zero).Or(xv.IsNaN())).StoreSlice(y[i:])
	}
	if i < n {
		xv := archsimd.LoadFloat32x16SlicePart(x[i:])
		xv.Merge(zero, xv.Greater(zero).Or(xv.IsNaN())).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func reluDxAVX(dx, x, dy []float32) {
	n := len(dx)
	x, dy = x[:n], dy[:n]
	var zero archsimd.Float32x16
	i := 0
	for ; i+16 <= n; i += 16 {
		xv, dv := archsimd.LoadFloat32x16Slice(x[i:]), archsimd.LoadFloat32x16Slice(dy[i:])
		dv.Merge(zero, xv.Greater(zero)).StoreSlice(dx[i:])
	}
	if i < n {
		xv, dv := archsimd.LoadFloat32x16SlicePart(x[i:]), archsimd.LoadFloat32x16SlicePart(dy[i:])
		dv.Merge(zero, xv.Greater(zero)).StoreSlicePart(dx[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func preluAVX(y, x, d []float32, a float32) {
	n := len(y)
	x, d = x[:n], d[:n]
	av := archsimd.BroadcastFloat32x16(a)
	var zero archsimd.Float32x16
	i := 0
	for ; i+16 <= n; i += 16 {
		xv, dv := archsimd.LoadFloat32x16Slice(x[i:]), archsimd.LoadFloat32x16Slice(d[i:])
		pos := xv.Greater(zero) // false for NaN
		// (d where x > 0, else +0) + a·(+0 where x > 0, else d): preluGo's
		// formula, signed zeros included.
		dp, dn := dv.Merge(zero, pos), zero.Merge(dv, pos)
		dp.Add(dn.Mul(av)).StoreSlice(y[i:])
	}
	archsimd.ClearAVXUpperBits()
	if i < n {
		PReLUGo(y[i:], x[i:], d[i:], a)
	}
}

func bnAffineAVX(y, x, s, b []float32, hw int) {
	x = x[:len(y)]
	c := len(s)
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		sc, sh := s[ch], b[ch]
		ys, xs := y[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		sv, bv := archsimd.BroadcastFloat32x16(sc), archsimd.BroadcastFloat32x16(sh)
		i := 0
		for ; i+16 <= hw; i += 16 {
			archsimd.LoadFloat32x16Slice(xs[i:]).Mul(sv).Add(bv).StoreSlice(ys[i:])
		}
		if i < hw {
			// The tail through masked loads and stores: scalar code here
			// would mix SSE into AVX-512 code.
			archsimd.LoadFloat32x16SlicePart(xs[i:]).Mul(sv).Add(bv).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// relu16 is reluAVX's step: v where v > 0 or NaN, else +0.
func relu16(v, zero archsimd.Float32x16) archsimd.Float32x16 {
	return v.Merge(zero, v.Greater(zero).Or(v.IsNaN()))
}

func bnAffineReLUAVX(y, x, s, b []float32, hw int) {
	x = x[:len(y)]
	c := len(s)
	var zero archsimd.Float32x16
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		sc, sh := s[ch], b[ch]
		ys, xs := y[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		sv, bv := archsimd.BroadcastFloat32x16(sc), archsimd.BroadcastFloat32x16(sh)
		i := 0
		for ; i+16 <= hw; i += 16 {
			relu16(archsimd.LoadFloat32x16Slice(xs[i:]).Mul(sv).Add(bv), zero).StoreSlice(ys[i:])
		}
		if i < hw {
			relu16(archsimd.LoadFloat32x16SlicePart(xs[i:]).Mul(sv).Add(bv), zero).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

func addReLUAVX(y, a, b []float32) {
	n := len(y)
	a, b = a[:n], b[:n]
	var zero archsimd.Float32x16
	i := 0
	for ; i+16 <= n; i += 16 {
		relu16(archsimd.LoadFloat32x16Slice(a[i:]).Add(archsimd.LoadFloat32x16Slice(b[i:])), zero).StoreSlice(y[i:])
	}
	if i < n {
		relu16(archsimd.LoadFloat32x16SlicePart(a[i:]).Add(archsimd.LoadFloat32x16SlicePart(b[i:])), zero).StoreSlicePart(y[i:])
	}
	archsimd.ClearAVXUpperBits()
}

func bnDxAVX(y, dy, x, a, b, k []float32, hw int) {
	dy, x = dy[:len(y)], x[:len(y)]
	c := len(a)
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		ac, bc, kc := a[ch], b[ch], k[ch]
		ys, ds, xs := y[p*hw:(p+1)*hw], dy[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		av, bv, kv := archsimd.BroadcastFloat32x16(ac), archsimd.BroadcastFloat32x16(bc), archsimd.BroadcastFloat32x16(kc)
		i := 0
		for ; i+16 <= hw; i += 16 {
			d, v := archsimd.LoadFloat32x16Slice(ds[i:]), archsimd.LoadFloat32x16Slice(xs[i:])
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlice(ys[i:])
		}
		if i < hw {
			d, v := archsimd.LoadFloat32x16SlicePart(ds[i:]), archsimd.LoadFloat32x16SlicePart(xs[i:])
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// bnDxReLUAVX is bnDxAVX of dy masked by the forward pass's ReLU: dy
// where x·s[c] + t[c] > 0, else +0. The product and the sum are rounded
// apart, as bnAffineReLUAVX computes them, so the mask is the ReLU's.
func bnDxReLUAVX(y, dy, x, a, b, k, s, t []float32, hw int) {
	dy, x = dy[:len(y)], x[:len(y)]
	c := len(a)
	var zero archsimd.Float32x16
	for p := 0; p*hw < len(y); p++ {
		ch := p % c
		ac, bc, kc, sc, tc := a[ch], b[ch], k[ch], s[ch], t[ch]
		ys, ds, xs := y[p*hw:(p+1)*hw], dy[p*hw:(p+1)*hw], x[p*hw:(p+1)*hw]
		av, bv, kv := archsimd.BroadcastFloat32x16(ac), archsimd.BroadcastFloat32x16(bc), archsimd.BroadcastFloat32x16(kc)
		sv, tv := archsimd.BroadcastFloat32x16(sc), archsimd.BroadcastFloat32x16(tc)
		i := 0
		for ; i+16 <= hw; i += 16 {
			d, v := archsimd.LoadFloat32x16Slice(ds[i:]), archsimd.LoadFloat32x16Slice(xs[i:])
			d = d.Merge(zero, v.Mul(sv).Add(tv).Greater(zero))
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlice(ys[i:])
		}
		if i < hw {
			d, v := archsimd.LoadFloat32x16SlicePart(ds[i:]), archsimd.LoadFloat32x16SlicePart(xs[i:])
			d = d.Merge(zero, v.Mul(sv).Add(tv).Greater(zero))
			d.Mul(av).Add(v.Mul(bv)).Add(kv).StoreSlicePart(ys[i:])
		}
	}
	archsimd.ClearAVXUpperBits()
}

// Index constants as arrays: loading them avoids broadcasts from scalar
// registers inside the loops.
var (
	evenIdx = [16]uint32{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
	oddIdx  = [16]uint32{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}
	lane2   = [16]int32{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}
)

// keys16 is floatKey on 16 lanes; minI, abs, inf and ones are its
// constants in every lane. (A method reading them through a pointer to a
// struct of vectors, as the 8-lane version had, does not assemble in Go
// 1.26: the compiler folds the Xor and Or into a VPTERNLOGD with a memory
// operand it cannot encode.)
func keys16(v archsimd.Float32x16, minI, abs, inf, ones archsimd.Int32x16) archsimd.Uint32x16 {
	b := v.AsInt32x16()
	key := b.Xor(b.ShiftAllRight(31).Or(minI))
	nan := b.And(abs).Greater(inf)
	return ones.Merge(key, nan).AsUint32x16()
}

// maxPoolAVX is maxPool32 with 16 windows per step: a row pair's 32 + 32
// inputs are split into the windows' four elements by even/odd
// permutations, compared by floatKey (so ties and NaNs resolve exactly as
// in maxPoolRowsGo), and the arg-maxes are carried along. The CIFAR CNN's
// first pool (rows of 14 windows) takes one step a row where 8 lanes took
// two.
func maxPoolAVX(y []float32, arg []int32, x []float32, planes, h, w int) {
	ho, wo := h/2, w/2
	ev, od, lanes := archsimd.LoadUint32x16(&evenIdx), archsimd.LoadUint32x16(&oddIdx), archsimd.LoadInt32x16(&lane2)
	minI, abs := archsimd.BroadcastInt32x16(math.MinInt32), archsimd.BroadcastInt32x16(math.MaxInt32)
	inf, ones := archsimd.BroadcastInt32x16(0x7f800000), archsimd.BroadcastInt32x16(-1)
	keys := func(v archsimd.Float32x16) archsimd.Uint32x16 { return keys16(v, minI, abs, inf, ones) }
	// Offsets of a window's second, third and fourth elements from its first.
	offs := [3]archsimd.Int32x16{archsimd.BroadcastInt32x16(1), archsimd.BroadcastInt32x16(int32(w)), archsimd.BroadcastInt32x16(int32(w + 1))}
	for p := 0; p < planes; p++ {
		for i := 0; i < ho; i++ {
			r := p*h*w + 2*i*w
			o := (p*ho + i) * wo
			r0, r1 := x[r:r+w], x[r+w:r+2*w]
			for j := 0; j < wo; j += 16 {
				// The last step may hold fewer than 16 windows: partial
				// loads fill the missing lanes with zeros, partial stores
				// write only the windows that exist.
				a0, a1 := archsimd.LoadFloat32x16SlicePart(r0[2*j:]), archsimd.LoadFloat32x16SlicePart(r0[min(2*j+16, w):])
				b0, b1 := archsimd.LoadFloat32x16SlicePart(r1[2*j:]), archsimd.LoadFloat32x16SlicePart(r1[min(2*j+16, w):])
				at := archsimd.BroadcastInt32x16(int32(r + 2*j)).Add(lanes)
				best, bestArg := a0.ConcatPermute(a1, ev), at
				bestKey := keys(best)
				for e, v := range [3]archsimd.Float32x16{a0.ConcatPermute(a1, od), b0.ConcatPermute(b1, ev), b0.ConcatPermute(b1, od)} {
					key := keys(v)
					m := key.Greater(bestKey)
					best, bestKey = v.Merge(best, m), key.Merge(bestKey, m)
					bestArg = at.Add(offs[e]).Merge(bestArg, m)
				}
				best.StoreSlicePart(y[o+j : o+wo])
				bestArg.StoreSlicePart(arg[o+j : o+wo])
			}
		}
	}
	archsimd.ClearAVXUpperBits()
}

// The per-channel sums keep two 8-lane float64 accumulators per channel
// over all its planes (16 float32 per step), then add the lanes in a fixed
// order, then the scalar tails of the planes (hw not a multiple of 16).

func channelSumAVX(sum []float64, x []float32, c, hw int) {
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	for ch := range c {
		var s0, s1 archsimd.Float64x8
		for p := ch; p < planes; p += c {
			xs := x[p*hw : p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				s0 = s0.Add(archsimd.LoadFloat32x8Slice(xs[i:]).ConvertToFloat64())
				s1 = s1.Add(archsimd.LoadFloat32x8Slice(xs[i+8:]).ConvertToFloat64())
			}
		}
		var lanes [8]float64
		s0.Add(s1).Store(&lanes)
		archsimd.ClearAVXUpperBits()
		var tail float64
		for p := ch; f < hw && p < planes; p += c {
			for _, v := range x[p*hw+f : (p+1)*hw] {
				tail += float64(v)
			}
		}
		sum[ch] = sumLanes(&lanes) + tail
	}
}

func sumLanes(l *[8]float64) float64 {
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

func channelSqDevAVX(ss []float64, x []float32, mean []float64, hw int) {
	c := len(mean)
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	for ch := range c {
		mv := archsimd.BroadcastFloat64x8(mean[ch])
		var s0, s1 archsimd.Float64x8
		for p := ch; p < planes; p += c {
			xs := x[p*hw : p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				d0 := archsimd.LoadFloat32x8Slice(xs[i:]).ConvertToFloat64().Sub(mv)
				d1 := archsimd.LoadFloat32x8Slice(xs[i+8:]).ConvertToFloat64().Sub(mv)
				s0 = s0.Add(d0.Mul(d0))
				s1 = s1.Add(d1.Mul(d1))
			}
		}
		var lanes [8]float64
		s0.Add(s1).Store(&lanes)
		archsimd.ClearAVXUpperBits()
		m := mean[ch]
		var tail float64
		for p := ch; f < hw && p < planes; p += c {
			for _, v := range x[p*hw+f : (p+1)*hw] {
				d := float64(v) - m
				tail += d * d
			}
		}
		ss[ch] = sumLanes(&lanes) + tail
	}
}

func channelDotAVX(sdy, sdyx []float64, x, dy []float32, mean []float64, hw int) {
	c := len(mean)
	dy = dy[:len(x)]
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	for ch := range c {
		mv := archsimd.BroadcastFloat64x8(mean[ch])
		var a0, a1, b0, b1 archsimd.Float64x8
		for p := ch; p < planes; p += c {
			xs, ds := x[p*hw:p*hw+f], dy[p*hw:p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				d0, d1 := archsimd.LoadFloat32x8Slice(ds[i:]).ConvertToFloat64(), archsimd.LoadFloat32x8Slice(ds[i+8:]).ConvertToFloat64()
				x0 := archsimd.LoadFloat32x8Slice(xs[i:]).ConvertToFloat64().Sub(mv)
				x1 := archsimd.LoadFloat32x8Slice(xs[i+8:]).ConvertToFloat64().Sub(mv)
				a0, a1 = a0.Add(d0), a1.Add(d1)
				b0, b1 = b0.Add(d0.Mul(x0)), b1.Add(d1.Mul(x1))
			}
		}
		var la, lb [8]float64
		a0.Add(a1).Store(&la)
		b0.Add(b1).Store(&lb)
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

func negDotAVX(x, dy []float32) float64 {
	dy = dy[:len(x)]
	var s0, s1 archsimd.Float64x8
	var zero archsimd.Float32x8
	i := 0
	for ; i+16 <= len(x); i += 16 {
		x0, x1 := archsimd.LoadFloat32x8Slice(x[i:]), archsimd.LoadFloat32x8Slice(x[i+8:])
		// +0 where x > 0; x elsewhere (NaN included), as negDot.
		x0, x1 = zero.Merge(x0, x0.Greater(zero)), zero.Merge(x1, x1.Greater(zero))
		s0 = s0.Add(x0.ConvertToFloat64().Mul(archsimd.LoadFloat32x8Slice(dy[i:]).ConvertToFloat64()))
		s1 = s1.Add(x1.ConvertToFloat64().Mul(archsimd.LoadFloat32x8Slice(dy[i+8:]).ConvertToFloat64()))
	}
	var lanes [8]float64
	s0.Add(s1).Store(&lanes)
	archsimd.ClearAVXUpperBits()
	s := sumLanes(&lanes)
	for ; i < len(x); i++ {
		b := math.Float32bits(x[i])
		s += float64(math.Float32frombits(b&^PosMask(b))) * float64(dy[i])
	}
	return s
}

// channelDotReLUAVX is channelDotAVX of dy masked by the forward pass's
// ReLU, as bnDxReLUAVX masks it; the planes' tails mask in scalar code
// (maskedDy).
func channelDotReLUAVX(sdy, sdyx []float64, x, dy []float32, mean []float64, s, t []float32, hw int) {
	c := len(mean)
	dy = dy[:len(x)]
	planes, f := len(x)/hw, hw-hw%16 // f: the part of a plane the vector loop covers
	var zero archsimd.Float32x8
	for ch := range c {
		mv := archsimd.BroadcastFloat64x8(mean[ch])
		sv, tv := archsimd.BroadcastFloat32x8(s[ch]), archsimd.BroadcastFloat32x8(t[ch])
		var a0, a1, b0, b1 archsimd.Float64x8
		for p := ch; p < planes; p += c {
			xs, ds := x[p*hw:p*hw+f], dy[p*hw:p*hw+f]
			for i := 0; i+16 <= len(xs); i += 16 {
				u0, u1 := archsimd.LoadFloat32x8Slice(xs[i:]), archsimd.LoadFloat32x8Slice(xs[i+8:])
				e0 := archsimd.LoadFloat32x8Slice(ds[i:]).Merge(zero, u0.Mul(sv).Add(tv).Greater(zero))
				e1 := archsimd.LoadFloat32x8Slice(ds[i+8:]).Merge(zero, u1.Mul(sv).Add(tv).Greater(zero))
				d0, d1 := e0.ConvertToFloat64(), e1.ConvertToFloat64()
				x0, x1 := u0.ConvertToFloat64().Sub(mv), u1.ConvertToFloat64().Sub(mv)
				a0, a1 = a0.Add(d0), a1.Add(d1)
				b0, b1 = b0.Add(d0.Mul(x0)), b1.Add(d1.Mul(x1))
			}
		}
		var la, lb [8]float64
		a0.Add(a1).Store(&la)
		b0.Add(b1).Store(&lb)
		archsimd.ClearAVXUpperBits()
		ta, tb := dotTails(x, dy, mean[ch], s[ch], t[ch], ch, c, planes, hw, f)
		sdy[ch], sdyx[ch] = sumLanes(&la)+ta, sumLanes(&lb)+tb
	}
}

// dotTails returns channel ch's Σ dy and Σ dy·(x − m) over the planes'
// tails (from f on), with dy masked as maskedDy masks it.
func dotTails(x, dy []float32, m float64, s, t float32, ch, c, planes, hw, f int) (ta, tb float64) {
	for p := ch; f < hw && p < planes; p += c {
		for i := p*hw + f; i < (p+1)*hw; i++ {
			d := float64(maskedDy(x[i], dy[i], s, t))
			ta += d
			tb += d * (float64(x[i]) - m)
		}
	}
	return ta, tb
}

// maskedDy is dy where x·s + t > 0, else +0: the vector kernels' mask in
// scalar code (the conversion rounds the product on its own, as the
// vector multiply does, where a compiler may otherwise fuse it with the
// addition).
func maskedDy(x, dy, s, t float32) float32 {
	if float32(x*s)+t > 0 {
		return dy
	}
	return 0
}
