package attack

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flsweep/flsweep/fl"
)

// Posterior configures RLU's posterior search (Chen & Vikalo, §3.2.2,
// Eq. (12)–(14), App. C Alg. 2), a refinement of the counts of m > 1 local
// steps. It simulates how the mean logits of each class move over the m
// steps if the client's per-step counts were g = N/m, compares the
// simulated end with the logits the returned model gives the auxiliary
// set, and moves m samples from the most over-estimated class to the most
// under-estimated one, T times:
//
//	ē_l = mean_j ΔW_{j,l}/Δb_j                                   (Eq. (14))
//	μ̂_n^(1) = μ_n, the mean logits of class n's aux samples at θ^t
//	for τ = 1..m:
//	  S̃^(τ) = E[softmax(q)], q ~ N(μ̂_n^(τ), Σ_n)               (Eq. (8), Monte Carlo)
//	  Δb^(τ) = η·ρ^(τ)·A(S̃^(τ))·g/|B| − h/m                    (Eq. (12), (16))
//	  μ̂_n^(τ+1) = μ̂_n^(τ) + Δb^(τ)·Σ_l ē_l²                    (Eq. (13))
//	d_j = Σ_n μ̂_{n,j}^(m+1) − Σ_n μ_{n,j}^(m+1)   (μ^(m+1): the returned model's)
//	N_{argmax d} −= m,  N_{argmin d} += m
//
// The paper leaves several choices open (our choices, after the official
// code where it has one):
//
//   - ē: Eq. (14) divides by "a" Δb_j; like the code we average over the
//     classes, skipping those with |Δb_j| ≤ 10⁻³·max|Δb| (the ratio blows
//     up as Δb_j → 0). ΔW and Δb are first corrected by the scheme's h.
//   - Eq. (13) as printed: the logit moves by Δb_j·‖ē‖², without the bias's
//     own +Δb_j.
//   - ρ^(τ) and −h/m enter Eq. (12), so the simulated steps add up to the
//     observed update for any scheme (the paper's Eq. (12) is plain SGD).
//   - g = N/m is not rounded (the paper rounds ⌊N/m⌉, losing classes with
//     fewer than m/2 samples).
//   - The Gaussians: mean and full covariance (1/(n−1)) of each class's aux
//     logits at θ^t, kept over the steps (Alg. 2 keeps Σ_n^(t)); the M
//     draws per class are made once from r and reused at every step and
//     iteration (common random numbers), so the search is deterministic
//     given r and smooth in μ̂.
//   - The class that loses m samples must have at least m (the code's rule;
//     it keeps counts non-negative); Alg. 2's "argmax" over the negative
//     set is read as the most negative d (the code: the largest |d|).
//   - T iterations (App. B.2.2: 10; §3.2.2: 5), stopping early only when
//     max|d| < Tol (the code: 0.1 and at most 5) or no move is possible.
//   - The result is the counts (the paper; the official code instead
//     returns the simulated trajectory's mean confidences and feeds them to
//     its closed form again).
type Posterior struct {
	Iterations int     // T; 0 means 10
	Samples    int     // M Monte-Carlo draws per class; 0 means 1,000 (unspecified in the paper)
	Tol        float64 // stop when max_j |d_j| < Tol; 0 never stops early
}

// search runs the posterior search from counts; start and end are the
// aux passes at θ^t and θ^t + Δ.
func (p *Posterior) search(in *Input, start, end pass, counts []int, r *rand.Rand) ([]int, error) {
	T, M := p.Iterations, p.Samples
	if T == 0 {
		T = 10
	}
	if M == 0 {
		M = 1000
	}
	if T < 0 || M < 0 || !(p.Tol >= 0) {
		return nil, fmt.Errorf("rlu: posterior iterations %d, samples %d, tol %v; want ≥ 0: %w", p.Iterations, p.Samples, p.Tol, fl.ErrInvalid)
	}
	l := in.Local
	c, m := in.Net.Classes(), l.Steps

	// The step weights and the history, and ē from the corrected update.
	dW, db, _, bOff := in.output()
	rho := make([]float64, m)
	hb := make([]float64, c)
	if l.adam() {
		for i := range rho {
			rho[i] = 1
		}
	} else {
		rho = Rho(l, in.Scheme.Prox)
		idx := make([]int, c)
		for j := range idx {
			idx[j] = bOff + j
		}
		hb = in.history(idx)
		uW, u, err := in.signal()
		if err != nil {
			return nil, err
		}
		dW, db = uW, u // the same ratios, up to the common scale η·Σρ
	}
	e2 := embeddingEnergy(dW, db)

	// The Gaussians of the classes' logits at θ^t and the observed end.
	mu, cov := gaussians(start)
	muEnd, _ := gaussians(end)
	draws := make([][][]float64, c) // draws[n][i] = L_n ξ_i
	for n := range c {
		L := cholesky(cov[n])
		draws[n] = make([][]float64, M)
		xi := make([]float64, c)
		for i := range M {
			for j := range xi {
				xi[j] = r.NormFloat64()
			}
			y := make([]float64, c)
			for a := range c {
				for b := 0; b <= a; b++ {
					y[a] += L[a][b] * xi[b]
				}
			}
			draws[n][i] = y
		}
	}
	colStart, colEnd := make([]float64, c), make([]float64, c)
	for n := range c {
		for j := range c {
			colStart[j] += mu[n][j]
			colEnd[j] += muEnd[n][j]
		}
	}

	counts = append([]int(nil), counts...)
	q := make([]float64, c)
	for range T {
		g := make([]float64, c)
		for j, v := range counts {
			g[j] = float64(v) / float64(m)
		}
		shift := make([]float64, c) // μ̂_n^(τ) − μ_n, the same for every n
		for tau := range m {
			S := make([][]float64, c)
			for n := range c {
				S[n] = make([]float64, c)
				for _, y := range draws[n] {
					for j := range q {
						q[j] = mu[n][j] + shift[j] + y[j]
					}
					for j, v := range softmax(q) {
						S[n][j] += v
					}
				}
				for j := range S[n] {
					S[n][j] /= float64(M)
				}
			}
			A := Coefficients(S)
			for j := range c {
				v := 0.0
				for k := range c {
					v += A[j][k] * g[k]
				}
				step := l.LR*rho[tau]*v/float64(l.Batch) - hb[j]/float64(m)
				shift[j] += step * e2
			}
		}
		d := make([]float64, c)
		worst := 0.0
		for j := range d {
			d[j] = float64(c)*shift[j] + colStart[j] - colEnd[j]
			worst = math.Max(worst, math.Abs(d[j]))
		}
		if worst < p.Tol {
			break
		}
		over, under := -1, -1
		for j, v := range d {
			if v > 0 && counts[j] >= m && (over < 0 || v > d[over]) {
				over = j
			}
			if v < 0 && (under < 0 || v < d[under]) {
				under = j
			}
		}
		if over < 0 || under < 0 {
			break
		}
		counts[over] -= m
		counts[under] += m
	}
	return counts, nil
}

// embeddingEnergy returns Σ_l ē_l² with ē_l = mean over the classes j with
// |Δb_j| > 10⁻³·max|Δb| of ΔW_{j,l}/Δb_j (Eq. (14)).
func embeddingEnergy(dW [][]float64, db []float64) float64 {
	mx := 0.0
	for _, v := range db {
		mx = math.Max(mx, math.Abs(v))
	}
	if mx == 0 {
		return 0
	}
	e := make([]float64, len(dW[0]))
	k := 0
	for j, v := range db {
		if math.Abs(v) <= 1e-3*mx {
			continue
		}
		for l := range e {
			e[l] += dW[j][l] / v
		}
		k++
	}
	s := 0.0
	for _, v := range e {
		v /= float64(k)
		s += v * v
	}
	return s
}

// gaussians returns each class's mean logit vector and covariance (1/(n−1);
// 0 for a class with one sample) in the pass.
func gaussians(p pass) (mu [][]float64, cov [][][]float64) {
	c := p.classes
	mu = make([][]float64, c)
	cov = make([][][]float64, c)
	cnt := make([]int, c)
	for n := range c {
		mu[n] = make([]float64, c)
		cov[n] = make([][]float64, c)
		for j := range c {
			cov[n][j] = make([]float64, c)
		}
	}
	for i, y := range p.labels {
		for j, v := range p.logits[i] {
			mu[y][j] += v
		}
		cnt[y]++
	}
	for n := range c {
		if cnt[n] == 0 {
			continue
		}
		for j := range mu[n] {
			mu[n][j] /= float64(cnt[n])
		}
	}
	for i, y := range p.labels {
		if cnt[y] < 2 {
			continue
		}
		q := p.logits[i]
		for a := range c {
			for b := range c {
				cov[y][a][b] += (q[a] - mu[y][a]) * (q[b] - mu[y][b]) / float64(cnt[y]-1)
			}
		}
	}
	return mu, cov
}

// cholesky returns the lower factor L of S + εI, LLᵀ = S + εI, with the
// smallest ε ∈ {0, 10⁻¹²·s, 10⁻¹⁰·s, …, s} (s = max(mean diagonal, 1))
// that makes it positive definite: a covariance from few samples is
// singular. If none does, L is the diagonal √(S_ii + s).
func cholesky(S [][]float64) [][]float64 {
	n := len(S)
	scale := 0.0
	for i := range n {
		scale += S[i][i] / float64(n)
	}
	scale = math.Max(scale, 1)
	if L, ok := tryCholesky(S, 0); ok {
		return L
	}
	for eps := 1e-12 * scale; eps <= scale; eps *= 100 {
		if L, ok := tryCholesky(S, eps); ok {
			return L
		}
	}
	L := make([][]float64, n)
	for i := range L {
		L[i] = make([]float64, n)
		L[i][i] = math.Sqrt(math.Max(S[i][i], 0) + scale)
	}
	return L
}

func tryCholesky(S [][]float64, eps float64) ([][]float64, bool) {
	n := len(S)
	L := make([][]float64, n)
	for i := range L {
		L[i] = make([]float64, n)
	}
	for i := range n {
		for j := 0; j <= i; j++ {
			v := S[i][j]
			if i == j {
				v += eps
			}
			for k := range j {
				v -= L[i][k] * L[j][k]
			}
			if i == j {
				if !(v > 0) {
					return nil, false
				}
				L[i][i] = math.Sqrt(v)
			} else {
				L[i][j] = v / L[j][j]
			}
		}
	}
	return L, true
}
