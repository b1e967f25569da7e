package vector

import "math"

// The scalar loops the vector kernels share with the trainer's portable
// paths (their tails run them, so that both compute the same bits).

// PosMask is all ones if the float32 with bits b is > 0 (and not NaN),
// else 0: exactly then b − 1 < 0x7f800000 as unsigned (+0 wraps around to
// 0xffffffff; negative numbers and NaNs are ≥ 0x7f800000), and the sign
// of the 64-bit difference is the mask.
func PosMask(b uint32) uint32 { return uint32((int64(b-1) - 0x7f800000) >> 63) }

// PReLUGo is the trainer's prelu for float32 (y = d where x > 0, else
// a·d; the choice a bit mask, PosMask), in portable Go.
func PReLUGo(y, x, d []float32, a float32) {
	x, d = x[:len(y)], d[:len(y)]
	for i, v := range x {
		m, b := PosMask(math.Float32bits(v)), math.Float32bits(d[i])
		y[i] = math.Float32frombits(b&m) + a*math.Float32frombits(b&^m)
	}
}
