package cluster_test

import (
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/cluster"
)

// The rows' distances at n rows of n (Ward's input in HiCS-FL and
// clustered sampling): Gaussian rows, so few pairs are close enough to be
// summed directly in the Gram form.
func BenchmarkEuclideanDirect1000(b *testing.B) { benchEuclidean(b, 1000, cluster.EuclideanDirect) }
func BenchmarkEuclideanGram1000(b *testing.B)   { benchEuclidean(b, 1000, cluster.EuclideanGram) }
func BenchmarkEuclideanDirect2000(b *testing.B) { benchEuclidean(b, 2000, cluster.EuclideanDirect) }
func BenchmarkEuclideanGram2000(b *testing.B)   { benchEuclidean(b, 2000, cluster.EuclideanGram) }

func benchEuclidean(b *testing.B, n int, f func([][]float64) []float64) {
	rows := gaussianRows(rand.New(rand.NewPCG(1, 1)), n, n)
	b.ResetTimer()
	for range b.N {
		f(rows)
	}
}
