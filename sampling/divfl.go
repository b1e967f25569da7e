package sampling

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/cluster"
	"github.com/flsweep/flsweep/fl"
)

// DivFL selects a diverse set of clients whose gradients represent every
// client's (Balakrishnan, Li, Zhou, Himayat, Smith, Bilmes, "Diverse Client
// Selection for Federated Learning via Submodular Maximization", ICLR 2022,
// openreview nwKXyFvaUm, §3 and Algorithm 1; specs/hicsfl.md §2). The server
// picks S, |S| = m, to maximise the facility-location function
//
//	G(S) = Σ_i p_i max_{k∈S} (c − ‖g_i − g_k‖),
//
// that is, to minimise Σ_i p_i min_{k∈S} ‖g_i − g_k‖, the bound on
// ‖Σ_i p_i g_i − Σ_{k∈S} ω_k g_k‖ when each client i is represented by its
// nearest selected client σ(i) and ω_k = Σ_{i: σ(i)=k} p_i. The paper sums
// over clients with equal weight (its objective averages the clients); with
// importance: uniform the two are the same (G/N, γ_k/N); with importance:
// size this is the paper's derivation applied to Σ_k p_k F_k.
//
// Each round, in the paper's "ideal" setting:
//
//  1. every client is asked for its full gradient g_k = ∇F_k(θ^t) on its
//     whole training set (a query of all n clients: n model downloads, n
//     gradient passes, n model-sized uploads);
//  2. the server computes the n×n Euclidean distances over the whole model
//     (O(n²|θ|), the n gradients held in memory: 4·n·|θ| bytes);
//  3. stochastic greedy (Mirzasoleiman et al., AAAI 2015): m times, draw a
//     candidate set of size max(m, ⌊Subsample·n⌋) uniformly from the clients
//     not yet selected (all of them when fewer remain) and add the candidate
//     that lowers Σ_i p_i min_{k∈S} ‖g_i − g_k‖ most (equal costs: the lower
//     client). The candidate size is both official codes' (DivFL's
//     fedbase.stochastic_greedy and HiCS-FL's server_divfl.py, subsample
//     0.1). Greedy "exact" considers every remaining client (the DivFL
//     code's default lazy_greedy computes the same greedy);
//  4. the selected clients train; their updates are weighted by
//     Weights: "group" (the paper: ω_k = the p-mass of the clients k
//     represents, Σ_{k∈S} ω_k = 1), "uniform" (HiCS-FL's code, ω_k = 1/m) or
//     "size" (the DivFL code's aggregate: ω_k = n_k / Σ_{j∈S} n_j).
//
// Refresh "selected" is the DivFL code's setting instead (melodi-lab/divfl,
// flearn/trainers/fedavg.py, clientsel_algo submodular): in round 1 every
// client sends its gradient as above; in every later round the server
// selects from the gradients it remembers, each as of the last round its
// client was selected, and only the selected clients send theirs, at the
// round's θ^t (the code's solve_inner computes it before local training),
// which replace what it remembered. It asks m clients a round instead of n,
// at the price of stale gradients. The greedy, its stream and the weights
// are those of the ideal setting. (The code's trainer calls its lazy greedy,
// the same selection as greedy: exact.)
//
// Not offered: the HiCS-FL code's variant, where every client runs its full
// local training every round and the server selects round t's clients from
// the updates θ_k − θ of round t−1, needs a query that trains without
// aggregating (an "update" question).
type DivFL struct {
	M         int     `json:"m"`         // clients per round
	Greedy    string  `json:"greedy"`    // "stochastic" (default) or "exact"
	Subsample float64 `json:"subsample"` // stochastic greedy's candidate fraction, (0, 1]
	Weights   string  `json:"weights"`   // "group" (default), "uniform" or "size"
	// Refresh is whose gradients a round asks for: every client's ("", the
	// paper's ideal setting; "all" means the same) or, from round 2 on, the
	// selected clients' only ("selected", the DivFL code's).
	Refresh string `json:"refresh,omitempty"`
}

// DivFL's option values.
const (
	GreedyStochastic = "stochastic"
	GreedyExact      = "exact"
	WeightsGroup     = "group"
	WeightsUniform   = "uniform"
	WeightsSize      = "size"
	RefreshAll       = "all"
	RefreshSelected  = "selected"
)

var _ fl.Planner = DivFL{}

// NewDivFL builds DivFL from {greedy, subsample, weights}; m is
// clients_per_round.
func NewDivFL(m int, opts fl.Options) (fl.Planner, error) {
	d := DivFL{M: m, Greedy: GreedyStochastic, Subsample: 0.1, Weights: WeightsGroup}
	if err := opts.Decode("sampler (divfl)", &d); err != nil {
		return nil, err
	}
	d.M = m
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	if d.Greedy != GreedyStochastic && d.Greedy != GreedyExact {
		return nil, fmt.Errorf("sampler.greedy = %q; use %q or %q: %w", d.Greedy, GreedyStochastic, GreedyExact, fl.ErrInvalid)
	}
	if !(d.Subsample > 0 && d.Subsample <= 1) {
		return nil, fmt.Errorf("sampler.subsample = %v; it is a fraction of the clients in (0, 1]: %w", d.Subsample, fl.ErrInvalid)
	}
	if d.Weights != WeightsGroup && d.Weights != WeightsUniform && d.Weights != WeightsSize {
		return nil, fmt.Errorf("sampler.weights = %q; use %q, %q or %q: %w", d.Weights, WeightsGroup, WeightsUniform, WeightsSize, fl.ErrInvalid)
	}
	switch d.Refresh {
	case "", RefreshAll:
		// The default, left out of the resolved options so that the
		// points of earlier specs keep them.
		d.Refresh = ""
	case RefreshSelected:
		return DivFLSelected{d}, nil
	default:
		return nil, fmt.Errorf("sampler.refresh = %q; use %q (every client's gradient every round, the paper's) or %q (the selected clients' only, the DivFL code's): %w",
			d.Refresh, RefreshAll, RefreshSelected, fl.ErrInvalid)
	}
	return d, nil
}

// DivFLSelected is DivFL with Refresh "selected" (see DivFL): a Learner
// whose per-client memory holds each client's last gradient.
type DivFLSelected struct{ DivFL }

var _ fl.Learner = DivFLSelected{}

// Init implements fl.Learner: nothing is remembered before round 1.
func (d DivFLSelected) Init(fl.Population) (fl.State, error) { return fl.State{}, nil }

// Plan implements fl.Planner: in round 1 as DivFL; later, select from the
// remembered gradients and ask the selected clients for theirs, with the
// selection as the query's note; then, given the answers and the note,
// return that selection without reading the N remembered gradients again.
// Given answers without a note, it decides again (Plan is pure: the
// remembered gradients and the stream are those of the first call).
func (d DivFLSelected) Plan(in fl.PlanInput, r *rand.Rand) (fl.Plan, error) {
	if in.Round == 1 {
		return d.DivFL.Plan(in, r)
	}
	n := in.Pop.N()
	if d.M > n {
		return fl.Plan{}, fmt.Errorf("clients_per_round = %d exceeds the %d clients; lower it: %w", d.M, n, fl.ErrInvalid)
	}
	if len(in.Answers) > 0 && len(in.Note) > 0 {
		// The selection made before asking, handed back with the answers.
		var sel fl.Selection
		if err := json.Unmarshal(in.Note, &sel); err != nil {
			return fl.Plan{}, fmt.Errorf("divfl: round %d: the query's note is not a selection (%v): %w", in.Round, err, fl.ErrInvalid)
		}
		if err := answered(in, sel.Clients); err != nil {
			return fl.Plan{}, err
		}
		return fl.Plan{Selection: &sel}, nil
	}
	gs := make([][]float32, n)
	for k := range n {
		g, err := in.Recall(k)
		if err != nil {
			return fl.Plan{}, fmt.Errorf("divfl: remembered gradient of client %d: %w", k, err)
		}
		if len(g) == 0 || k > 0 && len(g) != len(gs[0]) {
			return fl.Plan{}, fmt.Errorf("divfl: round %d: client %d has a remembered gradient of %d values (every client's is remembered from round 1 on): %w", in.Round, k, len(g), fl.ErrInvalid)
		}
		gs[k] = g
	}
	dist := Distances(gs)
	sel := d.selection(dist, in.Pop, GreedyFacility(dist, n, in.Pop.P, d.M, d.candidates(n), r))
	if len(in.Answers) == 0 {
		note, err := json.Marshal(sel)
		if err != nil {
			return fl.Plan{}, fmt.Errorf("divfl: round %d: %w", in.Round, err)
		}
		return fl.Plan{Query: &fl.Query{Ask: fl.AskGradient, Clients: slices.Clone(sel.Clients), Note: note}}, nil
	}
	// Answers without the note (a query asked by a build that did not pass
	// notes): the selection is decided again, to the same clients.
	if err := answered(in, sel.Clients); err != nil {
		return fl.Plan{}, err
	}
	return fl.Plan{Selection: sel}, nil
}

// answered checks that the answers are the gradients of exactly the
// selected clients.
func answered(in fl.PlanInput, selected []int) error {
	asked := make([]int, 0, len(in.Answers))
	for _, a := range in.Answers {
		if a.Ask != fl.AskGradient {
			return fmt.Errorf("divfl: answer %+v is not a gradient: %w", a, fl.ErrInvalid)
		}
		asked = append(asked, a.Client)
	}
	if slices.Sort(asked); !slices.Equal(asked, selected) {
		return fmt.Errorf("divfl: round %d: answers of clients %v; it asked its selection %v: %w", in.Round, asked, selected, fl.ErrInvalid)
	}
	return nil
}

// Observe implements fl.Learner: remember every gradient the round's query
// answered (every client's in round 1, the selected clients' later).
func (d DivFLSelected) Observe(in fl.ObserveInput) (fl.State, error) {
	for _, a := range in.Answers {
		if a.Ask != fl.AskGradient {
			continue
		}
		g, err := in.Vector(a)
		if err != nil {
			return fl.State{}, fmt.Errorf("divfl: gradient of client %d: %w", a.Client, err)
		}
		in.Remember(a.Client, g)
	}
	return in.State, nil
}

// candidates returns the size of stochastic greedy's candidate sets among
// n clients (n for exact greedy).
func (d DivFL) candidates(n int) int {
	if d.Greedy == GreedyExact {
		return n
	}
	return max(d.M, int(math.Floor(d.Subsample*float64(n))))
}

// Plan implements fl.Planner: ask every client for its gradient, then
// select.
func (d DivFL) Plan(in fl.PlanInput, r *rand.Rand) (fl.Plan, error) {
	n := in.Pop.N()
	if d.M > n {
		return fl.Plan{}, fmt.Errorf("clients_per_round = %d exceeds the %d clients; lower it: %w", d.M, n, fl.ErrInvalid)
	}
	if len(in.Answers) == 0 {
		all := make([]int, n)
		for k := range all {
			all[k] = k
		}
		return fl.Plan{Query: &fl.Query{Ask: fl.AskGradient, Clients: all}}, nil
	}
	gs, err := gradients(in, n)
	if err != nil {
		return fl.Plan{}, err
	}
	dist := Distances(gs)
	s := GreedyFacility(dist, n, in.Pop.P, d.M, d.candidates(n), r)
	return fl.Plan{Selection: d.selection(dist, in.Pop, s)}, nil
}

// gradients reads every client's gradient answer, in client order.
func gradients(in fl.PlanInput, n int) ([][]float32, error) {
	if len(in.Answers) != n {
		return nil, fmt.Errorf("divfl: %d answers for %d clients; it asks every client once: %w", len(in.Answers), n, fl.ErrInvalid)
	}
	gs := make([][]float32, n)
	for _, a := range in.Answers {
		if a.Ask != fl.AskGradient || a.Client < 0 || a.Client >= n || gs[a.Client] != nil {
			return nil, fmt.Errorf("divfl: answer %+v is not one gradient per client: %w", a, fl.ErrInvalid)
		}
		g, err := in.Vector(a)
		if err != nil {
			return nil, fmt.Errorf("divfl: gradient of client %d: %w", a.Client, err)
		}
		if len(g) == 0 {
			return nil, fmt.Errorf("divfl: client %d's gradient is empty: %w", a.Client, fl.ErrInvalid)
		}
		gs[a.Client] = g
	}
	for k := 1; k < n; k++ {
		if len(gs[k]) != len(gs[0]) {
			return nil, fmt.Errorf("divfl: gradients of %d and %d values: %w", len(gs[0]), len(gs[k]), fl.ErrInvalid)
		}
	}
	return gs, nil
}

// selection orders the greedy's clients and weighs them.
func (d DivFL) selection(dist []float64, pop fl.Population, s []int) *fl.Selection {
	sel := &fl.Selection{Clients: slices.Sorted(slices.Values(s)), Weights: make([]float64, len(s)), Draws: make([]int, len(s))}
	switch d.Weights {
	case WeightsGroup:
		sel.Weights = GroupWeights(dist, pop.N(), pop.P, sel.Clients)
	case WeightsUniform:
		for i := range sel.Weights {
			sel.Weights[i] = 1 / float64(len(s))
		}
	case WeightsSize:
		total := 0
		for _, k := range sel.Clients {
			total += pop.Sizes[k]
		}
		for i, k := range sel.Clients {
			sel.Weights[i] = float64(pop.Sizes[k]) / float64(total)
		}
	}
	for i := range sel.Draws {
		sel.Draws[i] = 1
	}
	return sel
}

// Distances returns the n×n Euclidean distances ‖g_i − g_j‖ between the
// vectors gs (row-major, float64; exact zeros on the diagonal). Below
// divflGramFrom clients each is summed in float64 with four running sums
// (squaredDistance), n(n−1)/2 passes over two vectors shared among the
// cores (pairwise; the result does not depend on how): every DivFL run of
// the experiments and tests (at most 100 clients) computes these bits. From
// divflGramFrom clients on, cluster.Euclidean computes them, in the Gram
// form (the products from one Dgemm over packed blocks, close pairs summed
// directly; within about 10⁻¹⁴ relative of the direct sums,
// TestDistancesGramForm) unless most pairs are close: a DivFL selection
// over 1,000 gradients of 10,000 values took 1.53 s instead of 2.53 s
// (BenchmarkDivFL1000x10k, with other work on both cores).
func Distances(gs [][]float32) []float64 {
	n := len(gs)
	out := make([]float64, n*n)
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = out[i*n : (i+1)*n]
	}
	if n >= divflGramFrom {
		d := cluster.Euclidean(gs)
		for i := range n {
			for j := i + 1; j < n; j++ {
				rows[i][j] = d[cluster.Index(n, i, j)]
				rows[j][i] = rows[i][j]
			}
		}
		return out
	}
	work := 0
	if n > 0 {
		work = len(gs[0])
	}
	pairwise(rows, work, func(i, j int) float64 { return math.Sqrt(squaredDistance(gs[i], gs[j])) })
	return out
}

// divflGramFrom is the number of clients from which Distances hands the
// work to cluster.Euclidean.
const divflGramFrom = 256

// squaredDistance returns Σ (a_i − b_i)² in float64, four running sums.
func squaredDistance(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0 := float64(a[i]) - float64(b[i])
		d1 := float64(a[i+1]) - float64(b[i+1])
		d2 := float64(a[i+2]) - float64(b[i+2])
		d3 := float64(a[i+3]) - float64(b[i+3])
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := float64(a[i]) - float64(b[i])
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// FacilityCost returns Σ_i w_i min_{k∈S} dist_ik, DivFL's objective to
// minimise (the facility-location G(S) = Σ_i w_i (c − min_{k∈S} dist_ik)
// up to a constant). dist is n×n row-major.
func FacilityCost(dist []float64, n int, w []float64, s []int) float64 {
	total := 0.0
	for i := range n {
		best := math.Inf(1)
		for _, k := range s {
			best = min(best, dist[i*n+k])
		}
		total += w[i] * best
	}
	return total
}

// GreedyFacility picks m clients minimising FacilityCost by (stochastic)
// greedy: each step draws `sample` candidates uniformly without replacement
// from the clients not yet picked (a partial Fisher–Yates shuffle of them in
// ascending order; every remaining client, and no draw, when sample is at
// least their number) and adds the candidate with the lowest cost (equal
// costs: the lower client). Clients come back in the order picked. A step
// costs O(sample·n).
func GreedyFacility(dist []float64, n int, w []float64, m, sample int, r *rand.Rand) []int {
	near := make([]float64, n) // min_{k∈S} dist_ik
	for i := range near {
		near[i] = math.Inf(1)
	}
	rest := make([]int, n)
	for k := range rest {
		rest[k] = k
	}
	out := make([]int, 0, m)
	cand := make([]int, 0, n)
	for range m {
		cand = cand[:0]
		if sample >= len(rest) {
			cand = append(cand, rest...)
		} else {
			pool := slices.Clone(rest)
			for i := range sample {
				j := i + r.IntN(len(pool)-i)
				pool[i], pool[j] = pool[j], pool[i]
			}
			cand = append(cand, pool[:sample]...)
			slices.Sort(cand)
		}
		best, bestCost := -1, math.Inf(1)
		for _, c := range cand {
			cost := 0.0
			for i := range n {
				cost += w[i] * min(near[i], dist[i*n+c])
			}
			if best < 0 || cost < bestCost {
				best, bestCost = c, cost
			}
		}
		for i := range n {
			near[i] = min(near[i], dist[i*n+best])
		}
		out = append(out, best)
		rest = slices.DeleteFunc(rest, func(k int) bool { return k == best })
	}
	return out
}

// GroupWeights returns DivFL's aggregation weights for the selected clients
// s (ascending): ω_k = Σ_{i: σ(i)=k} p_i, where σ(i) is the selected client
// nearest to i (i itself when selected; equal distances: the lower client).
// With p_i = 1/N this is the paper's γ_k/N, γ_k the size of k's group.
func GroupWeights(dist []float64, n int, p []float64, s []int) []float64 {
	w := make([]float64, len(s))
	at := make(map[int]int, len(s))
	for j, k := range s {
		at[k] = j
	}
	for i := range n {
		if j, ok := at[i]; ok {
			w[j] += p[i]
			continue
		}
		best := 0
		for j, k := range s {
			if dist[i*n+k] < dist[i*n+s[best]] {
				best = j
			}
		}
		w[best] += p[i]
	}
	return w
}
