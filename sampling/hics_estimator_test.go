package sampling_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/sampling"
	"github.com/flsweep/flsweep/trainer"
)

// The acceptance checks A1–A4 of specs/hicsfl.md §6 on the real trainer:
// Δb is b_local − b_global of the output layer after local training, as
// engine.trainClient records it in ClientSummary.BiasDelta.

const estDim = 64 // features per synthetic sample (1×8×8)

// labelled returns samples of 10 Gaussian class clusters in [0, 1]^64 with
// counts[c] samples of class c, classes interleaved.
func labelled(counts []int, seed uint64) trainer.Examples {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := make([]float64, len(counts)*estDim)
	for i := range centres {
		centres[i] = 0.2 + 0.6*r.Float64()
	}
	var ex trainer.Examples
	ex.Dim = estDim
	left := append([]int(nil), counts...)
	for more := true; more; {
		more = false
		for c := range left {
			if left[c] == 0 {
				continue
			}
			left[c]--
			more = true
			ex.Y = append(ex.Y, uint8(c))
			for j := range estDim {
				v := centres[c*estDim+j] + 0.15*r.NormFloat64()
				ex.X = append(ex.X, float32(min(1, max(0, v))))
			}
			ex.Idx = append(ex.Idx, len(ex.Idx))
		}
	}
	return ex
}

// biasDelta trains net from w on ex with hp and returns Δb = b_after −
// b_before in float64.
func biasDelta(t *testing.T, net *trainer.Net, w []float32, ex trainer.Examples, hp trainer.Hyper, seed uint64) []float64 {
	t.Helper()
	local := append([]float32(nil), w...)
	if _, err := trainer.New(nil).Train(context.Background(), net, local, ex, hp, rand.New(rand.NewPCG(seed, 3)), nil); err != nil {
		t.Fatal(err)
	}
	_, b := net.Output()
	db := make([]float64, b.Len)
	for i := range db {
		db[i] = float64(local[b.Offset+i]) - float64(w[b.Offset+i])
	}
	return db
}

func newNet(t *testing.T, s trainer.Spec) (*trainer.Net, []float32) {
	t.Helper()
	net, err := trainer.NewNet(s, [3]int{1, 8, 8}, 10)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float32, net.NumParams())
	if err := net.Init(w, rand.New(rand.NewPCG(11, 0))); err != nil {
		t.Fatal(err)
	}
	return net, w
}

// TestBiasDeltaSumsToZero is check A1: with cross-entropy and SGD (with
// momentum, without weight decay), Σ_i ∇_b L = Σ_i (s_i − y_i) = 0 for every
// sample, so Σ_i Δb_i = 0. The spec's 1e−9·max|Δb| holds in float64; the
// trainer computes in float32 (softmax, gradient and weights rounded to
// 2^−24 relative), so the bound here is 1e−5·max|Δb|: measured up to 4e−7
// on these clients, and a wrong tensor (ΔW's rows, a hidden layer's
// bias) misses it by orders of magnitude.
func TestBiasDeltaSumsToZero(t *testing.T) {
	tests := []struct {
		name   string
		spec   trainer.Spec
		counts []int
		hp     trainer.Hyper
	}{
		{"logreg sgd", trainer.Spec{Arch: trainer.ArchLogReg}, []int{300, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.01, BatchSize: 64, LocalEpochs: 2}},
		{"mlp momentum", trainer.Spec{Arch: trainer.ArchMLP, Hidden: []int{32}}, []int{50, 40, 30, 20, 10, 5, 5, 0, 0, 100},
			trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.05, Momentum: 0.9, BatchSize: 32, LocalEpochs: 3}},
		{"mlp balanced", trainer.Spec{Arch: trainer.ArchMLP, Hidden: []int{32, 16}}, []int{30, 30, 30, 30, 30, 30, 30, 30, 30, 30},
			trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.1, BatchSize: 16, LocalSteps: 40}},
	}
	for _, tt := range tests {
		net, w := newNet(t, tt.spec)
		db := biasDelta(t, net, w, labelled(tt.counts, 1), tt.hp, 1)
		sum, big := 0.0, 0.0
		for _, v := range db {
			sum += v
			big = max(big, math.Abs(v))
		}
		if !(big > 0) || math.Abs(sum) > 1e-5*big {
			t.Errorf("%s: Σ Δb = %.3g with max |Δb| = %.3g; want |Σ| ≤ 1e-5·max", tt.name, sum, big)
		}
	}
}

// TestBiasDeltaFirstStep is check A2: a linear softmax model with W = 0 and
// b = 0 predicts s = 1/C for every sample, so one full-batch gradient step
// of size η gives Δb_i = η·(n_i/n − 1/C), positive for the classes the
// client holds more than a 1/C share of. The spec's 1e−12 is float64's;
// in float32 (b = 0 − η·g, g a float32 mean) the bound here is 1e−10 for
// |Δb| ≤ 1e−4 (measured: 1e−11).
func TestBiasDeltaFirstStep(t *testing.T) {
	counts := []int{120, 60, 30, 30, 0, 0, 0, 0, 0, 0}
	net, w := newNet(t, trainer.Spec{Arch: trainer.ArchLogReg})
	clear(w)
	ex := labelled(counts, 2)
	eta := 0.001
	db := biasDelta(t, net, w, ex, trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: eta, BatchSize: len(ex.Y), LocalSteps: 1}, 2)
	for i, c := range counts {
		want := eta * (float64(c)/float64(len(ex.Y)) - 0.1)
		if math.Abs(db[i]-want) > 1e-10 {
			t.Errorf("Δb_%d = %.12g; want η(n_i/n − 1/C) = %.12g", i, db[i], want)
		}
	}
	if !(db[0] > 0) {
		t.Errorf("Δb of the majority class = %v; want > 0 (new − old, not the pseudo-gradient)", db[0])
	}
}

// TestEntropyOfTrainedClients is check A3 with the spec's setting: η =
// 0.001, R = 2 epochs of B = 64 over n = 1200 samples (38 steps), T =
// 0.0025, from a fresh model. A single-class client's Δb is about +0.028
// on its class and −0.003 elsewhere, so Ĥ ≈ 0; a balanced client's Δb is
// near 0, so Ĥ ≈ ln 10; Ĥ rises with the number of classes held; and the
// pseudo-gradient old − new would give a single-class client ≈ ln 9.
func TestEntropyOfTrainedClients(t *testing.T) {
	net, w := newNet(t, trainer.Spec{Arch: trainer.ArchLogReg})
	hp := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.001, BatchSize: 64, LocalEpochs: 2}
	const temp = 0.0025
	var got []float64
	for _, k := range []int{1, 2, 3, 5, 10} {
		counts := make([]int, 10)
		for c := range k {
			counts[c] = 1200 / k
		}
		db := biasDelta(t, net, w, labelled(counts, uint64(k)), hp, uint64(k))
		got = append(got, sampling.EstimateEntropy(db, temp))
		if k == 1 {
			if db[0] < 0.02 || db[0] > 0.035 || db[1] > 0 {
				t.Errorf("single-class Δb = %.4f; want ≈ +0.028 on its class and ≈ −0.003 elsewhere", db)
			}
			neg := make([]float64, len(db))
			for i, v := range db {
				neg[i] = -v
			}
			if h := sampling.EstimateEntropy(neg, temp); h < 2.1 {
				t.Errorf("Ĥ(old − new) of a single-class client = %.3f; want ≈ ln 9 = 2.197 (the wrong sign)", h)
			}
		}
	}
	t.Logf("Ĥ for 1, 2, 3, 5, 10 classes: %.3f (true ln k: 0, 0.693, 1.099, 1.609, 2.303)", got)
	if got[0] >= 0.1 {
		t.Errorf("Ĥ(single class) = %.3f; want < 0.1", got[0])
	}
	if got[4] <= 2.2 {
		t.Errorf("Ĥ(10 classes) = %.3f; want > 2.2", got[4])
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Errorf("Ĥ = %.3f; want strictly increasing in the number of classes", got)
			break
		}
	}
}

// entropyCase is a known value of an entropy estimate: f(give, temp) =
// want within tol.
type entropyCase struct {
	name       string
	give       []float64
	temp, want float64
	tol        float64
}

// checkEntropies checks the estimate f, named fn, against the cases.
func checkEntropies(t *testing.T, fn string, f func([]float64, float64) float64, tests []entropyCase) {
	t.Helper()
	for _, tt := range tests {
		if got := f(tt.give, tt.temp); math.IsNaN(got) || math.Abs(got-tt.want) > tt.tol {
			t.Errorf("%s: %s(%v, %v) = %.17g; want %.17g", tt.name, fn, tt.give, tt.temp, got, tt.want)
		}
	}
}

// TestEstimateEntropy is check A4 and known values: Ĥ ∈ [0, ln C], Ĥ = ln C
// exactly for Δb = 0, finite for |Δb/T| up to 1e4 and beyond.
func TestEstimateEntropy(t *testing.T) {
	ln10 := math.Log(10)
	tests := []entropyCase{
		{"zero", make([]float64, 10), 0.0025, ln10, 0},
		{"one hot huge", []float64{25, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0.0025, 0, 1e-300}, // Δb/T = 1e4
		{"two equal huge", []float64{-1e3, 1e3, 1e3}, 0.001, math.Log(2), 1e-15},      // Δb/T = ±1e6
		// softmax([1, 0]) = [e/(e+1), 1/(e+1)]: H = ln(1+e) − e/(1+e).
		{"two classes", []float64{0.0025, 0}, 0.0025, math.Log(1+math.E) - math.E/(1+math.E), 1e-15},
		{"shift invariant", []float64{7.0025, 7}, 0.0025, math.Log(1+math.E) - math.E/(1+math.E), 1e-9},
	}
	checkEntropies(t, "EstimateEntropy", sampling.EstimateEntropy, tests)
	r := rand.New(rand.NewPCG(4, 4))
	for range 1000 {
		v := make([]float64, 10)
		scale := math.Pow(10, 4*r.Float64()-2) // |Δb/T| up to ~4e4 with T = 0.0025
		for i := range v {
			v[i] = scale * r.NormFloat64()
		}
		if h := sampling.EstimateEntropy(v, 0.0025); !(h >= 0 && h <= ln10) {
			t.Fatalf("EstimateEntropy(%v) = %v; want a value in [0, ln 10]", v, h)
		}
	}
}

// TestEstimateEntropyScaleFree: known values of our scale-free estimate
// (OURS) Ĥ′ = H(softmax(v/‖v‖₂/T′)), the zero update, and extreme scales.
func TestEstimateEntropyScaleFree(t *testing.T) {
	// softmax(3, 4, 0): H = ln S − (3e³ + 4e⁴)/S with S = e³ + e⁴ + 1
	// (python3: 0.6448021178548702).
	s := math.Exp(3) + math.Exp(4) + 1
	h340 := math.Log(s) - (3*math.Exp(3)+4*math.Exp(4))/s
	// A single-class client at δ = 0, Δb ∝ e_1 − 1/10: u = (0.9, −0.1, …)/√0.9,
	// so the class leads the others by g = (1/√0.9)/T′ and, with q = 9e^−g,
	// H = ln(1 + q) + q·g/(1 + q) (python3 at T′ = 0.19: 0.22239242406449017).
	g := 1 / math.Sqrt(0.9) / 0.19
	q := 9 * math.Exp(-g)
	hOne := math.Log(1+q) + q*g/(1+q)
	// softmax(1, −1): H = ln(1 + e^−2) + 2e^−2/(1 + e^−2) (0.3653338550872077).
	h11 := math.Log(1+math.Exp(-2)) + 2*math.Exp(-2)/(1+math.Exp(-2))
	one := []float64{0.9, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1}
	scaled := func(v []float64, c float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = c * x
		}
		return out
	}
	tests := []entropyCase{
		{"3 4 0", []float64{3, 4, 0}, 0.2, h340, 1e-15},                     // u = (0.6, 0.8, 0), z = (3, 4, 0)
		{"3 4 0 small", []float64{0.003, 0.004, 0}, 0.2, h340, 1e-15},       // the same direction, 1/1000 the size
		{"single class", one, 0.19, hOne, 1e-14},                            //
		{"single class, paper's Δb", scaled(one, 0.031), 0.19, hOne, 1e-14}, // ≈ check A3's +0.028/−0.003
		{"two", []float64{1, -1}, math.Sqrt2 / 2, h11, 1e-15},               // u = (1, −1)/√2, z = (1, −1)
		{"huge", []float64{1e300, -1e300}, math.Sqrt2 / 2, h11, 1e-15},      // ‖v‖² would overflow
		{"tiny", []float64{1e-310, -1e-310}, math.Sqrt2 / 2, h11, 1e-15},    // subnormal: ‖v‖² would underflow
		{"zero", make([]float64, 10), 0.19, math.Log(10), 0},                // no update yet: ln C, as Eq. (7) gives
		{"zero three", make([]float64, 3), 0.19, math.Log(3), 0},            //
		{"empty", nil, 0.19, 0, 0},                                          // as EstimateEntropy
	}
	checkEntropies(t, "EstimateEntropyScaleFree", sampling.EstimateEntropyScaleFree, tests)
	// The paper's estimate of the same updates depends on their size.
	if a, b := sampling.EstimateEntropy(one, 0.0025), sampling.EstimateEntropy(scaled(one, 0.001), 0.0025); !(b-a > 1) {
		t.Errorf("EstimateEntropy of Δb and Δb/1000 = %.3f, %.3f; want the smaller update > 1 nat higher", a, b)
	}
}

// TestEstimateEntropyScaleFreeInvariance is the scale invariance property
// of our estimate: Ĥ′(c·v) = Ĥ′(v) for random v (C = 10, zero-sum or not)
// and c from 1e−30 to 1e30, within 1e−12 (v/‖v‖ and c·v/‖c·v‖ differ by a
// few roundings), exactly for c a power of two; and Ĥ′ ∈ [0, ln C].
func TestEstimateEntropyScaleFreeInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	ln10 := math.Log(10)
	for i := range 2000 {
		v := make([]float64, 10)
		for c := range v {
			v[c] = math.Pow(10, 3*r.Float64()-4) * r.NormFloat64()
		}
		if i%2 == 0 {
			m := 0.0
			for _, x := range v {
				m += x / 10
			}
			for c := range v {
				v[c] -= m
			}
		}
		temp := 0.05 + 0.5*r.Float64()
		h := sampling.EstimateEntropyScaleFree(v, temp)
		if !(h >= 0 && h <= ln10) {
			t.Fatalf("EstimateEntropyScaleFree(%v, %v) = %v; want a value in [0, ln 10]", v, temp, h)
		}
		c := math.Pow(10, 60*r.Float64()-30)
		p2 := math.Ldexp(1, r.IntN(160)-80)
		cv, pv := make([]float64, 10), make([]float64, 10)
		for j, x := range v {
			cv[j], pv[j] = c*x, p2*x
		}
		if hc := sampling.EstimateEntropyScaleFree(cv, temp); math.Abs(hc-h) > 1e-12 {
			t.Errorf("Ĥ′(c·v) = %.17g, Ĥ′(v) = %.17g for c = %g, v = %v; want equal within 1e-12", hc, h, c, v)
		}
		if hp := sampling.EstimateEntropyScaleFree(pv, temp); hp != h {
			t.Errorf("Ĥ′(%g·v) = %.17g, Ĥ′(v) = %.17g; want the same bits", p2, hp, h)
		}
	}
}

// TestScaleFreeTemperatureDefault checks the provenance of
// sampling.DefaultScaleFreeTemperature: for C = 10 the gap E[Ĥ′(noise)] −
// Ĥ′(single class), noise an isotropic random direction in the zero-sum
// subspace (10⁵ draws; the standard error of the mean is about 0.001 nat)
// and the single class e_1 − 1/10, is largest at 0.19 on a grid of step
// 0.01, and equals the values its doc states.
func TestScaleFreeTemperatureDefault(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 19))
	const draws = 100000
	noise := make([][]float64, draws)
	for i := range noise {
		v := make([]float64, 10)
		m := 0.0
		for c := range v {
			v[c] = r.NormFloat64()
			m += v[c] / 10
		}
		for c := range v {
			v[c] -= m
		}
		noise[i] = v
	}
	one := []float64{0.9, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1}
	type point struct{ temp, single, noise, gap float64 }
	var pts []point
	best := 0
	for i := range 11 {
		temp := 0.14 + 0.01*float64(i)
		p := point{temp: temp, single: sampling.EstimateEntropyScaleFree(one, temp)}
		for _, v := range noise {
			p.noise += sampling.EstimateEntropyScaleFree(v, temp) / draws
		}
		p.gap = p.noise - p.single
		pts = append(pts, p)
		if p.gap > pts[best].gap {
			best = i
		}
	}
	t.Logf("T′, Ĥ′(single class), E Ĥ′(no signal), gap: %.3f", pts)
	if got := pts[best].temp; math.Abs(got-sampling.DefaultScaleFreeTemperature) > 1e-9 {
		t.Errorf("the gap is largest at T′ = %.2f; want DefaultScaleFreeTemperature = %v", got, sampling.DefaultScaleFreeTemperature)
	}
	at := pts[5] // T′ = 0.19
	if math.Abs(at.single-0.222) > 5e-4 || math.Abs(at.noise-1.415) > 0.005 || math.Abs(at.gap-1.192) > 0.005 {
		t.Errorf("at T′ = 0.19: single class %.4f, no signal %.4f, gap %.4f; want 0.222, 1.415, 1.192 (the doc's values)", at.single, at.noise, at.gap)
	}
}
