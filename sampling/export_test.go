package sampling

import (
	"math/rand/v2"

	"github.com/flsweep/flsweep/cluster"
)

// Internals under test.

// PaperDraw is HiCS's paper draw (Algorithm 1 lines 7–12).
func PaperDraw(groups [][]int, pi, p []float64, k int, r *rand.Rand) ([]int, error) {
	return paperDraw(groups, pi, p, k, r)
}

// CodeDraw is the official code's draw (sample_clients_entropy).
func CodeDraw(groups [][]int, pi []float64, k int, r *rand.Rand) []int {
	return codeDraw(groups, pi, k, r)
}

// Urns returns Algorithm 2's urns as dense rows r_{j,k} (unnormalised) and
// the flat clusters.
func Urns(tree []cluster.Merge, p []float64, m int, r *rand.Rand) ([][]float64, []int, error) {
	urns, labels, err := similarityUrns(tree, p, m, r)
	if err != nil {
		return nil, nil, err
	}
	out := make([][]float64, len(urns))
	for j, u := range urns {
		out[j] = make([]float64, len(p))
		for i, k := range u.clients {
			out[j][k] += u.mass[i]
		}
	}
	return out, labels, nil
}

// SimilaritySample is clustered sampling's draw on a fixed tree.
var SimilaritySample = similaritySample
