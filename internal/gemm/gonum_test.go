//go:build !openblas

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGonumGemmExact checks that gonumGemm, gonum's Sgemm block by block in
// the calling goroutine, computes what gonum's Sgemm computes with its
// goroutines, bit for bit, in every orientation, with and without beta.
func TestGonumGemmExact(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	for _, s := range [][3]int{{50, 200, 784}, {200, 784, 50}, {130, 129, 200}, {64, 256, 70}, {300, 10, 65}, {10, 10, 10}} {
		m, n, k := s[0], s[1], s[2]
		for _, o := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			tA, tB := o[0], o[1]
			lda, ldb := k, n
			if tA {
				lda = m
			}
			if tB {
				ldb = k
			}
			a, b := fill(m*k), fill(k*n)
			for _, ab := range [][2]float32{{1, 0}, {-0.01, 1}, {0.5, 0.25}} {
				got, want := fill(m*n), make([]float32, m*n)
				copy(want, got)
				gonumGemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], got, n)
				gonumBLAS.Sgemm(trans(tA), trans(tB), m, n, k, ab[0], a, lda, b, ldb, ab[1], want, n)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%d×%d×%d tA=%v tB=%v alpha=%v beta=%v: c[%d] = %v, gonum %v", m, n, k, tA, tB, ab[0], ab[1], i, got[i], want[i])
					}
				}
			}
		}
	}
}
