package sampling

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// PowD is the power-of-choice sampler (Cho, Wang & Joshi, "Towards
// Understanding Biased Client Selection in Federated Learning", AISTATS
// 2022, arXiv:2010.01243, Algorithm 1; specs/hicsfl.md §2):
//
//  1. draw a candidate set A of d distinct clients, without replacement,
//     with probabilities ∝ p_k (numpy's choice(replace=False, p=p): one
//     client at a time, renormalised over the clients not yet drawn);
//  2. ask each candidate for F_k(θ^t), the loss of the global model on its
//     full local training set (the query phase);
//  3. select the m candidates with the highest loss (equal losses: the lower
//     client ID first), aggregated with equal weights ω_k = 1/m (the paper's
//     θ^{t+1} = (1/m)·Σ_{k∈S} θ_k).
//
// The paper's "ideal" d is the number of clients; d defaults to 2m, the
// HiCS-FL code's choice. Extra cost per round: d downloads of θ^t and d
// loss evaluations; d scalars uploaded.
type PowD struct {
	M int `json:"m"` // clients per round
	D int `json:"d"` // candidates per round, m ≤ d ≤ n
}

var _ fl.Planner = PowD{}

// NewPowD builds pow-d from {d}; m is clients_per_round.
func NewPowD(m int, opts fl.Options) (fl.Planner, error) {
	var o struct {
		D int `json:"d"`
	}
	if err := opts.Decode("sampler (pow-d)", &o); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	if o.D == 0 {
		o.D = 2 * m
	}
	if o.D < m {
		return nil, fmt.Errorf("sampler.d = %d is below clients_per_round = %d; pow-d selects m of its d candidates, so d ≥ m: %w", o.D, m, fl.ErrInvalid)
	}
	return PowD{M: m, D: o.D}, nil
}

// Plan implements fl.Planner.
func (p PowD) Plan(in fl.PlanInput, r *rand.Rand) (fl.Plan, error) {
	n := in.Pop.N()
	if p.D > n {
		return fl.Plan{}, fmt.Errorf("sampler.d = %d exceeds the %d clients; lower it: %w", p.D, n, fl.ErrInvalid)
	}
	if len(in.Answers) == 0 {
		cands, err := weightedWithoutReplacement(in.Pop.P, p.D, r)
		if err != nil {
			return fl.Plan{}, err
		}
		slices.Sort(cands)
		return fl.Plan{Query: &fl.Query{Ask: fl.AskLoss, Clients: cands}}, nil
	}
	if len(in.Answers) != p.D || p.M > p.D {
		return fl.Plan{}, fmt.Errorf("pow-d: %d answers for %d candidates, %d to select: %w", len(in.Answers), p.D, p.M, fl.ErrInvalid)
	}
	asked := map[int]bool{}
	for _, a := range in.Answers {
		if a.Ask != fl.AskLoss || asked[a.Client] {
			return fl.Plan{}, fmt.Errorf("pow-d: answer %+v is not one loss per candidate: %w", a, fl.ErrInvalid)
		}
		asked[a.Client] = true
	}
	ranked := slices.Clone(in.Answers)
	slices.SortFunc(ranked, func(a, b fl.Answer) int {
		return cmp.Or(cmp.Compare(b.Loss, a.Loss), cmp.Compare(a.Client, b.Client))
	})
	sel := fl.Selection{Clients: make([]int, p.M), Weights: make([]float64, p.M), Draws: make([]int, p.M)}
	for i := range p.M {
		sel.Clients[i] = ranked[i].Client
	}
	slices.Sort(sel.Clients)
	for i := range sel.Clients {
		sel.Weights[i], sel.Draws[i] = 1/float64(p.M), 1
	}
	return fl.Plan{Selection: &sel}, nil
}

// weightedWithoutReplacement draws k distinct indices of w, one at a time,
// each with probability proportional to its weight among those not yet
// drawn. The total is summed afresh for every draw, in index order.
func weightedWithoutReplacement(w []float64, k int, r *rand.Rand) ([]int, error) {
	left := slices.Clone(w)
	out := make([]int, 0, k)
	for range k {
		total := 0.0
		for _, v := range left {
			total += v
		}
		if !(total > 0) {
			return nil, fmt.Errorf("only %d clients have a positive importance; cannot draw %d: %w", len(out), k, fl.ErrInvalid)
		}
		pick := categorical(left, r)
		out = append(out, pick)
		left[pick] = 0
	}
	return out, nil
}
