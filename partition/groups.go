package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// GroupOptions configures Groups.
type GroupOptions struct {
	// Alphas holds one Dirichlet concentration per group (HiCS-FL's α list,
	// e.g. {0.001, 0.002, 0.005, 0.01, 0.5}). Every value must be at least
	// MinAlpha.
	Alphas []float64
	// Clients is the total number of clients; it must be a multiple of
	// len(Alphas). Clients g·m ... g·m+m-1 (m = Clients/len(Alphas)) form
	// group g.
	Clients int
	// MinSize is the smallest train size accepted per client; a group's
	// draw is repeated until every client of the group has it. 0 means the
	// reference code's int(0.2·N_g/m), N_g the group's train size (240 for
	// Fashion-MNIST with 5 groups of 10); NoMinSize means none.
	MinSize int
	// TestLabels, if non-nil, are the labels of the test split, and Groups
	// also splits it (HiCS-FL's co-split, see Groups). nil: no test sets.
	TestLabels []uint8
	// TestMinSize is the smallest local test size accepted with TestLabels.
	// 0 means int(0.2·T_g/m), T_g the group's test size (40 for
	// Fashion-MNIST); NoMinSize means none.
	TestMinSize int
	// MaxRedraws bounds the redraws per group; 0 means DefaultMaxRedraws.
	MaxRedraws int
}

// Groups is HiCS-FL's partition with a list of concentrations (Chen &
// Vikalo, NeurIPS 2024, §5 and App. A.10; code: sampling.py
// partition_data_various_alpha; specs/hicsfl.md §3.3). With G = len(Alphas)
// groups of m = Clients/G clients:
//
//  1. Every class's indices (ascending) are cut into G contiguous slices,
//     and group g takes the g-th slice of every class, so each group is
//     class-balanced: on Fashion-MNIST 1,200 images per class, 12,000 per
//     group.
//  2. Inside group g, for each class c: shuffle its slice, draw
//     p ~ Dir_m(Alphas[g]), give a client that already holds >= N_g/m
//     samples p_j = 0 (the balance cap), renormalise and split at
//     (cumsum(p)·len).astype(int)[:-1], exactly as Dirichlet does.
//  3. The group's draw is repeated until every client holds MinSize samples
//     (and TestMinSize test samples, see below).
//
// Client k's group is Group[k] = k / m. Lists are sorted ascending; the
// train partition is complete.
//
// With TestLabels set, the test split is divided the same way: its classes
// are cut into G slices, and each class's test slice is split among the
// group's clients with the same draw p as the train slice, masked by the
// balance cap of the clients' test sizes (T_g/m). Local test sets are then
// disjoint and their sizes follow from the draw, as in the code. The code
// does not shuffle the test slice before splitting it; Groups follows it.
//
// Where the code is not general, Groups generalises it and says so: the code
// takes int(N_g/K) samples per class and group (dropping the remainder and
// assuming balanced classes), Groups uses np.array_split per class, which is
// the same when G divides every class size; the balance cap and the default
// minimum use the group's actual size N_g rather than int(N/G).
//
// Groups returns an error wrapping ErrInvalid if Alphas is empty or holds an
// invalid value, Clients is not a positive multiple of len(Alphas), a label
// is not below classes, MinSize exceeds N_g/m, or some group's 1+MaxRedraws
// draws all fail the minimum sizes. It panics if r is nil.
func Groups(labels []uint8, classes int, opts GroupOptions, r *rand.Rand) (Partition, error) {
	mustRand(r)
	if len(opts.Alphas) == 0 {
		return Partition{}, fmt.Errorf("partition: hics alphas is empty; give one concentration per group, e.g. [0.001, 0.002, 0.005, 0.01, 0.5]: %w", ErrInvalid)
	}
	for g, a := range opts.Alphas {
		if err := checkAlpha(fmt.Sprintf("hics alphas[%d]", g), a); err != nil {
			return Partition{}, err
		}
	}
	groups := len(opts.Alphas)
	if opts.Clients < 1 || opts.Clients%groups != 0 {
		return Partition{}, fmt.Errorf("partition: hics clients = %d is not a positive multiple of the %d groups; use e.g. %d: %w",
			opts.Clients, groups, 10*groups, ErrInvalid)
	}
	if err := checkMinSize("hics min_size", opts.MinSize); err != nil {
		return Partition{}, err
	}
	if err := checkMinSize("hics test min_size", opts.TestMinSize); err != nil {
		return Partition{}, err
	}
	redraws, err := checkRedraws("hics max_redraws", opts.MaxRedraws)
	if err != nil {
		return Partition{}, err
	}
	if err := checkLabels("labels", labels, classes); err != nil {
		return Partition{}, err
	}
	if err := checkClients(opts.Clients, len(labels)); err != nil {
		return Partition{}, err
	}
	withTest := opts.TestLabels != nil
	if withTest {
		if err := checkLabels("test labels", opts.TestLabels, classes); err != nil {
			return Partition{}, err
		}
	}
	m := opts.Clients / groups
	train := groupSlices(labels, classes, groups)
	var test [][]int
	if withTest {
		test = groupSlices(opts.TestLabels, classes, groups)
	}

	p := Partition{Train: make([][]int, opts.Clients), Group: make([]int, opts.Clients)}
	if withTest {
		p.Test, p.TestFrom = make([][]int, opts.Clients), SourceTest
	}
	for g, alpha := range opts.Alphas {
		d := groupDraw{alpha: alpha, m: m, train: train[g*classes : (g+1)*classes]}
		d.minTrain = groupMinSize(opts.MinSize, d.total(d.train), m)
		if d.minTrain > d.total(d.train)/m {
			return Partition{}, fmt.Errorf("partition: hics min_size = %d exceeds the %d samples per client of group %d (%d samples, %d clients); lower min_size: %w",
				d.minTrain, d.total(d.train)/m, g, d.total(d.train), m, ErrInvalid)
		}
		if withTest {
			d.test = test[g*classes : (g+1)*classes]
			d.minTest = groupMinSize(opts.TestMinSize, d.total(d.test), m)
		}
		trainParts, testParts, err := d.run(redraws, r)
		if err != nil {
			return Partition{}, fmt.Errorf("partition: hics group %d (alpha = %g): %w", g, alpha, err)
		}
		for j := range m {
			k := g*m + j
			p.Train[k], p.Group[k] = trainParts[j], g
			if withTest {
				p.Test[k] = testParts[j]
			}
		}
	}
	return p, nil
}

// groupSlices cuts every class's indices (ascending) into groups contiguous
// slices by np.array_split and returns them as out[g·classes+c].
func groupSlices(labels []uint8, classes, groups int) [][]int {
	idx, start := byClass(labels, classes)
	out := make([][]int, groups*classes)
	for c := range classes {
		seg := idx[start[c]:start[c+1]]
		pos := 0
		for g, s := range arraySplitSizes(len(seg), groups) {
			out[g*classes+c] = seg[pos : pos+s : pos+s]
			pos += s
		}
	}
	return out
}

// groupMinSize resolves a min-size option for a group of total samples and m
// clients: 0 is the code's int(0.2·total/m), computed in float64 as Python
// does.
func groupMinSize(opt, total, m int) int {
	switch opt {
	case 0:
		return int(0.2 * float64(total) / float64(m))
	case NoMinSize:
		return 0
	}
	return opt
}

// groupDraw is one group's split: per-class train slices and, optionally,
// test slices.
type groupDraw struct {
	alpha             float64
	m                 int
	train, test       [][]int // per class
	minTrain, minTest int
}

func (d *groupDraw) total(slices [][]int) int {
	n := 0
	for _, s := range slices {
		n += len(s)
	}
	return n
}

// run draws until both minimum sizes hold and returns the clients' lists.
func (d *groupDraw) run(redraws int, r *rand.Rand) (train, test [][]int, err error) {
	classes := len(d.train)
	nTrain, nTest := d.total(d.train), d.total(d.test)
	seg := make([][]int, classes)
	for c, s := range d.train {
		seg[c] = slices.Clone(s)
	}
	size := make([]int, d.m)
	testSize := make([]int, d.m)
	cut := make([]int, classes*d.m)
	testCut := make([]int, classes*d.m)
	logw := make([]float64, d.m)
	w := make([]float64, d.m)
	bestTrain, bestTest := -1, -1
	for range 1 + redraws {
		clear(size)
		clear(testSize)
		for c := range classes {
			s := seg[c]
			r.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
			logDirichlet(logw, d.alpha, r)
			copy(w, logw)
			if len(s) > 0 {
				splitBalanced(cut[c*d.m:(c+1)*d.m], w, size, len(s), nTrain)
			} else {
				clear(cut[c*d.m : (c+1)*d.m])
			}
			if d.test != nil {
				copy(w, logw)
				if n := len(d.test[c]); n > 0 {
					splitBalanced(testCut[c*d.m:(c+1)*d.m], w, testSize, n, nTest)
				} else {
					clear(testCut[c*d.m : (c+1)*d.m])
				}
			}
		}
		minTrain, minTest := slices.Min(size), math.MaxInt
		if d.test != nil {
			minTest = slices.Min(testSize)
		}
		if minTrain >= d.minTrain && minTest >= d.minTest {
			train = collect(seg, cut, size, d.m)
			if d.test != nil {
				test = collect(d.test, testCut, testSize, d.m)
			}
			return train, test, nil
		}
		bestTrain, bestTest = max(bestTrain, minTrain), max(bestTest, minTest)
	}
	msg := fmt.Sprintf("%d draws all left a client below min_size = %d (best smallest client: %d)", 1+redraws, d.minTrain, bestTrain)
	if d.test != nil {
		msg += fmt.Sprintf(" or below the test min_size = %d (best: %d)", d.minTest, bestTest)
	}
	return nil, nil, fmt.Errorf("%s; raise alpha, lower min_size, or raise max_redraws: %w", msg, ErrInvalid)
}

// collect gathers client j's pieces [cut[c·m+j-1], cut[c·m+j]) of every
// class segment into a sorted list.
func collect(seg [][]int, cut []int, size []int, m int) [][]int {
	out := make([][]int, m)
	for j := range out {
		out[j] = make([]int, 0, size[j])
	}
	for c, s := range seg {
		lo := 0
		for j, hi := range cut[c*m : (c+1)*m] {
			out[j] = append(out[j], s[lo:hi]...)
			lo = hi
		}
	}
	for j := range out {
		slices.Sort(out[j])
	}
	return out
}
