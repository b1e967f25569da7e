package partition

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flsweep/flsweep/errkind"
)

// ErrInvalid marks input that can never work: a bad option, an index out of
// range, or a request no random draw can satisfy. It is not retryable.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid input")

// Source names the dataset split that a partition's test indices point into.
type Source string

const (
	// SourceTest means Partition.Test indexes the dataset's test split
	// (HiCS-FL's local test sets, see FromTestSet).
	SourceTest Source = "test"
	// SourceTrain means Partition.Test indexes the train split: the test
	// samples were held out of the clients' train data (FedEBA+'s 80/20
	// split, see HoldOut).
	SourceTrain Source = "train"
)

// Partition assigns sample indices to clients.
type Partition struct {
	// Train[k] holds the indices into the train split that client k trains on.
	Train [][]int
	// Test[k] holds client k's local test indices, into the split named by
	// TestFrom. Test is nil when the clients have no local test sets.
	Test [][]int
	// TestFrom names the split Test indexes; empty when Test is nil.
	TestFrom Source
	// Group[k] is client k's group: HiCS-FL's α-group (see Groups). Group
	// is nil when the scheme has no groups.
	Group []int
	// Public holds the server's public set, indices into the train split
	// that no client holds (see Reserve); nil without one.
	Public []int
}

// mustRand panics if r is nil: the stream is a required argument, and a nil
// one is a programming error.
func mustRand(r *rand.Rand) {
	if r == nil {
		panic("partition: nil rand")
	}
}

// minSizeOrDefault resolves a MinSize option: 0 means DefaultMinSize and
// NoMinSize means 0.
func minSizeOrDefault(m int) int {
	switch m {
	case 0:
		return DefaultMinSize
	case NoMinSize:
		return 0
	}
	return m
}

// checkMinSize validates a MinSize option; field names it in the message.
func checkMinSize(field string, m int) error {
	if m < NoMinSize {
		return fmt.Errorf("partition: %s = %d; use 0 for the default %d, %d for none, or a positive size: %w", field, m, DefaultMinSize, NoMinSize, ErrInvalid)
	}
	return nil
}

// checkRedraws validates a MaxRedraws option and resolves 0 to
// DefaultMaxRedraws.
func checkRedraws(field string, m int) (int, error) {
	if m < 0 {
		return 0, fmt.Errorf("partition: %s = %d; use 0 for the default %d, or a positive bound: %w", field, m, DefaultMaxRedraws, ErrInvalid)
	}
	if m == 0 {
		return DefaultMaxRedraws, nil
	}
	return m, nil
}

// checkAlpha validates a Dirichlet concentration; field names it.
func checkAlpha(field string, a float64) error {
	if math.IsNaN(a) || math.IsInf(a, 0) || a < MinAlpha {
		return fmt.Errorf("partition: %s = %g; use a finite value >= %g (e.g. 0.5): %w", field, a, MinAlpha, ErrInvalid)
	}
	return nil
}

// cumCuts computes numpy's split points for proportions p (summing to 1) of
// length items, the way NIID-Bench does:
//
//	cuts = (np.cumsum(p) · length).astype(int)[:-1]
//
// written to cuts[0:len(p)-1] with cuts[len(p)-1] = length (np.split's last
// piece ends at the end). Piece j is [cuts[j-1], cuts[j]). Cuts are clamped
// to be non-decreasing and at most length, which the float cumulative sum
// already gives except for its last ulp.
func cumCuts(cuts []int, p []float64, length int) {
	var cum float64
	prev := 0
	for j, pj := range p {
		e := length
		if j < len(p)-1 {
			cum += pj
			e = min(max(int(cum*float64(length)), prev), length)
		}
		cuts[j] = e
		prev = e
	}
}

// checkClients validates a client count against the n samples to share.
func checkClients(clients, n int) error {
	if clients < 1 {
		return fmt.Errorf("partition: clients = %d; use at least 1: %w", clients, ErrInvalid)
	}
	if clients > n {
		return fmt.Errorf("partition: clients = %d exceeds the %d samples; lower clients: %w", clients, n, ErrInvalid)
	}
	return nil
}

// checkLabels validates classes and that every label is below it. what names
// the label vector in the message ("labels", "test labels").
func checkLabels(what string, labels []uint8, classes int) error {
	if classes < 1 || classes > 256 {
		return fmt.Errorf("partition: classes = %d; use 1..256 (labels are uint8): %w", classes, ErrInvalid)
	}
	for i, y := range labels {
		if int(y) >= classes {
			return fmt.Errorf("partition: %s[%d] = %d is not below classes = %d; raise classes or fix the labels: %w",
				what, i, y, classes, ErrInvalid)
		}
	}
	return nil
}

// checkIndexLists validates that every index in lists lies in [0, n). what
// names the argument in the message.
func checkIndexLists(what string, lists [][]int, n int) error {
	for k, list := range lists {
		for p, i := range list {
			if i < 0 || i >= n {
				return fmt.Errorf("partition: %s[%d][%d] = %d is outside the %d labelled samples; pass the labels of the split it indexes: %w",
					what, k, p, i, n, ErrInvalid)
			}
		}
	}
	return nil
}

// byClass groups the indices 0..len(labels)-1 by label, stably: the result
// holds the indices of class 0 in ascending order, then class 1, and so on,
// and class c occupies idx[start[c]:start[c+1]]. len(start) == classes+1.
func byClass(labels []uint8, classes int) (idx, start []int) {
	start = make([]int, classes+1)
	for _, y := range labels {
		start[int(y)+1]++
	}
	for c := 1; c <= classes; c++ {
		start[c] += start[c-1]
	}
	next := make([]int, classes)
	copy(next, start[:classes])
	idx = make([]int, len(labels))
	for i, y := range labels {
		idx[next[y]] = i
		next[y]++
	}
	return idx, start
}

// gather turns an owner map (owner[i] = client holding index i, or -1 for
// none) into per-client index lists, each sorted ascending because i is
// scanned in order. sizes[k] must be the number of indices owned by k. All
// lists share one backing array, each capped at its length so an append by
// the caller cannot overwrite a neighbour.
func gather(owner []int32, sizes []int) [][]int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	backing := make([]int, total)
	parts := make([][]int, len(sizes))
	off := 0
	for k, s := range sizes {
		parts[k] = backing[off : off : off+s]
		off += s
	}
	for i, k := range owner {
		if k >= 0 {
			parts[k] = append(parts[k], i)
		}
	}
	return parts
}
