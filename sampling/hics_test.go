package sampling_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/cluster"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// hicsOf builds HiCS from options with k clients per round and T_R rounds.
func hicsOf(t *testing.T, k, rounds int, opts fl.Options) sampling.HiCS {
	t.Helper()
	p, err := sampling.NewHiCS(k, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p.(fl.Scheduled).WithRounds(rounds).(sampling.HiCS)
}

// synthBias returns specs/hicsfl.md §6 check B8's population: nBal balanced
// clients (Δb small noise, Ĥ ≈ 2.2 at T = 0.0025) followed by nOne
// single-class clients in 4 class directions (Δb ≈ +0.028 on the class,
// −0.003 elsewhere, Ĥ ≈ 0).
func synthBias(nBal, nOne int, r *rand.Rand) [][]float64 {
	var out [][]float64
	for k := range nBal + nOne {
		v := make([]float64, 10)
		for c := range v {
			v[c] = 0.0005 * r.NormFloat64()
		}
		if k >= nBal {
			c := (k - nBal) % 4
			for i := range v {
				v[i] -= 0.003
			}
			v[c] += 0.031
		}
		out = append(out, v)
	}
	return out
}

func float32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// TestHiCSDistances is check B7: the matrix is symmetric with a zero
// diagonal, non-negative, and λ|Ĥ_u − Ĥ_k| ≤ D(u,k) ≤ π + λ|Ĥ_u − Ĥ_k|,
// also with zero updates (cosine term 0) and parallel ones (cosine 1 ± ε).
func TestHiCSDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	db := synthBias(6, 14, r)
	db = append(db, make([]float64, 10), db[3]) // a client never seen, and a copy
	var v [][]float32
	var H []float64
	for _, x := range db {
		v = append(v, float32s(x))
		H = append(H, sampling.EstimateEntropy(x, 0.0025))
	}
	d, err := sampling.HiCSDistances(v, H, 10)
	if err != nil {
		t.Fatal(err)
	}
	for u := range d {
		if d[u][u] != 0 {
			t.Errorf("D(%d,%d) = %v; want 0", u, u, d[u][u])
		}
		for k := range d {
			e := 10 * math.Abs(H[u]-H[k])
			if d[u][k] != d[k][u] || math.IsNaN(d[u][k]) || d[u][k] < e-1e-12 || d[u][k] > math.Pi+e+1e-12 {
				t.Errorf("D(%d,%d) = %v, D(%d,%d) = %v; want equal, in [λΔĤ, π + λΔĤ] = [%v, %v]", u, k, d[u][k], k, u, d[k][u], e, math.Pi+e)
			}
		}
	}
	// The zero update has cosine term 0: its distance is the entropy term.
	z := len(db) - 2
	for k := range d {
		if want := 10 * math.Abs(H[z]-H[k]); math.Abs(d[z][k]-want) > 1e-12 {
			t.Errorf("D(zero, %d) = %v; want λ|ΔĤ| = %v", k, d[z][k], want)
		}
	}
	// Orthogonal updates at equal entropy: π/2.
	d2, _ := sampling.HiCSDistances([][]float32{{1, 0}, {0, 1}}, []float64{0.5, 0.5}, 10)
	if math.Abs(d2[0][1]-math.Pi/2) > 1e-15 {
		t.Errorf("D of orthogonal updates = %v; want π/2", d2[0][1])
	}
	if _, err := sampling.HiCSDistances(v, H[:3], 10); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("HiCSDistances with 3 entropies for %d vectors = %v; want an fl.ErrInvalid", len(v), err)
	}
}

// TestHiCSClustering is check B8: 10 balanced clients (Ĥ ≈ 2) and 40
// single-class clients in 4 class directions (Ĥ ≈ 0), λ = 10, M = 5: Ward
// on the rows of D returns exactly 5 non-empty disjoint clusters covering
// the 50 clients, the same ones every time, and no balanced client shares a
// cluster with a single-class client.
func TestHiCSClustering(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 8))
		db := synthBias(10, 40, r)
		var v [][]float32
		var H []float64
		for _, x := range db {
			v = append(v, float32s(x))
			H = append(H, sampling.EstimateEntropy(x, 0.0025))
		}
		d, err := sampling.HiCSDistances(v, H, 10)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := cluster.Ward(d)
		if err != nil {
			t.Fatal(err)
		}
		labels, err := cluster.Cut(tree, 5)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := cluster.Ward(d)
		if !reflect.DeepEqual(tree, again) {
			t.Errorf("seed %d: Ward is not deterministic", seed)
		}
		groups := cluster.Clusters(labels)
		if len(groups) != 5 {
			t.Errorf("seed %d: %d clusters; want 5", seed, len(groups))
		}
		for _, g := range groups {
			bal := 0
			for _, k := range g {
				if k < 10 {
					bal++
				}
			}
			if bal != 0 && bal != len(g) {
				t.Errorf("seed %d: cluster %v mixes balanced (< 10) and single-class clients; Ĥ = %.2f", seed, g, H)
			}
		}
	}
}

// TestClusterProbabilities is check C9, with the spec's values: π sums to
// 1, is uniform when γ = 0 or when every H̄ is equal, and with H̄ = [2.2,
// 0, 0, 0, 0] π_1 = e^8.8/(e^8.8 + 4) = 0.99940 at γ = 4 and 9.025/13.025 =
// 0.6929 at γ = 1.
func TestClusterProbabilities(t *testing.T) {
	groups := [][]int{{0}, {1, 2}, {3}, {4}, {5, 6, 7}}
	H := []float64{2.2, 0, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name      string
		giveH     []float64
		giveGamma float64
		want0     float64 // π_1
	}{
		{"γ = 4", H, 4, math.Exp(8.8) / (math.Exp(8.8) + 4)},
		{"γ = 1", H, 1, math.Exp(2.2) / (math.Exp(2.2) + 4)},
		{"γ = 0", H, 0, 0.2},
		{"equal H̄", []float64{1, 1, 1, 1, 1, 1, 1, 1}, 4, 0.2},
		{"huge γ", H, 1e4, 1},
	}
	for _, tt := range tests {
		pi := sampling.ClusterProbabilities(groups, tt.giveH, tt.giveGamma)
		sum := 0.0
		for _, v := range pi {
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 || math.Abs(pi[0]-tt.want0) > 1e-12 {
			t.Errorf("%s: π = %v (Σ = %v); want π_1 = %v, Σ = 1", tt.name, pi, sum, tt.want0)
		}
	}
	if pi := sampling.ClusterProbabilities(groups, H, 4); math.Abs(pi[0]-0.99940) > 5e-6 {
		t.Errorf("π_1 at γ = 4 = %.5f; want 0.99940 (specs/hicsfl.md §6 check 9)", pi[0])
	}
	if pi := sampling.ClusterProbabilities(groups, H, 1); math.Abs(pi[0]-0.6929) > 5e-5 {
		t.Errorf("π_1 at γ = 1 = %.4f; want 0.6929", pi[0])
	}
}

// TestHiCSGamma is check C10: γ_t = γ0(1 − t/T_R) is γ0 at t = 0, γ0/2 at
// mid-training, 0 at the end; the code's 0-based round is one round behind.
func TestHiCSGamma(t *testing.T) {
	paper := hicsOf(t, 5, 200, nil)
	code := hicsOf(t, 5, 200, fl.Options{"anneal": "code"})
	tests := []struct {
		give      sampling.HiCS
		giveRound int
		want      float64
	}{
		{paper, 0, 4}, {paper, 100, 2}, {paper, 200, 0}, {paper, 11, 4 * (1 - 11.0/200)},
		{code, 1, 4}, {code, 101, 2}, {code, 200, 4.0 / 200},
	}
	for _, tt := range tests {
		if got := tt.give.Gamma(tt.giveRound); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%s anneal: Gamma(%d) = %v; want %v", tt.give.Anneal, tt.giveRound, got, tt.want)
		}
	}
}

// TestHiCSDrawInclusion is check C11 on fixed clusters, by Monte Carlo
// over 10⁵ rounds: every draw has exactly K distinct clients and never
// more than |G_m| from a cluster; the inclusion frequencies sum to K; the
// cluster with the highest H̄ is included most. The paper's loop (Algorithm
// 1 lines 8–12, drawn literally here: a group ~ π, a client ~ p̃_m, repeats
// ignored) and the sampler's exact draw of its distinct clients give the
// same inclusion probabilities within 5 standard errors.
func TestHiCSDrawInclusion(t *testing.T) {
	groups := [][]int{{0, 1}, {2, 3, 4, 5}, {6, 7, 8}, {9}, {10, 11, 12, 13, 14, 15}}
	H := []float64{2.0, 1.8, 0.1, 0.2, 0.1, 0.3, 1.0, 0.9, 1.1, 0.5, 0, 0, 0.1, 0, 0, 0.2}
	p := make([]float64, 16)
	for k := range p {
		p[k] = float64(1+k%5) / 48 // Σ = 1
	}
	const K, R = 5, 100000
	pi := sampling.ClusterProbabilities(groups, H, 2)
	member := map[int]int{}
	for m, g := range groups {
		for _, k := range g {
			member[k] = m
		}
	}
	check := func(name string, draw func(r *rand.Rand) []int) []float64 {
		r := rand.New(rand.NewPCG(9, 9))
		freq := make([]float64, 16)
		for range R {
			sel := draw(r)
			per := make([]int, len(groups))
			seen := map[int]bool{}
			for _, k := range sel {
				if seen[k] {
					t.Fatalf("%s: client %d drawn twice in %v", name, k, sel)
				}
				seen[k] = true
				per[member[k]]++
				freq[k]++
			}
			if len(sel) != K {
				t.Fatalf("%s: %d clients; want %d", name, len(sel), K)
			}
			for m, c := range per {
				if c > len(groups[m]) {
					t.Fatalf("%s: %d clients from cluster %v", name, c, groups[m])
				}
			}
		}
		sum := 0.0
		for k := range freq {
			freq[k] /= R
			sum += freq[k]
		}
		if math.Abs(sum-K) > 0.005*K {
			t.Errorf("%s: inclusion frequencies sum to %v; want %d ± 0.5%%", name, sum, K)
		}
		perCluster := make([]float64, len(groups))
		for k, f := range freq {
			perCluster[member[k]] += f / float64(len(groups[member[k]]))
		}
		if slices.Index(perCluster, slices.Max(perCluster)) != 0 {
			t.Errorf("%s: mean inclusion per cluster %v; want the highest for cluster 0 (H̄ = 1.9)", name, perCluster)
		}
		return freq
	}
	exact := check("paper draw", func(r *rand.Rand) []int {
		sel, err := sampling.PaperDraw(groups, pi, p, K, r)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	})
	literal := check("literal loop", func(r *rand.Rand) []int {
		var sel []int
		for len(sel) < K {
			m := pickFrom(pi, r)
			g := groups[m]
			w := make([]float64, len(g))
			for i, k := range g {
				w[i] = p[k]
			}
			if k := g[pickFrom(w, r)]; !slices.Contains(sel, k) {
				sel = append(sel, k)
			}
		}
		return sel
	})
	for k := range exact {
		se := math.Sqrt(exact[k]*(1-exact[k])/R + literal[k]*(1-literal[k])/R)
		if math.Abs(exact[k]-literal[k]) > 5*se+1e-12 {
			t.Errorf("client %d: included with frequency %.4f by the exact draw, %.4f by the literal loop; want equal within 5 SE (%.4f)", k, exact[k], literal[k], se)
		}
	}
	check("code draw", func(r *rand.Rand) []int { return sampling.CodeDraw(groups, pi, K, r) })
}

func pickFrom(w []float64, r *rand.Rand) int {
	total := 0.0
	for _, v := range w {
		total += v
	}
	u, acc := r.Float64()*total, 0.0
	for i, v := range w {
		acc += v
		if u < acc {
			return i
		}
	}
	return len(w) - 1
}

// hicsRun drives a HiCS sampler through rounds of Plan and Observe with
// the given Δb per client (what each client's training would report), and
// returns the selections.
func hicsRun(t *testing.T, h sampling.HiCS, pop fl.Population, db [][]float64, rounds int) []fl.Selection {
	t.Helper()
	st, err := h.Init(pop)
	if err != nil {
		t.Fatal(err)
	}
	mem := map[int][]float32{}
	out := layer(len(db[0]))
	var sels []fl.Selection
	for round := 1; round <= rounds; round++ {
		in := fl.PlanInput{Round: round, Pop: pop, State: st, Recall: func(k int) ([]float32, error) { return mem[k], nil }}
		p, err := h.Plan(in, fl.Stream(fl.Key{Seed: 1, Point: "p", Round: round, Client: fl.Server, Purpose: fl.PurposeSample}))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		again, _ := h.Plan(in, fl.Stream(fl.Key{Seed: 1, Point: "p", Round: round, Client: fl.Server, Purpose: fl.PurposeSample}))
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("round %d: Plan is not pure: %+v, then %+v", round, p, again)
		}
		sel := *p.Selection
		sels = append(sels, sel)
		var sums []fl.ClientSummary
		for _, k := range sel.Clients {
			sums = append(sums, fl.ClientSummary{Client: k, BiasDelta: db[k]})
		}
		st, err = h.Observe(fl.ObserveInput{Round: round, Pop: pop, State: st, Selection: sel, Clients: sums, Output: out,
			Delta:    func(k int) ([]float32, error) { return deltaOf(db[k], out), nil },
			Remember: func(k int, v []float32) { mem[k] = v }})
		if err != nil {
			t.Fatalf("round %d: Observe: %v", round, err)
		}
	}
	return sels
}

// layer is the output layer of a logreg on 3 features and c classes, and
// deltaOf a whole-model update whose bias part is db and whose ΔW rows are
// db·(1, 2, 3) (row means 2·Δb, as with positive features).
func layer(c int) fl.OutputLayer {
	return fl.OutputLayer{W: 0, B: 3 * c, Classes: c, Embedding: 3}
}

func deltaOf(db []float64, o fl.OutputLayer) []float32 {
	d := make([]float32, o.B+o.Classes)
	for c, v := range db {
		for j := range 3 {
			d[c*3+j] = float32(v * float64(j+1))
		}
		d[o.B+c] = float32(v)
	}
	return d
}

func synthPop(t *testing.T, n int) fl.Population {
	t.Helper()
	sizes := make([]int, n)
	for k := range sizes {
		sizes[k] = 100 + 10*(k%7)
	}
	pop, err := fl.NewPopulation(sizes, fl.ImportanceSize)
	if err != nil {
		t.Fatal(err)
	}
	pop.Classes = 10
	return pop
}

// TestHiCSWarmupAndSelection covers checks C11–C13 through Plan and
// Observe on check B8's population (N = 50, K = 5, 10 balanced clients):
// rounds 1–10 select each client exactly once (the paper's random order;
// the code's blocks 0–4, 5–9, …) with no clusters; every later round has K
// distinct clients with weights exactly 1/K, each client's Ĥ and cluster;
// and while γ is large most selected clients are balanced ones.
func TestHiCSWarmupAndSelection(t *testing.T) {
	db := synthBias(10, 40, rand.New(rand.NewPCG(3, 3)))
	// Put the balanced clients in the middle of the ID range, so the code's
	// blocks and the paper's random order differ.
	db = append(append(append([][]float64{}, db[10:30]...), db[:10]...), db[30:]...)
	balanced := func(k int) bool { return k >= 20 && k < 30 }
	pop := synthPop(t, 50)
	for _, tt := range []struct {
		name string
		opts fl.Options
	}{
		{"paper", nil},
		{"code", fl.Options{"warmup": "code", "anneal": "code", "within": "uniform", "entropy_from": "weights", "cosine_on": "output", "freeze_after_warmup": true}},
		{"oracle", fl.Options{"oracle": true}},
		{"scale_free", fl.Options{"estimator": "scale_free"}},
	} {
		h := hicsOf(t, 5, 60, tt.opts)
		p := pop
		if h.Oracle {
			p.Entropy = make([]float64, 50)
			for k := range p.Entropy {
				if balanced(k) {
					p.Entropy[k] = 1.6
				}
			}
		}
		sels := hicsRun(t, h, p, db, 30)
		seen := map[int]int{}
		for r, sel := range sels[:10] {
			if sel.Cluster != nil || len(sel.Entropy) != len(sel.Clients) {
				t.Errorf("%s round %d: clusters %v, %d entropies; want none and one per client", tt.name, r+1, sel.Cluster, len(sel.Entropy))
			}
			for _, k := range sel.Clients {
				seen[k]++
			}
			if tt.name == "code" && !reflect.DeepEqual(sel.Clients, []int{5 * r, 5*r + 1, 5*r + 2, 5*r + 3, 5*r + 4}) {
				t.Errorf("code warm-up round %d = %v; want the block %d..%d", r+1, sel.Clients, 5*r, 5*r+4)
			}
		}
		if len(seen) != 50 {
			t.Errorf("%s: warm-up selected %d distinct clients; want all 50 once", tt.name, len(seen))
		}
		for k, c := range seen {
			if c != 1 {
				t.Errorf("%s: warm-up selected client %d %d times; want once", tt.name, k, c)
			}
		}
		if tt.name == "paper" && reflect.DeepEqual(sels[0].Clients, []int{0, 1, 2, 3, 4}) {
			t.Errorf("paper warm-up round 1 = %v; want a random draw", sels[0].Clients)
		}
		good := 0
		for r, sel := range sels[10:] {
			if len(sel.Clients) != 5 || len(sel.Cluster) != 5 || len(sel.Entropy) != 5 {
				t.Fatalf("%s round %d: %+v; want 5 clients with their clusters and entropies", tt.name, r+11, sel)
			}
			sum := 0.0
			for i, k := range sel.Clients {
				if sel.Weights[i] != 0.2 || sel.Draws[i] != 1 {
					t.Errorf("%s round %d: weight %v, draws %d; want exactly 1/K and 1", tt.name, r+11, sel.Weights[i], sel.Draws[i])
				}
				sum += sel.Weights[i]
				if balanced(k) {
					good++
				}
			}
			if sum != 1 {
				t.Errorf("%s round %d: weights sum to %v; want 1", tt.name, r+11, sum)
			}
		}
		// 10 of the 50 clients are balanced; uniform sampling would give 20%.
		if share := float64(good) / (20 * 5); share < 0.6 {
			t.Errorf("%s: %.0f%% of the clients of rounds 11–30 are balanced; want ≥ 60%% (random: 20%%)", tt.name, 100*share)
		}
	}
}

// TestHiCSFallback: with fallback_variance the code's switch sends a round
// whose var(Ĥ) reaches the threshold to Fraboni's Algorithm 2 on the HiCS
// distances: K urn draws, ω = count/K (duplicates allowed), clusters given.
func TestHiCSFallback(t *testing.T) {
	db := synthBias(10, 40, rand.New(rand.NewPCG(3, 3)))
	pop := synthPop(t, 50)
	h := hicsOf(t, 5, 40, fl.Options{"fallback_variance": 0.1})
	sels := hicsRun(t, h, pop, db, 20)
	for r, sel := range sels[10:] {
		sum, draws := 0.0, 0
		for i := range sel.Clients {
			sum += sel.Weights[i]
			draws += sel.Draws[i]
			if sel.Weights[i] != float64(sel.Draws[i])/5 {
				t.Errorf("round %d: weight %v for %d draws; want count/K", r+11, sel.Weights[i], sel.Draws[i])
			}
		}
		if draws != 5 || math.Abs(sum-1) > 1e-15 || len(sel.Cluster) != len(sel.Clients) {
			t.Errorf("round %d: %+v; want 5 draws with weights summing to 1 and clusters", r+11, sel)
		}
	}
}

// TestHiCSScaleFreeEntropies: with estimator "scale_free" (OURS) the
// selections carry Ĥ′ = EstimateEntropyScaleFree(Δb_k, T′) of each client's
// stored Δb (float32), ln 10 before any update (Δb = 0, round 1); with
// entropy_from "weights" the ΔW row means, here 2·Δb (deltaOf), give the
// same Ĥ′ up to their float32 rounding, where the paper's Ĥ of them is
// not Ĥ of Δb.
func TestHiCSScaleFreeEntropies(t *testing.T) {
	db := synthBias(10, 40, rand.New(rand.NewPCG(3, 3)))
	pop := synthPop(t, 50)
	sf := func(k int) float64 {
		v := make([]float64, 10)
		for c, x := range db[k] {
			v[c] = float64(float32(x))
		}
		return sampling.EstimateEntropyScaleFree(v, 0.3)
	}
	tests := []struct {
		name string
		opts fl.Options
		tol  float64
	}{
		{"bias", fl.Options{"estimator": "scale_free", "scale_free_temperature": 0.3}, 0},
		{"weights", fl.Options{"estimator": "scale_free", "scale_free_temperature": 0.3, "entropy_from": "weights"}, 1e-5},
	}
	for _, tt := range tests {
		sels := hicsRun(t, hicsOf(t, 5, 40, tt.opts), pop, db, 14)
		for i, h := range sels[0].Entropy {
			if h != math.Log(10) {
				t.Errorf("%s round 1 client %d: Ĥ′ = %v; want ln 10 (no update yet)", tt.name, sels[0].Clients[i], h)
			}
		}
		for r, sel := range sels[10:] {
			for i, k := range sel.Clients {
				if want := sf(k); math.Abs(sel.Entropy[i]-want) > tt.tol {
					t.Errorf("%s round %d client %d: Ĥ′ = %.17g; want %.17g", tt.name, r+11, k, sel.Entropy[i], want)
				}
			}
		}
	}
	paper := hicsRun(t, hicsOf(t, 5, 40, fl.Options{"entropy_from": "weights"}), pop, db, 11)[10]
	k := paper.Clients[0]
	if h := sampling.EstimateEntropy(db[k], 0.0025); math.Abs(paper.Entropy[0]-h) < 1e-3 {
		t.Errorf("the paper's Ĥ of the row means 2·Δb = %v, of Δb %v; want them apart (this test's contrast)", paper.Entropy[0], h)
	}
}

func TestHiCSBadInput(t *testing.T) {
	tests := []struct {
		name string
		give fl.Options
	}{
		{"unknown option", fl.Options{"temprature": 0.1}},
		{"zero temperature", fl.Options{"temperature": 0}},
		{"negative lambda", fl.Options{"lambda": -1}},
		{"no clusters", fl.Options{"clusters": 0}},
		{"bad warmup", fl.Options{"warmup": "random"}},
		{"bad within", fl.Options{"within": "p"}},
		{"negative variance", fl.Options{"fallback_variance": -0.1}},
		{"negative rounds", fl.Options{"rounds": -3}},
		{"bad estimator", fl.Options{"estimator": "normalised"}},
		{"T′ without scale_free", fl.Options{"scale_free_temperature": 0.2}},
		{"T′ with paper", fl.Options{"estimator": "paper", "scale_free_temperature": 0.2}},
		{"T with scale_free", fl.Options{"estimator": "scale_free", "temperature": 0.0025}},
		{"zero T′", fl.Options{"estimator": "scale_free", "scale_free_temperature": 0}},
		{"negative T′", fl.Options{"estimator": "scale_free", "scale_free_temperature": -0.2}},
	}
	for _, tt := range tests {
		if _, err := sampling.NewHiCS(5, tt.give); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: NewHiCS(%v) = %v; want an fl.ErrInvalid", tt.name, tt.give, err)
		}
	}
	pop := synthPop(t, 4)
	if _, err := hicsOf(t, 5, 10, nil).Init(pop); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Init with K = 5 > 4 clients = %v; want an fl.ErrInvalid", err)
	}
	if _, err := hicsOf(t, 2, 10, fl.Options{"oracle": true}).Init(pop); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Init of the oracle without true entropies = %v; want an fl.ErrInvalid", err)
	}
	h, _ := sampling.NewHiCS(2, nil)
	st, _ := h.(sampling.HiCS).Init(pop)
	if _, err := h.Plan(fl.PlanInput{Round: 1, Pop: pop, State: st}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Plan without T_R = %v; want an fl.ErrInvalid", err)
	}
}
