package attack

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/flsweep/flsweep/trainer"
)

// IDLG is iDLG's label rule (Zhao, Mopuri & Bilen, "iDLG: Improved Deep
// Leakage from Gradients", arXiv:2001.02610, 2020) for a client that
// processed one sample. Its bias gradient s − onehot(y) is negative only
// at the label, so
//
//	ŷ = argmin_j ḡ_b,j,   ḡ = −Δ/(η·m)
//
// (the paper reads the sign of the weight rows, which needs non-negative
// embeddings; the bias form holds for any activation). A client that
// processed more than one sample is ErrNotApplicable.
type IDLG struct{}

// Name returns "idlg".
func (IDLG) Name() string { return "idlg" }

// Recover implements Attack.
func (a IDLG) Recover(_ context.Context, _ *trainer.Trainer, in Input, _ *rand.Rand) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, err
	}
	if t := in.Local.Total(); t != 1 {
		return Result{}, fmt.Errorf("idlg: the client processed %d samples; iDLG recovers the label of one: %w", t, ErrNotApplicable)
	}
	_, gb := in.naive()
	best := 0
	for j, v := range gb {
		if v < gb[best] {
			best = j
		}
	}
	counts := make([]int, len(gb))
	counts[best] = 1
	return Result{Method: a.Name(), Counts: counts, Heuristic: in.Local.adam()}, nil
}
