package sampling_test

import (
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/sampling"
)

// benchmarkDivFL measures one DivFL selection after the gradients are in
// memory: the n×n distances over dim-value gradients, then stochastic
// greedy for m = 10 clients with max(m, ⌊0.1n⌋) candidates.
func benchmarkDivFL(b *testing.B, n, dim int) {
	r := rand.New(rand.NewPCG(1, 1))
	gs := make([][]float32, n)
	for k := range gs {
		gs[k] = make([]float32, dim)
		for i := range gs[k] {
			gs[k][i] = float32(r.NormFloat64())
		}
	}
	p := make([]float64, n)
	for k := range p {
		p[k] = 1 / float64(n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d := sampling.Distances(gs)
		sampling.GreedyFacility(d, n, p, 10, max(10, n/10), r)
	}
}

// The HiCS-FL FMNIST CNN has about 200k parameters and 50 clients.
func BenchmarkDivFL50x200k(b *testing.B)  { benchmarkDivFL(b, 50, 200000) }
func BenchmarkDivFL1000x10k(b *testing.B) { benchmarkDivFL(b, 1000, 10000) }

// benchmarkGreedy measures stochastic greedy alone, the distances given.
func benchmarkGreedy(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 1))
	d := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			d[i*n+j] = r.Float64()
			d[j*n+i] = d[i*n+j]
		}
	}
	p := make([]float64, n)
	for k := range p {
		p[k] = 1 / float64(n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sampling.GreedyFacility(d, n, p, 10, max(10, n/10), r)
	}
}

func BenchmarkDivFLGreedy1000(b *testing.B) { benchmarkGreedy(b, 1000) }
