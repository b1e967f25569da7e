package attack

import (
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// The evaluator's side: the functions below take the truth, which no
// attack sees (Input has no place for it).

// LabelCounts returns the label histogram of the samples ex.Idx, with
// repetitions (a sample processed twice counts twice): the truth a
// recovered histogram is scored against when ex lists the samples a client
// processed.
func LabelCounts(ex trainer.Examples, classes int) ([]int, error) {
	c := make([]int, classes)
	for i, k := range ex.Idx {
		if k < 0 || k >= len(ex.Y) || int(ex.Y[k]) >= classes {
			return nil, fmt.Errorf("label counts: idx[%d] = %d has no label in [0, %d): %w", i, k, classes, fl.ErrInvalid)
		}
		c[ex.Y[k]]++
	}
	return c, nil
}

// Score is a recovered histogram's accuracy against the truth (Chen &
// Vikalo, §4.2 and App. B.4; the metrics of iLRG, Ma et al., ICLR 2023).
type Score struct {
	CAcc float64 `json:"cacc"` // class level: the share of classes whose presence is recovered
	IAcc float64 `json:"iacc"` // instance level: the share of samples whose label is recovered
}

// Evaluate scores the recovered counts est against the true counts:
//
//	cAcc = (1/N) Σ_j 1[(N̂_j > 0) = (N_j > 0)]
//	iAcc = Σ_j min(N̂_j, N_j) / Σ_j N_j
//
// (App. B.4, Eq. (91)–(92); Σ_j N_j = m·|B|). cAcc counts correctly
// recovered absences too, and iAcc is the size of the multiset
// intersection over the number of samples. Both are in [0, 1] and invariant
// under a common permutation of the classes. N = (3, 0, 1) and N̂ = (2, 1,
// 1) give iAcc 3/4 and cAcc 2/3. Counts of different lengths, negative
// counts or a truth without samples are fl.ErrInvalid.
func Evaluate(truth, est []int) (Score, error) {
	if len(truth) != len(est) || len(truth) == 0 {
		return Score{}, fmt.Errorf("evaluate: %d true and %d recovered classes: %w", len(truth), len(est), fl.ErrInvalid)
	}
	total, hit, agree := 0, 0, 0
	for j, n := range truth {
		e := est[j]
		if n < 0 || e < 0 {
			return Score{}, fmt.Errorf("evaluate: class %d has counts %d (true) and %d (recovered); want ≥ 0: %w", j, n, e, fl.ErrInvalid)
		}
		total += n
		hit += min(n, e)
		if (n > 0) == (e > 0) {
			agree++
		}
	}
	if total == 0 {
		return Score{}, fmt.Errorf("evaluate: the true histogram is empty: %w", fl.ErrInvalid)
	}
	return Score{CAcc: float64(agree) / float64(len(truth)), IAcc: float64(hit) / float64(total)}, nil
}
