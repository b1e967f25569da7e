package attack_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/trainer"
)

// benchmarkRLU times one RLU attack (attack.RLU.Recover) on the MLP
// 784-200-200-10 with an auxiliary set of 1,000 samples (100 per class,
// the paper's size), on the update of m local steps of 64 samples: one
// forward pass of the auxiliary set at θ^t (m = 1), or two (θ^t and
// θ^t + Δ, m > 1), and the 10×10 simplex least squares. specs/rlu.md §7,
// check 18, asks for ≤ 1 s on 2 cores. The inputs are uniform pixels in
// [0, 1] with uniform labels: the cost does not depend on the data.
func benchmarkRLU(b *testing.B, steps int) {
	const dim, classes, perClass, batch = 784, 10, 100, 64
	net, err := trainer.NewNet(trainer.Spec{Arch: trainer.ArchMLP}, [3]int{1, 28, 28}, classes)
	if err != nil {
		b.Fatal(err)
	}
	tr := trainer.New(nil)
	r := rand.New(rand.NewPCG(1, 1))
	examples := func(n int) trainer.Examples {
		ex := trainer.Examples{X: make([]float32, n*dim), Y: make([]uint8, n), Dim: dim, Idx: make([]int, n)}
		for i := range ex.X {
			ex.X[i] = r.Float32()
		}
		for i := range n {
			ex.Y[i], ex.Idx[i] = uint8(i%classes), i
		}
		return ex
	}
	aux, client := examples(classes*perClass), examples(steps*batch)
	global := make([]float32, net.NumParams())
	if err := net.Init(global, r); err != nil {
		b.Fatal(err)
	}
	hp := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.01, BatchSize: batch, LocalSteps: steps}
	w := slices.Clone(global)
	if _, err := tr.Train(context.Background(), net, w, client, hp, r, nil); err != nil {
		b.Fatal(err)
	}
	delta := make([]float32, len(w))
	for j := range w {
		delta[j] = w[j] - global[j]
	}
	l, err := attack.FromHyper(hp, len(client.Idx))
	if err != nil {
		b.Fatal(err)
	}
	in := attack.Input{Net: net, Global: global, Delta: delta, Local: l, Aux: aux}
	ctx := context.Background()
	if _, err := (attack.RLU{}).Recover(ctx, tr, in, nil); err != nil { // compile the graphs
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := (attack.RLU{}).Recover(ctx, tr, in, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRLU(b *testing.B)        { benchmarkRLU(b, 1) }
func BenchmarkRLUSteps10(b *testing.B) { benchmarkRLU(b, 10) }
