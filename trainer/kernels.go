package trainer

// Vector kernels. The float32 inner loops of the elementwise ops (additions,
// ReLU, PReLU, BatchNorm, max-pooling, per-channel sums) are written in portable Go,
// which the Go compiler does not vectorise. A build with GOEXPERIMENT=simd
// on amd64 (both builds of the Makefile) compiles kernels_simd.go and
// kernels_avx2.go, whose init fills vec with AVX-512 versions when the CPU
// has AVX-512 (F, CD, BW, DQ, VL), else with AVX2 versions where it has
// AVX2; otherwise vec stays empty and the portable loops run.
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

// vec holds the best vector kernels the CPU runs (vecSets[0]), or nils.
var vec vecSet

// vecSets are the kernel sets the CPU runs, best first (kernels_simd.go):
// the tests check each of them.
var vecSets []vecSet

// vecSet is one instruction set's kernels; a nil kernel leaves its portable
// loop in place. Tensors are [B, C, hw] with C = len(per-channel slice).
type vecSet struct {
	name string // "AVX-512", "AVX2", or "" for the portable loops

	// add: y = a + b, elementwise (the residual additions and the sums of
	// gradients).
	add func(y, a, b []float32)
	// relu: y = x where x > 0 or NaN, else +0, as relu computes it.
	relu func(y, x []float32)
	// reluDx: dx = dy where x > 0, else +0, as reluDx computes it.
	reluDx func(dx, x, dy []float32)
	// prelu: y = d where x > 0, else a·d, as preluGo computes it.
	prelu func(y, x, d []float32, a float32)
	// bnAffine: y = x·s[c] + b[c].
	bnAffine func(y, x, s, b []float32, hw int)
	// bnAffineReLU: y = relu(x·s[c] + b[c]), bnAffine and relu in one
	// pass (a BatchNorm followed by a ReLU that only it reads).
	bnAffineReLU func(y, x, s, b []float32, hw int)
	// addReLU: y = relu(a + b) (a residual addition and its ReLU).
	addReLU func(y, a, b []float32)
	// bnDx: y = a[c]·dy + b[c]·x + k[c].
	bnDx func(y, dy, x, a, b, k []float32, hw int)
	// maxPool: maxPool32.
	maxPool func(y []float32, arg []int32, x []float32, planes, h, w int)

	// channelSum: sum[c] = Σ_{n,i} x[n, c, i]; len(sum) channels.
	channelSum func(sum []float64, x []float32, c, hw int)
	// channelSqDev: ss[c] = Σ (x[n, c, i] − mean[c])².
	channelSqDev func(ss []float64, x []float32, mean []float64, hw int)
	// channelDot: sdy[c] = Σ dy[n, c, i], sdyx[c] = Σ dy·(x − mean[c]).
	channelDot func(sdy, sdyx []float64, x, dy []float32, mean []float64, hw int)
	// negDot: Σ_{x ≤ 0 or NaN} x·dy.
	negDot func(x, dy []float32) float64

	// bnDxReLU and channelDotReLU are bnDx and channelDot of dy masked by
	// the ReLU of a BatchNorm's forward pass (bnAffineReLU with s and t):
	// dy where x·s[c] + t[c] > 0, else +0, as reluDx masks it by the ReLU's
	// output. The backward pass of a BatchNorm with its ReLU then reads x
	// and dy twice, where a separate ReLU gradient read the output and dy
	// and wrote the masked dy, which the BatchNorm's two passes read.
	bnDxReLU       func(y, dy, x, a, b, k, s, t []float32, hw int)
	channelDotReLU func(sdy, sdyx []float64, x, dy []float32, mean []float64, s, t []float32, hw int)
}

// Kernels names the elementwise kernels in use: "AVX-512", "AVX2" or
// "portable Go".
func Kernels() string {
	if vec.name == "" {
		return "portable Go"
	}
	return vec.name
}
