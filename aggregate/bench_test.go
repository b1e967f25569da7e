package aggregate

import (
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
)

// benchmarkAggregate aggregates k client deltas of a dim-parameter model.
func benchmarkAggregate(b *testing.B, dim, k int) {
	r := rand.New(rand.NewPCG(1, 1))
	global := make([]float32, dim)
	deltas := make([][]float32, k)
	sel := fl.Selection{}
	for i := range deltas {
		deltas[i] = make([]float32, dim)
		for j := range deltas[i] {
			deltas[i][j] = r.Float32() - 0.5
		}
		sel.Clients = append(sel.Clients, i)
		sel.Weights = append(sel.Weights, 1/float64(k))
		sel.Draws = append(sel.Draws, 1)
	}
	dst := make([]float32, dim)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		agg, err := WeightedDelta{EtaG: 1}.Begin(global, sel, nil)
		if err != nil {
			b.Fatal(err)
		}
		for i, d := range deltas {
			if err := agg.Add(i, d); err != nil {
				b.Fatal(err)
			}
		}
		if err := agg.Finish(dst); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(dim*k)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mparams/s")
}

// Dimensions: MLP 784-200-200-10 has 199,210 parameters; the HiCS-FL CNN 31,852.
func BenchmarkAggregateMLP10(b *testing.B)  { benchmarkAggregate(b, 199210, 10) }
func BenchmarkAggregateMLP100(b *testing.B) { benchmarkAggregate(b, 199210, 100) }
func BenchmarkAggregateCNN100(b *testing.B) { benchmarkAggregate(b, 31852, 100) }
