package sampling_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/cluster"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// randomTree returns Ward's tree of n random 3-vectors.
func randomTree(t *testing.T, n int, r *rand.Rand) []cluster.Merge {
	t.Helper()
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	}
	tree, err := cluster.Ward(rows)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// dirichletish returns n positive importances summing to 1, each ≤ 1/m.
func dirichletish(n, m int, r *rand.Rand) []float64 {
	for {
		p := make([]float64, n)
		s := 0.0
		for k := range p {
			p[k] = -math.Log(1 - r.Float64())
			s += p[k]
		}
		ok := true
		for k := range p {
			p[k] /= s
			ok = ok && p[k] <= 1/float64(m)
		}
		if ok {
			return p
		}
	}
}

// TestSimilarityUrns: Algorithm 2's urns each hold mass 1, every client's
// masses add up to m·p_k over the urns (so the scheme is unbiased whatever
// the shuffle), and every flat cluster of the mass cut has mass ≤ 1/m; for
// equal p_k and a tree of 10 leaves with m = 5 (Fraboni's test_Alg2), too.
func TestSimilarityUrns(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for trial := range 50 {
		n := 5 + r.IntN(40)
		m := 1 + r.IntN(min(n/3, 10)) // p_k ≤ 1/m is likely for random p
		p := dirichletish(n, m, r)
		if trial%5 == 0 {
			for k := range p {
				p[k] = 1 / float64(n)
			}
		}
		tree := randomTree(t, n, r)
		urns, labels, err := sampling.Urns(tree, p, m, r)
		if err != nil {
			t.Fatalf("trial %d (n %d, m %d): %v", trial, n, m, err)
		}
		if len(urns) != m {
			t.Fatalf("trial %d: %d urns; want %d", trial, len(urns), m)
		}
		total := make([]float64, n)
		for j, u := range urns {
			s := 0.0
			for k, v := range u {
				s += v
				total[k] += v
			}
			if math.Abs(s-1) > 1e-9 {
				t.Errorf("trial %d: urn %d holds mass %v; want 1", trial, j, s)
			}
		}
		for k := range total {
			if math.Abs(total[k]-float64(m)*p[k]) > 1e-9 {
				t.Errorf("trial %d: client %d has mass %v over the urns; want m·p_k = %v", trial, k, total[k], float64(m)*p[k])
			}
		}
		for _, g := range cluster.Clusters(labels) {
			s := 0.0
			for _, k := range g {
				s += p[k]
			}
			if s > 1/float64(m)+1e-9 {
				t.Errorf("trial %d: flat cluster %v has mass %v > 1/m", trial, g, s)
			}
		}
	}
}

// TestClusteredSimilarityUnbiased: on a fixed tree, over 10⁵ draws, E[ω_k] = p_k
// within 5 standard errors for every client, each round draws m clients
// (Σ Draws = m) with Σ ω = 1.
func TestClusteredSimilarityUnbiased(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	const n, m, R = 30, 4, 100000
	p := dirichletish(n, m, r)
	tree := randomTree(t, n, r)
	sum := make([]float64, n)
	sumSq := make([]float64, n)
	w := make([]float64, n)
	for range R {
		sel, err := sampling.SimilaritySample(tree, p, m, r)
		if err != nil {
			t.Fatal(err)
		}
		clear(w)
		draws, tot := 0, 0.0
		for i, k := range sel.Clients {
			w[k] = sel.Weights[i]
			draws += sel.Draws[i]
			tot += sel.Weights[i]
		}
		if draws != m || math.Abs(tot-1) > 1e-12 || len(sel.Cluster) != len(sel.Clients) {
			t.Fatalf("selection %+v: want %d draws, weights summing to 1, a cluster per client", sel, m)
		}
		for k := range w {
			sum[k] += w[k]
			sumSq[k] += w[k] * w[k]
		}
	}
	for k := range p {
		mean := sum[k] / R
		se := math.Sqrt((sumSq[k]/R - mean*mean) / R)
		if math.Abs(mean-p[k]) > 5*se+1e-12 {
			t.Errorf("client %d: E[ω_k] = %.5f; want p_k = %.5f within 5 SE (%.5f)", k, mean, p[k], se)
		}
	}
}

// TestUpdateDistances checks the three distances on known vectors: the
// arccos of orthogonal, parallel, opposite and zero updates (0 when a norm
// is 0), Σ|a − b| and the code's "L2", Σ(a − b)² without a root.
func TestUpdateDistances(t *testing.T) {
	g := [][]float32{{1, 0, 0}, {0, 2, 0}, {3, 0, 0}, {-1, 0, 0}, nil}
	tests := []struct {
		give string
		want [][]float64
	}{
		{sampling.DistanceArccos, [][]float64{
			{0, math.Pi / 2, 0, math.Pi, 0},
			{math.Pi / 2, 0, math.Pi / 2, math.Pi / 2, 0},
			{0, math.Pi / 2, 0, math.Pi, 0},
			{math.Pi, math.Pi / 2, math.Pi, 0, 0},
			{0, 0, 0, 0, 0},
		}},
		{sampling.DistanceL1, [][]float64{
			{0, 3, 2, 2, 1}, {3, 0, 5, 3, 2}, {2, 5, 0, 4, 3}, {2, 3, 4, 0, 1}, {1, 2, 3, 1, 0},
		}},
		{sampling.DistanceL2, [][]float64{
			{0, 5, 4, 4, 1}, {5, 0, 13, 5, 4}, {4, 13, 0, 16, 9}, {4, 5, 16, 0, 1}, {1, 4, 9, 1, 0},
		}},
	}
	for _, tt := range tests {
		got, err := sampling.UpdateDistances(g, tt.give)
		if err != nil {
			t.Fatal(err)
		}
		for u := range got {
			for k := range got {
				if math.Abs(got[u][k]-tt.want[u][k]) > 1e-15 {
					t.Errorf("%s: D(%d,%d) = %v; want %v", tt.give, u, k, got[u][k], tt.want[u][k])
				}
			}
		}
	}
	if _, err := sampling.UpdateDistances([][]float32{{1}, {1, 2}}, sampling.DistanceL1); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("UpdateDistances of vectors of lengths 1 and 2 = %v; want an fl.ErrInvalid", err)
	}
}

// TestClusteredSimilarityRounds drives the sampler through Plan and Observe with an
// in-memory per-client memory: the warm-up rounds are MD sampling; later
// rounds recall every client's last update (nil before it trained), return
// m draws with ω = count/m and a cluster per client, and equal inputs give
// equal plans.
func TestClusteredSimilarityRounds(t *testing.T) {
	pop := synthPop(t, 20)
	s, err := sampling.NewClusteredSimilarity(4, fl.Options{"warmup": 2})
	if err != nil {
		t.Fatal(err)
	}
	c := s.(sampling.ClusteredSimilarity)
	st, err := c.Init(pop)
	if err != nil {
		t.Fatal(err)
	}
	mem := map[int][]float32{}
	r := rand.New(rand.NewPCG(1, 1))
	recalled := 0
	for round := 1; round <= 8; round++ {
		in := fl.PlanInput{Round: round, Pop: pop, State: st, Recall: func(k int) ([]float32, error) { recalled++; return mem[k], nil }}
		key := fl.Key{Seed: 2, Point: "cs", Round: round, Client: fl.Server, Purpose: fl.PurposeSample}
		recalled = 0
		p, err := c.Plan(in, fl.Stream(key))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := map[bool]int{true: 0, false: 20}[round <= 2]; recalled != want {
			t.Errorf("round %d: %d recalls; want %d", round, recalled, want)
		}
		again, _ := c.Plan(in, fl.Stream(key))
		if !reflect.DeepEqual(p, again) {
			t.Errorf("round %d: Plan is not pure", round)
		}
		sel := *p.Selection
		draws := 0
		for i := range sel.Clients {
			draws += sel.Draws[i]
			if sel.Weights[i] != float64(sel.Draws[i])/4 {
				t.Errorf("round %d: weight %v for %d draws; want count/m", round, sel.Weights[i], sel.Draws[i])
			}
		}
		if draws != 4 || (round > 2 && len(sel.Cluster) != len(sel.Clients)) || (round <= 2 && sel.Cluster != nil) {
			t.Errorf("round %d: %+v; want 4 draws, clusters after the warm-up", round, sel)
		}
		st, err = c.Observe(fl.ObserveInput{Round: round, Pop: pop, State: st, Selection: sel,
			Delta: func(k int) ([]float32, error) {
				v := make([]float32, 50)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				return v, nil
			},
			Remember: func(k int, v []float32) { mem[k] = v }})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range sel.Clients {
			if mem[k] == nil {
				t.Errorf("round %d: client %d trained but its update was not remembered", round, k)
			}
		}
	}
	if _, err := sampling.NewClusteredSimilarity(4, fl.Options{"distance": "cosine"}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("distance cosine = %v; want an fl.ErrInvalid naming arccos, l1, l2", err)
	}
	big := fl.Population{Sizes: []int{10, 1, 1}, P: []float64{0.8, 0.1, 0.1}}
	if _, err := c.Init(big); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Init with p_0 = 0.8 > 1/m = 0.25 = %v; want an fl.ErrInvalid", err)
	}
}
