package attack_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/trainer"
)

// world is a synthetic 10-class problem: Gaussian clusters in 20
// dimensions (centres N(0, sep²) per feature, unit noise) and a small MLP
// 20 → 32 → 10, with the Trainer that runs it.
type world struct {
	net     *trainer.Net
	tr      *trainer.Trainer
	centres [][]float64
}

const (
	classes = 10
	dim     = 20
)

func newWorld(t testing.TB, act string) world {
	t.Helper()
	n, err := trainer.NewNet(trainer.Spec{Arch: trainer.ArchMLP, Hidden: []int{32}, Activation: act}, [3]int{1, 1, dim}, classes)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	c := make([][]float64, classes)
	for j := range c {
		c[j] = make([]float64, dim)
		for k := range c[j] {
			c[j][k] = 1.5 * r.NormFloat64()
		}
	}
	return world{net: n, tr: trainer.New(nil), centres: c}
}

// draw returns counts[j] samples of class j, in class order.
func (w world) draw(seed uint64, counts []int) trainer.Examples {
	r := rand.New(rand.NewPCG(seed, 2))
	var ex trainer.Examples
	ex.Dim = dim
	for j, c := range counts {
		for range c {
			for k := range dim {
				ex.X = append(ex.X, float32(w.centres[j][k]+r.NormFloat64()))
			}
			ex.Y = append(ex.Y, uint8(j))
			ex.Idx = append(ex.Idx, len(ex.Idx))
		}
	}
	return ex
}

// aux returns a balanced auxiliary set, per samples of each class.
func (w world) aux(per int) trainer.Examples {
	c := make([]int, classes)
	for j := range c {
		c[j] = per
	}
	return w.draw(99, c)
}

// init returns Net.Init's weights (PyTorch's default initialisation).
func (w world) init(t testing.TB, seed uint64) []float32 {
	t.Helper()
	p := make([]float32, w.net.NumParams())
	if err := w.net.Init(p, rand.New(rand.NewPCG(seed, 3))); err != nil {
		t.Fatal(err)
	}
	return p
}

// trained returns a model trained on a balanced set for a few epochs.
func (w world) trained(t testing.TB, epochs int) []float32 {
	t.Helper()
	p := w.init(t, 7)
	c := make([]int, classes)
	for j := range c {
		c[j] = 40
	}
	hp := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.1, BatchSize: 32, LocalEpochs: epochs}
	if _, err := w.tr.Train(context.Background(), w.net, p, w.draw(5, c), hp, rand.New(rand.NewPCG(5, 5)), nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// update trains a client from global and returns Δ = θ_k − θ^t.
func (w world) update(t testing.TB, global []float32, ex trainer.Examples, hp trainer.Hyper, obj trainer.Objective) []float32 {
	t.Helper()
	p := slices.Clone(global)
	if _, err := w.tr.TrainObjective(context.Background(), w.net, p, ex, hp, obj, rand.New(rand.NewPCG(11, 11)), nil); err != nil {
		t.Fatal(err)
	}
	d := make([]float32, len(p))
	for j := range d {
		d[j] = p[j] - global[j]
	}
	return d
}

// bias returns the output bias entries of a flat vector.
func (w world) bias(v []float32) []float64 {
	_, b := w.net.Output()
	out := make([]float64, b.Len)
	for j := range out {
		out[j] = float64(v[b.Offset+j])
	}
	return out
}

// skewed is the client histogram of the end-to-end tests: 64 samples,
// one class absent.
var skewed = []int{20, 12, 10, 8, 6, 4, 2, 1, 1, 0}

func sgd(lr float64, batch, steps int) trainer.Hyper {
	return trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: lr, BatchSize: batch, LocalSteps: steps}
}

// local returns the attack's Local for hp on a client of n samples.
func local(t testing.TB, hp trainer.Hyper, n int) attack.Local {
	t.Helper()
	l, err := attack.FromHyper(hp, n)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// scale returns total·v.
func scale(v []int, k int) []int {
	out := make([]int, len(v))
	for j, x := range v {
		out[j] = k * x
	}
	return out
}

// validHistogram reports an error unless counts are classes non-negative
// integers summing to total.
func validHistogram(t *testing.T, what string, counts []int, total int) {
	t.Helper()
	s := 0
	for _, c := range counts {
		if c < 0 {
			t.Errorf("%s: counts %v have a negative entry", what, counts)
		}
		s += c
	}
	if len(counts) != classes || s != total {
		t.Errorf("%s: counts %v (%d classes) sum to %d; want %d classes summing to %d", what, counts, len(counts), s, classes, total)
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
