package trainer

import (
	"math"
	"math/rand/v2"
	"testing"
)

// testChoice is the kernel choice these tests run under: the default, or
// what the environment asks for (KernelChoiceFromEnv), as the Makefile's
// runs of them with FLSWEEP_CONV=im2col, FLSWEEP_WINO43=0, FLSWEEP_WINO45=0
// and FLSWEEP_GEMM=blas do; testKern is it resolved.
var testChoice = func() KernelChoice {
	k, err := KernelChoiceFromEnv()
	if err != nil {
		panic(err)
	}
	return k
}()

var testKern = testChoice.resolve()

// newTrainer is New with the tests' kernel choice.
func newTrainer() *Trainer { return New(&Options{Kernels: testChoice}) }

// mnist is the input shape of (Fashion-)MNIST.
var mnist = [3]int{1, 28, 28}

// cifar is the input shape of CIFAR-10.
var cifar = [3]int{3, 32, 32}

func mustNet(t testing.TB, s Spec, in [3]int, classes int) *Net {
	t.Helper()
	n, err := NewNet(s, in, classes)
	if err != nil {
		t.Fatalf("NewNet(%+v, %v, %d): %v", s, in, classes, err)
	}
	return n
}

// initWeights returns Net.Init's weights for the seed.
func initWeights(t testing.TB, n *Net, seed uint64) []float32 {
	t.Helper()
	w := make([]float32, n.NumParams())
	if err := n.Init(w, rand.New(rand.NewPCG(seed, 0))); err != nil {
		t.Fatal(err)
	}
	return w
}

// clusters draws count samples of dim features from classes Gaussian
// clusters: centres uniform in [0.2, 0.8]^dim, per-feature noise N(0, σ²),
// values clipped to [0, 1] as Examples promises. Labels cycle through the
// classes so every class is present.
func clusters(seed uint64, count, dim, classes int, sigma float64) Examples {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := make([]float64, classes*dim)
	for i := range centres {
		centres[i] = 0.2 + 0.6*r.Float64()
	}
	ex := Examples{X: make([]float32, count*dim), Y: make([]uint8, count), Dim: dim, Idx: make([]int, count)}
	for i := range count {
		c := i % classes
		ex.Y[i] = uint8(c)
		ex.Idx[i] = i
		for j := range dim {
			v := centres[c*dim+j] + sigma*r.NormFloat64()
			ex.X[i*dim+j] = float32(math.Min(1, math.Max(0, v)))
		}
	}
	return ex
}

// uniformData draws count samples with features uniform in [0, 1) and
// uniform labels.
func uniformData(seed uint64, count, dim, classes int) Examples {
	r := rand.New(rand.NewPCG(seed, 2))
	ex := Examples{X: make([]float32, count*dim), Y: make([]uint8, count), Dim: dim, Idx: make([]int, count)}
	for i := range ex.X {
		ex.X[i] = r.Float32()
	}
	for i := range count {
		ex.Y[i] = uint8(r.IntN(classes))
		ex.Idx[i] = i
	}
	return ex
}

func sgdSteps(lr float64, batch, steps int) Hyper {
	return Hyper{Optimizer: OptimizerSGD, LR: lr, BatchSize: batch, LocalSteps: steps}
}

func sgdEpochs(lr float64, batch, epochs int) Hyper {
	return Hyper{Optimizer: OptimizerSGD, LR: lr, BatchSize: batch, LocalEpochs: epochs}
}

func paramByName(t testing.TB, n *Net, name string) Param {
	t.Helper()
	for _, p := range n.Params() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("net %s has no param %q", n.Key(), name)
	return Param{}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
