package packed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// reference is C = alpha·op(A)·op(B) + beta·C in float64, the known value
// Sgemm is checked against.
func reference(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, len(c))
	for i := range c {
		out[i] = float64(c[i])
	}
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(at(a, lda, tA, i, p)) * float64(at(b, ldb, tB, p, j))
			}
			prev := float64(beta) * float64(c[i*ldc+j])
			if beta == 0 {
				prev = 0
			}
			out[i*ldc+j] = float64(alpha)*s + prev
		}
	}
	return out
}

// at is op(X)[i, j] for X stored row-major with rows ld apart.
func at(x []float32, ld int, t bool, i, j int) float32 {
	if t {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// TestSgemm checks every orientation against the float64 product, on
// shapes that cover full and edge blocks of every blocking level (MR, NR,
// KC, MC, NC), leading dimensions wider than the matrices, and alpha and
// beta. Entries of C outside the m×n matrix must not change, and beta 0
// must clear NaNs. The tolerance is relative to Σ|a·b|, a few float32
// roundings per term.
func TestSgemm(t *testing.T) {
	if !Available {
		t.Skip("no AVX-512 on this CPU")
	}
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{
		{1, 1, 1}, {14, 32, 1}, {14, 32, 7}, {13, 31, 5}, {15, 33, 257},
		{50, 200, 784}, {200, 784, 50}, {28, 64, 512}, {337, 70, 9}, {29, 1025, 300},
		{MC + MR + 3, NC + NR + 5, KC + 1},
	}
	var buf Buffers
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {-0.25, 1}, {2, 0.5}} {
					alpha, beta := ab[0], ab[1]
					name := fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/alpha=%v/beta=%v", m, n, k, tA, tB, alpha, beta)
					lda, ar := k+3, m
					if tA {
						lda, ar = m+2, k
					}
					ldb, br := n+1, k
					if tB {
						ldb, br = k+5, n
					}
					ldc := n + 4
					a := randSlice(r, ar*lda)
					b := randSlice(r, br*ldb)
					c := randSlice(r, m*ldc)
					if beta == 0 {
						c[0] = float32(math.NaN())
					}
					want := reference(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					Sgemm(&buf, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					for i := range m {
						for j := range ldc {
							got, w := float64(c[i*ldc+j]), want[i*ldc+j]
							if j >= n {
								if got != w {
									t.Fatalf("%s: C[%d,%d] outside the matrix changed: %v, was %v", name, i, j, got, w)
								}
								continue
							}
							var scale float64
							for p := range k {
								scale += math.Abs(float64(at(a, lda, tA, i, p)) * float64(at(b, ldb, tB, p, j)))
							}
							scale = math.Abs(float64(alpha))*scale + math.Abs(w)
							if math.IsNaN(got) || math.Abs(got-w) > 8*float64(k+2)*0x1p-24*scale {
								t.Fatalf("%s: C[%d,%d] = %v, want %v", name, i, j, got, w)
							}
						}
					}
				}
			}
		}
	}
}

// TestSgemmDeterministic: the same product twice, with buffers that held
// other blocks before, gives the same bits.
func TestSgemmDeterministic(t *testing.T) {
	if !Available {
		t.Skip("no AVX-512 on this CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 61, 1100, 600
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	c1, c2 := make([]float32, m*n), make([]float32, m*n)
	var buf1, buf2 Buffers
	Sgemm(&buf1, false, false, m, n, k, 1, a, k, b, n, 0, c1, n)
	Sgemm(&buf2, true, false, 300, 40, 70, 1, randSlice(r, 70*300), 300, randSlice(r, 70*40), 40, 0, make([]float32, 300*40), 40)
	Sgemm(&buf2, false, false, m, n, k, 1, a, k, b, n, 0, c2, n)
	for i := range c1 {
		if math.Float32bits(c1[i]) != math.Float32bits(c2[i]) {
			t.Fatalf("C[%d]: %v then %v", i, c1[i], c2[i])
		}
	}
}
