package cluster

// The two forms of Euclidean, whatever the size.
var (
	EuclideanDirect = euclideanDirect[float64]
	EuclideanGram   = euclideanGram[float64]
)

// GramWork is the size from which Euclidean takes the Gram form.
const GramWork = gramWork

// WardOf runs the nearest-neighbour chain on condensed distances d of n items.
func WardOf(d []float64, n int) []Merge { return wardCondensed(append([]float64(nil), d...), n) }
