package trainer

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// benchmarkTrain measures Train on the real model sizes: each iteration is
// one Train call of steps minibatches of size batch, reported as samples/s.
// Graph compilation happens in a warm-up call before the timer starts.
func benchmarkTrain(b *testing.B, spec Spec, batch, steps int) {
	benchmarkTrainOn(b, spec, mnist, batch, steps)
}

// benchmarkTrainOn is benchmarkTrain on inputs of shape in.
func benchmarkTrainOn(b *testing.B, spec Spec, in [3]int, batch, steps int) {
	n := mustNet(b, spec, in, 10)
	ex := uniformData(1, 1000, n.Dim(), 10)
	w0 := initWeights(b, n, 1)
	w := make([]float32, len(w0))
	tr := newTrainer()
	hp := sgdSteps(0.01, batch, steps)
	r := rand.New(rand.NewPCG(1, 1))
	copy(w, w0)
	if _, err := tr.Train(b.Context(), n, w, ex, hp, r, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		copy(w, w0)
		if _, err := tr.Train(b.Context(), n, w, ex, hp, r, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch*steps)/b.Elapsed().Seconds(), "samples/s")
}

// benchmarkPredict measures Predict over count samples per iteration
// (EvalBatch 500).
func benchmarkPredict(b *testing.B, spec Spec, count int) {
	n := mustNet(b, spec, mnist, 10)
	ex := uniformData(1, count, n.Dim(), 10)
	w := initWeights(b, n, 1)
	tr := newTrainer()
	loss, correct := make([]float32, count), make([]bool, count)
	if err := tr.Predict(b.Context(), n, w, ex, loss, correct); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := tr.Predict(b.Context(), n, w, ex, loss, correct); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*count)/b.Elapsed().Seconds(), "samples/s")
}

// FedEBA+'s MLP 784-200-200-10 (specs/fedeba.md §3.1), batch 50, 20 steps.
func BenchmarkTrainMLP(b *testing.B) { benchmarkTrain(b, Spec{Arch: ArchMLP}, 50, 20) }

// HiCS-FL's CNN (specs/hicsfl.md §3.2), batch 50, 5 steps.
func BenchmarkTrainCNNHiCS(b *testing.B) { benchmarkTrain(b, Spec{Arch: ArchCNNHiCS}, 50, 5) }

// RLU's LeNet on 1×28×28, batch 50, 10 steps.
func BenchmarkTrainLeNet(b *testing.B) { benchmarkTrain(b, Spec{Arch: ArchLeNet}, 50, 10) }

// FedEBA+'s CIFAR-10 CNN (specs/fedeba.md §3.1) on 3×32×32, batch 50, 2 steps.
func BenchmarkTrainCNNFedEBACIFAR(b *testing.B) {
	benchmarkTrainOn(b, Spec{Arch: ArchCNNFedEBACIFAR}, cifar, 50, 2)
}

// FNR-FL's ResNet-18 on 3×32×32, batch 50, 1 step.
func BenchmarkTrainResNet18(b *testing.B) {
	benchmarkTrainOn(b, Spec{Arch: ArchResNet18}, cifar, 50, 1)
}

func BenchmarkTrainLogReg(b *testing.B) { benchmarkTrain(b, Spec{Arch: ArchLogReg}, 50, 20) }

func BenchmarkPredictMLP(b *testing.B) { benchmarkPredict(b, Spec{Arch: ArchMLP}, 2000) }

func BenchmarkPredictCNNHiCS(b *testing.B) { benchmarkPredict(b, Spec{Arch: ArchCNNHiCS}, 1000) }

// BenchmarkPredictSizes: the MLP over a client's worth of samples, where the
// rest after full evaluation batches decides the cost (Trainer.predict).
func BenchmarkPredictSizes(b *testing.B) {
	for _, c := range []int{100, 300, 600, 1000} {
		b.Run(strconv.Itoa(c), func(b *testing.B) { benchmarkPredict(b, Spec{Arch: ArchMLP}, c) })
	}
}

// benchmarkTrainParallel is benchmarkTrain with GOMAXPROCS clients trained
// concurrently, each on its own data and weights, as the engine trains a
// round's clients; samples/s counts all clients.
func benchmarkTrainParallel(b *testing.B, spec Spec, batch, steps int) {
	n := mustNet(b, spec, mnist, 10)
	tr := newTrainer()
	hp := sgdSteps(0.01, batch, steps)
	k := runtime.GOMAXPROCS(0)
	w0 := initWeights(b, n, 1)
	ws, exs, rs := make([][]float32, k), make([]Examples, k), make([]*rand.Rand, k)
	for i := range k {
		ws[i], exs[i], rs[i] = make([]float32, len(w0)), uniformData(uint64(i), 1000, n.Dim(), 10), rand.New(rand.NewPCG(1, uint64(i)))
		copy(ws[i], w0)
		if _, err := tr.Train(b.Context(), n, ws[i], exs[i], hp, rs[i], nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range b.N {
				copy(ws[i], w0)
				if _, err := tr.Train(b.Context(), n, ws[i], exs[i], hp, rs[i], nil); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(k*b.N*batch*steps)/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkTrainMLPParallel(b *testing.B) { benchmarkTrainParallel(b, Spec{Arch: ArchMLP}, 50, 20) }

func BenchmarkTrainCNNHiCSParallel(b *testing.B) {
	benchmarkTrainParallel(b, Spec{Arch: ArchCNNHiCS}, 50, 5)
}
