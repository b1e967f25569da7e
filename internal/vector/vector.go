// Package vector holds the trainer's vector kernels. The float32 inner loops of the elementwise ops (additions,
// ReLU, PReLU, BatchNorm, max-pooling, per-channel sums) are written in portable Go,
// which the Go compiler does not vectorise. A build with GOEXPERIMENT=simd
// on amd64 (both builds of the Makefile) compiles avx512.go and
// avx2.go, whose init fills Sets with AVX-512 versions when the CPU
// has AVX-512 (F, CD, BW, DQ, VL), else with AVX2 versions where it has
// AVX2; otherwise Sets stays empty and the trainer's portable loops run.
//
// Each kernel takes a whole tensor: switching between vector code and the
// SSE code Go compiles scalar float arithmetic to costs tens of
// nanoseconds, so a kernel call per 2×2-pool row or per 8×8 plane would
// lose more than the vectors gain.
//
// The elementwise kernels compute exactly what the portable loops compute,
// bit for bit (the same operations in the same order per element;
// TestVecKernels checks it, NaN, infinities and signed zeros included). The
// float64 sums (BatchNorm statistics and gradients, bias gradients, the
// PReLU slope gradient) add in a different, equally fixed, order (16 lanes
// per channel instead of 4 per plane), the same in the AVX-512 and AVX2
// kernels, so their last bits differ from the portable loops', as
// OpenBLAS's products do; runs of one build still repeat bit for bit.

package vector

// Sets are the kernel sets the CPU runs, best first (avx512.go, avx2.go);
// empty without GOEXPERIMENT=simd or AVX2, when the portable loops run.
// The trainer's tests check each of them against its portable loops.
var Sets []Set

// Best returns the best set the CPU runs (Sets[0]), or an empty Set (every
// kernel nil).
func Best() Set {
	if len(Sets) == 0 {
		return Set{}
	}
	return Sets[0]
}

// Set is one instruction set's kernels; a nil kernel leaves its portable
// loop in place. Tensors are [B, C, hw] with C = len(per-channel slice).
type Set struct {
	Name string // "AVX-512", "AVX2", or "" for the portable loops

	// Add: y = a + b, elementwise (the residual additions and the sums of
	// gradients).
	Add func(y, a, b []float32)
	// ReLU: y = x where x > 0 or NaN, else +0, as relu computes it.
	ReLU func(y, x []float32)
	// ReLUDx: dx = dy where x > 0, else +0, as reluDx computes it.
	ReLUDx func(dx, x, dy []float32)
	// PReLU: y = d where x > 0, else a·d, as preluGo computes it.
	PReLU func(y, x, d []float32, a float32)
	// BNAffine: y = x·s[c] + b[c].
	BNAffine func(y, x, s, b []float32, hw int)
	// BNAffineReLU: y = relu(x·s[c] + b[c]), bnAffine and relu in one
	// pass (a BatchNorm followed by a ReLU that only it reads).
	BNAffineReLU func(y, x, s, b []float32, hw int)
	// AddReLU: y = relu(a + b) (a residual addition and its ReLU).
	AddReLU func(y, a, b []float32)
	// BNDx: y = a[c]·dy + b[c]·x + k[c].
	BNDx func(y, dy, x, a, b, k []float32, hw int)
	// MaxPool: maxPool32.
	MaxPool func(y []float32, arg []int32, x []float32, planes, h, w int)

	// ChannelSum: sum[c] = Σ_{n,i} x[n, c, i]; len(sum) channels.
	ChannelSum func(sum []float64, x []float32, c, hw int)
	// ChannelSqDev: ss[c] = Σ (x[n, c, i] − mean[c])².
	ChannelSqDev func(ss []float64, x []float32, mean []float64, hw int)
	// ChannelDot: sdy[c] = Σ dy[n, c, i], sdyx[c] = Σ dy·(x − mean[c]).
	ChannelDot func(sdy, sdyx []float64, x, dy []float32, mean []float64, hw int)
	// NegDot: Σ_{x ≤ 0 or NaN} x·dy.
	NegDot func(x, dy []float32) float64

	// BNDxReLU and ChannelDotReLU are BNDx and ChannelDot of dy masked by
	// the ReLU of a BatchNorm's forward pass (BNAffineReLU with s and t):
	// dy where x·s[c] + t[c] > 0, else +0, as reluDx masks it by the ReLU's
	// output. The backward pass of a BatchNorm with its ReLU then reads x
	// and dy twice, where a separate ReLU gradient read the output and dy
	// and wrote the masked dy, which the BatchNorm's two passes read.
	BNDxReLU       func(y, dy, x, a, b, k, s, t []float32, hw int)
	ChannelDotReLU func(sdy, sdyx []float64, x, dy []float32, mean []float64, s, t []float32, hw int)
}
