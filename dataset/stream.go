package dataset

import (
	"crypto/sha256"
	"math/bits"
	"math/rand/v2"
)

// This file holds the package's random draws. Each is defined here on the raw ChaCha8 output
// (C2SP chacha8rand, a fixed specification) with exact integer or power-of-two arithmetic, rather
// than through rand.Rand's methods, whose algorithms the standard library does not promise to keep.
// So fetched files and synthetic data are bit-identical on every platform and Go release.

// newStream returns a ChaCha8 generator keyed by the SHA-256 of label.
func newStream(label string) *rand.ChaCha8 {
	return rand.NewChaCha8(sha256.Sum256([]byte(label)))
}

// uintN returns a uniform integer in [0, n) for n > 0 by Lemire's multiply-and-reject method
// (D. Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 29(1), 2019, Algorithm 5).
func uintN(src *rand.ChaCha8, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// shuffle permutes p in place by the Fisher–Yates (Durstenfeld) shuffle:
//
//	for i = len(p)−1 down to 1: j = uintN(src, i+1); swap p[i], p[j]
func shuffle[T any](p []T, src *rand.ChaCha8) {
	for i := len(p) - 1; i > 0; i-- {
		j := uintN(src, uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
}

// unit returns a uniform float64 in [0, 1) with 53 random bits: (x >> 11)·2⁻⁵³, which is exact.
func unit(src *rand.ChaCha8) float64 {
	return float64(src.Uint64()>>11) * 0x1p-53
}

// approxNormal returns an approximately standard normal value: the Irwin–Hall sum of 12 uniforms
// on [0,1), minus 6, which has mean 0, variance 1 and support [−6, 6]. The uniforms are the twelve
// 32-bit halves of six ChaCha8 outputs, summed as integers, so the result is exact:
//
//	z = (Σ_{k=1}^{12} u_k)·2⁻³² − 6,  u_k uniform on [0, 2³²)
func approxNormal(src *rand.ChaCha8) float64 {
	var sum uint64
	for range 6 {
		x := src.Uint64()
		sum += x>>32 + x&0xffffffff
	}
	return float64(float64(sum)*0x1p-32) - 6
}
