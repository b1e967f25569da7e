package sampling_test

import (
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// One post-warm-up selection of HiCS-FL (C = 10 classes, K = 10): N·C
// entropies, N² distances, Ward on N rows of N (O(N³) for the rows'
// distances, O(N²) for the chain), the annealed draw.
func BenchmarkHiCS50(b *testing.B)    { benchmarkHiCS(b, 50) }
func BenchmarkHiCS1000(b *testing.B)  { benchmarkHiCS(b, 1000) }
func BenchmarkHiCS10000(b *testing.B) { benchmarkHiCS(b, 10000) }

// One selection of clustered sampling on whole-model updates: N recalls,
// N² arccos distances over |θ| values, Ward on N rows of N, Algorithm 2.
// 199,210 parameters are the MLP 784-200-200-10; 7,850 logreg on 784.
// At N = 10,000 the N² distances over 199,210 values (10^13 multiply-adds)
// and the 8 GB of updates are out of reach; the clustering alone costs
// what BenchmarkHiCS10000 does.
func BenchmarkClustered50MLP(b *testing.B)      { benchmarkClustered(b, 50, 199210) }
func BenchmarkClustered1000LogReg(b *testing.B) { benchmarkClustered(b, 1000, 7850) }

func benchPop(b *testing.B, n int) fl.Population {
	sizes := make([]int, n)
	for k := range sizes {
		sizes[k] = 100 + k%50
	}
	pop, err := fl.NewPopulation(sizes, fl.ImportanceSize)
	if err != nil {
		b.Fatal(err)
	}
	pop.Classes = 10
	return pop
}

func benchmarkHiCS(b *testing.B, n int) {
	const k = 10
	pop := benchPop(b, n)
	p, err := sampling.NewHiCS(k, nil)
	if err != nil {
		b.Fatal(err)
	}
	h := p.(fl.Scheduled).WithRounds(200).(sampling.HiCS)
	r := rand.New(rand.NewPCG(1, 1))
	var st fl.State
	seen := make([]float32, n)
	bias := make([]float32, n*10)
	for i, v := range synthBias(n/5, n-n/5, r) {
		seen[i] = 1
		for c, x := range v {
			bias[i*10+c] = float32(x)
		}
	}
	st.Set("seen", seen)
	st.Set("bias", bias)
	in := fl.PlanInput{Round: h.WarmupRounds(n) + 1, Pop: pop, State: st}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := h.Plan(in, r); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkClustered(b *testing.B, n, dim int) {
	pop := benchPop(b, n)
	p, err := sampling.NewClusteredSimilarity(10, nil)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	mem := make([][]float32, n)
	for k := range mem {
		mem[k] = make([]float32, dim)
		for i := range mem[k] {
			mem[k][i] = float32(r.NormFloat64())
		}
	}
	in := fl.PlanInput{Round: 1, Pop: pop, Recall: func(k int) ([]float32, error) { return mem[k], nil }}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := p.Plan(in, r); err != nil {
			b.Fatal(err)
		}
	}
}
