package trainer

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// classMeanNorms returns Ū_l = mean ‖z_i‖ over the samples of class l in
// ex under w (Trainer.Forward's embeddings, summed in float64), NaN for a
// class without samples.
func classMeanNorms(t *testing.T, tr *Trainer, n *Net, w []float32, ex Examples) []float64 {
	t.Helper()
	l := n.Embedding()
	z := make([]float32, len(ex.Idx)*l)
	if err := tr.Forward(t.Context(), n, w, ex, z, nil); err != nil {
		t.Fatal(err)
	}
	sum, count := make([]float64, n.Classes()), make([]int, n.Classes())
	for i, k := range ex.Idx {
		var zz float64
		for _, v := range z[i*l : (i+1)*l] {
			zz += float64(v) * float64(v)
		}
		sum[ex.Y[k]] += math.Sqrt(zz)
		count[ex.Y[k]]++
	}
	for c := range sum {
		sum[c] /= float64(count[c]) // 0/0 = NaN for an absent class
	}
	return sum
}

// TestFeatureNormKnownValue checks J_B and λ·∂J_B/∂z on batches worked by
// hand, L = 2, λ = 1.5, targets T = (2, 12, NaN, 7):
//
//   - Rows (3, 4), (0, 1) of class 0 and (6, 8) of class 1. Norms 5, 1, 10,
//     so Ū_0 = 3, Ū_1 = 10 and J_B = 2/3·(3 − 2)² + 1/3·(10 − 12)² = 2.
//     dz_i = λ·2(Ū_l − T_l)/|B| · z_i/‖z_i‖: class 0 gets 1.5·2·1/3 = 1
//     times (0.6, 0.8) and (0, 1); class 1 gets 1.5·2·(−2)/3 = −2 times
//     (0.6, 0.8).
//   - The same plus a row (5, 0) of class 2, whose target is NaN: it adds
//     no term and gets no gradient, but |B| = 4 now, so ρ_l = n_l/4:
//     J_B = 2/4·1 + 1/4·4 = 1.5, class 0's factor is 0.75, class 1's −1.5.
//   - One zero row of class 0: J_B = (0 − 2)² = 4 and no gradient.
//
// Class 3 is never in a batch and adds nothing.
func TestFeatureNormKnownValue(t *testing.T) {
	tests := []struct {
		name   string
		z, y   []float64
		wantJ  float64
		wantDz []float64
	}{
		{"2 classes, 3 samples", []float64{3, 4, 0, 1, 6, 8}, []float64{0, 0, 1}, 2,
			[]float64{0.6, 0.8, 0, 1, -2 * 0.6, -2 * 0.8}},
		{"with a NaN-target row", []float64{3, 4, 0, 1, 6, 8, 5, 0}, []float64{0, 0, 1, 2}, 1.5,
			[]float64{0.75 * 0.6, 0.75 * 0.8, 0, 0.75, -1.5 * 0.6, -1.5 * 0.8, 0, 0}},
		{"zero row", []float64{0, 0}, []float64{0}, 4, []float64{0, 0}},
	}
	for _, tt := range tests {
		f := featNorm[float64]{
			lambda: 1.5,
			target: []float64{2, 12, math.NaN(), 7},
			y:      tt.y,
			count:  make([]int, 4),
			mean:   make([]float64, 4),
			norm:   make([]float64, len(tt.y)),
		}
		if got := f.apply(tt.z, nil, 2); math.Abs(got-tt.wantJ) > 1e-15 {
			t.Errorf("%s: J_B = %v; want %v", tt.name, got, tt.wantJ)
		}
		dz := make([]float64, len(tt.z))
		if got := f.apply(tt.z, dz, 2); math.Abs(got-tt.wantJ) > 1e-15 {
			t.Errorf("%s: J_B with the gradient = %v; want %v", tt.name, got, tt.wantJ)
		}
		for j := range dz {
			if math.Abs(dz[j]-tt.wantDz[j]) > 1e-15 {
				t.Errorf("%s: λ·∂J_B/∂z = %v; want %v", tt.name, dz, tt.wantDz)
				break
			}
		}
	}
}

// TestFeatureNormLoss checks the wiring through TrainObjective: one
// full-batch step on 3 samples of 2 classes reports in Loss λ·J_B computed
// by the formula from Trainer.Forward's embeddings at the starting weights
// (the MLP has no dropout or BatchNorm, so training and eval embeddings
// agree). The float32 graph's norms carry relative error ≈ 1e-7.
func TestFeatureNormLoss(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{6, 5}}, [3]int{1, 2, 2}, 2)
	ex := uniformData(3, 3, n.Dim(), 2)
	ex.Y = []uint8{0, 1, 0}
	w := initWeights(t, n, 4)
	tr := newTrainer()
	u := classMeanNorms(t, tr, n, w, ex)
	const lambda = 2.5
	targets := []float64{u[0] + 0.3, u[1] - 0.2}
	want := lambda * (2.0/3*0.3*0.3 + 1.0/3*0.2*0.2)
	var loss float64
	obj := Objective{FeatureNorm: &FeatureNormPenalty{Lambda: lambda, Targets: targets, Loss: &loss}}
	if _, err := tr.TrainObjective(t.Context(), n, w, ex, sgdSteps(0.1, 8, 1), obj, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
		t.Fatal(err)
	}
	if math.Abs(loss-want) > 1e-5*want {
		t.Errorf("Loss = %.9g; want λ·J_B = %.9g", loss, want)
	}
}

// TestFeatureNormFiniteDifferences compares the penalty's gradient, as the
// trainer computes it (the float64 graph's gradient with the penalty minus
// the one without), with central differences of λ·J_B (step 1e-6, as
// TestGradientFiniteDifferences), along a random direction over all
// trainable weights and along each tensor. The tolerance is the spec's
// relative error < 1e-4 (specs/fnrfl.md §7 item 14); the measured errors are
// logged.
func TestFeatureNormFiniteDifferences(t *testing.T) {
	const h = 1e-6
	tests := []struct {
		name    string
		spec    Spec
		in      [3]int
		classes int
		batch   int
	}{
		{"mlp", Spec{Arch: ArchMLP, Hidden: []int{7, 5}}, [3]int{2, 2, 2}, 3, 7},
		{"lenet", Spec{Arch: ArchLeNet}, [3]int{1, 16, 16}, 3, 5},
		// BatchNorm in training mode couples the batch's samples.
		{"cnn-hics-3conv", Spec{Arch: ArchCNNHiCS3Conv}, [3]int{1, 4, 4}, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustNet(t, tt.spec, tt.in, tt.classes)
			ex := uniformData(17, tt.batch, n.Dim(), tt.classes)
			for i := range ex.Y {
				ex.Y[i] = uint8(i % tt.classes)
			}
			w32 := initWeights(t, n, 5)
			w := make([]float64, n.NumParams())
			convertCopy(w, w32)
			// Targets on both sides of the current class means, one NaN.
			u := classMeanNorms(t, newTrainer(), n, w32, ex)
			targets := []float64{1.5 * u[0], 0.5 * u[1], math.NaN()}
			pen := &FeatureNormPenalty{Lambda: 2, Targets: targets}

			p := newGradProbe(t, n, ex, 5)
			_, g0 := p.lossGrad(w)
			p.s.setFeatureNorm(pen)
			p.f.setFeatureNorm(pen)
			_, g1 := p.lossGrad(w)
			penalty := func(w []float64) float64 {
				p.loss(w)
				return pen.Lambda * p.f.fnorm.j
			}
			if j := penalty(w); !(j > 0) {
				t.Fatalf("λ·J_B = %v at w; want > 0", j)
			}
			r := rand.New(rand.NewPCG(23, 0))
			check := func(what string, dir []float64) {
				t.Helper()
				var dn float64
				for _, d := range dir {
					dn += d * d
				}
				var got float64
				wp, wm := slices.Clone(w), slices.Clone(w)
				for j := range dir {
					dir[j] /= math.Sqrt(dn)
					got += (g1[j] - g0[j]) * dir[j]
					wp[j] += h * dir[j]
					wm[j] -= h * dir[j]
				}
				want := (penalty(wp) - penalty(wm)) / (2 * h)
				rel := math.Abs(got-want) / math.Abs(want)
				t.Logf("%s: ⟨λ∇J_B, d⟩ = %.9g, central difference %.9g, relative error %.2g", what, got, want, rel)
				if !(rel < 1e-4) {
					t.Errorf("%s: ⟨λ∇J_B, d⟩ = %.9g; central difference %.9g (relative error %.2g ≥ 1e-4)", what, got, want, rel)
				}
			}
			all := make([]float64, len(w))
			for _, prm := range n.Params() {
				if prm.Trainable {
					for j := prm.Offset; j < prm.Offset+prm.Len; j++ {
						all[j] = r.NormFloat64()
					}
				}
			}
			check("all weights", all)
			for _, prm := range n.Params() {
				// The output layer does not reach the embedding.
				if !prm.Trainable || strings.HasPrefix(prm.Name, "out.") {
					continue
				}
				dir := make([]float64, len(w))
				for j := prm.Offset; j < prm.Offset+prm.Len; j++ {
					dir[j] = r.NormFloat64()
				}
				check(prm.Name, dir)
			}
			// And the output layer's gradient is the cross-entropy's alone.
			ow, ob := n.Output()
			for _, prm := range []Param{ow, ob} {
				for j := prm.Offset; j < prm.Offset+prm.Len; j++ {
					if g1[j] != g0[j] {
						t.Fatalf("the penalty changed the gradient of %s", prm.Name)
					}
				}
			}
		})
	}
}

// TestFeatureNormMovesNorms checks specs/fnrfl.md §7 item 14: with λ > 0,
// full-batch SGD moves each class's mean embedding norm toward its target,
// one target above and one below the current mean (by half of it).
// "Penalty only" drops the cross-entropy (α = 1 with g̃ = 0 leaves
// h = λ·∇J_B); "with cross-entropy" keeps it, at a λ where the penalty
// dominates. With η·λ = 0.25 both close about 70% of each gap in 20 steps
// (logged); a much larger η·λ overshoots.
func TestFeatureNormMovesNorms(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{16, 12}}, [3]int{1, 4, 4}, 3)
	ex := clusters(8, 60, n.Dim(), 3, 0.2)
	w0 := initWeights(t, n, 9)
	tr := newTrainer()
	u0 := classMeanNorms(t, tr, n, w0, ex)
	targets := []float64{1.5 * u0[0], 0.5 * u0[1], math.NaN()}
	hp := sgdSteps(0.05, 64, 20) // n ≤ B: every step is the whole set, so Ū_B = Ū
	for _, tt := range []struct {
		name string
		obj  Objective
	}{
		{"penalty only", Objective{Align: 1, AlignGrad: make([]float32, n.NumParams()),
			FeatureNorm: &FeatureNormPenalty{Lambda: 5, Targets: targets}}},
		{"with cross-entropy", Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 5, Targets: targets}}},
	} {
		w := slices.Clone(w0)
		if _, err := tr.TrainObjective(t.Context(), n, w, ex, hp, tt.obj, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
		u := classMeanNorms(t, tr, n, w, ex)
		for c := range 2 {
			before, after := math.Abs(u0[c]-targets[c]), math.Abs(u[c]-targets[c])
			t.Logf("%s: class %d: Ū %.4f → %.4f, target %.4f", tt.name, c, u0[c], u[c], targets[c])
			if !(after < 0.5*before) {
				t.Errorf("%s: class %d: |Ū − T| %.4g → %.4g; want it at least halved", tt.name, c, before, after)
			}
		}
	}
}

// TestFeatureNormZero checks that λ = 0 trains bit for bit as no penalty,
// and that a session which ran the penalty, returned to the pool, trains
// and computes Gradient as a fresh one.
func TestFeatureNormZero(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 3, 3}, 3)
	ex := uniformData(5, 30, n.Dim(), 3)
	w0 := initWeights(t, n, 6)
	hp := sgdSteps(0.3, 8, 4)
	hp.Momentum = 0.9
	train := func(tr *Trainer, o Objective) []float32 {
		w := slices.Clone(w0)
		if _, err := tr.TrainObjective(t.Context(), n, w, ex, hp, o, rand.New(rand.NewPCG(2, 2)), nil); err != nil {
			t.Fatal(err)
		}
		return w
	}
	targets := []float64{3, 0.1, math.NaN()}
	plain := train(newTrainer(), Objective{})
	loss := -1.0
	if got := train(newTrainer(), Objective{FeatureNorm: &FeatureNormPenalty{Targets: targets, Loss: &loss}}); !equalBits(got, plain) || loss != 0 {
		t.Errorf("λ = 0: weights equal to nil's %v, Loss %v; want equal weights and Loss 0", equalBits(got, plain), loss)
	}
	tr := newTrainer()
	on := train(tr, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: targets}})
	if equalBits(on, plain) {
		t.Fatal("λ = 1 changed nothing; the test is vacuous")
	}
	if got := train(tr, Objective{}); !equalBits(got, plain) {
		t.Error("a pooled session that ran the penalty trains differently without it")
	}
	// A full-batch run leaves a session of batch 30 in the pool, the one
	// Gradient borrows below.
	hp.BatchSize = 64
	train(tr, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: targets}})
	g, gFresh := make([]float32, n.NumParams()), make([]float32, n.NumParams())
	if _, err := tr.Gradient(t.Context(), n, w0, ex, 30, g); err != nil {
		t.Fatal(err)
	}
	if _, err := newTrainer().Gradient(t.Context(), n, w0, ex, 30, gFresh); err != nil {
		t.Fatal(err)
	}
	if !equalBits(g, gFresh) {
		t.Error("Gradient on a pooled session that ran the penalty differs from a fresh one")
	}
}

// TestFeatureNormNoAllocationPerStep: the penalty allocates nothing per
// step once the graph is built (as TestNoAllocationPerStep for the rest).
func TestFeatureNormNoAllocationPerStep(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{16}}, [3]int{1, 4, 4}, 4)
	ex := uniformData(1, 100, n.Dim(), 4)
	w0 := initWeights(t, n, 1)
	w := make([]float32, len(w0))
	tr := newTrainer()
	var loss float64
	obj := Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: []float64{1, 2, math.NaN(), 0.5}, Loss: &loss}}
	allocs := func(steps int) float64 {
		return testing.AllocsPerRun(3, func() {
			copy(w, w0)
			if _, err := tr.TrainObjective(t.Context(), n, w, ex, sgdSteps(0.01, 20, steps), obj, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	if a2, a12 := allocs(2), allocs(12); a12 != a2 {
		t.Errorf("TrainObjective allocates %v times with 2 steps and %v with 12", a2, a12)
	}
}

// TestInOrder checks Hyper.InOrder: every epoch's batches are ex.Idx in its
// given order, cut into B; without dropout the trained weights do not
// depend on r; the first step trains on the first B samples of ex.Idx
// (bit for bit a one-step run on exactly those); dropout masks still come
// from r; and LocalSteps rejects it.
func TestInOrder(t *testing.T) {
	hp := sgdEpochs(0.1, 4, 2)
	hp.InOrder = true
	for _, seed := range []uint64{1, 2} {
		var got [][]int
		err := forEachBatch(11, hp, rand.New(rand.NewPCG(seed, seed)), func(pos []int) error {
			got = append(got, slices.Clone(pos))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		epoch := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10}}
		if want := append(slices.Clone(epoch), epoch...); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("seed %d: batches %v; want %v", seed, got, want)
		}
	}

	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 3, 3}, 3)
	ex := uniformData(4, 22, n.Dim(), 3)
	ex.Idx = rand.New(rand.NewPCG(7, 7)).Perm(len(ex.Y)) // a given order that is not 0..n−1
	w0 := initWeights(t, n, 2)
	train := func(ex Examples, hp Hyper, seed uint64, first []float32) ([]float32, TrainResult) {
		w := slices.Clone(w0)
		res, err := newTrainer().TrainObjective(t.Context(), n, w, ex, hp, Objective{FirstStep: first}, rand.New(rand.NewPCG(seed, 0)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return w, res
	}
	hp = sgdEpochs(0.2, 8, 2)
	hp.InOrder = true
	first := make([]float32, n.NumParams())
	a, res := train(ex, hp, 1, first)
	b, _ := train(ex, hp, 2, nil)
	if !equalBits(a, b) {
		t.Error("in order: different streams gave different weights")
	}
	if res.Steps != 6 || res.Samples != 44 {
		t.Errorf("in order: %d steps of %d samples; want 2·⌈22/8⌉ = 6 of 44", res.Steps, res.Samples)
	}
	head := ex
	head.Idx = ex.Idx[:8]
	if one, _ := train(head, sgdSteps(0.2, 8, 1), 3, nil); !equalBits(first, one) {
		t.Error("in order: the first step did not train on ex.Idx[:B]")
	}
	hp.InOrder = false
	c, _ := train(ex, hp, 1, nil)
	d, _ := train(ex, hp, 2, nil)
	if equalBits(c, d) {
		t.Error("shuffled: different streams gave equal weights; the test is vacuous")
	}

	cnn := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
	sq := squares(70, 6)
	hpc := sgdEpochs(0.05, 4, 1)
	hpc.InOrder = true
	wc := initWeights(t, cnn, 8)
	var outs [2][]float32
	for i := range outs {
		outs[i] = slices.Clone(wc)
		if _, err := newTrainer().Train(t.Context(), cnn, outs[i], sq, hpc, rand.New(rand.NewPCG(uint64(i), 0)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if equalBits(outs[0], outs[1]) {
		t.Error("in order with dropout: different streams gave equal weights; the masks do not come from r")
	}

	bad := sgdSteps(0.1, 4, 3)
	bad.InOrder = true
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "hyper.in_order") {
		t.Errorf("Validate(InOrder with LocalSteps) = %v; want an error naming hyper.in_order", err)
	}
}
