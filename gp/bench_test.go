package gp

import (
	"math/rand/v2"
	"testing"
)

// benchmarkSelect measures one FedCor selection of m = 10 clients among n
// with D = 15 (O(m·n·(D + m))).
func benchmarkSelect(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randomEmbedding(r, n, 15)
	p, alpha := make([]float64, n), make([]float64, n)
	for k := range p {
		p[k], alpha[k] = 1/float64(n), 1
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Select(x, n, 15, 0.01, p, alpha, 10)
	}
}

func BenchmarkSelect50(b *testing.B)    { benchmarkSelect(b, 50) }
func BenchmarkSelect1000(b *testing.B)  { benchmarkSelect(b, 1000) }
func BenchmarkSelect10000(b *testing.B) { benchmarkSelect(b, 10000) }

// benchmarkFitStep measures one Adam step of FedCor's GP fit: the LOO of 11
// discounted rounds of n loss changes and its gradient (O(n·D²), LOOGrad).
func benchmarkFitStep(b *testing.B, n int) {
	r := rand.New(rand.NewPCG(1, 1))
	x := randomEmbedding(r, n, 15)
	ys := randomSamples(r, 11, n)
	w := make([]float64, 11)
	for e := range w {
		w[e] = 1
	}
	p := Problem{N: n, D: 15, Noise: 0.01, Mu: make([]float64, n), Ys: ys, W: w}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Fit(p, x, 1, 0.01); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFitStep50(b *testing.B)    { benchmarkFitStep(b, 50) }
func BenchmarkFitStep1000(b *testing.B)  { benchmarkFitStep(b, 1000) }
func BenchmarkFitStep10000(b *testing.B) { benchmarkFitStep(b, 10000) }
