package sampling_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/sampling"
	"github.com/flsweep/flsweep/sampling/samplingtest"
)

// unbalanced is the power-law size profile suggested in
// specs/sampling-theory.md §6 ("n = 10, sizes {50,...,1600}: Sp2 = 0.297").
var unbalanced = []int{50, 50, 50, 50, 100, 100, 200, 400, 800, 1600}

func population(t *testing.T, sizes []int, importance string) fl.Population {
	t.Helper()
	pop, err := fl.NewPopulation(sizes, importance)
	if err != nil {
		t.Fatal(err)
	}
	return pop
}

func equalSizes(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 600
	}
	return s
}

func TestContract(t *testing.T) {
	tests := []struct {
		name     string
		give     fl.Sampler
		giveSize []int
		giveImp  string
		withRepl bool
	}{
		{"uniform/equal", sampling.Uniform{M: 5}, equalSizes(10), fl.ImportanceSize, false},
		{"uniform/unbalanced-size", sampling.Uniform{M: 5}, unbalanced, fl.ImportanceSize, false},
		{"uniform/unbalanced-uniform", sampling.Uniform{M: 3}, unbalanced, fl.ImportanceUniform, false},
		{"uniform/all", sampling.Uniform{M: 10}, unbalanced, fl.ImportanceSize, false},
		{"md/equal", sampling.MD{M: 5}, equalSizes(10), fl.ImportanceSize, true},
		{"md/unbalanced-size", sampling.MD{M: 5}, unbalanced, fl.ImportanceSize, true},
		{"md/100-clients", sampling.MD{M: 10}, equalSizes(100), fl.ImportanceSize, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pop := population(t, tt.giveSize, tt.giveImp)
			if err := samplingtest.Check(tt.give, pop, samplingtest.Options{WithReplacement: tt.withRepl, Seed: 7}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCharacteristics compares Monte-Carlo estimates of Σ, α and VarSum with
// the closed forms of Fraboni et al. 2022, Table 1 (specs/sampling-theory.md §2).
// R = 200,000 rounds; relative tolerance 3%. Over 20 seeds (0..19) of this
// configuration the worst relative error was 1.4% (α̂ for Uniform with the
// unbalanced profile) and every other estimate stayed within 0.6%.
func TestCharacteristics(t *testing.T) {
	const R = 200000
	tests := []struct {
		name     string
		give     fl.Sampler
		giveSize []int
		giveImp  string
		want     func(p []float64, m int) sampling.Characteristics
		m        int
	}{
		{"md/equal", sampling.MD{M: 5}, equalSizes(10), fl.ImportanceSize, sampling.TheoryMD, 5},
		{"md/unbalanced", sampling.MD{M: 5}, unbalanced, fl.ImportanceSize, sampling.TheoryMD, 5},
		{"uniform/equal", sampling.Uniform{M: 5}, equalSizes(10), fl.ImportanceSize, sampling.TheoryUniform, 5},
		{"uniform/unbalanced", sampling.Uniform{M: 5}, unbalanced, fl.ImportanceSize, sampling.TheoryUniform, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pop := population(t, tt.giveSize, tt.giveImp)
			got, err := sampling.Characterize(tt.give, pop, R, rand.New(rand.NewPCG(11, 12)))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want(pop.P, tt.m)
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"Sigma", got.Sigma, want.Sigma},
				{"Alpha", got.Alpha, want.Alpha},
				{"Gamma", got.Gamma, want.Gamma},
				{"MeanN", got.MeanN, want.MeanN},
			} {
				if !close(c.got, c.want, 0.03) {
					t.Errorf("%s = %.5g; want %.5g", c.name, c.got, c.want)
				}
			}
			// VarSum is exactly 0 for MD and for Uniform with equal p; absolute check.
			if math.Abs(got.VarSum-want.VarSum) > 0.03*math.Max(want.VarSum, 0.01) {
				t.Errorf("VarSum = %.5g; want %.5g", got.VarSum, want.VarSum)
			}
		})
	}
}

// TestTheoryKnownValues checks the closed forms against hand-computed values.
func TestTheoryKnownValues(t *testing.T) {
	p := make([]float64, 10)
	for i := range p {
		p[i] = 0.1
	}
	// n = 10, m = 5, p = 1/n. MD: Σ = (1 − 0.1)/5 = 0.18, α = 0.2.
	// Uniform: Σ = (10/5 − 1)·0.1 = 0.1, α = (10−5)/(5·9) = 1/9, VarSum = α(10·0.1 − 1) = 0.
	md := sampling.TheoryMD(p, 5)
	un := sampling.TheoryUniform(p, 5)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"MD Sigma", md.Sigma, 0.18},
		{"MD Alpha", md.Alpha, 0.2},
		{"Uniform Sigma", un.Sigma, 0.1},
		{"Uniform Alpha", un.Alpha, 1.0 / 9},
		{"Uniform VarSum", un.VarSum, 0},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v; want %v", c.name, c.got, c.want)
		}
	}
	// Corollary 1: Uniform beats MD iff Sp2 <= 1/(n−m+1). The unbalanced
	// profile has Sp2 = 0.297 > 1/6, so MD's Σ must be the smaller one.
	pop, _ := fl.NewPopulation(unbalanced, fl.ImportanceSize)
	if sp2 := sampling.SumSquares(pop.P); math.Abs(sp2-0.2966) > 5e-4 {
		t.Errorf("Sp2 = %.4f; want 0.2966 (specs/sampling-theory.md §6)", sp2)
	}
	if u, m := sampling.TheoryUniform(pop.P, 5).Sigma, sampling.TheoryMD(pop.P, 5).Sigma; u <= m {
		t.Errorf("Σ_U = %.4f <= Σ_MD = %.4f; Corollary 1 says MD is better here", u, m)
	}
}

func TestWeights(t *testing.T) {
	pop := population(t, unbalanced, fl.ImportanceSize)
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		sel, err := sampling.Uniform{M: 4}.Sample(0, pop, r)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range sel.Clients {
			if want := 10.0 / 4 * pop.P[k]; sel.Weights[i] != want {
				t.Errorf("uniform ω_%d = %v; want (n/m)·p_k = %v", k, sel.Weights[i], want)
			}
		}
		sel, err = sampling.MD{M: 4}.Sample(0, pop, r)
		if err != nil {
			t.Fatal(err)
		}
		total, draws := 0.0, 0
		for i := range sel.Clients {
			total += sel.Weights[i]
			draws += sel.Draws[i]
			if want := float64(sel.Draws[i]) / 4; sel.Weights[i] != want {
				t.Errorf("md ω = %v; want draws/m = %v", sel.Weights[i], want)
			}
		}
		if draws != 4 || math.Abs(total-1) > 1e-15 {
			t.Errorf("md draws = %d, Σω = %v; want 4 and 1", draws, total)
		}
	}
}

func TestBadInput(t *testing.T) {
	reg := methods.Builtin()
	pop := population(t, equalSizes(10), fl.ImportanceSize)
	tests := []struct {
		name     string
		giveName string
		giveM    int
		giveOpts fl.Options
	}{
		{"unknown", "hics-typo", 5, nil},
		{"m zero", "uniform", 0, nil},
		{"unknown option", "md", 5, fl.Options{"temperature": 1}},
		{"pow-d d below m", "pow-d", 5, fl.Options{"d": 4}},
		{"pow-d unknown option", "pow-d", 5, fl.Options{"k": 4}},
		{"binomial unknown option", "binomial", 5, fl.Options{"q": 0.5}},
		{"poisson m zero", "poisson", 0, nil},
		{"clustered unknown option", "clustered", 5, fl.Options{"alg": 2}},
		{"random m zero", "random", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reg.Sampler(tt.giveName, tt.giveM, tt.giveOpts)
			if !errors.Is(err, fl.ErrInvalid) {
				t.Errorf("Sampler(%q, %d, %v) error = %v; want ErrInvalid", tt.giveName, tt.giveM, tt.giveOpts, err)
			}
		})
	}
	for _, s := range []fl.Sampler{sampling.Uniform{M: 11}, sampling.MD{M: 11}} {
		if _, err := s.Sample(0, pop, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%T with M=11 > n=10: error = %v; want ErrInvalid", s, err)
		}
	}
}

func close(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)+1e-12
}
