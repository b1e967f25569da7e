package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/partition/partitiontest"
)

func TestUnbalancedContract(t *testing.T) {
	labels := balancedLabels(10, 100) // 1,000 samples
	tests := []struct {
		name      string
		giveOpts  UnbalancedOptions
		wantTotal int
	}{
		{name: "iid labels, all samples", giveOpts: UnbalancedOptions{Sizes: []int{500, 250, 125, 100, 25}}, wantTotal: 1000},
		{name: "iid labels, some samples", giveOpts: UnbalancedOptions{Sizes: []int{10, 20, 30}}, wantTotal: 60},
		{name: "alpha 0.1, all samples", giveOpts: UnbalancedOptions{Sizes: []int{400, 300, 200, 100}, Alpha: 0.1}, wantTotal: 1000},
		{name: "alpha 0.001, most samples", giveOpts: UnbalancedOptions{Sizes: slices.Repeat([]int{90}, 10), Alpha: 0.001}, wantTotal: 900},
		{name: "empty client", giveOpts: UnbalancedOptions{Sizes: []int{0, 5, 7}, Alpha: 1}, wantTotal: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := partitiontest.Check(partitiontest.Harness{
				Run:      func(r *rand.Rand) ([][]int, error) { return Unbalanced(labels, 10, tt.giveOpts, r) },
				Parts:    len(tt.giveOpts.Sizes),
				Pool:     len(labels),
				Complete: tt.wantTotal == len(labels),
				Disjoint: true,
				Sizes:    tt.giveOpts.Sizes,
				Inputs:   func() any { return []any{slices.Clone(labels), slices.Clone(tt.giveOpts.Sizes)} },
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// TestUnbalancedLabelSkew checks the label mix when no class runs out. A
// client with n samples from q ~ Dir_C(α) has Dirichlet-multinomial counts
// x, whose collision statistic P = Σ_c x_c(x_c-1) / (n(n-1)) has mean
// E[Σ_c q_c²] = (α+1)/(Cα+1) exactly (0.25 at α = 0.5, C = 10; it tends to
// 1/C as α → ∞ and to 1 as α → 0). 2,000 clients of 50 samples draw
// 100,000 of 600,000 samples, so no class comes close to running out.
// Tolerance: 5 standard errors.
func TestUnbalancedLabelSkew(t *testing.T) {
	const classes, clients, size = 10, 2000, 50
	labels := balancedLabels(classes, 60000)
	for _, alpha := range []float64{0.05, 0.5, 5} {
		t.Run(fmt.Sprint("alpha=", alpha), func(t *testing.T) {
			parts, err := Unbalanced(labels, classes, UnbalancedOptions{Sizes: slices.Repeat([]int{size}, clients), Alpha: alpha}, newRand(7))
			if err != nil {
				t.Fatal(err)
			}
			var ps []float64
			for _, p := range parts {
				var s float64
				for _, x := range labelCounts(p, labels, classes) {
					s += float64(x * (x - 1))
				}
				ps = append(ps, s/(size*(size-1)))
			}
			mean, se := moments(ps)
			want := (alpha + 1) / (classes*alpha + 1)
			if math.Abs(mean-want) > 5*se {
				t.Errorf("mean collision statistic = %.4f; want %.4f ± %.4f", mean, want, 5*se)
			}
		})
	}
}

// TestUnbalancedFraboniCIFAR runs the sampling-theory paper's CIFAR-10
// setting (specs/sampling-theory.md §5: 100 clients of 100–1,000 samples,
// 48,500 in all, Dir(α) label mixes with α in {0.1, 0.01, 0.001}) on
// CIFAR-sized labels (5,000 per class): every client gets exactly its size,
// and at α = 0.001 most clients hold essentially one class (a dominant
// share >= 0.99 for at least half the clients, the rest being the clients
// that arrive after their class ran out).
func TestUnbalancedFraboniCIFAR(t *testing.T) {
	labels := balancedLabels(10, 5000)
	sizes := FraboniCIFARSizes()
	for _, alpha := range []float64{0.1, 0.01, 0.001} {
		parts, err := Unbalanced(labels, 10, UnbalancedOptions{Sizes: sizes, Alpha: alpha}, newRand(3))
		if err != nil {
			t.Fatalf("alpha %g: %v", alpha, err)
		}
		pure := 0
		for k, p := range parts {
			if len(p) != sizes[k] {
				t.Errorf("alpha %g: client %d holds %d; want %d", alpha, k, len(p), sizes[k])
			}
			if float64(slices.Max(labelCounts(p, labels, 10))) >= 0.99*float64(len(p)) {
				pure++
			}
		}
		if alpha == 0.001 && pure < 50 {
			t.Errorf("alpha 0.001: %d clients with a dominant share >= 0.99; want >= 50", pure)
		}
	}
}

func TestFraboniCIFARSizes(t *testing.T) {
	s := FraboniCIFARSizes()
	total := 0
	for _, x := range s {
		total += x
	}
	if len(s) != 100 || total != 48500 || s[0] != 100 || s[10] != 250 || s[40] != 500 || s[70] != 750 || s[99] != 1000 {
		t.Errorf("FraboniCIFARSizes() = %v (%d clients, %d samples); want 10×100, 30×250, 30×500, 20×750, 10×1000 = 48,500", s, len(s), total)
	}
}

func TestPowerLawSizes(t *testing.T) {
	tests := []struct {
		giveTotal, giveClients int
		giveExponent           float64
		giveMin                int
		want                   []int
	}{
		// Weights 1, 1/2, 1/3, 1/4 (sum 25/12): quotas 48, 24, 16, 12 exactly.
		{giveTotal: 100, giveClients: 4, giveExponent: 1, want: []int{48, 24, 16, 12}},
		// Exponent 0: equal shares, the remainder to the lowest IDs.
		{giveTotal: 10, giveClients: 3, giveExponent: 0, want: []int{4, 3, 3}},
		// 30 above a minimum of 10 each: quotas 16, 8, 5.33 (+ 0.67 left)
		// -> 16, 8, 5 and the last sample to client 2 (remainder 0.33 of
		// client 2 beats 0 and 0).
		{giveTotal: 60, giveClients: 3, giveExponent: 1, giveMin: 10, want: []int{26, 18, 16}},
	}
	for _, tt := range tests {
		got, err := PowerLawSizes(tt.giveTotal, tt.giveClients, tt.giveExponent, tt.giveMin)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("PowerLawSizes(%d, %d, %g, %d) = %v, %v; want %v", tt.giveTotal, tt.giveClients, tt.giveExponent, tt.giveMin, got, err, tt.want)
		}
	}
	// Properties on FMNIST's 60,000 samples and 1,000 clients.
	for _, e := range []float64{0.5, 1, 1.5, 2} {
		got, err := PowerLawSizes(60000, 1000, e, 10)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for k, x := range got {
			total += x
			if x < 10 || (k > 0 && x > got[k-1]) {
				t.Errorf("exponent %g: size[%d] = %d after %v; want >= 10 and non-increasing", e, k, x, got[max(k-1, 0)])
			}
		}
		if total != 60000 {
			t.Errorf("exponent %g: sizes add up to %d; want 60000", e, total)
		}
	}
	for _, bad := range []struct {
		total, clients int
		e              float64
		min            int
	}{{10, 0, 1, 0}, {10, 2, -1, 0}, {10, 2, math.NaN(), 0}, {10, 2, 1, 6}} {
		if _, err := PowerLawSizes(bad.total, bad.clients, bad.e, bad.min); err == nil {
			t.Errorf("PowerLawSizes(%d, %d, %g, %d) = nil error; want an error", bad.total, bad.clients, bad.e, bad.min)
		}
	}
}

func TestUnbalancedErrors(t *testing.T) {
	labels := balancedLabels(10, 10)
	tests := []struct {
		name      string
		giveOpts  UnbalancedOptions
		wantField string
	}{
		{name: "no sizes", giveOpts: UnbalancedOptions{}, wantField: "sizes is empty"},
		{name: "negative size", giveOpts: UnbalancedOptions{Sizes: []int{3, -1}}, wantField: "sizes[1] = -1"},
		{name: "too many samples", giveOpts: UnbalancedOptions{Sizes: []int{60, 41}}, wantField: "add up to 101"},
		{name: "alpha negative", giveOpts: UnbalancedOptions{Sizes: []int{3}, Alpha: -1}, wantField: "alpha = -1"},
		{name: "alpha NaN", giveOpts: UnbalancedOptions{Sizes: []int{3}, Alpha: math.NaN()}, wantField: "alpha = NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Unbalanced(labels, 10, tt.giveOpts, newRand(1))
			checkInvalid(t, "Unbalanced", err, tt.wantField)
		})
	}
}
