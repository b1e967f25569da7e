package partition

import (
	"fmt"
	"math"
	"testing"
)

// TestLogGammaMoments checks the Gamma(k, 1) sampler by Monte Carlo:
// E[X] = k, Var[X] = k, and E[log X] = ψ(k) with Var[log X] = ψ'(k).
//
// Tolerances are 5 standard errors of each estimator over m draws:
//   - mean:     sqrt(k/m);
//   - variance: sqrt((μ4 - σ⁴)/m) with μ4 = 3k² + 6k for Gamma(k, 1)
//     (excess kurtosis 6/k), so sqrt((2k² + 6k)/m);
//   - log-mean: sqrt(ψ'(k)/m).
//
// For k = 0.001, X underflows (E[log X] ≈ -1000.6), so only the log-mean is
// checked. ψ and ψ' values: ψ(1) = -γ, ψ(1/2) = -γ - 2 ln 2, ψ(3) = -γ + 3/2,
// ψ(x) = ψ(x+1) - 1/x, ψ'(1) = π²/6, ψ'(1/2) = π²/2, ψ'(3) = π²/6 - 5/4,
// ψ'(x) = ψ'(x+1) + 1/x², with ψ(1.1), ψ(1.001), ψ'(1.1), ψ'(1.001) from the
// asymptotic series after recurrence to x >= 20 (Abramowitz & Stegun 6.3.18,
// 6.4.12), to 10 digits.
func TestLogGammaMoments(t *testing.T) {
	const m = 200000
	tests := []struct {
		giveShape   float64
		wantLogMean float64 // ψ(k)
		wantLogVar  float64 // ψ'(k)
		checkX      bool    // X itself is representable: check E[X], Var[X]
	}{
		{giveShape: 0.001, wantLogMean: -1000.5755719318, wantLogVar: 1000001.6425331960},
		{giveShape: 0.1, wantLogMean: -10.4237549404, wantLogVar: 101.4332991508, checkX: true},
		{giveShape: 0.5, wantLogMean: -1.9635100260, wantLogVar: 4.9348022005, checkX: true},
		{giveShape: 1, wantLogMean: -0.5772156649, wantLogVar: 1.6449340668, checkX: true},
		{giveShape: 3, wantLogMean: 0.9227843351, wantLogVar: 0.3949340668, checkX: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("k=", tt.giveShape), func(t *testing.T) {
			r := newRand(7)
			k := tt.giveShape
			var sumL, sumX, sumX2 float64
			for range m {
				l := logGamma(k, r)
				if math.IsNaN(l) || math.IsInf(l, 0) {
					t.Fatalf("logGamma(%g) = %v; want a finite value", k, l)
				}
				x := math.Exp(l)
				sumL += l
				sumX += x
				sumX2 += x * x
			}
			logMean := sumL / m
			if tol := 5 * math.Sqrt(tt.wantLogVar/m); math.Abs(logMean-tt.wantLogMean) > tol {
				t.Errorf("mean log Gamma(%g) = %.5f; want ψ(k) = %.5f ± %.5f", k, logMean, tt.wantLogMean, tol)
			}
			if !tt.checkX {
				return
			}
			mean := sumX / m
			variance := sumX2/m - mean*mean
			if tol := 5 * math.Sqrt(k/m); math.Abs(mean-k) > tol {
				t.Errorf("mean Gamma(%g) = %.5f; want %g ± %.5f", k, mean, k, tol)
			}
			if tol := 5 * math.Sqrt((2*k*k+6*k)/m); math.Abs(variance-k) > tol {
				t.Errorf("var Gamma(%g) = %.5f; want %g ± %.5f", k, variance, k, tol)
			}
		})
	}
}

// TestDirichletMoments checks Dir_n(α) draws made in log space: every
// component is Beta(α, (n-1)α), with mean 1/n and variance
//
//	σ² = (1/n)(1 - 1/n) / (nα + 1).
//
// Tolerances are 5 standard errors over m draws of component 0: sqrt(σ²/m)
// for the mean and sqrt((μ4 - σ⁴)/m) for the variance, μ4 = σ⁴(3 + κ) with
// the Beta excess kurtosis
//
//	κ = 6[(a-b)²(a+b+1) - ab(a+b+2)] / [ab(a+b+2)(a+b+3)],  a = α, b = (n-1)α.
//
// Every draw must also be finite, non-negative and sum to 1 within 1e-12.
func TestDirichletMoments(t *testing.T) {
	tests := []struct {
		giveN     int
		giveAlpha float64
		giveDraws int
	}{
		{giveN: 2, giveAlpha: 0.5, giveDraws: 100000},
		{giveN: 10, giveAlpha: 0.1, giveDraws: 50000},
		{giveN: 10, giveAlpha: 1, giveDraws: 50000},
		{giveN: 10, giveAlpha: 5, giveDraws: 50000},
		{giveN: 100, giveAlpha: 0.001, giveDraws: 20000}, // HiCS-FL's smallest α
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("n=%d/alpha=%g", tt.giveN, tt.giveAlpha), func(t *testing.T) {
			r := newRand(11)
			n, alpha, m := float64(tt.giveN), tt.giveAlpha, float64(tt.giveDraws)
			p := make([]float64, tt.giveN)
			var sum, sum2 float64
			for d := range tt.giveDraws {
				logDirichlet(p, alpha, r)
				normalizeLog(p)
				var total float64
				for j, pj := range p {
					if math.IsNaN(pj) || pj < 0 || pj > 1 {
						t.Fatalf("draw %d: p[%d] = %v; want a value in [0, 1]", d, j, pj)
					}
					total += pj
				}
				if math.Abs(total-1) > 1e-12 {
					t.Fatalf("draw %d: Σp = %.17g; want 1 ± 1e-12", d, total)
				}
				sum += p[0]
				sum2 += p[0] * p[0]
			}
			mean := sum / m
			variance := sum2/m - mean*mean
			wantMean := 1 / n
			wantVar := (1 / n) * (1 - 1/n) / (n*alpha + 1)
			a, b := alpha, (n-1)*alpha
			kurt := 6 * ((a-b)*(a-b)*(a+b+1) - a*b*(a+b+2)) / (a * b * (a + b + 2) * (a + b + 3))
			mu4 := wantVar * wantVar * (3 + kurt)
			if tol := 5 * math.Sqrt(wantVar/m); math.Abs(mean-wantMean) > tol {
				t.Errorf("mean p_0 = %.6f; want 1/n = %.6f ± %.6f", mean, wantMean, tol)
			}
			if tol := 5 * math.Sqrt((mu4-wantVar*wantVar)/m); math.Abs(variance-wantVar) > tol {
				t.Errorf("var p_0 = %.6f; want %.6f ± %.6f", variance, wantVar, tol)
			}
		})
	}
}

// TestDirichletTinyAlpha checks that α = 1e-3 over n = 100 components, which
// underflows every Gamma variate to 0 in linear space, still gives valid,
// nearly one-hot draws: the largest component is then near 1 on average.
func TestDirichletTinyAlpha(t *testing.T) {
	r := newRand(3)
	p := make([]float64, 100)
	var sumMax float64
	const draws = 2000
	for d := range draws {
		logDirichlet(p, 1e-3, r)
		for j, l := range p {
			if math.IsNaN(l) || math.IsInf(l, 0) {
				t.Fatalf("draw %d: log G[%d] = %v; want finite", d, j, l)
			}
		}
		normalizeLog(p)
		hi := 0.0
		for _, pj := range p {
			if math.IsNaN(pj) {
				t.Fatalf("draw %d: NaN component", d)
			}
			hi = max(hi, pj)
		}
		sumMax += hi
	}
	// With α = 1e-3, log G_j ≈ log(U_j)/α, so the gap between the top two
	// log-Gammas is (E_(2) - E_(1))/α for the order statistics of 100 Exp(1)
	// variates: Exp with mean 1/(99α) ≈ 10. The top share 1/(1+e^-gap)
	// therefore averages about 0.94 (0.938 with this seed); 0.9 leaves room
	// for the Monte-Carlo error (sd of the max ≈ 0.2, SE over 2,000 draws ≈ 0.005).
	if got := sumMax / draws; got < 0.9 {
		t.Errorf("mean largest component of Dir_100(1e-3) = %.4f; want > 0.9", got)
	}
}
