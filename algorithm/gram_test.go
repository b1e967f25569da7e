package algorithm

import (
	"math"
	"math/rand/v2"
	"testing"

	cblas "gonum.org/v1/gonum/blas"
	gonum "gonum.org/v1/gonum/blas/gonum"
)

// TestSymmetricGramIsDgemm: symmetricGram gives gonum's Dgemm's bits on
// both of Dgemm's paths and at the edges of its blocks (m and n below, at
// and past 64; −0 and a row of zeros included), so FedFV's projections are
// unchanged. It fails if a gonum upgrade changes how Dgemm sums.
func TestSymmetricGramIsDgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var blas gonum.Implementation
	for _, m := range []int{1, 2, 31, 64, 65, 100, 128, 129, 200} {
		for _, n := range []int{1, 63, 64, 65, 1000, 4099} {
			x := make([]float64, m*n)
			for i := range x {
				x[i] = r.NormFloat64() * math.Exp(4*r.NormFloat64())
			}
			x[0] = math.Copysign(0, -1)
			if m > 1 {
				clear(x[n : 2*n])
			}
			want := make([]float64, m*m)
			blas.Dgemm(cblas.NoTrans, cblas.Trans, m, m, n, 1, x, n, x, n, 0, want, m)
			got := make([]float64, m*m)
			for i := range got {
				got[i] = math.NaN() // overwritten, not added to
			}
			symmetricGram(x, m, n, got)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Errorf("m = %d n = %d: entry (%d, %d) = %v; Dgemm gives %v", m, n, i/m, i%m, got[i], want[i])
					break
				}
			}
		}
	}
}

// BenchmarkSymmetricGram: FedFV's Gram matrix of 100 updates of the
// cross-device MLP (54,410 parameters), by gonum's Dgemm and by
// symmetricGram (the same bits).
func BenchmarkSymmetricGram(b *testing.B) {
	const m, n = 100, 54410
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, m*n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	g := make([]float64, m*m)
	b.Run("dgemm", func(b *testing.B) {
		var blas gonum.Implementation
		for b.Loop() {
			blas.Dgemm(cblas.NoTrans, cblas.Trans, m, m, n, 1, x, n, x, n, 0, g, m)
		}
	})
	b.Run("symmetric", func(b *testing.B) {
		for b.Loop() {
			symmetricGram(x, m, n, g)
		}
	})
}
