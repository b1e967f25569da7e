package attack_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/qp"
	"github.com/flsweep/flsweep/trainer"
)

// TestBiasUpdateSumsToZero: the bias gradient of
// every sample, s − onehot(y), sums to 0 over the classes, so a real SGD
// update through trainer (plain, momentum, Nesterov, FedProx) has
// Σ_j Δb_j = 0 up to float32 rounding; weight decay breaks it, and adding
// its history term h restores it. Sign: on an untrained model a class
// over-represented in the batch (N_j/|B| above its mean confidence ≈ 1/N)
// has Δb_j > 0, an absent one Δb_j < 0.
func TestBiasUpdateSumsToZero(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	ex := w.draw(21, skewed)
	tests := []struct {
		name  string
		giveH trainer.Hyper
		giveO trainer.Objective
	}{
		{"sgd", sgd(0.1, 64, 1), trainer.Objective{}},
		{"sgd, 10 steps", sgd(0.1, 64, 10), trainer.Objective{}},
		{"momentum", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.9, BatchSize: 64, LocalSteps: 10}, trainer.Objective{}},
		{"nesterov", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, BatchSize: 64, LocalSteps: 10}, trainer.Objective{}},
		{"fedprox", sgd(0.1, 64, 10), trainer.Proximal(1)},
	}
	_, b := w.net.Output()
	bound := func(db []float64, steps int) float64 { // float32 rounding of b^t + Δb, per step
		s := 0.0
		for j, v := range w.bias(global) {
			s += math.Abs(v) + math.Abs(db[j])
		}
		return 4 * float64(steps) * 0x1p-24 * s
	}
	for _, tt := range tests {
		db := w.bias(w.update(t, global, ex, tt.giveH, tt.giveO))
		s, norm := 0.0, 0.0
		for _, v := range db {
			s += v
			norm += v * v
		}
		if math.Abs(s) > bound(db, tt.giveH.LocalSteps) {
			t.Errorf("%s: Σ_j Δb_j = %.3g (‖Δb‖ = %.3g); want 0 up to float32 rounding %.3g", tt.name, s, math.Sqrt(norm), bound(db, tt.giveH.LocalSteps))
		}
		if tt.giveH.LocalSteps == 1 && !(db[0] > 0 && db[classes-1] < 0) {
			t.Errorf("%s: Δb = %v; want Δb_0 > 0 (20 of 64 samples) and Δb_9 < 0 (absent)", tt.name, db)
		}
	}
	hp := trainer.Hyper{Optimizer: "sgd", LR: 0.1, WeightDecay: 0.05, BatchSize: 64, LocalSteps: 10}
	delta := w.update(t, global, ex, hp, trainer.Objective{})
	db := w.bias(delta)
	idx := make([]int, classes)
	for j := range idx {
		idx[j] = b.Offset + j
	}
	h := attack.History(attack.Input{Global: global, Local: local(t, hp, 64)}, idx)
	raw, fixed := 0.0, 0.0
	for j := range db {
		raw += db[j]
		fixed += db[j] + h[j]
	}
	if math.Abs(raw) < 10*bound(db, 10) || math.Abs(fixed) > bound(db, 10) {
		t.Errorf("weight decay: Σ Δb = %.3g (want clearly ≠ 0), Σ (Δb + h) = %.3g (want 0 up to %.3g)", raw, fixed, bound(db, 10))
	}
}

// TestCoefficientsStructure: A from S estimated on
// the auxiliary set, for an untrained and a trained model, has a positive
// diagonal, non-positive off-diagonal entries and columns summing to 0.
func TestCoefficientsStructure(t *testing.T) {
	w := newWorld(t, "")
	for _, model := range []struct {
		name string
		w    []float32
	}{{"untrained", w.init(t, 3)}, {"trained", w.trained(t, 5)}} {
		S, err := attack.Confidences(t.Context(), w.tr, w.net, model.w, w.aux(20))
		if err != nil {
			t.Fatal(err)
		}
		A := attack.Coefficients(S)
		for k := range A {
			col := 0.0
			for j := range A {
				col += A[j][k]
				if j == k && !(A[j][k] > 0) || j != k && A[j][k] > 0 {
					t.Errorf("%s: A[%d][%d] = %v; want diagonal > 0, off-diagonal ≤ 0", model.name, j, k, A[j][k])
				}
			}
			if math.Abs(col) > 1e-9 {
				t.Errorf("%s: column %d of A sums to %v; want 0", model.name, k, col)
			}
		}
	}
	// The orientation, by hand: S = [[.7 .2 .1] [.1 .6 .3] [.3 .3 .4]].
	S := [][]float64{{.7, .2, .1}, {.1, .6, .3}, {.3, .3, .4}}
	want := [][]float64{{.3, -.1, -.3}, {-.2, .4, -.3}, {-.1, -.3, .6}}
	A := attack.Coefficients(S)
	for j := range A {
		if !closeAll(A[j], want[j], 1e-15) {
			t.Errorf("Coefficients(%v) = %v; want %v", S, A, want)
			break
		}
	}
}

// oracle returns S measured on the client's own batch at the model (rows
// of classes absent from the batch from the auxiliary set): with it, Eq.
// (9) holds exactly for one SGD step.
func oracle(t *testing.T, w world, model []float32, batch trainer.Examples) [][]float64 {
	t.Helper()
	S, err := attack.Confidences(t.Context(), w.tr, w.net, model, w.aux(5))
	if err != nil {
		t.Fatal(err)
	}
	logits := make([]float32, len(batch.Idx)*classes)
	if err := w.tr.Forward(t.Context(), w.net, model, batch, nil, logits); err != nil {
		t.Fatal(err)
	}
	sums, cnt := make([][]float64, classes), make([]int, classes)
	for i, k := range batch.Idx {
		y := batch.Y[k]
		if sums[y] == nil {
			sums[y] = make([]float64, classes)
		}
		mx := math.Inf(-1)
		for _, v := range logits[i*classes : (i+1)*classes] {
			mx = math.Max(mx, float64(v))
		}
		z, e := 0.0, make([]float64, classes)
		for j, v := range logits[i*classes : (i+1)*classes] {
			e[j] = math.Exp(float64(v) - mx)
			z += e[j]
		}
		for j := range e {
			sums[y][j] += e[j] / z
		}
		cnt[y]++
	}
	for n := range S {
		if cnt[n] > 0 {
			for j := range S[n] {
				S[n][j] = sums[n][j] / float64(cnt[n])
			}
		}
	}
	return S
}

// TestExactRecoveryWithOracle: with S measured on the
// batch itself at θ^t and one SGD step, u = A z_true holds to float32
// rounding and the least squares returns the exact histogram, for an
// untrained and a trained model. This pins the sign of u, the orientation
// of A and the scaling; the transposed A of Alg. 1's literal reading does
// not recover it.
func TestExactRecoveryWithOracle(t *testing.T) {
	w := newWorld(t, "")
	ex := w.draw(21, skewed)
	hp := sgd(0.1, 64, 1)
	for _, model := range []struct {
		name string
		w    []float32
	}{{"untrained", w.init(t, 3)}, {"trained", w.trained(t, 5)}} {
		in := attack.Input{Net: w.net, Global: model.w, Delta: w.update(t, model.w, ex, hp, trainer.Objective{}), Local: local(t, hp, 64), Aux: w.aux(5)}
		u, err := attack.Signal(in)
		if err != nil {
			t.Fatal(err)
		}
		S := oracle(t, w, model.w, ex)
		A := attack.Coefficients(S)
		for j := range A {
			az := 0.0
			for k := range A[j] {
				az += A[j][k] * float64(skewed[k]) / 64
			}
			if !near(az, u[j], 1e-4*math.Abs(u[0])) {
				t.Errorf("%s: (A z_true)_%d = %v; u_%d = Δb_%d/η = %v", model.name, j, az, j, j, u[j])
			}
		}
		z, counts, err := attack.Solve(S, u, 64)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(counts, skewed) {
			t.Errorf("%s: Solve with the oracle S = %v (z = %v); want %v", model.name, counts, z, skewed)
		}
		zt, err := qp.SimplexLeastSquares(transpose(A), u)
		if err != nil {
			t.Fatal(err)
		}
		if c := attack.LargestRemainder(zt, 64); slices.Equal(c, skewed) {
			t.Errorf("%s: the transposed A also recovers %v; the test cannot tell the orientations apart", model.name, c)
		}
	}
}

func transpose(A [][]float64) [][]float64 {
	T := make([][]float64, len(A))
	for i := range T {
		T[i] = make([]float64, len(A))
		for j := range T {
			T[i][j] = A[j][i]
		}
	}
	return T
}

// TestSolveRecoversZ0: for random S (rows on the
// simplex) and z0 on the simplex, some entries 0, Solve of u = A z0
// returns z ≥ 0 with |Σz − 1| < 1e−9 and z0 to 1e−6.
func TestSolveRecoversZ0(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for trial := range 200 {
		n := 2 + trial%12
		S := make([][]float64, n)
		for i := range S {
			S[i] = make([]float64, n)
			s := 0.0
			for j := range S[i] {
				S[i][j] = math.Exp(2 * r.NormFloat64()) // from near-uniform to confident rows
				s += S[i][j]
			}
			for j := range S[i] {
				S[i][j] /= s
			}
		}
		z0 := make([]float64, n)
		s := 0.0
		for j := range z0 {
			if r.IntN(3) > 0 || j == 0 {
				z0[j] = r.Float64()
				s += z0[j]
			}
		}
		for j := range z0 {
			z0[j] /= s
		}
		A := attack.Coefficients(S)
		u := make([]float64, n)
		for j := range u {
			for k := range z0 {
				u[j] += A[j][k] * z0[k]
			}
		}
		z, counts, err := attack.Solve(S, u, 1000)
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for j, v := range z {
			total += v
			if v < 0 || math.Abs(v-z0[j]) > 1e-6 {
				t.Errorf("trial %d: z = %v; want z0 = %v", trial, z, z0)
				break
			}
		}
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("trial %d: Σz = %v", trial, total)
		}
		if !slices.Equal(counts, attack.LargestRemainder(z0, 1000)) {
			t.Errorf("trial %d: counts %v; want %v", trial, counts, attack.LargestRemainder(z0, 1000))
		}
	}
}

// TestRLUEndToEnd: an untrained MLP, one client's batch of 64 with a
// skewed histogram (one class absent), an auxiliary set of 20 per class.
// One SGD step: RLU recovers the histogram (iAcc ≥ 0.95; it is exact
// here). Ten steps on the same batch (640 samples processed): iAcc ≥ 0.95
// with S averaged over the start and end models, and dropping the 1/m of u
// (Eq. (10) as printed) costs at least 0.2. SGD with momentum 0.9: the
// ρ-corrected RLU stays ≥ 0.9 while the ρ-naive one (u = Δb/(η·m)) falls
// by at least 0.2. Every result is a valid histogram.
func TestRLUEndToEnd(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	ex := w.draw(21, skewed)
	mom := trainer.Hyper{Optimizer: "sgd", LR: 0.01, Momentum: 0.9, BatchSize: 64, LocalSteps: 10}
	tests := []struct {
		name     string
		giveH    trainer.Hyper
		giveA    attack.RLU
		wantIAcc float64 // at least
		wantMax  float64 // at most
	}{
		{"m = 1", sgd(0.01, 64, 1), attack.RLU{}, 0.95, 1},
		{"m = 1, closed form", sgd(0.01, 64, 1), attack.RLU{ClosedForm: true}, 0.9, 1},
		{"m = 10", sgd(0.01, 64, 10), attack.RLU{}, 0.95, 1},
		{"m = 10, S at θ^t only", sgd(0.01, 64, 10), attack.RLU{StartOnly: true}, 0.9, 1},
		{"m = 10, u = Δb/η", sgd(0.01, 64, 10), attack.RLU{Scale: attack.ScaleNone}, 0, 0.75},
		{"momentum 0.9", mom, attack.RLU{}, 0.9, 1},
		{"momentum 0.9, ρ-naive", mom, attack.RLU{Scale: attack.ScaleSteps}, 0, 0.7},
	}
	for _, tt := range tests {
		in := attack.Input{Net: w.net, Global: global, Delta: w.update(t, global, ex, tt.giveH, trainer.Objective{}), Local: local(t, tt.giveH, 64), Aux: w.aux(20)}
		res, err := tt.giveA.Recover(t.Context(), w.tr, in, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		truth := scale(skewed, tt.giveH.LocalSteps)
		validHistogram(t, tt.name, res.Counts, 64*tt.giveH.LocalSteps)
		s, err := attack.Evaluate(truth, res.Counts)
		if err != nil {
			t.Fatal(err)
		}
		if s.IAcc < tt.wantIAcc || s.IAcc > tt.wantMax {
			t.Errorf("%s: %s recovers %v (iAcc %.3f, cAcc %.3f); want iAcc in [%v, %v] for %v", tt.name, res.Method, res.Counts, s.IAcc, s.CAcc, tt.wantIAcc, tt.wantMax, truth)
		}
		if res.Heuristic {
			t.Errorf("%s: flagged heuristic for SGD", tt.name)
		}
	}
}

// TestRLUPermutationEquivariant: relabelling the
// classes (the output layer's rows in θ^t and Δ, the auxiliary labels)
// permutes the recovered counts.
func TestRLUPermutationEquivariant(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	hp := sgd(0.01, 64, 10)
	delta := w.update(t, global, w.draw(21, skewed), hp, trainer.Objective{})
	in := attack.Input{Net: w.net, Global: global, Delta: delta, Local: local(t, hp, 64), Aux: w.aux(20)}
	perm := []int{3, 7, 0, 9, 1, 8, 2, 6, 4, 5} // class j becomes perm[j]
	pw, pb := w.net.Output()
	l := w.net.Embedding()
	permute := func(v []float32) []float32 {
		out := slices.Clone(v)
		for j, pj := range perm {
			copy(out[pw.Offset+pj*l:pw.Offset+(pj+1)*l], v[pw.Offset+j*l:pw.Offset+(j+1)*l])
			out[pb.Offset+pj] = v[pb.Offset+j]
		}
		return out
	}
	pin := in
	pin.Global, pin.Delta = permute(global), permute(delta)
	pin.Aux.Y = slices.Clone(in.Aux.Y)
	for i, y := range in.Aux.Y {
		pin.Aux.Y[i] = uint8(perm[y])
	}
	for _, a := range []attack.RLU{{}, {ClosedForm: true}} {
		got, err := a.Recover(t.Context(), w.tr, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		pgot, err := a.Recover(t.Context(), w.tr, pin, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int, classes)
		for j, pj := range perm {
			want[pj] = got.Counts[j]
		}
		if !slices.Equal(pgot.Counts, want) {
			t.Errorf("%s: relabelled counts %v; want the permuted %v", a.Name(), pgot.Counts, want)
		}
	}
}

// TestRLUDeterministic: equal inputs and equal
// streams give equal results, the posterior search included.
func TestRLUDeterministic(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	hp := sgd(0.01, 64, 10)
	in := attack.Input{Net: w.net, Global: global, Delta: w.update(t, global, w.draw(21, skewed), hp, trainer.Objective{}), Local: local(t, hp, 64), Aux: w.aux(20)}
	for _, a := range []attack.RLU{{}, {Posterior: &attack.Posterior{Samples: 100, Iterations: 3}}} {
		first, err := a.Recover(t.Context(), w.tr, in, rand.New(rand.NewPCG(8, 8)))
		if err != nil {
			t.Fatal(err)
		}
		again, err := a.Recover(t.Context(), w.tr, in, rand.New(rand.NewPCG(8, 8)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first.Counts, again.Counts) || !slices.Equal(first.Proportions, again.Proportions) {
			t.Errorf("%s: %v, then %v", a.Name(), first, again)
		}
	}
}

// TestRLUAdamIsFlagged: Adam's updates are outside RLU's model; the
// result is still a valid histogram and says it is a heuristic.
func TestRLUAdamIsFlagged(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	for _, opt := range []string{trainer.OptimizerAdam, trainer.OptimizerAdamW} {
		hp := trainer.Hyper{Optimizer: opt, LR: 0.001, BatchSize: 64, LocalSteps: 10}
		in := attack.Input{Net: w.net, Global: global, Delta: w.update(t, global, w.draw(21, skewed), hp, trainer.Objective{}), Local: local(t, hp, 64), Aux: w.aux(20)}
		res, err := attack.RLU{}.Recover(t.Context(), w.tr, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		validHistogram(t, opt, res.Counts, 640)
		if !res.Heuristic {
			t.Errorf("%s: Result.Heuristic = false; want true", opt)
		}
		// The classes whose bias rose hold the most samples: the heuristic
		// gets the larger classes' presence right.
		for j := range 4 {
			if res.Counts[j] == 0 {
				t.Errorf("%s: counts %v miss class %d (%d of 64 samples)", opt, res.Counts, j, skewed[j])
			}
		}
	}
}

// TestPosteriorSearch: the posterior search keeps the histogram valid,
// leaves m = 1 alone (Alg. 1 runs it for m > 1 only), and with no
// iterations returns the least-squares counts.
func TestPosteriorSearch(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	for _, steps := range []int{1, 10} {
		hp := sgd(0.01, 64, steps)
		in := attack.Input{Net: w.net, Global: global, Delta: w.update(t, global, w.draw(21, skewed), hp, trainer.Objective{}), Local: local(t, hp, 64), Aux: w.aux(20)}
		plain, err := attack.RLU{}.Recover(t.Context(), w.tr, in, nil)
		if err != nil {
			t.Fatal(err)
		}
		post, err := attack.RLU{Posterior: &attack.Posterior{Samples: 100, Iterations: 5}}.Recover(t.Context(), w.tr, in, rand.New(rand.NewPCG(2, 2)))
		if err != nil {
			t.Fatal(err)
		}
		validHistogram(t, post.Method, post.Counts, 64*steps)
		moved := 0
		for j := range post.Counts {
			d := post.Counts[j] - plain.Counts[j]
			moved += max(d, -d)
			if d%steps != 0 {
				t.Errorf("m = %d: the search moved class %d by %d; it moves m samples at a time", steps, j, d)
			}
		}
		if moved > 2*5*steps {
			t.Errorf("m = %d: %d samples moved in 5 iterations; want at most 2·5·m", steps, moved)
		}
		if steps == 1 && moved != 0 {
			t.Errorf("m = 1: the search changed %v to %v", plain.Counts, post.Counts)
		}
	}
}
