package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flsweep/flsweep/fl"
)

// Characteristics are the three numbers that drive the convergence bound of
// Fraboni et al. 2022 (Theorem 1), plus the unbiasedness check:
//
//	Σ      = Σ_k Var[ω_k]                 (eq. 8)
//	VarSum = Var[Σ_k ω_k]
//	α      = (Σ − VarSum) / (1 − Σ_k p_k²) (Prop. 1, eq. 22)
//	γ      = Σ + α Σ_k p_k²               (eq. 9)
//
// Mean[k] estimates E[ω_k], which must equal p_k; MeanN and VarN are the
// mean and variance of N, the number of distinct clients per round (App. A,
// eq. 14).
//
// Effective is set when the scheme does not satisfy Assumption 1
// (Cov[ω_i, ω_j] = −α p_i p_j), as clustered sampling does not (App. A.7):
// its Alpha is then only the "effective α" of eq. 22 and Gamma the γ that α
// gives, labelled as such wherever they are shown
// (specs/sampling-theory.md §4.10).
type Characteristics struct {
	Mean      []float64
	Var       []float64
	Sigma     float64
	VarSum    float64
	Alpha     float64
	Gamma     float64
	MeanN     float64
	VarN      float64
	Effective bool
}

// Characterize estimates a sampler's characteristics by Monte Carlo over R
// rounds drawn from r (specs/sampling-theory.md §3, "How to compute the
// sampling characteristics numerically"). α is reported as computed, never
// clamped.
func Characterize(s fl.Sampler, pop fl.Population, R int, r *rand.Rand) (Characteristics, error) {
	n := pop.N()
	if R < 2 {
		return Characteristics{}, fmt.Errorf("characterize: R = %d draws; use at least 2: %w", R, fl.ErrInvalid)
	}
	sum := make([]float64, n)
	sumSq := make([]float64, n)
	var sSum, sSumSq, nSum, nSumSq float64
	w := make([]float64, n)
	for i := 0; i < R; i++ {
		sel, err := s.Sample(i, pop, r)
		if err != nil {
			return Characteristics{}, err
		}
		clear(w)
		tot := 0.0
		for j, k := range sel.Clients {
			w[k] += sel.Weights[j]
			tot += sel.Weights[j]
		}
		for k := range w {
			sum[k] += w[k]
			sumSq[k] += w[k] * w[k]
		}
		sSum += tot
		sSumSq += tot * tot
		nSum += float64(len(sel.Clients))
		nSumSq += float64(len(sel.Clients)) * float64(len(sel.Clients))
	}
	fr := float64(R)
	c := Characteristics{Mean: make([]float64, n), Var: make([]float64, n), MeanN: nSum / fr}
	c.VarN = (nSumSq - fr*c.MeanN*c.MeanN) / (fr - 1)
	for k := range sum {
		c.Mean[k] = sum[k] / fr
		c.Var[k] = (sumSq[k] - fr*c.Mean[k]*c.Mean[k]) / (fr - 1)
		c.Sigma += c.Var[k]
	}
	ms := sSum / fr
	c.VarSum = (sSumSq - fr*ms*ms) / (fr - 1)
	sp2 := SumSquares(pop.P)
	c.Alpha = (c.Sigma - c.VarSum) / (1 - sp2)
	c.Gamma = c.Sigma + c.Alpha*sp2
	return c, nil
}

// SumSquares returns Sp2 = Σ_k p_k².
func SumSquares(p []float64) float64 {
	s := 0.0
	for _, v := range p {
		s += v * v
	}
	return s
}

// TheoryMD returns MD's closed-form characteristics (Fraboni et al. 2022,
// Table 1 and App. A.3): Σ = (1 − Sp2)/m, α = 1/m, VarSum = 0, γ = 1/m,
// E[N] = n − Σ_k (1 − p_k)^m (eq. 31), and
//
//	Var[N] = Σ_{i,j} [(1 − p_i − p_j)^m − (1 − p_i)^m (1 − p_j)^m]   (i ≠ j; (1−p_i)^m − (1−p_i)^{2m} for i = j)
//
// from the probabilities that clients i and j are both missed, which the
// paper does not give. Var[N] costs O(n²).
func TheoryMD(p []float64, m int) Characteristics {
	sp2 := SumSquares(p)
	fm := float64(m)
	c := Characteristics{Mean: append([]float64(nil), p...), Var: make([]float64, len(p))}
	c.MeanN = float64(len(p))
	miss := make([]float64, len(p)) // P(k ∉ S) = (1 − p_k)^m
	for k, pk := range p {
		c.Var[k] = (pk - pk*pk) / fm
		miss[k] = math.Pow(1-pk, fm)
		c.MeanN -= miss[k]
	}
	for i, pi := range p {
		c.VarN += miss[i] - miss[i]*miss[i]
		for j := i + 1; j < len(p); j++ {
			c.VarN += 2 * (math.Pow(math.Max(1-pi-p[j], 0), fm) - miss[i]*miss[j])
		}
	}
	c.Sigma = (1 - sp2) / fm
	c.Alpha = 1 / fm
	c.Gamma = 1 / fm
	return c
}

// TheoryUniform returns Uniform's closed-form characteristics (Table 1 and
// App. A.4): Var[ω_k] = (n/m − 1) p_k², α = (n−m)/(m(n−1)),
// VarSum = α (n Sp2 − 1), γ = Σ + α Sp2, N = m.
func TheoryUniform(p []float64, m int) Characteristics {
	n := float64(len(p))
	fm := float64(m)
	sp2 := SumSquares(p)
	c := Characteristics{Mean: append([]float64(nil), p...), Var: make([]float64, len(p)), MeanN: fm}
	for k, pk := range p {
		c.Var[k] = (n/fm - 1) * pk * pk
	}
	c.Sigma = (n/fm - 1) * sp2
	if n > 1 {
		c.Alpha = (n - fm) / (fm * (n - 1))
	}
	c.VarSum = c.Alpha * (n*sp2 - 1)
	c.Gamma = c.Sigma + c.Alpha*sp2
	return c
}
