package sampling_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
	"github.com/flsweep/flsweep/sampling/samplingtest"
)

// The canonical configurations of specs/sampling-theory.md §9: n = 10, m = 5,
// P1 p_i = 1/10 (Sp2 = 0.1) and P2 p_i = i/55, i = 1..10 (Sp2 = 0.127273).
func p1() []float64 {
	p := make([]float64, 10)
	for i := range p {
		p[i] = 0.1
	}
	return p
}

func p2() []float64 {
	p := make([]float64, 10)
	for i := range p {
		p[i] = float64(i+1) / 55
	}
	return p
}

// popOf returns a population with importances p (sizes proportional to p
// where that is meaningful; samplers read only P).
func popOf(p []float64) fl.Population {
	sizes := make([]int, len(p))
	for i, v := range p {
		sizes[i] = max(1, int(math.Round(v*1000)))
	}
	return fl.Population{Sizes: sizes, P: p}
}

// schemes are the samplers with closed forms, at m = 5.
func schemes() []struct {
	name string
	s    interface {
		fl.Sampler
		sampling.ClosedForm
	}
	withRepl bool
} {
	return []struct {
		name string
		s    interface {
			fl.Sampler
			sampling.ClosedForm
		}
		withRepl bool
	}{
		{"md", sampling.MD{M: 5}, true},
		{"uniform", sampling.Uniform{M: 5}, false},
		{"binomial", sampling.Binomial{M: 5}, false},
		{"poisson", sampling.Poisson{M: 5}, false},
		{"clustered", sampling.Clustered{M: 5}, true},
	}
}

// TestAcceptanceA1Unbiased: E[ω_k] = p_k for every scheme with a closed form
// under P1 and P2, and for random under P1, within 4 standard errors per
// client over 20,000 seeded rounds (specs/sampling-theory.md §9 A1, §3
// point 5); every draw also meets the sampler contract (samplingtest).
func TestAcceptanceA1Unbiased(t *testing.T) {
	for _, pc := range []struct {
		name string
		p    []float64
	}{{"P1", p1()}, {"P2", p2()}} {
		for _, sc := range schemes() {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				if err := samplingtest.Check(sc.s, popOf(pc.p), samplingtest.Options{WithReplacement: sc.withRepl, SE: 4, Seed: 21}); err != nil {
					t.Error(err)
				}
			})
		}
	}
	t.Run("P1/random", func(t *testing.T) {
		if err := samplingtest.Check(sampling.Random{M: 5}, popOf(p1()), samplingtest.Options{SE: 4, Seed: 21}); err != nil {
			t.Error(err)
		}
	})
}

// TestAcceptanceA2WeightSums: Σ ω = 1 within 1e-12 in every draw for MD,
// clustered under P1 and P2, and uniform under P1 (§9 A2); random's weights
// 1/m sum to 1 too.
func TestAcceptanceA2WeightSums(t *testing.T) {
	tests := []struct {
		name string
		give fl.Sampler
		p    []float64
	}{
		{"md/P1", sampling.MD{M: 5}, p1()},
		{"md/P2", sampling.MD{M: 5}, p2()},
		{"clustered/P1", sampling.Clustered{M: 5}, p1()},
		{"clustered/P2", sampling.Clustered{M: 5}, p2()},
		{"uniform/P1", sampling.Uniform{M: 5}, p1()},
		{"random/P2", sampling.Random{M: 5}, p2()},
	}
	for _, tt := range tests {
		r := rand.New(rand.NewPCG(5, 6))
		for i := range 10000 {
			sel, err := tt.give.Sample(i, popOf(tt.p), r)
			if err != nil {
				t.Fatal(err)
			}
			s := 0.0
			for _, w := range sel.Weights {
				s += w
			}
			if math.Abs(s-1) >= 1e-12 {
				t.Errorf("%s: draw %d: Σω = %.17g; want 1", tt.name, i, s)
				break
			}
		}
	}
}

// TestClosedFormsKnownValues checks every closed form against the values of
// specs/sampling-theory.md §9 B and C (computed there by hand and confirmed
// by the spec's own Monte Carlo), to 5e-5 (the spec prints 4–6 digits).
func TestClosedFormsKnownValues(t *testing.T) {
	tests := []struct {
		name                                     string
		give                                     sampling.ClosedForm
		p                                        []float64
		sigma, alpha, varSum, gamma, meanN, varN float64
		effective                                bool
	}{
		// §9 B (Σ, α, γ), A3–A4 (VarSum) and C (E[N], Var[N]).
		{"md/P1", sampling.MD{M: 5}, p1(), 0.18, 0.2, 0, 0.2, 4.0951, math.NaN(), false},
		{"md/P2", sampling.MD{M: 5}, p2(), 0.174545, 0.2, 0, 0.2, 3.8957, math.NaN(), false},
		{"uniform/P1", sampling.Uniform{M: 5}, p1(), 0.1, 1.0 / 9, 0, 1.0 / 9, 5, 0, false},
		{"uniform/P2", sampling.Uniform{M: 5}, p2(), 0.127273, 1.0 / 9, 0.030303, 0.141414, 5, 0, false},
		{"binomial/P1", sampling.Binomial{M: 5}, p1(), 0.1, 0, 0.1, 0.1, 5, 2.5, false},
		{"binomial/P2", sampling.Binomial{M: 5}, p2(), 0.127273, 0, 0.127273, 0.127273, 5, 2.5, false},
		{"poisson/P1", sampling.Poisson{M: 5}, p1(), 0.1, 0, 0.1, 0.1, 5, 2.5, false},
		{"poisson/P2", sampling.Poisson{M: 5}, p2(), 0.072727, 0, 0.072727, 0.072727, 5, 1.818182, false},
		// Clustered: effective α (eq. 22) 0.1111 and 0.1083; γ from it
		// (the spec's table has no γ: Assumption 1 fails). Under P1 every
		// cluster is a pair, so Var[N] = 0.
		{"clustered/P1", sampling.Clustered{M: 5}, p1(), 0.1, 1.0 / 9, 0, 0.1 + 0.1/9, 5, 0, true},
		// E[N] = 52/11 exactly from the P2 rows in elevenths (the spec
		// prints 4.727).
		{"clustered/P2", sampling.Clustered{M: 5}, p2(), 0.094545, 0.108333, 0, 0.094545 + 0.108333*0.127273, 52.0 / 11, math.NaN(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.give.Closed(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"Sigma", got.Sigma, tt.sigma}, {"Alpha", got.Alpha, tt.alpha}, {"VarSum", got.VarSum, tt.varSum},
				{"Gamma", got.Gamma, tt.gamma}, {"MeanN", got.MeanN, tt.meanN}, {"VarN", got.VarN, tt.varN},
			} {
				if !math.IsNaN(c.want) && math.Abs(c.got-c.want) > 5e-5 {
					t.Errorf("%s = %.6f; want %.6f", c.name, c.got, c.want)
				}
			}
			if got.Effective != tt.effective {
				t.Errorf("Effective = %v; want %v", got.Effective, tt.effective)
			}
			// Prop. 1: VarSum = Σ − α(1 − Sp2) for every scheme (by
			// construction of the effective α for clustered).
			if d := got.VarSum - (got.Sigma - got.Alpha*(1-sampling.SumSquares(tt.p))); math.Abs(d) > 1e-12 {
				t.Errorf("Prop. 1 off by %g", d)
			}
		})
	}
}

// mcStat is a Monte-Carlo estimate and its standard error.
type mcStat struct{ mean, se float64 }

// batchStats estimates the characteristics from batches × per rounds as the
// mean of per-batch estimates (each unbiased, so the mean is), with the
// standard error of that mean from their spread.
func batchStats(t *testing.T, s fl.Sampler, p []float64, batches, per int, seed uint64) map[string]mcStat {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	vals := map[string][]float64{}
	for range batches {
		c, err := sampling.Characterize(s, popOf(p), per, r)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]float64{"Sigma": c.Sigma, "Alpha": c.Alpha, "VarSum": c.VarSum, "Gamma": c.Gamma, "MeanN": c.MeanN, "VarN": c.VarN} {
			vals[k] = append(vals[k], v)
		}
	}
	out := map[string]mcStat{}
	for k, vs := range vals {
		m, ss := 0.0, 0.0
		for _, v := range vs {
			m += v
		}
		m /= float64(len(vs))
		for _, v := range vs {
			ss += (v - m) * (v - m)
		}
		out[k] = mcStat{m, math.Sqrt(ss / float64(len(vs)-1) / float64(len(vs)))}
	}
	return out
}

// TestAcceptanceBCMonteCarlo compares Monte-Carlo estimates of Σ, α (eq. 22),
// VarSum, γ, E[N] and Var[N] with each scheme's closed form under P1 and P2
// (§9 A3–A4, B, C): 50 batches of 2,000 rounds (10^5 in all); a check fails
// when |estimate − closed| > 4·SE + 1e-9, SE the standard error of the
// batch mean (the 1e-9 covers quantities that are exactly constant, such as
// MD's Σω and Uniform's N).
func TestAcceptanceBCMonteCarlo(t *testing.T) {
	for _, pc := range []struct {
		name string
		p    []float64
	}{{"P1", p1()}, {"P2", p2()}} {
		for i, sc := range schemes() {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				want, err := sc.s.Closed(pc.p)
				if err != nil {
					t.Fatal(err)
				}
				got := batchStats(t, sc.s, pc.p, 50, 2000, uint64(100+i))
				for _, c := range []struct {
					name string
					want float64
				}{
					{"Sigma", want.Sigma}, {"Alpha", want.Alpha}, {"VarSum", want.VarSum},
					{"Gamma", want.Gamma}, {"MeanN", want.MeanN}, {"VarN", want.VarN},
				} {
					g := got[c.name]
					if d := math.Abs(g.mean - c.want); d > 4*g.se+1e-9 {
						t.Errorf("%s: Monte Carlo %.6f ± %.2g; closed form %.6f (|diff| %.2g > 4·SE)", c.name, g.mean, g.se, c.want, d)
					}
				}
			})
		}
	}
}

// TestClusteredAlg1Rows checks Algorithm 1's clusters against
// specs/sampling-theory.md §9 B (P2, 1-based clients there) and §2 (P1, n =
// 2m: disjoint pairs, ties in decreasing client order); every row sums to 1
// and the column sums equal m·p_i.
func TestClusteredAlg1Rows(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		want []map[int]float64 // 0-based client → r
	}{
		{"P2", p2(), []map[int]float64{
			{9: 0.909, 8: 0.091},
			{8: 0.727, 7: 0.273},
			{7: 0.455, 6: 0.545},
			{6: 0.091, 5: 0.545, 4: 0.364},
			{4: 0.091, 3: 0.364, 2: 0.273, 1: 0.182, 0: 0.091},
		}},
		{"P1", p1(), []map[int]float64{
			{9: 0.5, 8: 0.5}, {7: 0.5, 6: 0.5}, {5: 0.5, 4: 0.5}, {3: 0.5, 2: 0.5}, {1: 0.5, 0: 0.5},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := sampling.ClustersAlg1(tt.p, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tt.want) {
				t.Fatalf("%d clusters; want %d", len(rows), len(tt.want))
			}
			col := make([]float64, len(tt.p))
			for k, row := range rows {
				sum := 0.0
				if len(row.Clients) != len(tt.want[k]) {
					t.Errorf("cluster %d = %v %v; want %v", k, row.Clients, row.R, tt.want[k])
				}
				for j, i := range row.Clients {
					if w, ok := tt.want[k][i]; !ok || math.Abs(row.R[j]-w) > 5e-4 {
						t.Errorf("cluster %d: r[client %d] = %.4f; want %v", k, i, row.R[j], tt.want[k])
					}
					sum += row.R[j]
					col[i] += row.R[j]
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Errorf("cluster %d sums to %.15f; want 1", k, sum)
				}
			}
			for i, c := range col {
				if math.Abs(c-5*tt.p[i]) > 1e-9 {
					t.Errorf("client %d: Σ_k r = %.12f; want m·p = %.12f", i, c, 5*tt.p[i])
				}
			}
		})
	}
}

// TestPairwiseCovariance checks Assumption 1 through the ratios
// c_ij = −Cov[ω_i, ω_j]/(p_i p_j) over 10^5 rounds (§9 B): MD under P1 within
// [0.19, 0.22], Uniform under P2 within [0.10, 0.125]; for clustered, which
// breaks Assumption 1, every covariance matches −(1/m²) Σ_k r_{k,i} r_{k,j}
// within 0.002 (about 5 SE), so under P1 the ratios are 1 within a pair and
// 0 across pairs.
func TestPairwiseCovariance(t *testing.T) {
	const R = 100000
	cov := func(s fl.Sampler, p []float64, seed uint64) [][]float64 {
		n := len(p)
		sum := make([]float64, n)
		prod := make([][]float64, n)
		for i := range prod {
			prod[i] = make([]float64, n)
		}
		w := make([]float64, n)
		r := rand.New(rand.NewPCG(seed, 9))
		for i := range R {
			sel, err := s.Sample(i, popOf(p), r)
			if err != nil {
				t.Fatal(err)
			}
			clear(w)
			for j, k := range sel.Clients {
				w[k] = sel.Weights[j]
			}
			for a := range n {
				sum[a] += w[a]
				if w[a] == 0 {
					continue
				}
				for b := range n {
					prod[a][b] += w[a] * w[b]
				}
			}
		}
		out := make([][]float64, n)
		for a := range n {
			out[a] = make([]float64, n)
			for b := range n {
				out[a][b] = (prod[a][b] - sum[a]*sum[b]/R) / (R - 1)
			}
		}
		return out
	}
	ratioRange := func(name string, s fl.Sampler, p []float64, lo, hi float64) {
		c := cov(s, p, 1)
		for i := range p {
			for j := range p {
				if i == j {
					continue
				}
				if r := -c[i][j] / (p[i] * p[j]); r < lo || r > hi {
					t.Errorf("%s: c_%d%d = %.4f; want within [%v, %v]", name, i, j, r, lo, hi)
				}
			}
		}
	}
	ratioRange("md/P1", sampling.MD{M: 5}, p1(), 0.19, 0.22)
	ratioRange("uniform/P2", sampling.Uniform{M: 5}, p2(), 0.10, 0.125)
	for _, pc := range []struct {
		name string
		p    []float64
	}{{"P1", p1()}, {"P2", p2()}} {
		rows, err := sampling.ClustersAlg1(pc.p, 5)
		if err != nil {
			t.Fatal(err)
		}
		c := cov(sampling.Clustered{M: 5}, pc.p, 2)
		for i := range pc.p {
			for j := range pc.p {
				if i == j {
					continue
				}
				want := 0.0
				for _, row := range rows {
					want -= rowProb(row, i) * rowProb(row, j) / 25
				}
				if math.Abs(c[i][j]-want) > 0.002 {
					t.Errorf("clustered/%s: Cov[ω_%d, ω_%d] = %.5f; want %.5f", pc.name, i, j, c[i][j], want)
				}
			}
		}
	}
}

func rowProb(row sampling.ClusterRow, i int) float64 {
	for j, k := range row.Clients {
		if k == i {
			return row.R[j]
		}
	}
	return 0
}

// TestRandomInclusion: random draws ∝ p without replacement, one client at a
// time (numpy's choice(replace=False, p)), so with m = 2 client i is included
// with probability p_i + Σ_{j≠i} p_j p_i/(1 − p_j); its weight is 1/m, so
// E[ω_i] = P(i ∈ S)/2 ≠ p_i (biased). 10^5 rounds, 4·SE per client.
func TestRandomInclusion(t *testing.T) {
	p := []float64{0.1, 0.2, 0.3, 0.4}
	c, err := sampling.Characterize(sampling.Random{M: 2}, popOf(p), 100000, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	for i, pi := range p {
		incl := pi
		for j, pj := range p {
			if j != i {
				incl += pj * pi / (1 - pj)
			}
		}
		se := math.Sqrt(c.Var[i] / 100000)
		if d := math.Abs(c.Mean[i] - incl/2); d > 4*se {
			t.Errorf("E[ω_%d] = %.5f; want P(i∈S)/m = %.5f (|diff| %.2g > 4·SE %.2g)", i, c.Mean[i], incl/2, d, 4*se)
		}
	}
	if c.MeanN != 2 || c.VarN != 0 || math.Abs(c.VarSum) > 1e-12 {
		t.Errorf("N = %v ± %v, VarSum = %v; want exactly 2 distinct clients and Σω = 1", c.MeanN, c.VarN, c.VarSum)
	}
}

// TestPoissonBudget: m·p_max > 1 is refused, naming the fix, both when
// sampling and for the closed forms.
func TestPoissonBudget(t *testing.T) {
	s := sampling.Poisson{M: 6} // 6·10/55 = 1.09 > 1
	_, err := s.Sample(0, popOf(p2()), rand.New(rand.NewPCG(1, 1)))
	if !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "at most 5") {
		t.Errorf("Sample with m·p_max = 1.09: error = %v; want ErrInvalid naming m ≤ 5", err)
	}
	if _, err := s.Closed(p2()); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Closed with m·p_max = 1.09: error = %v; want ErrInvalid", err)
	}
	// m·p_max = 1 exactly in real arithmetic is allowed: the client is always drawn.
	p := []float64{0.5, 0.25, 0.25}
	if _, err := (sampling.Poisson{M: 2}).Sample(0, popOf(p), rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Errorf("m·p_max = 1: %v", err)
	}
}

// TestEmptySelections: binomial and poisson sometimes select nobody; the
// selection is then empty (no clients, weights or draws), never an error.
func TestEmptySelections(t *testing.T) {
	pop := popOf([]float64{0.5, 0.5})
	for _, s := range []fl.Sampler{sampling.Binomial{M: 1}, sampling.Poisson{M: 1}} {
		r := rand.New(rand.NewPCG(4, 4))
		empty := 0
		for i := range 1000 {
			sel, err := s.Sample(i, pop, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(sel.Clients) == 0 {
				empty++
				if len(sel.Weights) != 0 || len(sel.Draws) != 0 {
					t.Errorf("%T: empty selection %+v", s, sel)
				}
			}
		}
		// P(empty) = 1/4 for binomial (each of 2 clients w.p. 1/2), and for
		// poisson (m·p_k = 1/2): 250 ± 14 of 1000.
		if empty < 190 || empty > 310 {
			t.Errorf("%T: %d empty rounds of 1000; want about 250", s, empty)
		}
	}
}

// TestAcceptanceDAggregation checks the server rule of eq. (3) through
// aggregate.WeightedDelta with real selections (§9 D): D1 clients returning
// θ leave θ unchanged for any weights, Σω ≠ 1 included; D2 θ_i = θ + d gives
// θ + η_g(Σω)d; D3 MD with η_g = 1 gives Σ ω_i θ_i; D4 every selected client
// has a positive weight, so no client trains for nothing.
func TestAcceptanceDAggregation(t *testing.T) {
	theta := []float32{0.5, -1.25, 3, 0}
	d := []float32{0.25, 0.5, -1, 2}
	r := rand.New(rand.NewPCG(8, 8))
	apply := func(sel fl.Selection, etaG float64, delta func(k int) []float32) []float32 {
		t.Helper()
		agg, err := aggregate.WeightedDelta{EtaG: etaG}.Begin(theta, sel, make([]fl.ClientSummary, len(sel.Clients)))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range sel.Clients {
			if err := agg.Add(k, delta(k)); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]float32, len(theta))
		if err := agg.Finish(out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, sc := range schemes() {
		for _, etaG := range []float64{0.5, 1, 2} {
			for range 20 {
				sel, err := sc.s.Sample(0, popOf(p2()), r)
				if err != nil {
					t.Fatal(err)
				}
				sum := 0.0
				for _, w := range sel.Weights {
					sum += w
					if !(w > 0) {
						t.Errorf("D4 %s: a selected client has weight %v", sc.name, w)
					}
				}
				zero := make([]float32, len(theta))
				if got := apply(sel, etaG, func(int) []float32 { return zero }); fmt.Sprint(got) != fmt.Sprint(theta) {
					t.Errorf("D1 %s η_g=%v Σω=%.3f: θ' = %v; want θ = %v", sc.name, etaG, sum, got, theta)
				}
				got := apply(sel, etaG, func(int) []float32 { return d })
				for j := range theta {
					if want := float64(theta[j]) + etaG*sum*float64(d[j]); math.Abs(float64(got[j])-want) > 1e-6*(1+math.Abs(want)) {
						t.Errorf("D2 %s η_g=%v: θ'[%d] = %v; want θ + η_g(Σω)d = %v", sc.name, etaG, j, got[j], want)
					}
				}
			}
		}
	}
	// D3: MD, η_g = 1, client k returns θ_k = θ + (k+1)·d.
	for range 50 {
		sel, err := sampling.MD{M: 5}.Sample(0, popOf(p2()), r)
		if err != nil {
			t.Fatal(err)
		}
		got := apply(sel, 1, func(k int) []float32 {
			v := make([]float32, len(d))
			for j := range d {
				v[j] = float32(k+1) * d[j]
			}
			return v
		})
		for j := range theta {
			want := 0.0
			for i, k := range sel.Clients {
				want += sel.Weights[i] * (float64(theta[j]) + float64(k+1)*float64(d[j]))
			}
			if math.Abs(float64(got[j])-want) > 1e-6*(1+math.Abs(want)) {
				t.Errorf("D3 md: θ'[%d] = %v; want Σ ω_i θ_i = %v", j, got[j], want)
			}
		}
	}
}

// TestAcceptanceEQuadraticToy runs the quadratic toy of the authors' code
// (specs/sampling-theory.md §9 E) through aggregate.WeightedDelta: n = 100
// clients, L_i(θ) = ½‖θ − c_i‖² in 20 dimensions, p = [0.9, 0.1/99, …],
// m = 5, one local GD step at η_l = 0.2 (θ_i = θ + 0.2(c_i − θ)), η_g = 1,
// loss ½‖θ − θ*‖², θ* = Σ p_i c_i. For 3 sampling seeds: full participation
// is below 1e-10 by round 100; Uniform (ω_1 = 18 when client 1 is drawn)
// exceeds 1e12 within 2,000 rounds, iid (all c_i equal) and non-iid
// (c_i ~ U[−1,1]^20); MD stays below 1 over rounds 900–1,000, and in the iid
// case equals full participation (Σω = 1) below 1e-10.
func TestAcceptanceEQuadraticToy(t *testing.T) {
	const n, dim, m = 100, 20, 5
	p := make([]float64, n)
	p[0] = 0.9
	for i := 1; i < n; i++ {
		p[i] = 0.1 / 99
	}
	pop := popOf(p)
	centres := func(iid bool) [][]float32 {
		r := rand.New(rand.NewPCG(77, 0))
		c := make([][]float32, n)
		for i := range c {
			c[i] = make([]float32, dim)
			for j := range c[i] {
				c[i][j] = float32(2*r.Float64() - 1)
			}
			if iid && i > 0 {
				c[i] = c[0]
			}
		}
		return c
	}
	// run returns the loss after each round, stopping after it exceeds 1e12.
	run := func(s fl.Sampler, c [][]float32, rounds int, seed uint64) []float64 {
		t.Helper()
		star := make([]float64, dim)
		for i := range c {
			for j := range star {
				star[j] += p[i] * float64(c[i][j])
			}
		}
		theta := make([]float32, dim)
		r := rand.New(rand.NewPCG(seed, 1))
		var losses []float64
		delta := make([]float32, dim)
		for t0 := range rounds {
			sel, err := s.Sample(t0, pop, r)
			if err != nil {
				t.Fatal(err)
			}
			agg, err := aggregate.WeightedDelta{EtaG: 1}.Begin(theta, sel, make([]fl.ClientSummary, len(sel.Clients)))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range sel.Clients {
				for j := range delta {
					delta[j] = 0.2 * (c[k][j] - theta[j])
				}
				if err := agg.Add(k, delta); err != nil {
					t.Fatal(err)
				}
			}
			next := make([]float32, dim)
			if err := agg.Finish(next); err != nil {
				t.Fatalf("%T round %d: %v", s, t0, err)
			}
			theta = next
			loss := 0.0
			for j := range theta {
				e := float64(theta[j]) - star[j]
				loss += e * e / 2
			}
			losses = append(losses, loss)
			if loss > 1e12 {
				break
			}
		}
		return losses
	}
	full := fullParticipation{}
	for _, iid := range []bool{false, true} {
		c := centres(iid)
		if l := run(full, c, 100, 0); l[99] > 1e-10 {
			t.Errorf("iid=%v: full participation loss %.3g at round 100; want < 1e-10", iid, l[99])
		}
		for seed := range uint64(3) {
			if l := run(sampling.Uniform{M: m}, c, 2000, seed); l[len(l)-1] <= 1e12 {
				t.Errorf("iid=%v seed %d: Uniform loss %.3g after 2000 rounds; want > 1e12 (divergence)", iid, seed, l[len(l)-1])
			}
			l := run(sampling.MD{M: m}, c, 1000, seed)
			worst := 0.0
			for _, v := range l[900:] {
				worst = math.Max(worst, v)
			}
			if bound := map[bool]float64{false: 1, true: 1e-10}[iid]; worst > bound {
				t.Errorf("iid=%v seed %d: MD loss up to %.3g over rounds 900–1000; want < %g", iid, seed, worst, bound)
			}
		}
	}
}

// fullParticipation is scheme (F) of App. A.2: every client, ω_k = p_k.
type fullParticipation struct{}

func (fullParticipation) Sample(_ int, pop fl.Population, _ *rand.Rand) (fl.Selection, error) {
	sel := fl.Selection{}
	for k, pk := range pop.P {
		sel.Clients = append(sel.Clients, k)
		sel.Weights = append(sel.Weights, pk)
		sel.Draws = append(sel.Draws, 1)
	}
	return sel, nil
}
