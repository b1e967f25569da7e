package cluster_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/flsweep/flsweep/cluster"
)

// sameClusters returns the first m at which the two trees' Cut(m)
// partitions differ (0: none does).
func sameClusters(t *testing.T, a, b []cluster.Merge) int {
	t.Helper()
	for m := 1; m <= len(a)+1; m++ {
		la, err := cluster.Cut(a, m)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := cluster.Cut(b, m)
		if err != nil {
			t.Fatal(err)
		}
		if !samePartition(la, lb) {
			return m
		}
	}
	return 0
}

// gramError returns the largest relative difference between the Gram and
// the direct form's distances, and fails when a pair at distance 0 in the
// direct form is not at exactly 0 in the Gram form.
func gramError(t *testing.T, name string, rows [][]float64) float64 {
	t.Helper()
	want, got := cluster.EuclideanDirect(rows), cluster.EuclideanGram(rows)
	worst := 0.0
	for i := range want {
		if want[i] == 0 && got[i] != 0 {
			t.Fatalf("%s: pair %d is %v in the Gram form; equal rows must be at 0 exactly", name, i, got[i])
		}
		if want[i] != 0 {
			worst = max(worst, math.Abs(got[i]-want[i])/want[i])
		}
	}
	return worst
}

// TestEuclideanGramForm: the Gram form gives the direct form's clusters
// (Cut at every m, so every partition of the tree) on each scipy fixture,
// ties included, and on larger inputs with exact duplicates, near
// duplicates and the block structure of HiCS-FL's distance rows; equal
// rows are at distance 0 exactly and every distance is within 1e-12
// relative of the direct sum (the bound stated in Euclidean's comment is
// 4e-11 at d = 10,000; measured values are printed with -v).
func TestEuclideanGramForm(t *testing.T) {
	check := func(name string, rows [][]float64) {
		t.Helper()
		n := len(rows)
		worst := gramError(t, name, rows)
		if worst > 1e-12 {
			t.Errorf("%s: the Gram form's distances differ from the direct sums by %.3g relative; want ≤ 1e-12", name, worst)
		}
		direct := cluster.WardOf(cluster.EuclideanDirect(rows), n)
		gram := cluster.WardOf(cluster.EuclideanGram(rows), n)
		if m := sameClusters(t, direct, gram); m != 0 {
			t.Errorf("%s: Cut(%d) differs between the Gram and the direct form", name, m)
		}
		t.Logf("%s: %d rows of %d, largest relative difference %.3g", name, n, len(rows[0]), worst)
	}
	for _, tt := range scipyCases {
		check(tt.name, tt.rows)
	}

	r := rand.New(rand.NewPCG(11, 12))
	// Gaussian rows around 8 centres, with exact and near duplicates.
	rows := make([][]float64, 600)
	centres := make([][]float64, 8)
	for c := range centres {
		centres[c] = make([]float64, 150)
		for j := range centres[c] {
			centres[c][j] = 5 * r.NormFloat64()
		}
	}
	for i := range rows {
		rows[i] = make([]float64, 150)
		switch {
		case i%50 == 49:
			copy(rows[i], rows[i-1]) // an exact duplicate
		case i%50 == 48:
			for j := range rows[i] {
				rows[i][j] = rows[i-1][j] + 1e-9*r.NormFloat64() // a near duplicate
			}
		default:
			for j := range rows[i] {
				rows[i][j] = centres[i%8][j] + r.NormFloat64()
			}
		}
	}
	check("gaussian centres with duplicates", rows)

	// HiCS-FL's rows: arccos distances between clients' bias updates drawn
	// around 10 label profiles, plus λ·|H_u − H_k|.
	n := 700
	v := make([][]float64, n)
	h := make([]float64, n)
	for k := range v {
		v[k] = make([]float64, 10)
		for c := range v[k] {
			v[k][c] = 0.1 * r.NormFloat64()
		}
		v[k][k%10] += 1
		h[k] = 0.5 + 0.1*float64(k%3) + 0.01*r.Float64()
	}
	hics := make([][]float64, n)
	for u := range hics {
		hics[u] = make([]float64, n)
		for k := range hics[u] {
			if u == k {
				continue
			}
			dot, nu, nk := 0.0, 0.0, 0.0
			for c := range v[u] {
				dot += v[u][c] * v[k][c]
				nu += v[u][c] * v[u][c]
				nk += v[k][c] * v[k][c]
			}
			hics[u][k] = math.Acos(max(-1, min(1, dot/math.Sqrt(nu*nk)))) + 10*math.Abs(h[u]-h[k])
		}
	}
	check("HiCS-FL distance rows", hics)
}

// TestEuclideanTakesGramFormBySize: Euclidean is the direct form below
// GramWork, and from it on the Gram form, bit for bit, unless most pairs
// are close (rows in tight groups: the direct form); the Gram form does
// not depend on GOMAXPROCS.
func TestEuclideanTakesGramFormBySize(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	rowsOf := func(n, dim int) [][]float64 { return gaussianRows(r, n, dim) }
	// 1100 rows in two tight groups: half the pairs are close, so the direct
	// form at any size.
	grouped := rowsOf(1100, 1100)
	for i, r := range grouped {
		for j := range r {
			r[j] = 0.01*r[j] + float64(1+i%2)
		}
	}
	if got, want := cluster.Euclidean(grouped), cluster.EuclideanDirect(grouped); !sameBits(got, want) {
		t.Error("1100 rows in 2 tight groups: Euclidean is not the direct form")
	}
	small := rowsOf(40, 30)
	if got, want := cluster.Euclidean(small), cluster.EuclideanDirect(small); !sameBits(got, want) {
		t.Error("40 rows of 30: Euclidean is not the direct form")
	}
	dim := 1100 // 1100 rows of 1100: n·(n−1)/2·d ≥ GramWork, and more than two blocks
	if float64(dim)*float64(dim-1)/2*float64(dim) < cluster.GramWork {
		t.Fatalf("the large case is below GramWork = %d", cluster.GramWork)
	}
	large := rowsOf(dim, dim)
	var first []float64
	for _, procs := range []int{1, 2, 5} {
		was := runtime.GOMAXPROCS(procs)
		got := cluster.Euclidean(large)
		runtime.GOMAXPROCS(was)
		if first == nil {
			first = got
			if want := cluster.EuclideanGram(large); !sameBits(got, want) {
				t.Fatal("1100 rows of 1100: Euclidean is not the Gram form")
			}
			continue
		}
		if !sameBits(got, first) {
			t.Errorf("GOMAXPROCS %d: the Gram form's bits differ from GOMAXPROCS 1's", procs)
		}
	}
}

// gaussianRows returns n rows of dim standard normal draws from r, row by
// row.
func gaussianRows(r *rand.Rand, n, dim int) [][]float64 {
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = make([]float64, dim)
		for j := range rows[i] {
			rows[i][j] = r.NormFloat64()
		}
	}
	return rows
}

// sameBits reports whether a and b hold the same float64 bits.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
