package trainer

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestAfterStepIsAfterTheStep checks Objective.AfterStep as NIID-Bench's
// SCAFFOLD uses it: K steps of SGD with momentum 0.9 and AfterStep c equal
// K single plain steps, each followed by w[j] −= η·c[j] for every entry,
// the BatchNorm running statistics included, with the momentum buffer
// carried between them (Objective.State) and never seeing c. The net is
// the HiCS CNN (two BatchNorm layers, dropout) on 1×16×16 inputs; the 4
// samples fit one batch of 8, so the batches do not depend on the stream,
// and the dropout masks come from one stream in the same order both ways.
func TestAfterStepIsAfterTheStep(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchCNNHiCS}, [3]int{1, 16, 16}, 3)
	ex := uniformData(7, 4, n.Dim(), 3)
	w0 := initWeights(t, n, 8)
	// σ = 0.1 on every entry, buffers included.
	c := randVec(rand.New(rand.NewPCG(10, 10)), n.NumParams(), 0.1)
	const lr = 0.05 // small enough that 3 steps of the CNN stay finite
	tr := newTrainer()
	for _, steps := range []int{1, 3} {
		hp := Hyper{Optimizer: OptimizerSGD, LR: lr, Momentum: 0.9, BatchSize: 8, LocalSteps: steps}
		got := slices.Clone(w0)
		if _, err := tr.TrainObjective(t.Context(), n, got, ex, hp, Objective{AfterStep: c}, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}

		want, st, r := slices.Clone(w0), &OptState{}, rand.New(rand.NewPCG(1, 1))
		one := hp
		one.LocalSteps = 1
		for range steps {
			if _, err := tr.TrainObjective(t.Context(), n, want, ex, one, Objective{State: st}, r, nil); err != nil {
				t.Fatal(err)
			}
			for j := range want {
				want[j] -= float32(lr) * c[j]
			}
		}
		for j := range got {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Errorf("%d steps: w[%d] = %v; want %v (step, then −η·c)", steps, j, got[j], want[j])
				break
			}
		}
		// The correction reached the buffers: without it they would hold
		// only the running statistics of the batches.
		plain := slices.Clone(w0)
		if _, err := tr.TrainObjective(t.Context(), n, plain, ex, hp, Objective{}, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
		rm := paramByName(t, n, "bn2.running_mean")
		if equalBits(got[rm.Offset:rm.Offset+rm.Len], plain[rm.Offset:rm.Offset+rm.Len]) {
			t.Errorf("%d steps: AfterStep left bn2.running_mean as plain training leaves it", steps)
		}
	}
}

// TestAfterStepBypassesMomentum compares AfterStep with the same vector as
// Objective.Linear on weights whose data gradient is exactly 0: fc1.w's
// column for an input feature that is 0 in every sample. There the only
// force is c, and after K steps of SGD with momentum β at a constant η
//
//	Linear (inside momentum):  w_K − w_0 = −η·c·Σ_{s=1..K} (1 − β^s)/(1 − β)
//	AfterStep (after it):      w_K − w_0 = −η·c·K
//
// For K = 5, β = 0.9 the sum is (5 − 0.9·(1 − 0.9⁵)/0.1)/0.1 = 13.1441; for
// β = 0 it is 5, and the two agree. The tolerance, 1e-4 relative, is far
// above float32 rounding over 5 steps (~1e-6) and far below the gap.
func TestAfterStepBypassesMomentum(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{6}}, [3]int{1, 2, 2}, 3)
	ex := uniformData(4, 12, n.Dim(), 3)
	for i := range ex.Idx {
		ex.X[i*ex.Dim] = 0 // feature 0 is dead
	}
	w0 := initWeights(t, n, 5)
	c := randVec(rand.New(rand.NewPCG(6, 6)), n.NumParams(), 0.1)
	fc1 := paramByName(t, n, "fc1.w") // [6, 4]: entry i·4 is unit i's weight of feature 0
	const lr = 0.1
	tests := []struct {
		name     string
		giveMom  float64
		giveObj  Objective
		wantMove float64 // (w_K − w_0)/(−η·c) on the dead column
	}{
		{"linear β = 0.9", 0.9, Objective{Linear: c}, 13.1441},
		{"after step β = 0.9", 0.9, Objective{AfterStep: c}, 5},
		{"linear β = 0", 0, Objective{Linear: c}, 5},
		{"after step β = 0", 0, Objective{AfterStep: c}, 5},
	}
	tr := newTrainer()
	for _, tt := range tests {
		hp := Hyper{Optimizer: OptimizerSGD, LR: lr, Momentum: tt.giveMom, BatchSize: 4, LocalSteps: 5}
		w := slices.Clone(w0)
		if _, err := tr.TrainObjective(t.Context(), n, w, ex, hp, tt.giveObj, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
		for i := range fc1.Shape[0] {
			j := fc1.Offset + i*fc1.Shape[1]
			got := (float64(w[j]) - float64(w0[j])) / (-lr * float64(c[j]))
			if math.Abs(got-tt.wantMove) > 1e-4*tt.wantMove {
				t.Errorf("%s: fc1.w[%d, 0] moved %.6f·η·c; want %v", tt.name, i, got, tt.wantMove)
			}
		}
	}
}

// TestLRSum checks TrainResult.LRSum, Σ of the steps' learning rates, for
// each schedule, with the rates worked out by hand.
func TestLRSum(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 2, 2}, 3)
	ex := uniformData(3, 10, n.Dim(), 3)
	tests := []struct {
		name string
		give Hyper
		want float64
	}{
		// K·η = 5·0.1.
		{"constant", sgdSteps(0.1, 4, 5), 0.5},
		// η·γ^⌊k/2⌋ for k = 0..4: 1 + 1 + 0.5 + 0.5 + 0.25.
		{"step", Hyper{Optimizer: OptimizerSGD, LR: 1, Schedule: ScheduleStep, StepSize: 2, Gamma: 0.5, BatchSize: 4, LocalSteps: 5}, 3.25},
		// 0.2 + 0.8·(1 + cos(πk/4))/2 for k = 0..3: 1 + (0.6 + 0.4·√2/2) + 0.6 + (0.6 − 0.4·√2/2) = 2.8.
		{"cosine", Hyper{Optimizer: OptimizerSGD, LR: 1, Schedule: ScheduleCosine, MinLR: 0.2, BatchSize: 4, LocalSteps: 4}, 2.8},
		// 2 epochs of ⌈10/4⌉ = 3 batches at η = 0.1.
		{"epochs", sgdEpochs(0.1, 4, 2), 0.6},
	}
	tr := newTrainer()
	for _, tt := range tests {
		w := initWeights(t, n, 1)
		res, err := tr.TrainObjective(t.Context(), n, w, ex, tt.give, Objective{AfterStep: make([]float32, n.NumParams())}, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		// 1e-15: the float64 sum of a few rates is exact to a few ulps.
		if math.Abs(res.LRSum-tt.want) > 1e-15 {
			t.Errorf("%s: LRSum = %v; want %v", tt.name, res.LRSum, tt.want)
		}
	}
}

// TestMomentumLRSum checks TrainResult.MomentumLRSum against values worked
// out by hand, and what it measures: on inputs that are all zero the
// cross-entropy's gradient leaves the weights (not the biases) alone, so a
// constant Linear term v moves them by exactly −MomentumLRSum·v.
func TestMomentumLRSum(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 2, 2}, 3)
	ex := uniformData(3, 10, n.Dim(), 3)
	clear(ex.X)
	tests := []struct {
		name string
		give Hyper
		want float64
	}{
		// γ = 1, 1.5, 1.75 for ρ = ½: 0.1·4.25 (FedNova's a_3 = (3 − ½·⅞/½)/½ = 4.25).
		{"heavy ball", Hyper{Optimizer: OptimizerSGD, LR: 0.1, Momentum: 0.5, BatchSize: 4, LocalSteps: 3}, 0.425},
		// γ = 1 + ½·(1, 1.5, 1.75) = 1.5, 1.75, 1.875: 0.1·5.125.
		{"nesterov", Hyper{Optimizer: OptimizerSGD, LR: 0.1, Momentum: 0.5, Nesterov: true, BatchSize: 4, LocalSteps: 3}, 0.5125},
		// Step schedule η = 1, 1, 0.5 with ρ = ½: 1 + 1.5 + 0.5·1.75.
		{"heavy ball, step schedule", Hyper{Optimizer: OptimizerSGD, LR: 1, Momentum: 0.5, Schedule: ScheduleStep, StepSize: 2, Gamma: 0.5, BatchSize: 4, LocalSteps: 3}, 3.375},
		// Weight decay is part of the gradient: the gains do not change.
		{"heavy ball, weight decay", Hyper{Optimizer: OptimizerSGD, LR: 0.1, Momentum: 0.5, WeightDecay: 0.01, BatchSize: 4, LocalSteps: 3}, 0.425},
	}
	tr := newTrainer()
	w0 := initWeights(t, n, 1)
	v := make([]float32, n.NumParams())
	for j := range v {
		v[j] = 0.25
	}
	fc := n.Params()[0] // the weight matrix
	for _, tt := range tests {
		w := slices.Clone(w0)
		res, err := tr.TrainObjective(t.Context(), n, w, ex, tt.give, Objective{Linear: v}, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.MomentumLRSum-tt.want) > 1e-15 {
			t.Errorf("%s: MomentumLRSum = %v; want %v", tt.name, res.MomentumLRSum, tt.want)
		}
		if tt.give.WeightDecay != 0 {
			continue // the decay moves the weights too
		}
		for j := fc.Offset; j < fc.Offset+fc.Len; j++ {
			moved := (float64(w0[j]) - float64(w[j])) / 0.25
			// 1e-6: float32 weights of size ~1 after a few steps.
			if math.Abs(moved-tt.want) > 1e-6 {
				t.Fatalf("%s: %s moved %v·v; want MomentumLRSum·v = %v·v", tt.name, fc.Name, moved, tt.want)
			}
		}
	}
	// Without momentum, and for Adam, it is LRSum bit for bit.
	for _, hp := range []Hyper{sgdSteps(0.1, 4, 7), {Optimizer: OptimizerAdam, LR: 0.01, BatchSize: 4, LocalSteps: 7}} {
		res, err := tr.TrainObjective(t.Context(), n, slices.Clone(w0), ex, hp, Objective{}, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.MomentumLRSum != res.LRSum {
			t.Errorf("%s: MomentumLRSum = %v; want LRSum %v", hp.Optimizer, res.MomentumLRSum, res.LRSum)
		}
	}
}

// TestAfterStepValidate checks that an AfterStep of the wrong length or
// with a NaN is rejected with ErrInvalid naming objective.after_step, and
// leaves w unchanged.
func TestAfterStepValidate(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{4}}, [3]int{1, 2, 2}, 3)
	ex := uniformData(2, 5, n.Dim(), 3)
	size := n.NumParams()
	tests := []struct {
		name string
		give []float32
	}{
		{"short", make([]float32, size-1)},
		{"long", make([]float32, size+1)},
		{"empty", []float32{}},
		{"NaN", append(make([]float32, size-1), float32(math.NaN()))},
	}
	for _, tt := range tests {
		w := initWeights(t, n, 1)
		w0 := slices.Clone(w)
		_, err := newTrainer().TrainObjective(t.Context(), n, w, ex, sgdSteps(0.1, 4, 2), Objective{AfterStep: tt.give}, rand.New(rand.NewPCG(1, 1)), nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "objective.after_step") {
			t.Errorf("%s: TrainObjective error = %v; want ErrInvalid naming objective.after_step", tt.name, err)
		}
		if !equalBits(w, w0) {
			t.Errorf("%s: w changed on error", tt.name)
		}
	}
}
