// Package fairness computes the fairness metrics of FedEBA+ (Wang et al.,
// FedEBA+, arXiv 2301.12407, §3.4 / App. tables 18–19) from a vector of
// per-client accuracies a ∈ R^m: the mean, the population variance and
// standard deviation, the mean of the worst and best 5% and 10% of the
// clients, the coefficient of variation, the cosine (angle) metric and the
// KL divergence from uniform.
//
// The unit of a is the caller's: fractions in [0, 1] or percent. Mean, Std,
// Worst* and Best* carry that unit and Var its square (the paper reports
// percent, so its Var column is in %²: 10⁴ times the variance of the same
// accuracies as fractions); CV, Angle and KL do not depend on it.
//
// Sums run in float64 in index order (the worst/best tails in sorted
// order), so equal inputs give bit-identical metrics.
package fairness

import (
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/errkind"
)

// ErrInvalid is wrapped by the error Measure returns for input it cannot
// measure.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid input")

// Metrics are the fairness metrics of one accuracy vector a of m clients.
// When all a_i are equal (m = 1 included), Mean and the worst and best means
// are exactly a_1, and Var, Std, CV, Angle and KL exactly 0.
type Metrics struct {
	M int // the number of clients m

	// Mean and Var are ā = (1/m) Σ_i a_i and the population variance
	// (1/m) Σ_i (a_i − ā)², computed in two passes; Std = √Var.
	Mean, Var, Std float64

	// Worst5 and Best5 are the means of the Tail(m, 5) lowest and highest
	// a_i, Worst10 and Best10 of the Tail(m, 10): the paper's "worst 5%" of
	// 100 clients is its 5 lowest.
	Worst5, Best5, Worst10, Best10 float64

	// CV is the coefficient of variation Std/Mean (the paper's C_v, Table
	// 18). Mean = 0 only when every a_i is 0, and then CV = 0.
	CV float64

	// Angle is the cosine metric in degrees (Table 19), the angle between a
	// and the all-ones vector:
	//
	//	Angle = arccos( Σ_i a_i / (√m ‖a‖₂) )
	//
	// It is computed as atan2(Std, Mean), which is equal (tan Angle =
	// Std/Mean, since m‖a‖² − (Σa)² = m²·Var) and, unlike arccos near 1,
	// accurate for nearly equal accuracies. 0 when all a_i are equal.
	Angle float64

	// KL is the divergence of the normalised accuracies from uniform
	// (Table 19):
	//
	//	KL = Σ_i â_i log(m â_i) = log m − H(â),   â = a / Σ_j a_j
	//
	// with 0·log 0 = 0. It is 0 when all a_i are equal (all zero included)
	// and positive otherwise; a sum that rounds below 0 (accuracies equal to
	// within rounding) is reported as 0.
	KL float64
}

// Tail returns how many clients the worst or best percent% of m clients
// are: ⌈percent·m/100⌉, and at least 1. For m = 100, Tail(m, 5) = 5; for
// m = 21, Tail(m, 5) = 2 and Tail(m, 10) = 3. It panics unless m >= 1 and
// 0 < percent <= 100.
func Tail(m, percent int) int {
	if m < 1 || percent <= 0 || percent > 100 {
		panic(fmt.Sprintf("fairness: Tail(%d, %d): want m >= 1 and percent in (0, 100]", m, percent))
	}
	return max(1, (percent*m+99)/100)
}

// Measure returns the fairness metrics of the accuracies a, one per client.
// It returns an error wrapping ErrInvalid if a is empty or holds a negative,
// NaN or infinite value.
func Measure(a []float64) (Metrics, error) {
	m := len(a)
	if m == 0 {
		return Metrics{}, fmt.Errorf("fairness: no accuracies; pass one per client with a test set: %w", ErrInvalid)
	}
	equal := true
	for i, x := range a {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return Metrics{}, fmt.Errorf("fairness: accuracy a[%d] = %v; accuracies must be finite and >= 0: %w", i, x, ErrInvalid)
		}
		equal = equal && x == a[0]
	}
	if equal {
		x := a[0]
		return Metrics{M: m, Mean: x, Worst5: x, Best5: x, Worst10: x, Best10: x}, nil
	}

	out := Metrics{M: m}
	s := slices.Clone(a)
	slices.Sort(s)
	out.Worst5, out.Best5 = tails(s, Tail(m, 5))
	out.Worst10, out.Best10 = tails(s, Tail(m, 10))
	sum := 0.0
	for _, x := range a {
		sum += x
	}
	out.Mean = sum / float64(m)
	for _, x := range a {
		out.Var += (x - out.Mean) * (x - out.Mean)
	}
	out.Var /= float64(m)
	out.Std = math.Sqrt(out.Var)
	out.CV = out.Std / out.Mean // not all equal and all >= 0, so Mean > 0
	out.Angle = math.Atan2(out.Std, out.Mean) * 180 / math.Pi
	for _, x := range a {
		if x > 0 {
			p := x / sum
			out.KL += p * math.Log(float64(m)*p)
		}
	}
	out.KL = max(out.KL, 0)
	return out, nil
}

// tails returns the mean of the k lowest and of the k highest values of the
// ascending s, summed from the extremes inwards.
func tails(s []float64, k int) (worst, best float64) {
	for i := range k {
		worst += s[i]
		best += s[len(s)-1-i]
	}
	return worst / float64(k), best / float64(k)
}
