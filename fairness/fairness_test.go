package fairness

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// near reports whether got is within tol of want, relative to |want| when
// |want| > 1.
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*max(1, math.Abs(want))
}

// checkMetrics compares every field of got with want to within tol.
func checkMetrics(t *testing.T, name string, got, want Metrics, tol float64) {
	t.Helper()
	if got.M != want.M {
		t.Errorf("%s: M = %d; want %d", name, got.M, want.M)
	}
	fields := []struct {
		name      string
		got, want float64
	}{
		{"Mean", got.Mean, want.Mean}, {"Var", got.Var, want.Var}, {"Std", got.Std, want.Std},
		{"Worst5", got.Worst5, want.Worst5}, {"Best5", got.Best5, want.Best5},
		{"Worst10", got.Worst10, want.Worst10}, {"Best10", got.Best10, want.Best10},
		{"CV", got.CV, want.CV}, {"Angle", got.Angle, want.Angle}, {"KL", got.KL, want.KL},
	}
	for _, f := range fields {
		if !near(f.got, f.want, tol) {
			t.Errorf("%s: %s = %.17g; want %.17g", name, f.name, f.got, f.want)
		}
	}
}

// degrees converts radians to degrees.
func degrees(x float64) float64 { return x * 180 / math.Pi }

// TestMeasureKnownValues: small vectors worked out by hand (closed forms
// below). The angles are those of FedEBA+'s fair angle, the same formula on
// losses: (1,0,0,0) → 60°, (1,3) → 26.565°, one non-zero of 10 →
// arccos(1/√10) = 71.565°.
func TestMeasureKnownValues(t *testing.T) {
	tests := []struct {
		name string
		give []float64
		want Metrics
	}{
		{
			// ā = 5/2, Var = (9/4 + 1/4 + 1/4 + 9/4)/4 = 5/4, â = (0.1, 0.2, 0.3, 0.4);
			// m = 4, so one client in each tail.
			name: "1,2,3,4", give: []float64{1, 2, 3, 4},
			want: Metrics{M: 4, Mean: 2.5, Var: 1.25, Std: math.Sqrt(5) / 2,
				Worst5: 1, Best5: 4, Worst10: 1, Best10: 4,
				CV: 1 / math.Sqrt(5), Angle: degrees(math.Atan(1 / math.Sqrt(5))),
				KL: 0.1*math.Log(0.4) + 0.2*math.Log(0.8) + 0.3*math.Log(1.2) + 0.4*math.Log(1.6)},
		},
		{
			// ā = 1/4, Var = (9/16 + 3/16)/4 = 3/16, cos = 1/(√4·1) = 1/2,
			// â = (1,0,0,0): KL = log 4.
			name: "1,0,0,0", give: []float64{1, 0, 0, 0},
			want: Metrics{M: 4, Mean: 0.25, Var: 3.0 / 16, Std: math.Sqrt(3) / 4,
				Worst5: 0, Best5: 1, Worst10: 0, Best10: 1,
				CV: math.Sqrt(3), Angle: 60, KL: math.Log(4)},
		},
		{
			// ā = 2, Var = 1, cos = 4/(√2·√10) = 2/√5, â = (1/4, 3/4).
			name: "1,3", give: []float64{1, 3},
			want: Metrics{M: 2, Mean: 2, Var: 1, Std: 1,
				Worst5: 1, Best5: 3, Worst10: 1, Best10: 3,
				CV: 0.5, Angle: degrees(math.Acos(2 / math.Sqrt(5))),
				KL: 0.25*math.Log(0.5) + 0.75*math.Log(1.5)},
		},
		{
			// ā = 0.1, Var = (0.81 + 9·0.01)/10 = 0.09, cos = 1/√10, KL = log 10;
			// m = 10: one client per tail.
			name: "one of 10", give: []float64{0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
			want: Metrics{M: 10, Mean: 0.1, Var: 0.09, Std: 0.3,
				Worst5: 0, Best5: 1, Worst10: 0, Best10: 1,
				CV: 3, Angle: degrees(math.Acos(1 / math.Sqrt(10))), KL: math.Log(10)},
		},
	}
	for _, tt := range tests {
		got, err := Measure(tt.give)
		if err != nil {
			t.Fatalf("Measure(%v) error: %v", tt.give, err)
		}
		checkMetrics(t, tt.name, got, tt.want, 1e-12)
	}
}

// TestMeasureEqual: equal accuracies, including sums that do not round
// exactly (0.1 × 3) and all zero, are perfectly fair: every dispersion
// metric is exactly 0 and every mean exactly the common value.
func TestMeasureEqual(t *testing.T) {
	for _, give := range [][]float64{{0.7}, {0.1, 0.1, 0.1}, slices.Repeat([]float64{0.87}, 100), {0, 0, 0, 0}, {1, 1}} {
		got, err := Measure(give)
		if err != nil {
			t.Fatalf("Measure(%v) error: %v", give, err)
		}
		x := give[0]
		want := Metrics{M: len(give), Mean: x, Worst5: x, Best5: x, Worst10: x, Best10: x}
		if got != want {
			t.Errorf("Measure(%d × %v) = %+v; want %+v", len(give), x, got, want)
		}
	}
}

// TestTail: the worst/best count is ⌈percent·m/100⌉, at least 1.
func TestTail(t *testing.T) {
	tests := []struct {
		giveM         int
		want5, want10 int
	}{
		{1, 1, 1}, {7, 1, 1}, {10, 1, 1}, {11, 1, 2}, {19, 1, 2}, {20, 1, 2}, {21, 2, 3},
		{40, 2, 4}, {41, 3, 5}, {100, 5, 10}, {101, 6, 11},
	}
	for _, tt := range tests {
		if got := Tail(tt.giveM, 5); got != tt.want5 {
			t.Errorf("Tail(%d, 5) = %d; want %d", tt.giveM, got, tt.want5)
		}
		if got := Tail(tt.giveM, 10); got != tt.want10 {
			t.Errorf("Tail(%d, 10) = %d; want %d", tt.giveM, got, tt.want10)
		}
	}
	// The rule agrees with the floating-point ceil(0.05·m) the engine used
	// before this package, so the worst/best 5% columns keep their values.
	for m := 1; m <= 100000; m++ {
		for _, p := range []int{5, 10} {
			if got, want := Tail(m, p), max(1, int(math.Ceil(float64(p)/100*float64(m)))); got != want {
				t.Fatalf("Tail(%d, %d) = %d; want max(1, ceil(%d/100·m)) = %d", m, p, got, p, want)
			}
		}
	}
}

// TestWorstBest: the tails by the count rule, with ties, for m = 1, 7, 20,
// 21 and 100.
func TestWorstBest(t *testing.T) {
	ramp := func(m int) []float64 { // m, m−1, …, 1: the order must not matter
		a := make([]float64, m)
		for i := range a {
			a[i] = float64(m - i)
		}
		return a
	}
	// 100 clients, 5 at 0.5, 10 at 0.6 and the rest at 0.8 except 3 at 0.95
	// and 7 at 0.9, interleaved.
	var tied []float64
	for i := range 100 {
		switch {
		case i%20 == 0:
			tied = append(tied, 0.5)
		case i%10 == 5:
			tied = append(tied, 0.6)
		case i == 1 || i == 2 || i == 3:
			tied = append(tied, 0.95)
		case i >= 90 && i < 98:
			tied = append(tied, 0.9)
		default:
			tied = append(tied, 0.8)
		}
	}
	tests := []struct {
		name                             string
		give                             []float64
		wantW5, wantB5, wantW10, wantB10 float64
	}{
		{"m=1", []float64{0.3}, 0.3, 0.3, 0.3, 0.3},
		{"m=7 ties", []float64{0.5, 0.9, 0.1, 0.9, 0.3, 0.1, 0.7}, 0.1, 0.9, 0.1, 0.9},
		{"m=20", ramp(20), 1, 20, 1.5, 19.5},                 // 1 and 2 per tail
		{"m=20 ties", append(ramp(18), 1, 18), 1, 18, 1, 18}, // the two lowest and highest are tied
		{"m=21", ramp(21), 1.5, 20.5, 2, 20},                 // 2 and 3 per tail
		{"m=100", ramp(100), 3, 98, 5.5, 95.5},               // 5 and 10 per tail
		{"m=100 ties", tied, 0.5, (3*0.95 + 2*0.9) / 5, 0.55, (3*0.95 + 7*0.9) / 10},
	}
	for _, tt := range tests {
		got, err := Measure(tt.give)
		if err != nil {
			t.Fatalf("%s: Measure error: %v", tt.name, err)
		}
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"Worst5", got.Worst5, tt.wantW5}, {"Best5", got.Best5, tt.wantB5}, {"Worst10", got.Worst10, tt.wantW10}, {"Best10", got.Best10, tt.wantB10}} {
			if !near(f.got, f.want, 1e-12) {
				t.Errorf("%s: %s = %v; want %v", tt.name, f.name, f.got, f.want)
			}
		}
	}
}

// vectors are accuracy vectors for the identity tests: random fractions
// around FMNIST-like accuracies, a percent vector, a wide one with zeros,
// and two nearly equal ones (where arccos near 1 would lose the angle).
func vectors() [][]float64 {
	r := rand.New(rand.NewPCG(1, 2))
	var out [][]float64
	for _, m := range []int{2, 7, 20, 100} {
		a := make([]float64, m)
		for i := range a {
			a[i] = min(1, max(0, 0.86+0.08*r.NormFloat64()))
		}
		out = append(out, a)
	}
	pct := make([]float64, 100)
	for i := range pct {
		pct[i] = 100 * float64(r.IntN(121)) / 120 // a client's hits of 120 test samples, in %
	}
	out = append(out, pct, []float64{0, 0.2, 0, 1, 0.5}, []float64{0.5, 0.5 + 1e-9, 0.5}, []float64{80, 80, 80.000001})
	return out
}

// TestAngleIdentity: tan(Angle) = Std/Mean = CV, and Angle is the arccos
// of the cosine between a and the all-ones vector.
func TestAngleIdentity(t *testing.T) {
	for i, a := range vectors() {
		got, err := Measure(a)
		if err != nil {
			t.Fatal(err)
		}
		ratio := got.Std / got.Mean
		if tan := math.Tan(got.Angle * math.Pi / 180); math.Abs(tan-ratio) > 1e-12*ratio || got.CV != ratio {
			t.Errorf("vector %d: tan(Angle) = %.17g, CV = %.17g; want Std/Mean = %.17g", i, tan, got.CV, ratio)
		}
		sum, sq := 0.0, 0.0
		for _, x := range a {
			sum += x
			sq += x * x
		}
		cos := sum / (math.Sqrt(float64(len(a))) * math.Sqrt(sq))
		if got.Angle > 1 { // arccos loses digits near cos = 1
			if want := degrees(math.Acos(min(1, cos))); !near(got.Angle, want, 1e-9) {
				t.Errorf("vector %d: Angle = %.17g; want arccos(Σa/(√m‖a‖)) = %.17g", i, got.Angle, want)
			}
		}
	}
}

// TestKLIdentity: KL = log m − H(â) >= 0, 0 only for equal accuracies.
func TestKLIdentity(t *testing.T) {
	for i, a := range vectors() {
		got, err := Measure(a)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, x := range a {
			sum += x
		}
		h := 0.0
		for _, x := range a {
			if x > 0 {
				h -= x / sum * math.Log(x/sum)
			}
		}
		if want := math.Log(float64(len(a))) - h; !near(got.KL, want, 1e-12) {
			t.Errorf("vector %d: KL = %.17g; want log m − H(â) = %.17g", i, got.KL, want)
		}
		if got.KL < 0 {
			t.Errorf("vector %d: KL = %v < 0", i, got.KL)
		}
		if got.KL == 0 && got.Var > 1e-12 {
			t.Errorf("vector %d: KL = 0 for unequal accuracies (Var %v)", i, got.Var)
		}
	}
}

// TestUnits: the same accuracies in percent and in fractions give Var in %²
// = 10⁴ × Var in fractions, the means ×100, and the same CV, Angle and KL.
func TestUnits(t *testing.T) {
	for i, a := range vectors()[:4] {
		pct := make([]float64, len(a))
		for j, x := range a {
			pct[j] = 100 * x
		}
		f, err := Measure(a)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Measure(pct)
		if err != nil {
			t.Fatal(err)
		}
		want := Metrics{M: f.M, Mean: 100 * f.Mean, Var: 1e4 * f.Var, Std: 100 * f.Std,
			Worst5: 100 * f.Worst5, Best5: 100 * f.Best5, Worst10: 100 * f.Worst10, Best10: 100 * f.Best10,
			CV: f.CV, Angle: f.Angle, KL: f.KL}
		checkMetrics(t, fmt.Sprintf("vector %d in percent", i), p, want, 1e-12)
	}
}

// TestTable18: the coefficient of variation from the paper's Table 1 (mean
// in %, Var in %²) reproduces Table 18 to the digits it prints, e.g. FedAvg
// FMNIST √62.44/86.49 = 0.09136. Each (mean, Var) is realised by 100
// clients, half at mean − √Var and half at mean + √Var, whose population
// variance is Var.
func TestTable18(t *testing.T) {
	tests := []struct {
		name               string
		giveMean, giveVar  float64 // Table 1: Global Acc (%), Var (%²)
		want, wantDecimals float64 // Table 18 and the decimals it prints
	}{
		{"FedAvg FMNIST", 86.49, 62.44, 0.09136, 5},
		{"FedEBA+ FMNIST (Table 7's α=0.5 row)", 87.21, 40.02, 0.07254, 5},
		{"FedAvg CIFAR-10", 67.79, 103.83, 0.1503, 4},
	}
	for _, tt := range tests {
		s := math.Sqrt(tt.giveVar)
		a := make([]float64, 100)
		for i := range a {
			a[i] = tt.giveMean + s*float64(2*(i%2)-1)
		}
		got, err := Measure(a)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got.Var, tt.giveVar, 1e-12) || !near(got.Mean, tt.giveMean, 1e-12) {
			t.Errorf("%s: vector has mean %v, Var %v; want %v, %v", tt.name, got.Mean, got.Var, tt.giveMean, tt.giveVar)
		}
		if scale := math.Pow(10, tt.wantDecimals); math.Round(got.CV*scale) != math.Round(tt.want*scale) {
			t.Errorf("%s: CV = %.7f; want %v to %v decimals", tt.name, got.CV, tt.want, tt.wantDecimals)
		}
	}
}

func TestMeasureInvalid(t *testing.T) {
	for _, give := range [][]float64{nil, {}, {0.5, -0.1}, {math.NaN()}, {0.2, math.Inf(1)}} {
		if _, err := Measure(give); !errors.Is(err, ErrInvalid) {
			t.Errorf("Measure(%v) error = %v; want ErrInvalid", give, err)
		}
	}
}
