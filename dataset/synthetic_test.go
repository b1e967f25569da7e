package dataset

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestSyntheticShape(t *testing.T) {
	tests := []struct {
		name        string
		give        SyntheticOptions
		wantClasses int
		wantShape   [3]int
		wantTrain   int
		wantTest    int
	}{
		{"defaults", SyntheticOptions{}, 10, [3]int{1, 8, 8}, 2000, 500},
		{"custom", SyntheticOptions{Classes: 3, Shape: [3]int{3, 4, 5}, NTrain: 31, NTest: 7, Noise: 0.3, Seed: 9}, 3, [3]int{3, 4, 5}, 31, 7},
		{"many classes", SyntheticOptions{Classes: 256, NTrain: 512, NTest: 256}, 256, [3]int{1, 8, 8}, 512, 256},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Synthetic(tt.give)
			if d.Name != "synthetic" || d.Classes != tt.wantClasses || d.Shape != tt.wantShape {
				t.Errorf("Synthetic(%+v) = %q, %d classes, shape %v; want \"synthetic\", %d, %v",
					tt.give, d.Name, d.Classes, d.Shape, tt.wantClasses, tt.wantShape)
			}
			dim := tt.wantShape[0] * tt.wantShape[1] * tt.wantShape[2]
			for _, s := range []struct {
				name  string
				split Split
				want  int
			}{{"train", d.Train, tt.wantTrain}, {"test", d.Test, tt.wantTest}} {
				if s.split.N != s.want || len(s.split.Y) != s.want || len(s.split.X) != s.want*dim {
					t.Errorf("%s: N = %d, %d labels, %d values; want %d, %d, %d",
						s.name, s.split.N, len(s.split.Y), len(s.split.X), s.want, s.want, s.want*dim)
				}
				counts := make([]int, d.Classes)
				for _, y := range s.split.Y {
					counts[y]++ // panics on a label out of range, which fails the test
				}
				if lo, hi := slices.Min(counts), slices.Max(counts); hi-lo > 1 {
					t.Errorf("%s: class counts range %d..%d; want balanced to within 1", s.name, lo, hi)
				}
				for i, v := range s.split.X {
					if !(v >= 0 && v <= 1) {
						t.Fatalf("%s: X[%d] = %v; want in [0, 1]", s.name, i, v)
					}
				}
			}
		})
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	a := Synthetic(SyntheticOptions{Seed: 3})
	b := Synthetic(SyntheticOptions{Seed: 3})
	c := Synthetic(SyntheticOptions{Seed: 4})
	if !slices.Equal(a.Train.X, b.Train.X) || !slices.Equal(a.Test.Y, b.Test.Y) || a.Digest != b.Digest {
		t.Errorf("Synthetic(seed 3) differs between two calls (digests %s, %s)", a.Digest, b.Digest)
	}
	if slices.Equal(a.Train.X, c.Train.X) || a.Digest == c.Digest {
		t.Errorf("Synthetic(seed 3) and Synthetic(seed 4) are equal (digest %s)", a.Digest)
	}
	if len(a.Digest) != 64 {
		t.Errorf("Digest = %q; want 64 hex digits", a.Digest)
	}
	// The labels must interleave classes, not come sorted.
	if slices.IsSorted(a.Train.Y) {
		t.Errorf("Synthetic train labels are sorted; want shuffled")
	}
}

func TestSyntheticLearnable(t *testing.T) {
	// Nearest class mean, fitted on train, stands in for the linear models the trainer fits: the
	// clusters must be separable well above chance (10%). The bound is far below what the default
	// noise gives, so it does not pin the generator.
	tests := []struct {
		name    string
		give    SyntheticOptions
		wantMin float64
	}{
		{"defaults", SyntheticOptions{}, 0.9},
		{"noisy", SyntheticOptions{Noise: 0.3, Seed: 1}, 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Synthetic(tt.give)
			if got := nearestMeanAccuracy(d); got < tt.wantMin {
				t.Errorf("nearest-mean test accuracy = %.3f; want at least %.2f", got, tt.wantMin)
			}
		})
	}
}

// nearestMeanAccuracy fits per-class means on d.Train and returns their accuracy on d.Test.
func nearestMeanAccuracy(d *Dataset) float64 {
	dim := d.Dim()
	means := make([]float64, d.Classes*dim)
	counts := make([]float64, d.Classes)
	for i, y := range d.Train.Y {
		counts[y]++
		for j, v := range d.Train.X[i*dim : (i+1)*dim] {
			means[int(y)*dim+j] += float64(v)
		}
	}
	for c := range d.Classes {
		for j := range dim {
			means[c*dim+j] /= max(counts[c], 1)
		}
	}
	correct := 0
	for i, y := range d.Test.Y {
		best, bestDist := -1, 0.0
		for c := range d.Classes {
			dist := 0.0
			for j, v := range d.Test.X[i*dim : (i+1)*dim] {
				e := float64(v) - means[c*dim+j]
				dist += e * e
			}
			if best < 0 || dist < bestDist {
				best, bestDist = c, dist
			}
		}
		if best == int(y) {
			correct++
		}
	}
	return float64(correct) / float64(d.Test.N)
}

func TestSyntheticOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		give SyntheticOptions
	}{
		{"one class", SyntheticOptions{Classes: 1}},
		{"too many classes", SyntheticOptions{Classes: 257}},
		{"negative classes", SyntheticOptions{Classes: -3}},
		{"zero channel", SyntheticOptions{Shape: [3]int{0, 8, 8}}},
		{"negative train", SyntheticOptions{NTrain: -1}},
		{"negative noise", SyntheticOptions{Noise: -0.1}},
		{"too large", SyntheticOptions{Shape: [3]int{3, 1024, 1024}, NTrain: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.give.Validate(); !errors.Is(err, ErrInvalid) {
				t.Errorf("%+v.Validate() = %v; want an ErrInvalid error", tt.give, err)
			}
			if !panics(func() { Synthetic(tt.give) }) {
				t.Errorf("Synthetic(%+v) did not panic", tt.give)
			}
		})
	}
	if err := (SyntheticOptions{}).Validate(); err != nil {
		t.Errorf("SyntheticOptions{}.Validate() = %v; want nil", err)
	}
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}

func TestLoadSynthetic(t *testing.T) {
	d, err := Load(context.Background(), "synthetic", "ignored")
	if err != nil {
		t.Fatalf("Load(synthetic) error: %v", err)
	}
	if want := Synthetic(SyntheticOptions{}); d.Digest != want.Digest {
		t.Errorf("Load(synthetic).Digest = %s; want Synthetic(defaults).Digest %s", d.Digest, want.Digest)
	}
}
