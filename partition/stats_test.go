package partition

import (
	"math"
	"slices"
	"testing"
)

func TestEntropy(t *testing.T) {
	tests := []struct {
		giveCounts []int
		want       float64
	}{
		{giveCounts: slices.Repeat([]int{600}, 10), want: math.Log(10)}, // uniform over 10 classes: ln 10
		{giveCounts: []int{0, 0, 1200, 0}, want: 0},                     // one class
		// p = (1/4, 1/4, 1/2): H = 2·(1/4)·ln 4 + (1/2)·ln 2 = ln 2 + (1/2) ln 2 = (3/2) ln 2.
		{giveCounts: []int{1, 1, 2}, want: 1.5 * math.Ln2},
		{giveCounts: []int{3, 0, 3}, want: math.Ln2},
		{giveCounts: []int{0, 0}, want: 0}, // empty client
		{giveCounts: nil, want: 0},
	}
	for _, tt := range tests {
		if got := Entropy(tt.giveCounts); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("Entropy(%v) = %.17g; want %.17g", tt.giveCounts, got, tt.want)
		}
	}
}

func TestStats(t *testing.T) {
	trainLabels := []uint8{0, 1, 1, 2, 2, 2, 0, 1}
	testLabels := []uint8{2, 2, 1, 0}
	tests := []struct {
		name string
		give Partition
		want []ClientStats
	}{
		{
			name: "train only",
			give: Partition{Train: [][]int{{0, 1, 2, 3}, {4, 5}, {}}},
			want: []ClientStats{
				{Train: 4, LabelCounts: []int{1, 2, 1}, Entropy: 1.5 * math.Ln2},
				{Train: 2, LabelCounts: []int{0, 0, 2}, Entropy: 0},
				{Train: 0, LabelCounts: []int{0, 0, 0}, Entropy: 0},
			},
		},
		{
			name: "test from the test split",
			give: Partition{Train: [][]int{{0, 6}, {1}}, Test: [][]int{{3}, {0, 1, 2}}, TestFrom: SourceTest},
			want: []ClientStats{
				{Train: 2, Test: 1, LabelCounts: []int{2, 0, 0}, TestLabelCounts: []int{1, 0, 0}, Entropy: 0},
				{Train: 1, Test: 3, LabelCounts: []int{0, 1, 0}, TestLabelCounts: []int{0, 1, 2}, Entropy: 0},
			},
		},
		{
			name: "test held out of train",
			give: Partition{Train: [][]int{{0, 1}, {3, 4}}, Test: [][]int{{7}, {5}}, TestFrom: SourceTrain},
			want: []ClientStats{
				{Train: 2, Test: 1, LabelCounts: []int{1, 1, 0}, TestLabelCounts: []int{0, 1, 0}, Entropy: math.Ln2},
				{Train: 2, Test: 1, LabelCounts: []int{0, 0, 2}, TestLabelCounts: []int{0, 0, 1}, Entropy: 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Stats(tt.give, trainLabels, testLabels, 3)
			if len(got) != len(tt.want) {
				t.Fatalf("Stats returned %d clients; want %d", len(got), len(tt.want))
			}
			for k := range got {
				g, w := got[k], tt.want[k]
				if g.Train != w.Train || g.Test != w.Test || !slices.Equal(g.LabelCounts, w.LabelCounts) ||
					!slices.Equal(g.TestLabelCounts, w.TestLabelCounts) || math.Abs(g.Entropy-w.Entropy) > 1e-15 {
					t.Errorf("Stats client %d = %+v; want %+v", k, g, w)
				}
			}
		})
	}
}

func TestStatsPanics(t *testing.T) {
	labels := []uint8{0, 1, 2}
	tests := []struct {
		name string
		give Partition
	}{
		{name: "test length", give: Partition{Train: [][]int{{0}, {1}}, Test: [][]int{{0}}, TestFrom: SourceTrain}},
		{name: "unknown source", give: Partition{Train: [][]int{{0}}, Test: [][]int{{1}}, TestFrom: "valid"}},
		{name: "index out of range", give: Partition{Train: [][]int{{3}}}},
		{name: "label above classes", give: Partition{Train: [][]int{{2}}}},
	}
	for _, tt := range tests {
		if _, ok := panics(func() { Stats(tt.give, labels, nil, 2) }); !ok {
			t.Errorf("Stats(%s) did not panic; want a panic", tt.name)
		}
	}
}
