package trainer

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randVec returns n values N(0, σ²) as float32.
func randVec(r *rand.Rand, n int, sigma float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(sigma * r.NormFloat64())
	}
	return v
}

// objProbe evaluates an Objective's total F(w) and the gradient Train
// descends along, in float64 graphs over one fixed batch (all of ex):
//
//	F(w) = (1 − α)·CE(w) + ν·ℓ_con(w) + λ·J_B(w) + μ/2·‖w − a‖² + ⟨v, w⟩ + α·⟨g̃, w⟩
func objProbe(t *testing.T, n *Net, ex Examples, o *Objective, w0 []float32) (value func([]float64) float64, grad func([]float64) []float64) {
	p := newGradProbe(t, n, ex, 5)
	pos := make([]int, len(ex.Idx))
	for i := range pos {
		pos[i] = i
	}
	for _, s := range []*session[float64]{p.s, p.f} {
		s.setContrast(o.Contrast, n.Embedding(), pos)
		s.setFeatureNorm(o.FeatureNorm)
		s.xent.scale = 1 - o.Align
	}
	value = func(w []float64) float64 {
		ce := p.loss(w)
		f := (1-o.Align)*ce + objectiveValue(n, o, w, w0)
		if o.Contrast != nil {
			f += o.Contrast.Mu * p.f.con.loss
		}
		if o.FeatureNorm != nil && o.FeatureNorm.Lambda != 0 {
			f += o.FeatureNorm.Lambda * p.f.fnorm.j
		}
		return f
	}
	grad = func(w []float64) []float64 {
		_, g := p.lossGrad(w)
		anchor := o.Anchor
		if anchor == nil {
			anchor = w0
		}
		ws := slices.Clone(w)
		applyObjective(p.s.spans, ws, g, o, anchor)
		return g
	}
	return value, grad
}

// TestObjectiveGradient checks every Objective term against central
// differences of the objective it claims to minimise: FedProx's proximal
// term, SCAFFOLD's correction as a linear term, FedDyn's linear and
// quadratic terms, FedEBA+'s aligned gradient, MOON's contrastive loss and
// the feature-norm penalty (through the embedding, into every layer below
// it). Tolerances as in
// TestGradientFiniteDifferences.
func TestObjectiveGradient(t *testing.T) {
	const h = 1e-6
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{7, 5}}, [3]int{2, 2, 2}, 4)
	ex := uniformData(31, 6, n.Dim(), 4)
	r := rand.New(rand.NewPCG(41, 0))
	w0 := initWeights(t, n, 3)
	size, l := n.NumParams(), n.Embedding()
	c, ci, prev, gt := randVec(r, size, 0.3), randVec(r, size, 0.3), randVec(r, size, 0.3), randVec(r, size, 0.5)
	zg, zp := randVec(r, len(ex.Idx)*l, 1), randVec(r, len(ex.Idx)*l, 1)
	scaffold, err := Scaffold(c, ci)
	if err != nil {
		t.Fatal(err)
	}
	// Targets around the embedding norms of this net at w0 (≈ 1), one class
	// without a target.
	targets := []float64{0.4, math.NaN(), 2, 1.1}
	all := Objective{Prox: 0.2, Anchor: randVec(r, size, 0.2), Linear: prev, Align: 0.3, AlignGrad: gt,
		Contrast:    &Contrastive{Mu: 1.5, Tau: 0.7, Global: zg, Prev: zp},
		FeatureNorm: &FeatureNormPenalty{Lambda: 0.8, Targets: targets}}
	tests := []struct {
		name string
		obj  Objective
	}{
		{"plain", Objective{}},
		{"fedprox", Proximal(0.7)},
		{"scaffold", scaffold},
		{"feddyn", FedDyn(0.3, prev)},
		{"fedeba+ aligned", Aligned(0.4, gt)},
		{"moon", MOON(2, 0.5, zg, zp)},
		{"moon first round", MOON(2, 0.5, zg, nil)},
		{"fnr-fl feature norm", Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 3, Targets: targets}}},
		{"all terms", all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.obj.Validate(n, len(ex.Idx)); err != nil {
				t.Fatal(err)
			}
			value, grad := objProbe(t, n, ex, &tt.obj, w0)
			// Evaluate away from w0, where the proximal term's gradient
			// is not zero.
			w := make([]float64, size)
			for j := range w {
				w[j] = float64(w0[j]) + 0.1*r.NormFloat64()
			}
			g := grad(w)
			for k := range 4 {
				dir := make([]float64, size)
				var dn float64
				for _, p := range n.Params() {
					for j := p.Offset; j < p.Offset+p.Len; j++ {
						if p.Trainable && (k == 0 || strings.HasPrefix(p.Name, [...]string{"", "fc1", "fc2", "out"}[k])) {
							dir[j] = r.NormFloat64()
							dn += dir[j] * dir[j]
						}
					}
				}
				var got, norm float64
				wp, wm := slices.Clone(w), slices.Clone(w)
				for j := range dir {
					dir[j] /= math.Sqrt(dn)
					got += g[j] * dir[j]
					norm += g[j] * g[j]
					wp[j] += h * dir[j]
					wm[j] -= h * dir[j]
				}
				want := (value(wp) - value(wm)) / (2 * h)
				if math.Abs(got-want) > 1e-6+1e-5*math.Sqrt(norm) {
					t.Errorf("direction %d: ⟨∇F, d⟩ = %.9g; central difference %.9g", k, got, want)
				}
			}
		})
	}
}

// TestObjectiveExact checks that Train applies the terms exactly as
// written, bit for bit in float32: one full-batch plain-SGD step from w0
// gives w0 − η·(g + v) for SCAFFOLD (v = c − c_i, g the float32 gradient of
// the same graph), and w0 − η·g̃ for FedEBA+'s alignment with α = 1 (the
// data gradient weighs 0). Zero terms change nothing: FedProx with μ = 0
// and MOON in a client's first round (no previous model) train exactly as
// plain cross-entropy.
func TestObjectiveExact(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 3, 3}, 3)
	ex := uniformData(5, 10, n.Dim(), 3)
	w0 := initWeights(t, n, 6)
	r := rand.New(rand.NewPCG(9, 9))
	c, ci, gt := randVec(r, n.NumParams(), 0.1), randVec(r, n.NumParams(), 0.1), randVec(r, n.NumParams(), 0.1)
	const lr = 0.5
	hp := sgdSteps(lr, 16, 1) // n ≤ B: the batch is all of ex, in order
	train := func(o Objective) []float32 {
		w := slices.Clone(w0)
		if _, err := newTrainer().TrainObjective(t.Context(), n, w, ex, hp, o, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
		return w
	}
	s, err := newSession[float32](n, testKern, len(ex.Idx), true)
	if err != nil {
		t.Fatal(err)
	}
	loadWeights(s, w0)
	s.setBatch(ex, ex.Idx)
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	scaffold, err := Scaffold(c, ci)
	if err != nil {
		t.Fatal(err)
	}
	wantScaffold, wantAligned := slices.Clone(w0), slices.Clone(w0)
	for _, sp := range trainableSpans(n) {
		for j := sp.lo; j < sp.hi; j++ {
			wantScaffold[j] = w0[j] - float32(lr)*(s.g[j]+(c[j]-ci[j]))
			wantAligned[j] = w0[j] - float32(lr)*gt[j]
		}
	}
	plain := train(Objective{})
	tests := []struct {
		name string
		obj  Objective
		want []float32
	}{
		{"scaffold g + c − c_i", scaffold, wantScaffold},
		{"fedeba+ α = 1", Aligned(1, gt), wantAligned},
		{"fedprox μ = 0", Proximal(0), plain},
		{"moon without previous model", MOON(5, 0.5, randVec(r, len(ex.Idx)*n.Embedding(), 1), nil), plain},
	}
	for _, tt := range tests {
		if got := train(tt.obj); !equalBits(got, tt.want) {
			t.Errorf("%s: weights differ from the hand-computed update", tt.name)
		}
	}
	if equalBits(plain, wantScaffold) {
		t.Error("the SCAFFOLD correction changed nothing; the test is vacuous")
	}
}

// TestOptStateCarried checks Objective.State: two Train calls of K steps
// that carry the optimiser state equal one call of 2K steps (full batches,
// so the minibatches do not depend on r), for SGD with momentum and for
// Adam (whose bias correction needs the step count); without the state
// the second call restarts the moments and differs.
func TestOptStateCarried(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{6}}, [3]int{1, 3, 3}, 3)
	ex := uniformData(6, 10, n.Dim(), 3)
	for _, hp := range []Hyper{
		{Optimizer: OptimizerSGD, LR: 0.1, Momentum: 0.9, BatchSize: 16, LocalSteps: 3},
		{Optimizer: OptimizerAdam, LR: 0.01, BatchSize: 16, LocalSteps: 3},
	} {
		tr := newTrainer()
		run := func(w []float32, hp Hyper, st *OptState) {
			if _, err := tr.TrainObjective(t.Context(), n, w, ex, hp, Objective{State: st}, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatal(err)
			}
		}
		once := initWeights(t, n, 2)
		long := hp
		long.LocalSteps *= 2
		run(once, long, nil)
		twice, st := initWeights(t, n, 2), &OptState{}
		run(twice, hp, st)
		run(twice, hp, st)
		fresh := initWeights(t, n, 2)
		run(fresh, hp, nil)
		run(fresh, hp, nil)
		if !equalBits(once, twice) {
			t.Errorf("%s: two carried calls of %d steps differ from one of %d", hp.Optimizer, hp.LocalSteps, long.LocalSteps)
		}
		if equalBits(once, fresh) {
			t.Errorf("%s: restarting the state gave the same weights; the test is vacuous", hp.Optimizer)
		}
		if st.Steps != 2*hp.LocalSteps && hp.Optimizer == OptimizerAdam {
			t.Errorf("%s: state has %d steps; want %d", hp.Optimizer, st.Steps, 2*hp.LocalSteps)
		}
	}
}

func TestObjectiveValidate(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{4}}, [3]int{1, 2, 2}, 3)
	logreg := mustNet(t, Spec{Arch: ArchLogReg}, [3]int{1, 2, 2}, 3)
	size, l := n.NumParams(), n.Embedding()
	tests := []struct {
		name      string
		net       *Net
		obj       Objective
		wantField string // "" means valid
	}{
		{"zero", n, Objective{}, ""},
		{"fedprox", n, Proximal(0.1), ""},
		{"negative mu", n, Proximal(-1), "objective.prox"},
		{"short linear", n, Objective{Linear: make([]float32, size-1)}, "objective.linear"},
		{"NaN linear", n, Objective{Linear: append(make([]float32, size-1), float32(math.NaN()))}, "objective.linear"},
		{"anchor without mu", n, Objective{Anchor: make([]float32, size)}, "objective.anchor"},
		{"align > 1", n, Aligned(1.5, make([]float32, size)), "objective.align"},
		{"align without g", n, Objective{Align: 0.5}, "objective.align_grad"},
		{"moon", n, MOON(1, 0.5, make([]float32, 5*l), make([]float32, 5*l)), ""},
		{"moon wrong rows", n, MOON(1, 0.5, make([]float32, 4*l), nil), "objective.contrast.global"},
		{"moon tau 0", n, MOON(1, 0, make([]float32, 5*l), nil), "objective.contrast.tau"},
		{"moon on logreg", logreg, MOON(1, 0.5, make([]float32, 5*logreg.Embedding()), nil), "no hidden embedding"},
		{"state wrong length", n, Objective{State: &OptState{M: make([]float32, 3)}}, "objective.state"},
		{"feature norm", n, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: []float64{1, math.NaN(), 0}}}, ""},
		{"feature norm lambda 0", n, Objective{FeatureNorm: &FeatureNormPenalty{Targets: []float64{1, 2, 3}}}, ""},
		{"feature norm negative lambda", n, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: -1, Targets: []float64{1, 2, 3}}}, "objective.feature_norm.lambda"},
		{"feature norm NaN lambda", n, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: math.NaN(), Targets: []float64{1, 2, 3}}}, "objective.feature_norm.lambda"},
		{"feature norm short targets", n, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: []float64{1, 2}}}, "objective.feature_norm.targets"},
		{"feature norm Inf target", n, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: []float64{1, math.Inf(1), 3}}}, "objective.feature_norm.targets[1]"},
		{"feature norm negative target", n, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: []float64{1, 2, -3}}}, "objective.feature_norm.targets[2]"},
		{"feature norm on logreg", logreg, Objective{FeatureNorm: &FeatureNormPenalty{Lambda: 1, Targets: []float64{1, 2, 3}}}, "objective.feature_norm"},
		{"propfair", n, Objective{PropFair: &PropFairLoss{M: 0.2, Thres: 0.2}}, ""},
		{"propfair M 0", n, Objective{PropFair: &PropFairLoss{M: 0, Thres: 0.2}}, "objective.propfair.M"},
		{"propfair thres 0", n, Objective{PropFair: &PropFairLoss{M: 2, Thres: 0}}, ""},
		{"propfair huber thres 0", n, Objective{PropFair: &PropFairLoss{M: 2, Thres: 0, Huber: true}}, "objective.propfair.thres"},
	}
	for _, tt := range tests {
		err := tt.obj.Validate(tt.net, 5)
		if (err == nil) != (tt.wantField == "") || (err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantField))) {
			t.Errorf("%s: Validate = %v; want an error naming %q", tt.name, err, tt.wantField)
		}
	}
	if _, err := Scaffold(make([]float32, 3), make([]float32, 4)); !errors.Is(err, ErrInvalid) {
		t.Errorf("Scaffold(mismatched lengths) = %v; want ErrInvalid", err)
	}
}

// TestFirstStep checks Objective.FirstStep: it holds the weights after the
// first of K steps, bit for bit those of a one-step run on the same stream,
// with and without the fused plain-SGD path, and it changes nothing else.
func TestFirstStep(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 3, 3}, 3)
	ex := uniformData(7, 40, n.Dim(), 3)
	w0 := initWeights(t, n, 8)
	for _, hp := range []Hyper{sgdSteps(0.3, 8, 4), {Optimizer: OptimizerSGD, LR: 0.3, Momentum: 0.9, BatchSize: 8, LocalSteps: 4}} {
		train := func(steps int, o Objective) []float32 {
			h := hp
			h.LocalSteps = steps
			w := slices.Clone(w0)
			if _, err := newTrainer().TrainObjective(t.Context(), n, w, ex, h, o, rand.New(rand.NewPCG(3, 3)), nil); err != nil {
				t.Fatal(err)
			}
			return w
		}
		first := make([]float32, n.NumParams())
		got := train(4, Objective{FirstStep: first})
		if !equalBits(first, train(1, Objective{})) {
			t.Errorf("momentum %v: FirstStep differs from a one-step run", hp.Momentum)
		}
		if !equalBits(got, train(4, Objective{})) {
			t.Errorf("momentum %v: asking for the first step changed the trained weights", hp.Momentum)
		}
		if equalBits(first, got) || equalBits(first, w0) {
			t.Errorf("momentum %v: FirstStep equals the start or the end; the test is vacuous", hp.Momentum)
		}
	}
}

// TestPropFairScale checks PropFair's transformed loss on one full-batch
// SGD step: the update is the plain update times φ'(ℓ), 1/(M − ℓ) on the
// log branch and 1/M on the linear branch (1/thres with Huber), ℓ the
// step's reported loss.
func TestPropFairScale(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 3, 3}, 3)
	ex := uniformData(5, 10, n.Dim(), 3)
	w0 := initWeights(t, n, 6)
	hp := sgdSteps(0.1, 16, 1) // one full batch: the minibatch is all of ex
	train := func(o Objective) ([]float32, float64) {
		w := slices.Clone(w0)
		res, err := newTrainer().TrainObjective(t.Context(), n, w, ex, hp, o, rand.New(rand.NewPCG(1, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return w, res.MeanLoss
	}
	plain, l := train(Objective{})
	for _, tt := range []struct {
		name  string
		p     PropFairLoss
		scale float64
	}{
		{"log branch", PropFairLoss{M: 5, Thres: 0.2}, 1 / (5 - l)},
		{"linear branch (M = 0.2 ≤ thres)", PropFairLoss{M: 0.2, Thres: 0.2}, 1 / 0.2},
		{"log branch with huber", PropFairLoss{M: 5, Thres: 0.2, Huber: true}, 1 / (5 - l)},
		{"linear branch (M − ℓ = 0.1 < thres)", PropFairLoss{M: l + 0.1, Thres: 0.2}, 1 / (l + 0.1)},
		{"huber linear branch (M − ℓ = 0.1 < thres)", PropFairLoss{M: l + 0.1, Thres: 0.2, Huber: true}, 1 / 0.2},
	} {
		got, gl := train(Objective{PropFair: &tt.p})
		if gl != l {
			t.Errorf("%s: reported loss %v; want the cross-entropy %v", tt.name, gl, l)
		}
		for j := range got {
			want := float64(w0[j]) + tt.scale*(float64(plain[j])-float64(w0[j]))
			if d := math.Abs(float64(got[j]) - want); d > 1e-6*(1+math.Abs(want)) {
				t.Fatalf("%s: weight %d = %v; want %v (the plain update × %v)", tt.name, j, got[j], want, tt.scale)
			}
		}
	}
}

// TestAlignedFullWeight: with α = 1 every step descends along g̃ alone, so
// after K minibatch steps every client's update is −η·K·g̃ whatever its
// data (FedEBA+ acceptance check: Δ_t^i = −η_L K g̃ for every client).
func TestAlignedFullWeight(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{8}}, [3]int{1, 3, 3}, 3)
	w0 := initWeights(t, n, 6)
	gt := randVec(rand.New(rand.NewPCG(4, 4)), n.NumParams(), 0.1)
	const lr, k = 0.2, 3
	for seed := range uint64(2) {
		ex := uniformData(10+seed, 40, n.Dim(), 3)
		w := slices.Clone(w0)
		if _, err := newTrainer().TrainObjective(t.Context(), n, w, ex, sgdSteps(lr, 8, k), Aligned(1, gt), rand.New(rand.NewPCG(seed, 1)), nil); err != nil {
			t.Fatal(err)
		}
		for j := range w {
			if want := float64(w0[j]) - lr*k*float64(gt[j]); math.Abs(float64(w[j])-want) > 1e-6 {
				t.Fatalf("data %d: weight %d = %v; want w0 − ηKg̃ = %v", seed, j, w[j], want)
			}
		}
	}
}

// TestPropFairScaleBranches checks φ' around the switch ℓ = M − thres: the
// log branch's 1/(M − ℓ) reaches 1/thres there, the Huber extension keeps
// that slope beyond it, and the default jumps to 1/M.
func TestPropFairScaleBranches(t *testing.T) {
	const m, thres = 2.0, 0.5
	switchAt := m - thres
	tests := []struct {
		p    PropFairLoss
		l    float64
		want float64
	}{
		{PropFairLoss{M: m, Thres: thres}, 1.0, 1 / (m - 1.0)},
		{PropFairLoss{M: m, Thres: thres}, switchAt, 1 / thres}, // M − ℓ = thres: still the log branch
		{PropFairLoss{M: m, Thres: thres}, 1.75, 1 / m},
		{PropFairLoss{M: m, Thres: thres}, 3, 1 / m}, // ℓ > M
		{PropFairLoss{M: m, Thres: thres, Huber: true}, 1.0, 1 / (m - 1.0)},
		{PropFairLoss{M: m, Thres: thres, Huber: true}, switchAt, 1 / thres},
		{PropFairLoss{M: m, Thres: thres, Huber: true}, 1.75, 1 / thres},
		{PropFairLoss{M: m, Thres: thres, Huber: true}, 3, 1 / thres},
	}
	for _, tt := range tests {
		if got := tt.p.Scale(tt.l); got != tt.want {
			t.Errorf("%+v.Scale(%v) = %v; want %v", tt.p, tt.l, got, tt.want)
		}
	}
}
