package trainer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestLearns checks that training works end to end: logreg and mlp separate
// 10 Gaussian clusters in 64 dimensions (centres 0.6·U[0,1] apart per
// feature, noise σ = 0.25, so the classes are linearly separable with high
// probability) to > 90% held-out accuracy within 300 steps, and the HiCS CNN
// lowers its loss on a synthetic 1×28×28 task.
func TestLearns(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		in     [3]int
		hp     Hyper
		minAcc float64
	}{
		{"logreg", Spec{Arch: ArchLogReg}, [3]int{1, 8, 8}, sgdSteps(0.5, 32, 300), 0.9},
		{"mlp", Spec{Arch: ArchMLP, Hidden: []int{64, 32}}, [3]int{1, 8, 8}, sgdSteps(0.2, 32, 300), 0.9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustNet(t, tt.spec, tt.in, 10)
			// Train and test samples come from the same clusters: one draw
			// of 800, split 600/200.
			all := clusters(31, 800, 64, 10, 0.25)
			train, test := all, all
			train.Idx, test.Idx = all.Idx[:600], all.Idx[600:]
			w := initWeights(t, n, 1)
			tr := newTrainer()
			before, err := tr.Evaluate(t.Context(), n, w, test)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Train(t.Context(), n, w, train, tt.hp, rand.New(rand.NewPCG(2, 2)), nil); err != nil {
				t.Fatal(err)
			}
			after, err := tr.Evaluate(t.Context(), n, w, test)
			if err != nil {
				t.Fatal(err)
			}
			acc := float64(after.Correct) / float64(after.N)
			t.Logf("held-out accuracy %.3f, mean loss %.3f → %.3f", acc, before.LossSum/float64(before.N), after.LossSum/float64(after.N))
			if acc < tt.minAcc || after.LossSum >= before.LossSum {
				t.Errorf("held-out accuracy %.3f (loss %.3f → %.3f); want > %.2f and a lower loss",
					acc, before.LossSum/float64(before.N), after.LossSum/float64(after.N), tt.minAcc)
			}
		})
	}

	// The other image nets on the same task, with other optimisers.
	for _, tt := range []struct {
		spec Spec
		hp   Hyper
	}{
		{Spec{Arch: ArchLeNet, Activation: ActTanh}, Hyper{Optimizer: OptimizerAdam, LR: 0.003, BatchSize: 16, LocalSteps: 30}},
		{Spec{Arch: ArchCNNHiCS3Conv}, Hyper{Optimizer: OptimizerSGD, LR: 0.02, Momentum: 0.9, Nesterov: true, BatchSize: 16, LocalSteps: 30}},
	} {
		n := mustNet(t, tt.spec, mnist, 4)
		t.Run(n.Key(), func(t *testing.T) {
			train, test := squares(43, 64), squares(44, 40)
			w := initWeights(t, n, 2)
			tr := newTrainer()
			if _, err := tr.Train(t.Context(), n, w, train, tt.hp, rand.New(rand.NewPCG(4, 4)), nil); err != nil {
				t.Fatal(err)
			}
			after, err := tr.Evaluate(t.Context(), n, w, test)
			if err != nil {
				t.Fatal(err)
			}
			if acc := float64(after.Correct) / float64(after.N); acc < 0.9 {
				t.Errorf("held-out accuracy %.3f after 30 steps; want ≥ 0.9 on four bright quadrants", acc)
			}
		})
	}

	t.Run("cnn-hics", func(t *testing.T) {
		n := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
		train, test := squares(41, 64), squares(42, 40)
		w := initWeights(t, n, 1)
		tr := newTrainer()
		before, err := tr.Evaluate(t.Context(), n, w, test)
		if err != nil {
			t.Fatal(err)
		}
		var losses []float64
		if _, err := tr.Train(t.Context(), n, w, train, sgdSteps(0.05, 16, 30), rand.New(rand.NewPCG(3, 3)),
			func(p Progress) { losses = append(losses, p.Loss) }); err != nil {
			t.Fatal(err)
		}
		after, err := tr.Evaluate(t.Context(), n, w, test)
		if err != nil {
			t.Fatal(err)
		}
		acc := float64(after.Correct) / float64(after.N)
		t.Logf("minibatch loss %.3f at step 1, %.3f over steps 26–30; held-out accuracy %.3f, loss %.3f → %.3f",
			losses[0], mean(losses[25:]), acc, before.LossSum/float64(before.N), after.LossSum/float64(after.N))
		// Step 1 scores about ln 10 ≈ 2.3 (an untrained net guesses); four
		// classes with one bright quadrant each are easy, so the training
		// loss must fall by 10× and the eval-mode net (BatchNorm on its
		// running statistics) must classify held-out images.
		if mean(losses[25:]) > 0.1*losses[0] || acc < 0.9 {
			t.Error("the CNN did not learn; want a 10× lower minibatch loss and held-out accuracy ≥ 0.9")
		}
	})
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// squares draws count 1×28×28 images of 4 classes: class c lights a 10×10
// square in quadrant c on top of uniform noise in [0, 0.3).
func squares(seed uint64, count int) Examples {
	r := rand.New(rand.NewPCG(seed, 4))
	const side = 28
	ex := Examples{X: make([]float32, count*side*side), Y: make([]uint8, count), Dim: side * side, Idx: make([]int, count)}
	for i := range count {
		c := i % 4
		ex.Y[i], ex.Idx[i] = uint8(c), i
		img := ex.X[i*side*side : (i+1)*side*side]
		for j := range img {
			img[j] = 0.3 * r.Float32()
		}
		oy, ox := 2+14*(c/2), 2+14*(c%2)
		for y := oy; y < oy+10; y++ {
			for x := ox; x < ox+10; x++ {
				img[y*side+x] = 0.7 + 0.3*r.Float32()
			}
		}
	}
	return ex
}

// client is one FL client's local training job.
type client struct {
	net  *Net
	w    []float32
	ex   Examples
	hp   Hyper
	seed uint64
	obj  Objective
}

func (c client) train(t *Trainer) ([]float32, error) {
	w := append([]float32(nil), c.w...)
	_, err := t.TrainObjective(context.Background(), c.net, w, c.ex, c.hp, c.obj, rand.New(rand.NewPCG(c.seed, 9)), nil)
	return w, err
}

func testClients(t *testing.T) []client {
	mlp := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{32}}, [3]int{1, 8, 8}, 10)
	cnn := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
	var cs []client
	for k := range 4 {
		// Different sizes, so the epoch schedule has different partial
		// batches: 37 = 2·16 + 5, 40, 43, 46.
		ex := clusters(uint64(50+k), 37+3*k, 64, 10, 0.3)
		cs = append(cs, client{mlp, initWeights(t, mlp, 7), ex, sgdEpochs(0.1, 16, 2), uint64(k), Objective{}})
	}
	for k := range 4 {
		// 3 steps of batch 6 from 10 samples: BatchNorm, dropout and
		// minibatch sampling all draw on r.
		ex := squares(uint64(60+k), 10)
		cs = append(cs, client{cnn, initWeights(t, cnn, 8), ex, sgdSteps(0.05, 6, 3), uint64(10 + k), Objective{}})
	}
	// The new optimisers, schedules, layers and objective terms: Adam on a
	// Tanh LeNet with a proximal term, Nesterov with a cosine schedule on
	// the three-dropout CIFAR CNN, AdamW with MOON's contrastive term on an
	// MLP, and the 3-conv HiCS CNN (padded convolutions, BatchNorm) with a
	// SCAFFOLD correction.
	lenet := mustNet(t, Spec{Arch: ArchLeNet, Activation: ActTanh}, [3]int{1, 16, 16}, 4)
	cifar := mustNet(t, Spec{Arch: ArchCNNHiCSCIFAR}, [3]int{3, 18, 18}, 4)
	conv3 := mustNet(t, Spec{Arch: ArchCNNHiCS3Conv}, [3]int{1, 8, 8}, 4)
	r := rand.New(rand.NewPCG(70, 70))
	for k := range 4 {
		ex := uniformData(uint64(80+k), 12, lenet.Dim(), 4)
		hp := Hyper{Optimizer: OptimizerAdam, LR: 0.01, WeightDecay: 1e-3, BatchSize: 5, LocalEpochs: 2}
		cs = append(cs, client{lenet, initWeights(t, lenet, 9), ex, hp, uint64(20 + k), Proximal(0.1)})
	}
	for k := range 4 {
		ex := uniformData(uint64(90+k), 9, cifar.Dim(), 4)
		hp := Hyper{Optimizer: OptimizerSGD, LR: 0.05, Momentum: 0.9, Nesterov: true, Schedule: ScheduleCosine, BatchSize: 4, LocalSteps: 3}
		cs = append(cs, client{cifar, initWeights(t, cifar, 10), ex, hp, uint64(30 + k), Objective{}})
	}
	for k := range 4 {
		ex := clusters(uint64(100+k), 20, 64, 10, 0.3)
		l := mlp.Embedding() * len(ex.Idx)
		hp := Hyper{Optimizer: OptimizerAdamW, LR: 0.01, WeightDecay: 0.01, BatchSize: 8, LocalSteps: 4}
		cs = append(cs, client{mlp, initWeights(t, mlp, 7), ex, hp, uint64(40 + k), MOON(1, 0.5, randVec(r, l, 1), randVec(r, l, 1))})
	}
	for k := range 4 {
		ex := uniformData(uint64(110+k), 10, conv3.Dim(), 4)
		c, err := Scaffold(randVec(r, conv3.NumParams(), 0.01), randVec(r, conv3.NumParams(), 0.01))
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, client{conv3, initWeights(t, conv3, 11), ex, sgdSteps(0.05, 4, 3), uint64(50 + k), c})
	}
	return cs
}

// TestDeterminism checks that the trained weights are a function of the
// inputs and the stream state alone: sequential and concurrent training give
// bit-identical weights, and a second Trainer (fresh graphs) agrees with a
// reused one.
func TestDeterminism(t *testing.T) {
	cs := testClients(t)
	tr := newTrainer()
	seq := make([][]float32, len(cs))
	for i, c := range cs {
		w, err := c.train(tr)
		if err != nil {
			t.Fatal(err)
		}
		seq[i] = w
	}
	conc := make([][]float32, len(cs))
	errs := make([]error, len(cs))
	// Rounds of 4 goroutines (one net's clients at a time), all on the
	// Trainer whose pool the sequential run filled.
	for lo := 0; lo < len(cs); lo += 4 {
		var wg sync.WaitGroup
		for i := lo; i < lo+4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conc[i], errs[i] = cs[i].train(tr)
			}()
		}
		wg.Wait()
	}
	fresh, err := cs[len(cs)-1].train(newTrainer())
	if err != nil {
		t.Fatal(err)
	}
	for i := range cs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !equalBits(seq[i], conc[i]) {
			t.Errorf("client %d (%s): concurrent weights differ from sequential ones", i, cs[i].net.Key())
		}
		if equalBits(seq[i], cs[i].w) {
			t.Errorf("client %d: training did not change the weights", i)
		}
	}
	if !equalBits(fresh, seq[len(cs)-1]) {
		t.Error("a fresh Trainer gave different weights from a reused one")
	}

	// Equal seeds agree; another seed changes the minibatches (MLP) and the
	// dropout masks (CNN, where 10 samples in batches of 6 also differ).
	for _, i := range []int{0, len(cs) - 1} {
		c := cs[i]
		again, err := c.train(tr)
		if err != nil {
			t.Fatal(err)
		}
		c.seed += 100
		other, err := c.train(tr)
		if err != nil {
			t.Fatal(err)
		}
		if !equalBits(again, seq[i]) {
			t.Errorf("client %d: equal seeds gave different weights", i)
		}
		if equalBits(other, seq[i]) {
			t.Errorf("client %d: different seeds gave equal weights", i)
		}
	}
}

// TestDropoutDrawsFromStream isolates the dropout masks: with all samples in
// one batch, the CNN's minibatches do not depend on r, so any difference
// between seeds comes from the masks.
func TestDropoutDrawsFromStream(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
	c := client{n, initWeights(t, n, 8), squares(70, 6), sgdSteps(0.05, 8, 1), 1, Objective{}}
	tr := newTrainer()
	a, err := c.train(tr)
	if err != nil {
		t.Fatal(err)
	}
	c.seed = 2
	b, err := c.train(tr)
	if err != nil {
		t.Fatal(err)
	}
	if equalBits(a, b) {
		t.Error("different streams gave equal weights; dropout masks do not come from r")
	}
}

func TestForEachBatch(t *testing.T) {
	idx := []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	tests := []struct {
		name      string
		idx       []int
		hp        Hyper
		wantSizes []int
		wantSteps int
	}{
		{"steps, n > B", idx, sgdSteps(0.1, 4, 3), []int{4, 4, 4}, 3},
		{"steps, n < B uses all", idx, sgdSteps(0.1, 20, 2), []int{11, 11}, 2},
		{"steps, n = B", idx, sgdSteps(0.1, 11, 2), []int{11, 11}, 2},
		// E·⌈n/B⌉ = 2·⌈11/4⌉ = 6 steps, last batch of each epoch partial (3).
		{"epochs, partial last batch", idx, sgdEpochs(0.1, 4, 2), []int{4, 4, 3, 4, 4, 3}, 6},
		{"epochs, n < B", idx, sgdEpochs(0.1, 16, 3), []int{11, 11, 11}, 3},
		{"epochs, B divides n", idx[:8], sgdEpochs(0.1, 4, 1), []int{4, 4}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sizes []int
			var batches [][]int
			err := forEachBatch(len(tt.idx), tt.hp, rand.New(rand.NewPCG(1, 1)), func(pos []int) error {
				sizes = append(sizes, len(pos))
				b := make([]int, len(pos))
				for i, p := range pos {
					b[i] = tt.idx[p]
				}
				batches = append(batches, b)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sizes, tt.wantSizes) || numSteps(len(tt.idx), tt.hp) != tt.wantSteps {
				t.Errorf("batch sizes %v, numSteps %d; want %v, %d", sizes, numSteps(len(tt.idx), tt.hp), tt.wantSizes, tt.wantSteps)
			}
			for _, b := range batches {
				if s := slices.Sorted(slices.Values(b)); len(slices.Compact(s)) != len(b) {
					t.Errorf("batch %v repeats a sample", b)
				}
				for _, k := range b {
					if !slices.Contains(tt.idx, k) {
						t.Errorf("batch %v holds %d, not in idx", b, k)
					}
				}
			}
			if tt.hp.LocalEpochs > 0 {
				// Every epoch visits every sample exactly once.
				per := len(batches) / tt.hp.LocalEpochs
				for e := range tt.hp.LocalEpochs {
					var seen []int
					for _, b := range batches[e*per : (e+1)*per] {
						seen = append(seen, b...)
					}
					if slices.Sort(seen); !slices.Equal(seen, slices.Sorted(slices.Values(tt.idx))) {
						t.Errorf("epoch %d visits %v; want each of %v once", e, seen, tt.idx)
					}
				}
			}
			if tt.hp.LocalSteps > 0 && len(tt.idx) <= tt.hp.BatchSize {
				for _, b := range batches {
					if !slices.Equal(b, tt.idx) {
						t.Errorf("batch %v; want all of idx in order %v", b, tt.idx)
					}
				}
			}
		})
	}
}

// TestStepsSampleUniformly checks that step minibatches are uniform
// B-subsets: over 20,000 steps of B = 3 from n = 10, each sample's inclusion
// rate is B/n = 0.3 with standard error √(0.3·0.7/20000) ≈ 0.0032; 5 standard
// errors is 0.016. (The gonum sampleuv.WithoutReplacement test does the same.)
func TestStepsSampleUniformly(t *testing.T) {
	const steps, b, n = 20_000, 3, 10
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	counts := make([]int, n)
	err := forEachBatch(len(idx), sgdSteps(0.1, b, steps), rand.New(rand.NewPCG(5, 5)), func(batch []int) error {
		for _, k := range batch {
			counts[k]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range counts {
		if rate := float64(c) / steps; math.Abs(rate-0.3) > 0.016 {
			t.Errorf("sample %d included at rate %.4f; want 0.3 ± 0.016", k, rate)
		}
	}
}

// TestTrainResult checks Steps, Samples and the progress reports of Train in
// both schedules, and that with n < B the step schedule does not depend on r.
func TestTrainResult(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 4, 4}, 3)
	ex := uniformData(3, 21, n.Dim(), 3)
	small := ex
	small.Idx = ex.Idx[:5]
	tests := []struct {
		name        string
		ex          Examples
		hp          Hyper
		wantSteps   int
		wantSamples int
		// passes: every sample of ex.Idx is processed this many times, so
		// the label counts are passes × its histogram; 0: the batches are
		// drawn, and only their sum is known.
		passes int
	}{
		{"steps n > B", ex, sgdSteps(0.1, 8, 4), 4, 4 * 8, 0},
		{"steps n < B", small, sgdSteps(0.1, 8, 4), 4, 4 * 5, 4},
		// 3 epochs of ⌈21/8⌉ = 3 batches (8, 8, 5).
		{"epochs", ex, sgdEpochs(0.1, 8, 3), 9, 3 * 21, 3},
		{"epochs n < B", small, sgdEpochs(0.1, 8, 2), 2, 2 * 5, 2},
	}
	tr := newTrainer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := initWeights(t, n, 1)
			var seen []Progress
			res, err := tr.Train(t.Context(), n, w, tt.ex, tt.hp, rand.New(rand.NewPCG(1, 1)), func(p Progress) { seen = append(seen, p) })
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != tt.wantSteps || res.Samples != tt.wantSamples {
				t.Errorf("Train = %+v; want Steps %d, Samples %d", res, tt.wantSteps, tt.wantSamples)
			}
			want, total := make([]int, 3), 0
			for _, i := range tt.ex.Idx {
				want[tt.ex.Y[i]] += tt.passes
			}
			for _, c := range res.LabelCounts {
				total += c
			}
			if len(res.LabelCounts) != 3 || total != tt.wantSamples || (tt.passes > 0 && !slices.Equal(res.LabelCounts, want)) {
				t.Errorf("LabelCounts = %v (Σ %d); want %d classes summing to %d (%v when every sample is processed %d times)", res.LabelCounts, total, 3, tt.wantSamples, want, tt.passes)
			}
			var sum float64
			for i, p := range seen {
				if p.Step != i+1 || p.Steps != tt.wantSteps {
					t.Errorf("progress %d = %+v; want Step %d of %d", i, p, i+1, tt.wantSteps)
				}
				sum += p.Loss
			}
			if len(seen) != tt.wantSteps || math.Abs(res.MeanLoss-sum/float64(len(seen))) > 1e-12 {
				t.Errorf("%d progress calls with mean loss %v; want %d and MeanLoss %v", len(seen), sum/float64(len(seen)), tt.wantSteps, res.MeanLoss)
			}
		})
	}
	// Steps with n < B: every step uses all of ex.Idx, so r is not read and
	// two seeds give bit-identical weights.
	a, b := initWeights(t, n, 1), initWeights(t, n, 1)
	if _, err := tr.Train(t.Context(), n, a, small, sgdSteps(0.1, 8, 4), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Train(t.Context(), n, b, small, sgdSteps(0.1, 8, 4), rand.New(rand.NewPCG(2, 2)), nil); err != nil {
		t.Fatal(err)
	}
	if !equalBits(a, b) {
		t.Error("steps with n < B depend on r; want the whole set as the batch every step")
	}
}

// TestBatchNormRunningStats checks bn1's buffers after one training step
// against a direct computation: the step's batch is the whole set (n ≤ B),
// bn1's input is PReLU(conv1(x)), recomputed here with plain loops, and
// PyTorch's update with momentum 0.1 from the initial (0, 1) is
//
//	running_mean = 0.9·0 + 0.1·μ,   running_var = 0.9·1 + 0.1·σ²_unbiased.
func TestBatchNormRunningStats(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
	ex := squares(80, 5)
	w0 := initWeights(t, n, 5)
	w := slices.Clone(w0)
	if _, err := newTrainer().Train(t.Context(), n, w, ex, sgdSteps(0.01, 8, 1), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
		t.Fatal(err)
	}
	cw, cb, a := paramByName(t, n, "conv1.w"), paramByName(t, n, "conv1.b"), paramByName(t, n, "prelu1.a")
	rm, rv := paramByName(t, n, "bn1.running_mean"), paramByName(t, n, "bn1.running_var")
	const k, side, out = 5, 28, 24
	for c := range 32 {
		var vals []float64
		for _, s := range ex.Idx {
			img := ex.X[s*side*side:]
			for i := range out {
				for j := range out {
					y := float64(w0[cb.Offset+c])
					for u := range k {
						for v := range k {
							y += float64(w0[cw.Offset+c*k*k+u*k+v]) * float64(img[(i+u)*side+j+v])
						}
					}
					if y <= 0 {
						y *= float64(w0[a.Offset])
					}
					vals = append(vals, y)
				}
			}
		}
		mu := mean(vals)
		var ss float64
		for _, y := range vals {
			ss += (y - mu) * (y - mu)
		}
		wantMean, wantVar := 0.1*mu, 0.9+0.1*ss/float64(len(vals)-1)
		gotMean, gotVar := float64(w[rm.Offset+c]), float64(w[rv.Offset+c])
		// float32 convolution vs float64 loops: relative error ~1e-6.
		if math.Abs(gotMean-wantMean) > 1e-5*(1e-2+math.Abs(wantMean)) || math.Abs(gotVar-wantVar) > 1e-5*wantVar {
			t.Errorf("channel %d: running mean, var = %v, %v; want %v, %v", c, gotMean, gotVar, wantMean, wantVar)
		}
	}
	for _, name := range []string{"bn2.running_mean", "bn2.running_var"} {
		p := paramByName(t, n, name)
		if equalBits(w[p.Offset:p.Offset+p.Len], w0[p.Offset:p.Offset+p.Len]) {
			t.Errorf("%s did not move in training", name)
		}
	}
}

// TestPredictUsesRunningStats compares eval mode with a training-mode
// forward pass over the same batch (dropout masks set to 1): they differ
// with the initial running statistics, and agree once the running
// statistics are set to the batch's own mean and biased variance.
func TestPredictUsesRunningStats(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
	ex := squares(81, 6)
	w := initWeights(t, n, 6)
	s, err := newSession[float32](n, testKern, len(ex.Idx), true)
	if err != nil {
		t.Fatal(err)
	}
	loadWeights(s, w)
	s.setBatch(ex, ex.Idx)
	for _, m := range s.masks {
		for i := range m.data {
			m.data[i] = 1
		}
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	trainLoss := slices.Clone(s.xent.loss)

	tr := newTrainer()
	predict := func(w []float32) []float32 {
		loss := make([]float32, len(ex.Idx))
		if err := tr.Predict(t.Context(), n, w, ex, loss, nil); err != nil {
			t.Fatal(err)
		}
		return loss
	}
	maxDiff := func(got []float32) float64 {
		var d float64
		for i, l := range got {
			d = math.Max(d, math.Abs(float64(l)-trainLoss[i]))
		}
		return d
	}
	if d := maxDiff(predict(w)); d < 1e-2 {
		t.Errorf("eval losses with running stats (0, 1) are within %g of training-mode losses; want eval mode to differ", d)
	}
	matched := slices.Clone(w)
	for i, b := range s.bns {
		rm, rv := n.params[s.bnParam(i, false)], n.params[s.bnParam(i, true)]
		for c := range b.c {
			matched[rm.Offset+c] = float32(b.mean[c])
			matched[rv.Offset+c] = float32(1/(b.inv[c]*b.inv[c]) - bnEps)
		}
	}
	// Same computation up to float32 rounding of the statistics: 1e-4.
	if d := maxDiff(predict(matched)); d > 1e-4 {
		t.Errorf("eval losses with running stats = batch stats differ from training-mode losses by %g; want ≤ 1e-4", d)
	}
}

// TestPredictPadding checks that the samples left after the full evaluation
// batches, run in power-of-two pieces and a padded last one (21 with
// EvalBatch 500: 16, then 5 in a graph of 8; 21 with EvalBatch 8: 8, 8,
// then 5 in 8), give the same per-sample results as other batchings.
func TestPredictPadding(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{16}}, [3]int{1, 4, 4}, 5)
	ex := uniformData(9, 21, n.Dim(), 5)
	w := initWeights(t, n, 9)
	var ref []float32
	var refOK []bool
	for _, eb := range []int{500, 8, 1, 21, 5} {
		loss, ok := make([]float32, 21), make([]bool, 21)
		if err := New(&Options{EvalBatch: eb, Kernels: testChoice}).Predict(t.Context(), n, w, ex, loss, ok); err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref, refOK = loss, ok
			continue
		}
		for i := range loss {
			if math.Abs(float64(loss[i]-ref[i])) > 1e-6*float64(ref[i]) || ok[i] != refOK[i] {
				t.Errorf("EvalBatch %d: sample %d loss %v correct %v; EvalBatch 500 gave %v %v", eb, i, loss[i], ok[i], ref[i], refOK[i])
			}
		}
	}
	res, err := newTrainer().Evaluate(t.Context(), n, w, ex)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	correct := 0
	for i := range ref {
		sum += float64(ref[i])
		if refOK[i] {
			correct++
		}
	}
	if res.N != 21 || res.Correct != correct || math.Abs(res.LossSum-sum) > 1e-5 {
		t.Errorf("Evaluate = %+v; want N 21, Correct %d, LossSum %v", res, correct, sum)
	}
}

// TestPredictTransposedWeights: evaluation graphs multiply by their linear
// layers' weights transposed once per loaded model (transposeW), and the
// sessions of a batch's rest share that copy. A sample's logits are the
// same whatever the evaluation batch and whichever pooled sessions ran
// other models before: the same bits with the packed gemm, to rounding
// with a BLAS (gonum's blocking depends on the shape); and they agree with
// the training graph's forward pass, which sums in another order, to
// rounding.
func TestPredictTransposedWeights(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{40, 24}}, [3]int{1, 9, 9}, 7)
	ex := uniformData(3, 41, n.Dim(), 7)
	w1, w2 := initWeights(t, n, 4), initWeights(t, n, 5)
	logits := func(tr *Trainer, w []float32) []float32 {
		out := make([]float32, len(ex.Idx)*n.Classes())
		if err := tr.Forward(t.Context(), n, w, ex, nil, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ref1, ref2 := logits(New(&Options{EvalBatch: 1, Kernels: testChoice}), w1), logits(New(&Options{EvalBatch: 1, Kernels: testChoice}), w2)
	// EvalBatch 32 runs the 41 samples as 32 + 8 + 1: three sessions, the
	// third taking its weights from the second.
	for _, eb := range []int{500, 32, 7} {
		tr := New(&Options{EvalBatch: eb, Kernels: testChoice})
		for i, c := range []struct {
			w, want []float32
		}{{w1, ref1}, {w2, ref2}, {w1, ref1}} {
			got := logits(tr, c.w)
			for q := range got {
				if d := math.Abs(float64(got[q] - c.want[q])); !testKern.packed && d <= 1e-5 || got[q] == c.want[q] {
					continue
				}
				t.Fatalf("EvalBatch %d, call %d: logit %d is %v; one sample at a time gave %v", eb, i, q, got[q], c.want[q])
			}
		}
	}
	// The training graph's forward pass (x·Wᵀ on the dot-product path):
	// its mean loss against Predict's.
	s, err := newSession[float32](n, testKern, len(ex.Idx), true)
	if err != nil {
		t.Fatal(err)
	}
	loadWeights(s, w1)
	s.setBatch(ex, ex.Idx)
	s.setContrast(nil, 0, nil)
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	res, err := newTrainer().Evaluate(t.Context(), n, w1, ex)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.LossSum/float64(res.N), s.xent.mean; math.Abs(got-want) > 1e-6*math.Abs(want) {
		t.Errorf("Predict's mean loss %v; the training graph's %v", got, want)
	}
}

func TestBadInput(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 2, 2}, 3)
	good := uniformData(1, 6, n.Dim(), 3)
	hp := sgdSteps(0.1, 4, 2)
	tests := []struct {
		name      string
		give      func(ex *Examples, hp *Hyper, w *[]float32, r **rand.Rand)
		wantField string
	}{
		{"negative lr", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.LR = -0.1 }, "hyper.lr"},
		{"NaN lr", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.LR = math.NaN() }, "hyper.lr"},
		{"unknown optimizer", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.Optimizer = "rmsprop" }, "hyper.optimizer"},
		{"momentum 1", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.Momentum = 1 }, "hyper.momentum"},
		{"negative weight decay", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.WeightDecay = -1 }, "hyper.weight_decay"},
		{"zero batch", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.BatchSize = 0 }, "hyper.batch_size"},
		{"both steps and epochs", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.LocalEpochs = 1 }, "hyper.local_epochs"},
		{"neither steps nor epochs", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.LocalSteps = 0 }, "hyper.local_steps"},
		{"negative steps", func(_ *Examples, hp *Hyper, _ *[]float32, _ **rand.Rand) { hp.LocalSteps = -1 }, "hyper.local_steps"},
		{"w too short", func(_ *Examples, _ *Hyper, w *[]float32, _ **rand.Rand) { *w = (*w)[:5] }, "w has length"},
		{"label >= classes", func(ex *Examples, _ *Hyper, _ *[]float32, _ **rand.Rand) {
			ex.Y = slices.Clone(ex.Y)
			ex.Y[2] = 3
		}, "examples.y[2]"},
		{"dim mismatch", func(ex *Examples, _ *Hyper, _ *[]float32, _ **rand.Rand) { ex.Dim = 5 }, "examples.dim"},
		{"x length", func(ex *Examples, _ *Hyper, _ *[]float32, _ **rand.Rand) { ex.X = ex.X[:len(ex.X)-1] }, "examples.x"},
		{"idx out of range", func(ex *Examples, _ *Hyper, _ *[]float32, _ **rand.Rand) { ex.Idx = []int{0, 6} }, "examples.idx[1]"},
		{"empty idx", func(ex *Examples, _ *Hyper, _ *[]float32, _ **rand.Rand) { ex.Idx = nil }, "examples.idx"},
		{"nil stream", func(_ *Examples, _ *Hyper, _ *[]float32, r **rand.Rand) { *r = nil }, "rand.Rand"},
	}
	tr := newTrainer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, h, w, r := good, hp, initWeights(t, n, 1), rand.New(rand.NewPCG(1, 1))
			tt.give(&ex, &h, &w, &r)
			before := slices.Clone(w)
			_, err := tr.Train(t.Context(), n, w, ex, h, r, nil)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("Train = %v; want an error naming %q wrapping ErrInvalid", err, tt.wantField)
			}
			if !equalBits(w, before) {
				t.Error("Train changed w despite the error")
			}
		})
	}
	// Predict validates the same way, plus its output lengths.
	w := initWeights(t, n, 1)
	predictTests := []struct {
		name      string
		ex        Examples
		w         []float32
		loss      []float32
		wantField string
	}{
		{"dim mismatch", Examples{X: good.X, Y: good.Y, Dim: 3, Idx: good.Idx}, w, nil, "examples.dim"},
		{"w too long", good, append(slices.Clone(w), 0), nil, "w has length"},
		{"loss length", good, w, make([]float32, 2), "len(loss)"},
	}
	for _, tt := range predictTests {
		err := tr.Predict(t.Context(), n, tt.w, tt.ex, tt.loss, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantField) {
			t.Errorf("%s: Predict = %v; want an error naming %q wrapping ErrInvalid", tt.name, err, tt.wantField)
		}
	}
	if _, err := tr.Evaluate(t.Context(), nil, w, good); !errors.Is(err, ErrInvalid) {
		t.Errorf("Evaluate(nil net) = %v; want ErrInvalid", err)
	}
}

func TestDiverged(t *testing.T) {
	mlp := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 4, 4}, 3)
	cnn := mustNet(t, Spec{Arch: ArchCNNHiCS}, [3]int{1, 16, 16}, 3)
	nan := float32(math.NaN())
	tests := []struct {
		name     string
		net      *Net
		poison   string // param whose first entry is set to NaN (or -Inf), or ""
		lr       float64
		wantStep string
	}{
		{"NaN weight", mlp, "fc1.w", 0.1, "step 0"},
		{"-Inf weight", mlp, "-Inf out.b", 0.1, "step 0: initial weight out.b[0] = -Inf"},
		{"NaN running stat", cnn, "bn2.running_var", 0.1, "step 0"},
		// lr = 1e30: the float32 weights reach ~1e29 after one update and
		// the logits overflow within a few steps ("step k of 5", k ≥ 1).
		{"huge lr mlp", mlp, "", 1e30, "of 5"},
		// The CNN's NaNs must surface as an error, not a panic in a pooling
		// layer (gorgonia's MaxPool2D would index −1 on NaN input).
		{"huge lr cnn", cnn, "", 1e30, "of 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := initWeights(t, tt.net, 1)
			if name, ok := strings.CutPrefix(tt.poison, "-Inf "); ok {
				w[paramByName(t, tt.net, name).Offset] = float32(math.Inf(-1))
			} else if tt.poison != "" {
				w[paramByName(t, tt.net, tt.poison).Offset] = nan
			}
			before := slices.Clone(w)
			ex := uniformData(2, 8, tt.net.Dim(), 3)
			_, err := newTrainer().Train(t.Context(), tt.net, w, ex, sgdSteps(tt.lr, 4, 5), rand.New(rand.NewPCG(1, 1)), nil)
			t.Log(err)
			if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), tt.wantStep) {
				t.Errorf("Train = %v; want ErrDiverged at %q", err, tt.wantStep)
			}
			if !equalBits(w, before) && tt.poison == "" {
				t.Error("Train changed w despite the error")
			}
		})
	}
}

func TestCancel(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 4, 4}, 3)
	ex := uniformData(2, 32, n.Dim(), 3)
	w := initWeights(t, n, 1)
	before := slices.Clone(w)
	ctx, cancel := context.WithCancel(t.Context())
	steps := 0
	_, err := newTrainer().Train(ctx, n, w, ex, sgdSteps(0.1, 4, 100), rand.New(rand.NewPCG(1, 1)), func(p Progress) {
		steps = p.Step
		if p.Step == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || steps != 3 || !equalBits(w, before) {
		t.Errorf("Train = %v after %d steps (w changed: %v); want context.Canceled after step 3 and w unchanged", err, steps, !equalBits(w, before))
	}
	if err := newTrainer().Predict(ctx, n, w, ex, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Predict(cancelled) = %v; want context.Canceled", err)
	}
}

// TestSessionPool checks that graphs are compiled once per (net, batch size,
// mode) and reused, and that the idle pool stays bounded.
func TestSessionPool(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 4, 4}, 3)
	ex := uniformData(2, 21, n.Dim(), 3)
	tr := New(&Options{MaxIdleSessions: 3, EvalBatch: 16, Kernels: testChoice})
	w := initWeights(t, n, 1)
	for range 3 {
		// Epochs of 21 = 8 + 8 + 5: graphs for batch 8 and 5, built once.
		if _, err := tr.Train(t.Context(), n, w, ex, sgdEpochs(0.1, 8, 2), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if tr.built != 2 {
		t.Errorf("built %d graphs for three epoch trainings; want 2 (batch 8 and 5)", tr.built)
	}
	// Eval of 21 in batches of 16: 16 and the padded 5 → 8.
	for range 2 {
		if _, err := tr.Evaluate(t.Context(), n, w, ex); err != nil {
			t.Fatal(err)
		}
	}
	if tr.built != 4 {
		t.Errorf("built %d graphs; want 4 after two evaluations", tr.built)
	}
	for b := 1; b <= 6; b++ {
		if _, err := tr.Train(t.Context(), n, w, ex, sgdSteps(0.1, b, 1), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(tr.idle) > 3 {
		t.Errorf("%d idle sessions; want at most MaxIdleSessions = 3", len(tr.idle))
	}
}

func ExampleTrainer_Train() {
	n, err := NewNet(Spec{Arch: ArchMLP, Hidden: []int{16}}, [3]int{1, 4, 4}, 2)
	if err != nil {
		panic(err)
	}
	w := make([]float32, n.NumParams())
	if err := n.Init(w, rand.New(rand.NewPCG(1, 1))); err != nil {
		panic(err)
	}
	// Two classes: dark and bright images.
	ex := Examples{Dim: 16}
	for i := range 40 {
		for range 16 {
			ex.X = append(ex.X, float32(i%2)*0.8+0.1)
		}
		ex.Y = append(ex.Y, uint8(i%2))
		ex.Idx = append(ex.Idx, i)
	}
	tr := newTrainer()
	hp := Hyper{Optimizer: OptimizerSGD, LR: 0.5, BatchSize: 10, LocalEpochs: 5}
	res, err := tr.Train(context.Background(), n, w, ex, hp, rand.New(rand.NewPCG(2, 2)), nil)
	if err != nil {
		panic(err)
	}
	ev, err := tr.Evaluate(context.Background(), n, w, ex)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d steps, %d samples, accuracy %d/%d\n", res.Steps, res.Samples, ev.Correct, ev.N)
	// Output: 20 steps, 200 samples, accuracy 40/40
}

// TestDivergedLastStep checks that the weights plain SGD updates inside
// the graph (fusedSGD) are checked at the end. With fc1's weights at 1e20
// the hidden activations are ~1e21, so the output weights' gradient is
// ~1e21 while every bias gradient stays O(1): one step with lr 1e18 sends
// out.w past float32's 3.4e38 to ±Inf and leaves the biases and the loss
// (~1e20) finite. That must be an ErrDiverged, not a returned model.
func TestDivergedLastStep(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 4, 4}, 3)
	w := initWeights(t, n, 1)
	p := paramByName(t, n, "fc1.w")
	for j := p.Offset; j < p.Offset+p.Len; j++ {
		w[j] = 1e20
	}
	before := slices.Clone(w)
	_, err := newTrainer().Train(t.Context(), n, w, uniformData(2, 8, n.Dim(), 3), sgdSteps(1e18, 4, 1), rand.New(rand.NewPCG(1, 1)), nil)
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "out.w") {
		t.Errorf("Train = %v; want ErrDiverged naming out.w", err)
	}
	if !equalBits(w, before) {
		t.Error("Train changed w despite the error")
	}
}

// TestNoAllocationPerStep checks that a training step allocates nothing
// once the graph is built: Train with 12 steps allocates as much as with 2
// (the per-call allocations are the same), for plain SGD (weights updated
// inside the gemms), momentum, Adam and a CNN with BatchNorm, PReLU and
// dropout, and ResNet-18 (whose skip connections make gorgonia insert
// gradient sums, replaced in tape.go) on small inputs and batches.
func TestNoAllocationPerStep(t *testing.T) {
	for _, c := range []struct {
		name  string
		spec  Spec
		in    [3]int
		batch int
		opt   func(*Hyper)
	}{
		{"mlp sgd", Spec{Arch: ArchMLP}, mnist, 20, func(*Hyper) {}},
		{"mlp momentum", Spec{Arch: ArchMLP}, mnist, 20, func(h *Hyper) { h.Momentum = 0.9; h.WeightDecay = 1e-4 }},
		{"logreg adam", Spec{Arch: ArchLogReg}, mnist, 20, func(h *Hyper) { h.Optimizer = OptimizerAdam }},
		{"cnn-hics sgd", Spec{Arch: ArchCNNHiCS}, mnist, 20, func(*Hyper) {}},
		{"resnet18 sgd", Spec{Arch: ArchResNet18}, [3]int{3, 8, 8}, 2, func(*Hyper) {}},
		{"resnet18 16x16 sgd (F(4×4, 3×3))", Spec{Arch: ArchResNet18}, [3]int{3, 16, 16}, 2, func(*Hyper) {}},
		{"cnn-fedeba-cifar sgd (F(2×2, 5×5))", Spec{Arch: ArchCNNFedEBACIFAR}, cifar, 4, func(*Hyper) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := mustNet(t, c.spec, c.in, 10)
			ex := uniformData(1, 200, n.Dim(), 10)
			w0 := initWeights(t, n, 1)
			w := make([]float32, len(w0))
			tr := newTrainer()
			allocs := func(steps int) float64 {
				hp := sgdSteps(0.01, c.batch, steps)
				c.opt(&hp)
				return testing.AllocsPerRun(3, func() {
					copy(w, w0)
					if _, err := tr.Train(t.Context(), n, w, ex, hp, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
						t.Fatal(err)
					}
				})
			}
			// A garbage collection during a measurement empties sgemm's
			// sync.Pool of workspaces, which are then allocated once
			// more. That is sporadic, so a difference is measured twice
			// more and the fewest count is kept; an allocation per step
			// shows in every measurement.
			a2, a12 := allocs(2), allocs(12)
			for range 2 {
				if a12 == a2 {
					break
				}
				a2, a12 = min(a2, allocs(2)), min(a12, allocs(12))
			}
			if a12 != a2 {
				t.Errorf("Train allocates %v times with 2 steps and %v with 12: %.1f per step", a2, a12, (a12-a2)/10)
			}
		})
	}
}
