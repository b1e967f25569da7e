package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/internal/packed"
)

// BenchmarkSgemm measures the trainer's product shapes in GFLOP/s, one
// goroutine, with the packed product (package packed, where the CPU
// has it) and with the build's BLAS: the MLP's at batch 50 (forward, input
// gradient, weight gradient; the forward product is 50×784 by Wᵀ) and
// convolution chunks of LeNet and ResNet-18 (forward, input and weight
// gradients).
func BenchmarkSgemm(b *testing.B) {
	shapes := []struct {
		name    string
		tA, tB  bool
		m, n, k int
	}{
		{"mlp-fwd-50x200x784-NT", false, true, 50, 200, 784},
		{"mlp-eval-256x200x784-NT", false, true, 256, 200, 784},
		{"mlp-eval-500x200x784-NT", false, true, 500, 200, 784},
		{"mlp-eval-500x200x784-NN", false, false, 500, 200, 784},
		{"mlp-eval2-500x200x200-NT", false, true, 500, 200, 200},
		{"mlp-eval2-500x200x200-NN", false, false, 500, 200, 200},
		{"mlp-dx-50x784x200", false, false, 50, 784, 200},
		{"mlp-dw-200x784x50-TN", true, false, 200, 784, 50},
		{"lenet-conv1-6x3136x25", false, false, 6, 3136, 25},
		{"conv-64x1024x576", false, false, 64, 1024, 576},
		{"conv-cifar-64x1100x1600", false, false, 64, 1100, 1600},
		{"conv-dx-576x1024x64-TN", true, false, 576, 1024, 64},
		{"conv-dw-64x576x1024-NT", false, true, 64, 576, 1024},
		{"conv-cifar-dw-64x1600x1100-NT", false, true, 64, 1600, 1100},
		{"wino-du-256x256x1024-NT", false, true, 256, 256, 1024},
		{"square-512", false, false, 512, 512, 512},
	}
	impls := []struct {
		name string
		blas bool
	}{{"packed", false}, {BLAS, true}}
	if !packed.Available {
		impls = impls[1:]
	}
	for _, s := range shapes {
		for _, impl := range impls {
			b.Run(s.name+"/"+impl.name, func(b *testing.B) {
				m, n, k := s.m, s.n, s.k
				r := rand.New(rand.NewPCG(1, 2))
				a, bb, c := normal(r, m*k), normal(r, k*n), make([]float32, m*n)
				lda, ldb := k, n
				if s.tA {
					lda = m
				}
				if s.tB {
					ldb = k
				}
				var buf Buffers
				for b.Loop() {
					Sgemm(&buf, impl.blas, s.tA, s.tB, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// normal returns n standard normal float32 values from r.
func normal(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}
