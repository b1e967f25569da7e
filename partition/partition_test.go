package partition

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNilRandPanics checks that every entry point treats a nil stream as a
// programming error.
func TestNilRandPanics(t *testing.T) {
	labels := balancedLabels(2, 10)
	train := [][]int{{0, 1, 2}, {3, 4}}
	tests := []struct {
		name string
		call func(r *rand.Rand)
	}{
		{"IID", func(r *rand.Rand) { IID(10, 2, r) }},
		{"Dirichlet", func(r *rand.Rand) { Dirichlet(labels, 2, 2, DirichletOptions{Alpha: 1, MinSize: 1}, r) }},
		{"Shards", func(r *rand.Rand) { Shards(labels, 2, 2, r) }},
		{"HoldOut", func(r *rand.Rand) { HoldOut(train, labels, 0.2, r) }},
		{"FromTestSet", func(r *rand.Rand) { FromTestSet(train, labels, labels, 2, []int{1, 1}, r) }},
		{"KLabels", func(r *rand.Rand) { KLabels(labels, 2, 2, 1, r) }},
		{"Quantity", func(r *rand.Rand) { Quantity(20, 2, QuantityOptions{Alpha: 1}, r) }},
		{"DirichletSizes", func(r *rand.Rand) { DirichletSizes(20, 2, QuantityOptions{Alpha: 1}, r) }},
		{"Mixed", func(r *rand.Rand) { Mixed(labels, 2, 2, MixedOptions{Alpha: 1}, r) }},
		{"Groups", func(r *rand.Rand) { Groups(labels, 2, GroupOptions{Alphas: []float64{1}, Clients: 2}, r) }},
		{"Unbalanced", func(r *rand.Rand) { Unbalanced(labels, 2, UnbalancedOptions{Sizes: []int{3}}, r) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := panics(func() { tt.call(nil) })
			if !ok || v != "partition: nil rand" {
				t.Errorf("%s(nil rand) panicked with %v (panicked: %t); want %q", tt.name, v, ok, "partition: nil rand")
			}
		})
	}
}

// checkInvalid reports whether err wraps ErrInvalid and names the field.
func checkInvalid(t *testing.T, call string, err error, wantField string) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("%s error = %v; want one wrapping ErrInvalid", call, err)
		return
	}
	if !strings.Contains(err.Error(), wantField) {
		t.Errorf("%s error = %q; want it to name %q", call, err, wantField)
	}
}
