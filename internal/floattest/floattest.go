// Package floattest holds the float32 helpers the tests of the trainer and
// of its kernels (package conv) share: a bit-for-bit comparison and values
// with zeros of both signs among them.
package floattest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SameBits checks got and want bit for bit, signed zeros included; any NaN
// matches any NaN.
func SameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != got[i] && want[i] != want[i] {
			continue // NaN: which operand's payload propagates depends on instruction operand order
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v (%#x), want %v (%#x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// MixedVals returns n unit normals from r with zeros of both signs among
// them: +0 and −0 each with probability 1/k.
func MixedVals(r *rand.Rand, n, k int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch r.IntN(k) {
		case 0:
			v[i] = 0
		case 1:
			v[i] = float32(math.Copysign(0, -1))
		default:
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}
