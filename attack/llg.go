package attack

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// Dummy inputs of LLG* (LLG.Dummy).
const (
	DummyZero = "zero" // all-zero inputs
	DummyOne  = "one"  // all-one inputs
)

// LLG is LLG+ (Wainakh, Ventola, Müßig, Keim, Cordero, Zimmer, Grube,
// Kersting & Mühlhäuser, "User-Level Label Leakage from Gradients in
// Federated Learning", PETS 2022, arXiv:2105.09369), and with Dummy set
// LLG*. With non-negative embeddings the row sums r_j = Σ_l ḡ_W[j][l] of
// the output weights' gradient are negative for the classes present, and
// each occurrence of a class adds about the same "impact" to its row:
//
//  1. r = row sums of ḡ_W = −ΔW/(η·m); h1 = {j : r_j < 0}.
//  2. For each class i the server computes the gradient of a batch of
//     known label i (LLG+: its auxiliary samples of class i; LLG*: a dummy
//     input of zeros or ones) and sets
//     impact = (1/N) Σ_i r_i(batch_i) · (1 + 1/N) / |B|,
//     offset_j = mean over i ≠ j of r_j(batch_i);  r ← r − offset.
//  3. Each class of h1 (most negative first, at most |B|) is predicted
//     once, r_j ← r_j − impact; then, while fewer than |B| predictions,
//     j* = argmin r is predicted and r_j* ← r_j* − impact.
//
// With m > 1 steps the statistics of step 2 are the mean of those at θ^t
// and θ^t + Δ, and the |B|-histogram is scaled to the T_k samples by
// largest remainders (×m when T_k = m·|B|), as in Chen & Vikalo's
// benchmark code (LLGp, estimate_static_LLG). The original averages 10
// repeats of random known-label batches; one batch of all the aux samples
// of a class (or one dummy, all its copies being equal) is their
// expectation. Like every baseline it reads the update as plain SGD's
// (ḡ = −Δ/(η·m)), with no correction for momentum, proximal terms or
// history.
type LLG struct {
	// Dummy selects LLG*'s dummy inputs for the known-label batches:
	// "" uses the auxiliary set (LLG+), DummyZero or DummyOne.
	Dummy string
}

// Name returns "llg+", "llg*-zero" or "llg*-one".
func (a LLG) Name() string {
	if a.Dummy == "" {
		return "llg+"
	}
	return "llg*-" + a.Dummy
}

// Recover implements Attack.
func (a LLG) Recover(ctx context.Context, tr *trainer.Trainer, in Input, _ *rand.Rand) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, err
	}
	if a.Dummy != "" && a.Dummy != DummyZero && a.Dummy != DummyOne {
		return Result{}, fmt.Errorf("llg: dummy %q is unknown; use \"\", %q or %q: %w", a.Dummy, DummyZero, DummyOne, fl.ErrInvalid)
	}
	n := in.Net.Classes()
	batches := a.knownBatches(in)
	impact, offset, err := knownLabelStats(ctx, tr, in.Net, in.Global, batches, in.Local.Batch)
	if err != nil {
		return Result{}, err
	}
	if in.Local.Steps > 1 {
		i1, o1, err := knownLabelStats(ctx, tr, in.Net, in.local(), batches, in.Local.Batch)
		if err != nil {
			return Result{}, err
		}
		impact = (impact + i1) / 2
		for j := range offset {
			offset[j] = (offset[j] + o1[j]) / 2
		}
	}
	gW, _ := in.naive()
	r := rowSums(gW)
	var h1 []int
	for j, v := range r {
		if v < 0 {
			h1 = append(h1, j)
		}
	}
	sort.SliceStable(h1, func(x, y int) bool { return r[h1[x]] < r[h1[y]] })
	for j := range r {
		r[j] -= offset[j]
	}
	k := in.Local.Batch
	pred := make([]float64, n)
	for i, j := range h1 {
		if i == k {
			break
		}
		pred[j]++
		r[j] -= impact
	}
	for done := min(len(h1), k); done < k; done++ {
		best := 0
		for j, v := range r {
			if v < r[best] {
				best = j
			}
		}
		pred[best]++
		r[best] -= impact
	}
	counts := LargestRemainder(pred, in.Local.Total())
	return Result{Method: a.Name(), Counts: histogram(counts, n, in.Local.Total()), Heuristic: in.Local.adam()}, nil
}

// knownBatches returns, per class i, the examples of a batch labelled i:
// the aux samples of class i, or one dummy input.
func (a LLG) knownBatches(in Input) []trainer.Examples {
	n, dim := in.Net.Classes(), in.Net.Dim()
	out := make([]trainer.Examples, n)
	if a.Dummy == "" {
		for i := range out {
			out[i] = in.Aux
			out[i].Idx = nil
		}
		for _, k := range in.Aux.Idx {
			y := in.Aux.Y[k]
			out[y].Idx = append(out[y].Idx, k)
		}
		return out
	}
	v := float32(0)
	if a.Dummy == DummyOne {
		v = 1
	}
	x := make([]float32, n*dim)
	for i := range x {
		x[i] = v
	}
	y := make([]uint8, n)
	for i := range y {
		y[i] = uint8(i)
	}
	for i := range out {
		out[i] = trainer.Examples{X: x, Y: y, Dim: dim, Idx: []int{i}}
	}
	return out
}

// knownLabelStats returns LLG's impact and offsets at the model w from the
// gradients of the known-label batches (step 2 of LLG).
func knownLabelStats(ctx context.Context, tr *trainer.Trainer, net *trainer.Net, w []float32, batches []trainer.Examples, k int) (float64, []float64, error) {
	n := net.Classes()
	wp, _ := net.Output()
	l := net.Embedding()
	g := make([]float32, net.NumParams())
	impact := 0.0
	offset := make([]float64, n)
	for i, b := range batches {
		if _, err := tr.Gradient(ctx, net, w, b, len(b.Idx), g); err != nil {
			return 0, nil, fmt.Errorf("llg: %w", err)
		}
		for j := range n {
			s := 0.0
			for _, v := range g[wp.Offset+j*l : wp.Offset+(j+1)*l] {
				s += float64(v)
			}
			if j == i {
				impact += s
			} else {
				offset[j] += s / float64(n-1)
			}
		}
	}
	impact = impact / float64(n) * (1 + 1/float64(n)) / float64(k)
	return impact, offset, nil
}

// rowSums returns Σ_l M[j][l] for every row j.
func rowSums(M [][]float64) []float64 {
	r := make([]float64, len(M))
	for j, row := range M {
		for _, v := range row {
			r[j] += v
		}
	}
	return r
}
