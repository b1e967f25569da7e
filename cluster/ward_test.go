package cluster_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/cluster"
	"github.com/flsweep/flsweep/fl"
)

// Known values from scipy 1.10.1 and scikit-learn 1.2.1 (Debian bookworm's
// python3-scipy and python3-sklearn), generated once by
//
//	Z = scipy.cluster.hierarchy.linkage(rows, "ward")
//	AgglomerativeClustering(n_clusters=m, linkage="ward").fit(rows).labels_
//	scipy.cluster.hierarchy.fcluster(Z, t, criterion="distance")
//
// on the rows below (the gaussian rows are numpy.random.default_rng(7)
// normals rounded to 3 decimals; the HiCS rows are the rows of the distance
// matrix arccos(cos(Δb_u, Δb_k)) + 10·|Ĥ_u − Ĥ_k| of 12 synthetic clients:
// Δb_k = e_{k mod 4}·(1 + 0.1k), centred, Ĥ_k = 0.1 + 0.01k for k < 8 and
// 1.2 + 0.01k after, rounded to 6 decimals).
var scipyCases = []struct {
	name        string
	rows        [][]float64
	tree        []cluster.Merge
	m           int
	sklearn     []int // sklearn's labels for m clusters
	fclusterT   float64
	fclusterOut []int // fcluster's labels at fclusterT (nil: not checked)
}{
	{
		name: "gaussian 10x4",
		rows: [][]float64{{0.001, 0.299, -0.274, -0.891}, {-0.455, -0.992, 0.06, 1.34}, {-0.492, -0.62, 0.49, 0.357}, {0.105, -0.93, -0.029, 0.695}, {-1.344, -0.458, -1.901, -1.29}, {-1.842, -0.235, -1.267, 0.271}, {0.157, -0.187, -2.517, -0.539}, {-0.049, 0.113, -1.53, -0.478}, {-0.979, -0.809, 1.061, -0.808}, {-0.033, 0.884, -0.584, -0.112}},
		tree: []cluster.Merge{{1, 3, 0.8610400687540622, 2}, {0, 9, 1.0228988219760544, 2}, {6, 7, 1.053720076680709, 2}, {2, 10, 1.0820847163384824, 3}, {4, 5, 1.770991247860926, 2}, {8, 13, 2.4042445105826213, 4}, {11, 12, 2.425857168095434, 4}, {14, 16, 2.882412589018674, 6}, {15, 17, 4.735753505691219, 10}},
		m:    3, sklearn: []int{0, 1, 1, 1, 2, 2, 0, 0, 1, 0},
	},
	{
		name: "HiCS distance rows 12",
		rows: [][]float64{
			{0.0, 2.010633, 2.110633, 2.210633, 0.4, 2.410633, 2.510633, 2.610633, 11.8, 13.810633, 13.910633, 14.010633},
			{2.010633, 0.0, 2.010633, 2.110633, 2.210633, 0.4, 2.410633, 2.510633, 13.610633, 11.8, 13.810633, 13.910633},
			{2.110633, 2.010633, 0.0, 2.010633, 2.110633, 2.210633, 0.4, 2.410633, 13.510633, 13.610633, 11.8, 13.810633},
			{2.210633, 2.110633, 2.010633, 0.0, 2.010633, 2.110633, 2.210633, 0.4, 13.410633, 13.510633, 13.610633, 11.8},
			{0.4, 2.210633, 2.110633, 2.010633, 0.0, 2.010633, 2.110633, 2.210633, 11.4, 13.410633, 13.510633, 13.610633},
			{2.410633, 0.4, 2.210633, 2.110633, 2.010633, 0.0, 2.010633, 2.110633, 13.210633, 11.4, 13.410633, 13.510633},
			{2.510633, 2.410633, 0.4, 2.210633, 2.110633, 2.010633, 0.0, 2.010633, 13.110633, 13.210633, 11.4, 13.410633},
			{2.610633, 2.510633, 2.410633, 0.4, 2.210633, 2.110633, 2.010633, 0.0, 13.010633, 13.110633, 13.210633, 11.4},
			{11.8, 13.610633, 13.510633, 13.410633, 11.4, 13.210633, 13.110633, 13.010633, 0.0, 2.010633, 2.110633, 2.210633},
			{13.810633, 11.8, 13.610633, 13.510633, 13.410633, 11.4, 13.210633, 13.110633, 2.010633, 0.0, 2.010633, 2.110633},
			{13.910633, 13.810633, 11.8, 13.610633, 13.510633, 13.410633, 11.4, 13.210633, 2.110633, 2.010633, 0.0, 2.010633},
			{14.010633, 13.910633, 13.810633, 11.8, 13.610633, 13.510633, 13.410633, 11.4, 2.210633, 2.110633, 2.010633, 0.0},
		},
		tree: []cluster.Merge{{0, 4, 1.2328828005937953, 2}, {1, 5, 1.2328828005937953, 2}, {2, 6, 1.2328828005937953, 2}, {3, 7, 1.2328828005937957, 2}, {8, 9, 4.773611207894291, 2}, {10, 11, 4.773611207894291, 2}, {16, 17, 5.003585750652626, 4}, {12, 13, 6.744977978338253, 4}, {14, 15, 6.744977978338253, 4}, {19, 20, 7.039299732804962, 8}, {18, 21, 91.08274626221298, 12}},
		m:    4, sklearn: []int{0, 0, 3, 2, 0, 0, 3, 2, 1, 1, 1, 1},
		fclusterT: 3.0, fclusterOut: []int{5, 6, 7, 8, 5, 6, 7, 8, 1, 2, 3, 4},
	},
	{
		// All distances tie at 0 (clustered sampling's first round: every
		// representative update is 0): the tie rule decides the tree.
		name: "ties: 6 equal rows",
		rows: [][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
		tree: []cluster.Merge{{0, 1, 0.0, 2}, {2, 6, 0.0, 3}, {3, 7, 0.0, 4}, {4, 8, 0.0, 5}, {5, 9, 0.0, 6}},
		m:    2, sklearn: []int{0, 0, 0, 0, 0, 1},
	},
	{
		name: "ties: 2 groups",
		rows: [][]float64{{0, 0}, {0, 0}, {5, 0}, {5, 0}, {0, 0}, {5, 0}},
		tree: []cluster.Merge{{0, 1, 0.0, 2}, {4, 6, 0.0, 3}, {2, 3, 0.0, 2}, {5, 8, 0.0, 3}, {7, 9, 8.660254037844387, 6}},
		m:    2, sklearn: []int{1, 1, 0, 0, 1, 0},
	},
}

// TestWardMatchesScipy: the merge tree equals scipy's linkage(rows, "ward")
// (cluster numbers and sizes exactly, heights to 1e-12 relative), Cut(m)
// is sklearn's partition and CutHeight is fcluster's, up to the numbering
// of the clusters.
func TestWardMatchesScipy(t *testing.T) {
	for _, tt := range scipyCases {
		got, err := cluster.Ward(tt.rows)
		if err != nil {
			t.Fatalf("%s: Ward: %v", tt.name, err)
		}
		if len(got) != len(tt.tree) {
			t.Fatalf("%s: Ward gave %d merges; want %d", tt.name, len(got), len(tt.tree))
		}
		for i, g := range got {
			w := tt.tree[i]
			if g.A != w.A || g.B != w.B || g.Size != w.Size || math.Abs(g.Height-w.Height) > 1e-12*math.Max(1, w.Height) {
				t.Errorf("%s: merge %d = %+v; want %+v (scipy)", tt.name, i, g, w)
			}
		}
		labels, err := cluster.Cut(got, tt.m)
		if err != nil {
			t.Fatal(err)
		}
		if !samePartition(labels, tt.sklearn) {
			t.Errorf("%s: Cut(%d) = %v; want the partition of sklearn's %v", tt.name, tt.m, labels, tt.sklearn)
		}
		if tt.fclusterOut != nil {
			flat, err := cluster.CutHeight(got, tt.fclusterT)
			if err != nil {
				t.Fatal(err)
			}
			if !samePartition(flat, tt.fclusterOut) {
				t.Errorf("%s: CutHeight(%v) = %v; want the partition of fcluster's %v", tt.name, tt.fclusterT, flat, tt.fclusterOut)
			}
		}
	}
}

// TestWardByHand: the points 0, 1, 3, 7 on a line. 0 and 1 merge at 1;
// {0,1} (centroid 0.5) and 3 merge at sqrt(2·2·1/3)·2.5 = 2.886751…, before
// 3 and 7 (4); the last merge is at sqrt(2·3·1/4)·(7 − 4/3) = 6.940220…
func TestWardByHand(t *testing.T) {
	got, err := cluster.Ward([][]float64{{0}, {1}, {3}, {7}})
	if err != nil {
		t.Fatal(err)
	}
	want := []cluster.Merge{
		{0, 1, 1, 2},
		{2, 4, math.Sqrt(4.0/3) * 2.5, 3},
		{3, 5, math.Sqrt(1.5) * (7 - 4.0/3), 4},
	}
	for i := range want {
		if got[i].A != want[i].A || got[i].B != want[i].B || got[i].Size != want[i].Size || math.Abs(got[i].Height-want[i].Height) > 1e-14 {
			t.Errorf("merge %d = %+v; want %+v", i, got[i], want[i])
		}
	}
	for _, tt := range []struct {
		giveM int
		want  []int
	}{
		{1, []int{0, 0, 0, 0}},
		{2, []int{0, 0, 0, 1}},
		{3, []int{0, 0, 1, 2}},
		{4, []int{0, 1, 2, 3}},
	} {
		labels, err := cluster.Cut(got, tt.giveM)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(labels, tt.want) {
			t.Errorf("Cut(%d) = %v; want %v", tt.giveM, labels, tt.want)
		}
	}
	for _, tt := range []struct {
		giveH float64
		want  []int
	}{
		{0.5, []int{0, 1, 2, 3}},
		{1, []int{0, 0, 1, 2}}, // a merge at exactly h is kept (fcluster's ≤)
		{3, []int{0, 0, 0, 1}},
		{100, []int{0, 0, 0, 0}},
	} {
		labels, err := cluster.CutHeight(got, tt.giveH)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(labels, tt.want) {
			t.Errorf("CutHeight(%v) = %v; want %v", tt.giveH, labels, tt.want)
		}
	}
}

// TestCutProperties: on random inputs Cut returns exactly m non-empty,
// disjoint clusters covering every leaf, and Ward is deterministic and
// does not depend on anything but its input.
func TestCutProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 2 + r.IntN(40)
		rows := make([][]float64, n)
		dim := 1 + r.IntN(6)
		for i := range rows {
			rows[i] = make([]float64, dim)
			for j := range rows[i] {
				rows[i][j] = math.Round(r.NormFloat64()*4) / 4 // coarse values, so ties happen
			}
		}
		tree, err := cluster.Ward(rows)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := cluster.Ward(rows)
		if !reflect.DeepEqual(tree, again) {
			t.Errorf("trial %d: Ward is not deterministic", trial)
		}
		for i := 1; i < len(tree); i++ {
			if tree[i].Height < tree[i-1].Height {
				t.Errorf("trial %d: heights not sorted at merge %d", trial, i)
			}
		}
		for m := 1; m <= n; m++ {
			labels, err := cluster.Cut(tree, m)
			if err != nil {
				t.Fatal(err)
			}
			cs := cluster.Clusters(labels)
			seen := 0
			for _, c := range cs {
				if len(c) == 0 {
					t.Errorf("trial %d: Cut(%d) has an empty cluster", trial, m)
				}
				seen += len(c)
			}
			if len(cs) != m || seen != n {
				t.Errorf("trial %d: Cut(%d) gave %d clusters over %d leaves; want %d over %d", trial, m, len(cs), seen, m, n)
			}
		}
	}
}

func TestWardBadInput(t *testing.T) {
	tests := []struct {
		name string
		give [][]float64
	}{
		{"empty", nil},
		{"ragged", [][]float64{{1, 2}, {1}}},
		{"NaN", [][]float64{{1}, {math.NaN()}}},
		{"Inf", [][]float64{{math.Inf(1)}, {0}}},
	}
	for _, tt := range tests {
		if _, err := cluster.Ward(tt.give); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: Ward = %v; want an fl.ErrInvalid", tt.name, err)
		}
	}
	tree, _ := cluster.Ward([][]float64{{0}, {1}, {2}})
	for _, m := range []int{0, 4} {
		if _, err := cluster.Cut(tree, m); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("Cut(%d) of 3 leaves = %v; want an fl.ErrInvalid", m, err)
		}
	}
	bad := []cluster.Merge{{0, 0, 1, 2}, {1, 3, 2, 3}}
	if _, err := cluster.Cut(bad, 1); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Cut of a merge of a leaf with itself = %v; want an fl.ErrInvalid", err)
	}
	one, err := cluster.Ward([][]float64{{3}})
	if err != nil || len(one) != 0 {
		t.Errorf("Ward of one row = %v, %v; want no merges", one, err)
	}
	if l, err := cluster.Cut(one, 1); err != nil || !reflect.DeepEqual(l, []int{0}) {
		t.Errorf("Cut of one leaf = %v, %v; want [0]", l, err)
	}
}

// samePartition reports whether two labelings group the leaves alike.
func samePartition(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	ab, ba := map[int]int{}, map[int]int{}
	for i := range a {
		if x, ok := ab[a[i]]; ok && x != b[i] {
			return false
		}
		if y, ok := ba[b[i]]; ok && y != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

// TestEuclideanParallelExact: the distances computed on several cores are
// bit for bit those of one loop over the pairs in order.
func TestEuclideanParallelExact(t *testing.T) {
	n, dim := 300, 300 // above the size that goes parallel
	rows := gaussianRows(rand.New(rand.NewPCG(3, 4)), n, dim)
	got := cluster.Euclidean(rows)
	at := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := 0.0
			for k := range rows[i] {
				e := rows[i][k] - rows[j][k]
				s += e * e
			}
			if want := math.Sqrt(s); got[at] != want {
				t.Fatalf("distance %d–%d = %v; want %v", i, j, got[at], want)
			}
			at++
		}
	}
}
