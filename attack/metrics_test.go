package attack_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestEvaluateKnownValues: a worked example
// and hand-checked cases of App. B.4's cAcc and iAcc.
func TestEvaluateKnownValues(t *testing.T) {
	tests := []struct {
		name      string
		giveTruth []int
		giveEst   []int
		want      attack.Score
	}{
		// N = (3, 0, 1), N̂ = (2, 1, 1): Σ min = 3 of 4; presence (1,0,1) vs (1,1,1).
		{"worked example", []int{3, 0, 1}, []int{2, 1, 1}, attack.Score{CAcc: 2.0 / 3, IAcc: 0.75}},
		{"exact", []int{5, 0, 2}, []int{5, 0, 2}, attack.Score{CAcc: 1, IAcc: 1}},
		// All mass on an absent class: no instance right, two of three presences wrong.
		{"disjoint", []int{4, 0, 0}, []int{0, 4, 0}, attack.Score{CAcc: 1.0 / 3, IAcc: 0}},
		// Over-prediction is not rewarded beyond the min.
		{"over", []int{2, 2}, []int{4, 4}, attack.Score{CAcc: 1, IAcc: 1}},
	}
	for _, tt := range tests {
		got, err := attack.Evaluate(tt.giveTruth, tt.giveEst)
		if err != nil || !near(got.CAcc, tt.want.CAcc, 1e-15) || !near(got.IAcc, tt.want.IAcc, 1e-15) {
			t.Errorf("%s: Evaluate(%v, %v) = %+v, %v; want %+v", tt.name, tt.giveTruth, tt.giveEst, got, err, tt.want)
		}
	}
}

// TestEvaluatePermutationInvariant: relabelling the classes of both
// histograms alike leaves both scores unchanged, and the scores are in
// [0, 1].
func TestEvaluatePermutationInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for range 500 {
		n := 1 + r.IntN(10)
		truth, est := make([]int, n), make([]int, n)
		for j := range truth {
			truth[j], est[j] = r.IntN(3)*r.IntN(10), r.IntN(3)*r.IntN(10)
		}
		truth[0]++
		s, err := attack.Evaluate(truth, est)
		if err != nil {
			t.Fatal(err)
		}
		if s.CAcc < 0 || s.CAcc > 1 || s.IAcc < 0 || s.IAcc > 1 {
			t.Errorf("Evaluate(%v, %v) = %+v; want scores in [0, 1]", truth, est, s)
		}
		perm := r.Perm(n)
		pt, pe := make([]int, n), make([]int, n)
		for j, p := range perm {
			pt[p], pe[p] = truth[j], est[j]
		}
		if ps, _ := attack.Evaluate(pt, pe); ps != s {
			t.Errorf("Evaluate of the relabelled %v, %v = %+v; want %+v", pt, pe, ps, s)
		}
	}
}

// TestEvaluateRejects: malformed histograms are fl.ErrInvalid.
func TestEvaluateRejects(t *testing.T) {
	for name, give := range map[string][2][]int{
		"lengths":    {{1, 2}, {1}},
		"empty":      {{}, {}},
		"negative":   {{1, 2}, {-1, 2}},
		"no samples": {{0, 0}, {1, 0}},
	} {
		if _, err := attack.Evaluate(give[0], give[1]); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: error = %v; want fl.ErrInvalid", name, err)
		}
	}
}

// TestLabelCounts counts the labels of the listed samples, repetitions
// included.
func TestLabelCounts(t *testing.T) {
	ex := trainer.Examples{Y: []uint8{2, 0, 2, 1}, Dim: 0, Idx: []int{0, 2, 2, 3}}
	got, err := attack.LabelCounts(ex, 3)
	if want := []int{0, 1, 3}; err != nil || !slices.Equal(got, want) {
		t.Errorf("LabelCounts = %v, %v; want %v", got, err, want)
	}
	if _, err := attack.LabelCounts(ex, 2); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("a label outside the classes: error = %v; want fl.ErrInvalid", err)
	}
}
