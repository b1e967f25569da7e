package partition

import (
	"math"
	"math/rand/v2"
)

// logGamma returns log X for X ~ Gamma(shape, 1), shape > 0, drawn from r.
//
// For shape >= 1 it uses Marsaglia and Tsang's squeeze-rejection method
// ("A simple method for generating gamma variables", ACM TOMS 26(3), 2000,
// §4): with d = shape - 1/3, c = 1/sqrt(9d), x ~ N(0,1), v = (1 + c·x)^3,
// accept d·v when v > 0 and
//
//	u < 1 - 0.0331·x^4   or   log u < x²/2 + d·(1 - v + log v),   u ~ U(0,1).
//
// For shape < 1 it applies the same paper's boost (§6), X = Y·U^(1/shape)
// with Y ~ Gamma(shape+1), in log space:
//
//	log X = log Y + log(U) / shape,   U ~ U(0,1]
//
// X itself underflows to 0 for tiny shapes (shape = 0.001 gives log X near
// -1000 on average), but log X stays finite for every shape >= 1e-300, since
// log U >= log 2^-53 ≈ -36.7. The expected cost is about 1.05 normal and
// 1–2 uniform draws (one more uniform when shape < 1).
func logGamma(shape float64, r *rand.Rand) float64 {
	if shape < 1 {
		u := 1 - r.Float64() // in (0, 1]: log u is finite
		return logGamma(shape+1, r) + math.Log(u)/shape
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return math.Log(d * v)
		}
	}
}

// logDirichlet fills dst with log G_j for G_j ~ Gamma(alpha, 1) i.i.d., so
// that p_j = G_j / Σ_i G_i is one draw of the symmetric Dirichlet
// Dir_len(dst)(alpha). Normalise with normalizeLog; never exponentiate dst
// directly (tiny alpha underflows every G_j to 0).
func logDirichlet(dst []float64, alpha float64, r *rand.Rand) {
	for j := range dst {
		dst[j] = logGamma(alpha, r)
	}
}

// normalizeLog turns log-weights into probabilities in place, subtracting the
// maximum before exponentiating so the largest weight is exactly 1 before
// normalisation:
//
//	p_j = exp(l_j - max l) / Σ_i exp(l_i - max l)
//
// It returns dst. The sum is at least 1, so the result has no NaN as long as
// the l_j are finite.
func normalizeLog(dst []float64) []float64 {
	m := math.Inf(-1)
	for _, l := range dst {
		m = max(m, l)
	}
	var sum float64
	for j, l := range dst {
		dst[j] = math.Exp(l - m)
		sum += dst[j]
	}
	for j := range dst {
		dst[j] /= sum
	}
	return dst
}
