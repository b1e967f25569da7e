package partition

import (
	"fmt"
	"math"
)

// ClientStats describes one client's share of a partition: the row the
// partitions table records per (point, client).
type ClientStats struct {
	Train int // number of train samples n_k
	Test  int // number of local test samples; 0 without test sets
	// LabelCounts[c] is the number of client k's train samples of class c.
	LabelCounts []int
	// TestLabelCounts[c] is the number of its local test samples of class c;
	// nil when the partition has no test sets.
	TestLabelCounts []int
	// Entropy is the Shannon entropy, in nats, of the train label
	// distribution LabelCounts/Train; 0 for an empty client (see Entropy).
	Entropy float64
}

// Stats computes every client's sizes, label counts and label entropy.
// trainLabels is indexed by p.Train; p.Test is indexed into testLabels when
// p.TestFrom is SourceTest and into trainLabels when it is SourceTrain.
// testLabels may be nil when p has no test sets from the test split.
//
// Stats expects a partition made for these labels by this package, so a
// mismatch is a programming error: it panics if an index is out of range, a
// label is not below classes, p.Test is non-nil with a length other than
// len(p.Train), or p.TestFrom is unknown.
func Stats(p Partition, trainLabels, testLabels []uint8, classes int) []ClientStats {
	if p.Test != nil && len(p.Test) != len(p.Train) {
		panic(fmt.Sprintf("partition: Stats: %d test sets for %d clients", len(p.Test), len(p.Train)))
	}
	var from []uint8
	if p.Test != nil {
		switch p.TestFrom {
		case SourceTest:
			from = testLabels
		case SourceTrain:
			from = trainLabels
		default:
			panic(fmt.Sprintf("partition: Stats: unknown TestFrom %q", p.TestFrom))
		}
	}
	out := make([]ClientStats, len(p.Train))
	for k, list := range p.Train {
		s := ClientStats{Train: len(list), LabelCounts: countLabels(list, trainLabels, classes)}
		s.Entropy = Entropy(s.LabelCounts)
		if p.Test != nil {
			s.Test = len(p.Test[k])
			s.TestLabelCounts = countLabels(p.Test[k], from, classes)
		}
		out[k] = s
	}
	return out
}

func countLabels(list []int, labels []uint8, classes int) []int {
	counts := make([]int, classes)
	for _, i := range list {
		y := int(labels[i]) // panics on an out-of-range index
		if y >= classes {
			panic(fmt.Sprintf("partition: Stats: label %d at index %d is not below classes = %d", y, i, classes))
		}
		counts[y]++
	}
	return counts
}

// Entropy returns the Shannon entropy, in nats, of the distribution that the
// non-negative counts define:
//
//	H = -Σ_c p_c ln p_c,   p_c = counts_c / Σ counts,   0·ln 0 = 0
//
// H is 0 for a single class and ln C for C equally filled classes. Entropy
// returns 0 when all counts are 0.
func Entropy(counts []int) float64 {
	var n int
	for _, x := range counts {
		n += x
	}
	if n == 0 {
		return 0
	}
	var h float64
	for _, x := range counts {
		if x > 0 {
			p := float64(x) / float64(n)
			h -= p * math.Log(p)
		}
	}
	return h
}
