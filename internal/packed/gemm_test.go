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
		t.Skip("no AVX-512 or AVX2 on this CPU")
	}
	for _, ks := range kernelSets {
		t.Run(ks.name, func(t *testing.T) { testSgemm(t, ks) })
	}
}

func testSgemm(t *testing.T, ks *kernels) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{
		{1, 1, 1}, {14, 32, 1}, {14, 32, 7}, {13, 31, 5}, {15, 33, 257},
		{50, 200, 784}, {200, 784, 50}, {28, 64, 512}, {337, 70, 9}, {29, 1025, 300},
		{MC + MR + 3, NC + NR + 5, KC + 1},
	}
	var buf Buffers
	for _, tc := range cases(shapes, [][2]float32{{1, 0}, {1, 1}, {-0.25, 1}, {2, 0.5}}) {
		m, n, k, tA, tB, alpha, beta := tc.m, tc.n, tc.k, tc.tA, tc.tB, tc.alpha, tc.beta
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
		sgemm(ks, &buf, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		for i := range m {
			for j := range ldc {
				got, w := float64(c[i*ldc+j]), want[i*ldc+j]
				if j >= n {
					if got != w {
						t.Fatalf("%v: C[%d,%d] outside the matrix changed: %v, was %v", tc, i, j, got, w)
					}
					continue
				}
				var scale float64
				for p := range k {
					scale += math.Abs(float64(at(a, lda, tA, i, p)) * float64(at(b, ldb, tB, p, j)))
				}
				scale = math.Abs(float64(alpha))*scale + math.Abs(w)
				if math.IsNaN(got) || math.Abs(got-w) > 8*float64(k+2)*0x1p-24*scale {
					t.Fatalf("%v: C[%d,%d] = %v, want %v", tc, i, j, got, w)
				}
			}
		}
	}
}

// gemmCase is one product the tests run: its shape (op(A) m×k, op(B)
// k×n), orientations, alpha and beta.
type gemmCase struct {
	m, n, k     int
	tA, tB      bool
	alpha, beta float32
}

func (c gemmCase) String() string {
	return fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/alpha=%v/beta=%v", c.m, c.n, c.k, c.tA, c.tB, c.alpha, c.beta)
}

// cases is every shape with A and B each as stored and transposed and
// every (alpha, beta) pair, in that order of nesting.
func cases(shapes [][3]int, alphaBeta [][2]float32) []gemmCase {
	var out []gemmCase
	for _, s := range shapes {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, ab := range alphaBeta {
					out = append(out, gemmCase{s[0], s[1], s[2], tA, tB, ab[0], ab[1]})
				}
			}
		}
	}
	return out
}

// TestSgemmDeterministic: the same product twice, with buffers that held
// other blocks before, gives the same bits.
func TestSgemmDeterministic(t *testing.T) {
	if !Available {
		t.Skip("no AVX-512 or AVX2 on this CPU")
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

// fma32 is a·b + c rounded once to float32, as VFMADD231PS computes it: the
// product is exact in float64, the sum is rounded to odd there (TwoSum's
// error term tells which way the exact sum lies), and a value rounded to
// odd with at least two extra bits rounds to float32 as the exact sum would
// (Boldo and Melquiond, IEEE Trans. Computers 57(4), 2008).
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // the conversion keeps Go from fusing it
	s := p + float64(c)
	v := s - p
	e := (p - (s - v)) + (float64(c) - v)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}

// ordered is C = alpha·op(A)·op(B) + beta·C computed one entry at a time in
// the order the package documents, with the same roundings as the kernels:
// the dot-product path's 16 lanes per DK block and their summing tree, or
// the packed path's FMA chain per KC block added into C (written over C by
// the first block when beta is 0). Any kernel set must match it bit for
// bit, which is what makes the AVX-512 and AVX2 kernels agree.
func ordered(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			cij := &c[i*ldc+j]
			switch beta {
			case 0:
				*cij = 0
			case 1:
			default:
				*cij *= beta
			}
			if alpha == 0 || k == 0 {
				continue
			}
			if tB && !tA && k >= dotMinK && (m < transMinM || n < transMinN) {
				for pc := 0; pc < k; pc += DK {
					var l [16]float32
					for p := 0; p < min(DK, k-pc); p += 16 {
						for q := range l {
							var x, y float32
							if p+q < min(DK, k-pc) {
								x, y = at(a, lda, tA, i, pc+p+q), at(b, ldb, tB, pc+p+q, j)
							}
							l[q] = fma32(x, y, l[q])
						}
					}
					for q := range 8 {
						l[q] += l[q+8]
					}
					for q := range 4 {
						l[q] += l[q+4]
					}
					l[0], l[1] = l[0]+l[2], l[1]+l[3]
					*cij += float32(alpha * (l[0] + l[1]))
				}
				continue
			}
			for pc := 0; pc < k; pc += KC {
				var acc float32
				for p := pc; p < min(pc+KC, k); p++ {
					acc = fma32(float32(alpha*at(a, lda, tA, i, p)), at(b, ldb, tB, p, j), acc)
				}
				if pc == 0 && beta == 0 {
					*cij = acc
				} else {
					*cij += acc
				}
			}
		}
	}
}

// TestSgemmOrder checks every kernel set the CPU runs against ordered, bit
// for bit, on shapes with edge blocks of both kernels' register blocks,
// several KC and DK blocks, dot-product tails of 4 and 8 lanes, and B
// read in place and packed (m ≥ packMinM), and A·Bᵀ through packed Bᵀ
// (m ≥ transMinM) with whole and partial panels.
func TestSgemmOrder(t *testing.T) {
	if !Available {
		t.Skip("no AVX-512 or AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(5, 6))
	shapes := [][3]int{{1, 1, 1}, {13, 35, 600}, {7, 50, 100}, {20, 70, 9}, {16, 33, 257}, {5, 7, 64}, {70, 40, 300}, {70, 94, 300}, {100, 9, 70}, {100, 40, 300}, {97, 33, 83}, {96, 16, 600}, {64, 70, 300}}
	for _, ks := range kernelSets {
		var buf Buffers
		for _, tc := range cases(shapes, [][2]float32{{1, 0}, {1, 1}, {-0.25, 1}, {0.3, 0.7}}) {
			m, n, k, tA, tB, alpha, beta := tc.m, tc.n, tc.k, tc.tA, tc.tB, tc.alpha, tc.beta
			lda, ldb, ldc := k+1, n+2, n+3
			if tA {
				lda = m + 1
			}
			if tB {
				ldb = k + 2
			}
			a, b := randSlice(r, max(m, k)*lda), randSlice(r, max(n, k)*ldb)
			c := randSlice(r, m*ldc)
			want := append([]float32(nil), c...)
			ordered(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
			sgemm(ks, &buf, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			for q := range c {
				if math.Float32bits(c[q]) != math.Float32bits(want[q]) {
					t.Fatalf("%s %v: C[%d,%d] = %v, want %v", ks.name, tc, q/ldc, q%ldc, c[q], want[q])
				}
			}
		}
	}
}

// TestFMA32 checks the reference's fused multiply-add where rounding twice
// (to float64, then to float32) goes the wrong way: with a = 2⁻²⁴(1+2⁻¹²)
// and b = 1−2⁻¹²+2⁻²⁴, a·b + 1 = 1 + 2⁻²⁴ + 2⁻⁶⁰ lies just past the
// midpoint between 1 and its float32 successor 1+2⁻²³. Rounded once it goes
// up; rounded to float64 first it lands on the midpoint and then on 1 (to
// even).
func TestFMA32(t *testing.T) {
	a := float32(0x1p-24 * (1 + 0x1p-12))
	b := float32(1 - 0x1p-12 + 0x1p-24)
	if twice := float32(float64(float64(a)*float64(b)) + 1); twice != 1 {
		t.Fatalf("the case does not round twice to 1 (%v): fix the test", twice)
	}
	if got, want := fma32(a, b, 1), float32(1+0x1p-23); got != want {
		t.Errorf("fma32(a, b, 1) = %v, want %v", got, want)
	}
	if got, want := fma32(-a, b, -1), float32(-1-0x1p-23); got != want {
		t.Errorf("fma32(−a, b, −1) = %v, want %v", got, want)
	}
	if got, want := fma32(3, 5, 7), float32(22); got != want {
		t.Errorf("fma32(3, 5, 7) = %v, want %v", got, want)
	}
}
