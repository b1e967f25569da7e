package gp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randomEmbedding(r *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64() / math.Sqrt(float64(d))
	}
	return x
}

func randomSamples(r *rand.Rand, s, n int) [][]float64 {
	ys := make([][]float64, s)
	for e := range ys {
		ys[e] = make([]float64, n)
		for k := range ys[e] {
			ys[e][k] = r.NormFloat64()
		}
	}
	return ys
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestCovarianceKnownValues: Σ_ij = x_iᵀx_j + σ_n² δ_ij by hand for three
// clients with 2-D embeddings (1, 2), (0, 1), (−1, 0.5) and σ_n = 0.1.
func TestCovarianceKnownValues(t *testing.T) {
	x := []float64{1, 2, 0, 1, -1, 0.5}
	want := [][]float64{
		{5.01, 2, 0},
		{2, 1.01, 0.5},
		{0, 0.5, 1.26},
	}
	got := Covariance(x, 3, 2, 0.1)
	for i := range 3 {
		for j := range 3 {
			if !near(got.At(i, j), want[i][j], 1e-14) {
				t.Errorf("Covariance[%d][%d] = %v; want %v", i, j, got.At(i, j), want[i][j])
			}
		}
	}
}

// TestLOOKnownValue: two clients, Σ = [[2, 1], [1, 2]], μ = 0, y = (1, 0).
// By hand: y_0 | y_1 ~ N(0.5·0, 2 − 1/2) and y_1 | y_0 ~ N(0.5·1, 1.5), so
//
//	L = −log 1.5 − 1/(2·1.5) − 0.25/(2·1.5) − log 2π.
func TestLOOKnownValue(t *testing.T) {
	k := mat.NewSymDense(2, []float64{2, 1, 1, 2})
	got, _, err := LOO(k, []float64{0, 0}, [][]float64{{1, 0}}, []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := -math.Log(1.5) - 1/3.0 - 0.25/3 - math.Log(2*math.Pi)
	if !near(got, want, 1e-14) {
		t.Errorf("LOO = %.16g; want %.16g", got, want)
	}
	// Only client 0's term (the official code's loop over len(data)).
	got0, _, _ := LOO(k, []float64{0, 0}, [][]float64{{1, 0}}, []float64{1}, []int{0})
	want0 := -0.5*math.Log(1.5) - 1/3.0 - 0.5*math.Log(2*math.Pi)
	if !near(got0, want0, 1e-14) {
		t.Errorf("LOO over client 0 = %.16g; want %.16g", got0, want0)
	}
}

// bruteLOO computes Σ_e w_e Σ_{i∈T} log p(y_ei | y_e,−i) by conditioning on
// the other clients directly, one Cholesky solve of the (n−1)×(n−1)
// submatrix per left-out client.
func bruteLOO(t *testing.T, k *mat.SymDense, mu []float64, ys [][]float64, w []float64, terms []int) float64 {
	n := k.SymmetricDim()
	if terms == nil {
		for i := range n {
			terms = append(terms, i)
		}
	}
	total := 0.0
	for e, y := range ys {
		for _, i := range terms {
			var rest []int
			for j := range n {
				if j != i {
					rest = append(rest, j)
				}
			}
			sub := mat.NewSymDense(n-1, nil)
			kir := mat.NewVecDense(n-1, nil)
			r := mat.NewVecDense(n-1, nil)
			for a, ja := range rest {
				kir.SetVec(a, k.At(i, ja))
				r.SetVec(a, y[ja]-mu[ja])
				for b, jb := range rest {
					sub.SetSym(a, b, k.At(ja, jb))
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(sub) {
				t.Fatal("brute force: submatrix not PD")
			}
			var sr, sk mat.VecDense
			if err := ch.SolveVecTo(&sr, r); err != nil {
				t.Fatal(err)
			}
			if err := ch.SolveVecTo(&sk, kir); err != nil {
				t.Fatal(err)
			}
			m := mu[i] + mat.Dot(kir, &sr)
			v := k.At(i, i) - mat.Dot(kir, &sk)
			total += w[e] * (-0.5*math.Log(2*math.Pi*v) - (y[i]-m)*(y[i]-m)/(2*v))
		}
	}
	return total
}

// TestLOOBruteForce: the closed form equals leaving each client out and
// conditioning on the others, for every term and for a subset of terms,
// over three discounted samples of 7 clients.
func TestLOOBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, d = 7, 3
	x := randomEmbedding(r, n, d)
	k := Covariance(x, n, d, 0.3)
	mu := []float64{0.1, -0.2, 0, 0.3, 0.05, -0.1, 0.2}
	ys := randomSamples(r, 3, n)
	w := []float64{0.64, 0.8, 1}
	for _, terms := range [][]int{nil, {0}, {2, 5, 6}} {
		got, _, err := LOO(k, mu, ys, w, terms)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteLOO(t, k, mu, ys, w, terms); !near(got, want, 1e-10) {
			t.Errorf("LOO(terms %v) = %.12g; want %.12g (brute force)", terms, got, want)
		}
	}
}

// TestGradientsFiniteDifference: ∂L/∂X and ∂L/∂σ_n against central
// differences of L(X, σ_n) with step 1e−6, relative tolerance 1e−6.
func TestGradientsFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 1))
	const n, d, noise = 6, 2, 0.4
	x := randomEmbedding(r, n, d)
	mu := []float64{0.1, 0, -0.1, 0.2, 0, 0.05}
	ys := randomSamples(r, 2, n)
	w := []float64{0.8, 1}
	for _, terms := range [][]int{nil, {0}} {
		loo := func(x []float64, noise float64) float64 {
			l, _, err := LOO(Covariance(x, n, d, noise), mu, ys, w, terms)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		_, g, err := LOO(Covariance(x, n, d, noise), mu, ys, w, terms)
		if err != nil {
			t.Fatal(err)
		}
		gx := EmbeddingGrad(g, x, n, d)
		const h = 1e-6
		for i := range x {
			xp, xm := slices.Clone(x), slices.Clone(x)
			xp[i] += h
			xm[i] -= h
			fd := (loo(xp, noise) - loo(xm, noise)) / (2 * h)
			if math.Abs(gx[i]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("terms %v: ∂L/∂X[%d] = %.10g; want %.10g (finite difference)", terms, i, gx[i], fd)
			}
		}
		fd := (loo(x, noise+h) - loo(x, noise-h)) / (2 * h)
		if got := NoiseGrad(g, noise); math.Abs(got-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("terms %v: ∂L/∂σ_n = %.10g; want %.10g (finite difference)", terms, got, fd)
		}
	}
}

// TestLOONotPD: a singular covariance (two equal embeddings, no noise) is
// ErrNotPD, not a NaN.
func TestLOONotPD(t *testing.T) {
	k := Covariance([]float64{1, 1}, 2, 1, 0)
	if _, _, err := LOO(k, []float64{0, 0}, [][]float64{{1, 2}}, []float64{1}, nil); err != ErrNotPD {
		t.Errorf("LOO of a singular covariance: err = %v; want ErrNotPD", err)
	}
}

// TestMeanKnownValues: μ_k = Σ_e w_e y_ek / Σ_e w_e by hand.
func TestMeanKnownValues(t *testing.T) {
	got := Mean([][]float64{{1, 2}, {3, -2}}, []float64{0.8, 1}, 2)
	want := []float64{(0.8 + 3) / 1.8, (1.6 - 2) / 1.8}
	for k := range want {
		if !near(got[k], want[k], 1e-15) {
			t.Errorf("Mean[%d] = %v; want %v", k, got[k], want[k])
		}
	}
}

// TestAdamKnownValues: two steps on one parameter by hand (PyTorch's
// torch.optim.Adam, lr 0.1): g = 2 then g = −1.
//
//	t=1: m = 0.2, v = 0.004; θ −= 0.1/0.1 · 0.2 / (√0.004/√0.001 + 1e−8) = 0.1·(1 − 5e−9)
//	t=2: m = 0.08, v = 0.004996; θ −= 0.1/0.19 · 0.08 / (√0.004996/√0.001999 + 1e−8)
func TestAdamKnownValues(t *testing.T) {
	o := NewAdam(0.1, 1)
	p := []float64{1}
	o.Step(p, []float64{2})
	want := 1 - 0.1/0.1*0.2/(math.Sqrt(0.004)/math.Sqrt(1-0.999)+1e-8)
	if !near(p[0], want, 1e-15) {
		t.Errorf("after step 1: θ = %.16g; want %.16g", p[0], want)
	}
	o.Step(p, []float64{-1})
	m, v := 0.9*0.2+0.1*-1, 0.999*0.004+0.001*1
	want -= 0.1 / (1 - 0.81) * m / (math.Sqrt(v)/math.Sqrt(1-0.999*0.999) + 1e-8)
	if !near(p[0], want, 1e-15) {
		t.Errorf("after step 2: θ = %.16g; want %.16g", p[0], want)
	}
}

// TestFitImprovesAndIsDeterministic: 200 Adam steps raise the LOO of
// samples drawn from a GP with a known embedding, from a random start; two
// fits from equal starts give equal bits.
func TestFitImprovesAndIsDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	const n, d = 12, 2
	truth := randomEmbedding(r, n, d)
	var ch mat.Cholesky
	ch.Factorize(Covariance(truth, n, d, 0.1))
	var l mat.TriDense
	ch.LTo(&l)
	ys := make([][]float64, 5)
	for e := range ys {
		z := mat.NewVecDense(n, nil)
		for i := range n {
			z.SetVec(i, r.NormFloat64())
		}
		var y mat.VecDense
		y.MulVec(&l, z)
		ys[e] = y.RawVector().Data
	}
	w := []float64{0.41, 0.51, 0.64, 0.8, 1}
	p := Problem{N: n, D: d, Noise: 0.1, Mu: make([]float64, n), Ys: ys, W: w}
	x0 := randomEmbedding(r, n, d)
	before, _, err := LOO(Covariance(x0, n, d, 0.1), p.Mu, ys, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	x1, x2 := slices.Clone(x0), slices.Clone(x0)
	if _, err := Fit(p, x1, 200, 1e-2); err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(p, x2, 200, 1e-2); err != nil {
		t.Fatal(err)
	}
	after, _, _ := LOO(Covariance(x1, n, d, 0.1), p.Mu, ys, w, nil)
	if !(after > before) {
		t.Errorf("LOO after fitting = %v; want above %v before", after, before)
	}
	if !slices.Equal(x1, x2) {
		t.Error("two fits from equal starts differ")
	}
}

// schur returns Σ − Σ_{:,S} Σ_SS⁻¹ Σ_{S,:}, the covariance conditioned on
// the clients S, computed directly.
func schur(t *testing.T, k *mat.SymDense, s []int) *mat.Dense {
	n := k.SymmetricDim()
	kss := mat.NewSymDense(len(s), nil)
	kns := mat.NewDense(n, len(s), nil)
	for a, i := range s {
		for b, j := range s {
			kss.SetSym(a, b, k.At(i, j))
		}
		for r := range n {
			kns.Set(r, a, k.At(r, i))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(kss) {
		t.Fatal("schur: Σ_SS not PD")
	}
	var sol mat.Dense
	if err := ch.SolveTo(&sol, kns.T()); err != nil {
		t.Fatal(err)
	}
	var corr, out mat.Dense
	corr.Mul(kns, &sol)
	out.Sub(k, &corr)
	return &out
}

// TestPosteriorMatchesDirect: after conditioning on clients 3, 0 and 5 one
// at a time, every variance, weighted column sum and column equals the
// Schur complement computed directly.
func TestPosteriorMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 1))
	const n, d, noise = 9, 3, 0.2
	x := randomEmbedding(r, n, d)
	p := make([]float64, n)
	for i := range p {
		p[i] = float64(i+1) / 45
	}
	k := Covariance(x, n, d, noise)
	q := NewPosterior(x, n, d, noise, p)
	var s []int
	for _, c := range []int{3, 0, 5} {
		q.Condition(c)
		s = append(s, c)
		direct := schur(t, k, s)
		for j := range n {
			if !near(q.Var(j), direct.At(j, j), 1e-12) {
				t.Errorf("after %v: Var(%d) = %v; want %v", s, j, q.Var(j), direct.At(j, j))
			}
			sum := 0.0
			for i := range n {
				sum += p[i] * direct.At(i, j)
			}
			if !near(q.Sum(j), sum, 1e-12) {
				t.Errorf("after %v: Sum(%d) = %v; want %v", s, j, q.Sum(j), sum)
			}
			col := q.Column(j)
			for i := range n {
				if math.Abs(col[i]-direct.At(i, j)) > 1e-12 {
					t.Errorf("after %v: Column(%d)[%d] = %v; want %v", s, j, i, col[i], direct.At(i, j))
				}
			}
		}
	}
}

// TestSelectMatchesDenseGreedy: Select takes the clients a dense greedy
// takes, which recomputes the conditioned covariance directly before every
// step and scores (Σ_{i not taken} p_i Σ_ik)·α_k/√Σ_kk as the official
// code does; and it is deterministic.
func TestSelectMatchesDenseGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	const n, d, noise, m = 20, 4, 0.01, 6
	x := randomEmbedding(r, n, d)
	p := make([]float64, n)
	alpha := make([]float64, n)
	for i := range n {
		p[i] = (1 + r.Float64()) / 30
		alpha[i] = math.Pow(0.9, float64(r.IntN(3)))
	}
	k := Covariance(x, n, d, noise)
	var want []int
	taken := make([]bool, n)
	for range m {
		var sig mat.Matrix = k
		if len(want) > 0 {
			sig = schur(t, k, want)
		}
		best, bestScore := -1, math.Inf(-1)
		for c := range n {
			if taken[c] {
				continue
			}
			sum := 0.0
			for i := range n {
				if !taken[i] {
					sum += p[i] * sig.At(i, c)
				}
			}
			if s := sum * alpha[c] / math.Sqrt(sig.At(c, c)); s > bestScore {
				best, bestScore = c, s
			}
		}
		taken[best] = true
		want = append(want, best)
	}
	got := Select(x, n, d, noise, p, alpha, m)
	if !slices.Equal(got, want) {
		t.Errorf("Select = %v; want %v (dense greedy)", got, want)
	}
	if again := Select(x, n, d, noise, p, alpha, m); !slices.Equal(again, got) {
		t.Errorf("Select again = %v; want %v", again, got)
	}
}

// TestLOOGradMatchesDense: the Woodbury form's LOO value and ∂L/∂X equal
// the O(n³) LOO and EmbeddingGrad to 1e-9 relative (of the gradient's
// largest entry), with every client a term and with a subset, at FedCor's
// σ_n = 0.01 and at 0.3, for n above and below d.
func TestLOOGradMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		n, d  int
		noise float64
		terms []int
	}{{40, 15, 0.01, nil}, {40, 15, 0.01, []int{0, 3, 7, 39}}, {12, 20, 0.3, nil}, {200, 5, 0.01, nil}} {
		x := randomEmbedding(r, c.n, c.d)
		ys := randomSamples(r, 6, c.n)
		w := []float64{0.3, 0.4, 0.5, 0.6, 0.8, 1}
		mu := make([]float64, c.n)
		for i := range mu {
			mu[i] = 0.1 * r.NormFloat64()
		}
		want, g, err := LOO(Covariance(x, c.n, c.d, c.noise), mu, ys, w, c.terms)
		if err != nil {
			t.Fatal(err)
		}
		wantGrad := EmbeddingGrad(g, x, c.n, c.d)
		got, grad, err := LOOGrad(x, c.n, c.d, c.noise, mu, ys, w, c.terms)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got, want, 1e-9) {
			t.Errorf("n %d d %d σ %v: LOO %v; dense %v", c.n, c.d, c.noise, got, want)
		}
		scale := 0.0
		for _, v := range wantGrad {
			scale = math.Max(scale, math.Abs(v))
		}
		worst := 0.0
		for i := range grad {
			worst = math.Max(worst, math.Abs(grad[i]-wantGrad[i])/scale)
		}
		t.Logf("n %d d %d σ %v: LOO %.3e apart, ∂L/∂X %.3e of its largest entry", c.n, c.d, c.noise, math.Abs(got-want)/math.Max(1, math.Abs(want)), worst)
		if worst > 1e-8 {
			t.Errorf("n %d d %d σ %v: ∂L/∂X differs from the dense form by %.3e of its largest entry; want ≤ 1e-8", c.n, c.d, c.noise, worst)
		}
	}
}
