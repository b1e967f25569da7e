package trainer

import "github.com/flsweep/flsweep/internal/vector"

// The float32 inner loops of the elementwise ops (additions, ReLU, PReLU,
// BatchNorm, max-pooling, per-channel sums) are written here in portable
// Go; a build with GOEXPERIMENT=simd on amd64 also has vector versions
// (package vector), which compute the same elementwise results bit for bit
// and sum in another fixed order (see there).

// vec holds the best vector kernels the CPU runs, or nils, which leave the
// portable loops in place.
var vec = vector.Best()

// vecSets are the kernel sets the CPU runs, best first: the tests check
// each of them.
var vecSets = vector.Sets

// Kernels names the elementwise kernels in use: "AVX-512", "AVX2" or
// "portable Go".
func Kernels() string {
	if vec.Name == "" {
		return "portable Go"
	}
	return vec.Name
}
