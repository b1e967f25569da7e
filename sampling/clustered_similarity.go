package sampling

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/cluster"
	"github.com/flsweep/flsweep/fl"
)

// Distances between representative updates (Fraboni et al. 2021's
// get_similarity, as copied into the HiCS-FL code's clustering.py).
const (
	DistanceArccos = "arccos" // arccos(g_u·g_k / (‖g_u‖‖g_k‖)), 0 when a norm is 0 (the code's "cosine")
	DistanceL1     = "l1"     // Σ_i |g_u,i − g_k,i|
	DistanceL2     = "l2"     // Σ_i (g_u,i − g_k,i)², the squared Euclidean distance (the code's "L2" takes no root)
)

// ClusteredSimilarity is clustered sampling with similarity-based clusters: Fraboni,
// Vidal, Kameni & Lorenzi, "ClusteredSimilarity Sampling: Low-Variance and Improved
// Representativity for Clients Selection in Federated Learning", ICML 2021,
// Algorithm 2 (specs/hicsfl.md §2, "ClusteredSimilarity Sampling, CS"). Every client
// k has a representative update g_k = θ_k − θ, the whole-model update of
// the last round it trained in (0 before), kept in the sampler's
// per-client memory (fl.ObserveInput.Remember). Each round:
//
//  1. D[u][k] = distance(g_u, g_k) for every pair of clients (Distance);
//  2. Ward's hierarchical clustering on the rows of D (scipy's
//     linkage(D, "ward"), as the official code calls it: each client is
//     the vector of its distances to all clients);
//  3. Fraboni's Algorithm 2 on that tree (similarityUrns): m urns whose
//     client masses r_{j,k} add up to m·p_k over the urns;
//  4. one client drawn from each urn, with replacement across urns.
//
// ω_k = (1/m)·(number of urns that drew k), so E[ω_k] = Σ_j r_{j,k}/m = p_k:
// the scheme is unbiased, and the round's model is θ + Σ ω_k Δ_k, the
// code's (1/m)·Σ over the m draws. A client drawn twice trains once and
// counts twice (Draws = 2).
//
// Warm-up: Fraboni's code clusters from round 1 on (iter_FP = 0), when
// every g_k is 0 and every distance 0, so the first tree is the tie rule's
// (cluster.Ward); that is the default, Warmup = 0. The HiCS-FL code's CS
// baseline (server_cs.py) instead draws its first 10 rounds with
// replacement ∝ p_k (MD sampling, ω = count/m): Warmup = 10. Neither paper
// mentions a warm-up.
//
// Cost per round: N recalls of a model-sized vector, N(N−1)/2 distances over
// |θ| values, N(N−1)/2 over N values for Ward's rows, then Ward in O(N²).
type ClusteredSimilarity struct {
	M        int    `json:"m"`        // clients drawn per round (urns)
	Distance string `json:"distance"` // arccos (default), l1 or l2
	Warmup   int    `json:"warmup"`   // first rounds drawn with replacement ∝ p_k
}

var _ fl.Learner = ClusteredSimilarity{}

// NewClusteredSimilarity builds clustered sampling from {distance, warmup}; m is
// clients_per_round.
func NewClusteredSimilarity(m int, opts fl.Options) (fl.Planner, error) {
	c := ClusteredSimilarity{M: m, Distance: DistanceArccos}
	var o struct {
		Distance string `json:"distance"`
		Warmup   int    `json:"warmup"`
	}
	if err := opts.Decode("sampler (clustered-similarity)", &o); err != nil {
		return nil, err
	}
	if o.Distance != "" {
		c.Distance = o.Distance
	}
	c.Warmup = o.Warmup
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	if c.Distance != DistanceArccos && c.Distance != DistanceL1 && c.Distance != DistanceL2 {
		return nil, fmt.Errorf("sampler.distance = %q is unknown; use %q, %q or %q: %w", c.Distance, DistanceArccos, DistanceL1, DistanceL2, fl.ErrInvalid)
	}
	if c.Warmup < 0 {
		return nil, fmt.Errorf("sampler.warmup = %d; use 0 (no warm-up) or a number of rounds: %w", c.Warmup, fl.ErrInvalid)
	}
	return c, nil
}

// Init implements fl.Learner: the representative updates live in the
// per-client memory, so the server state holds nothing.
func (c ClusteredSimilarity) Init(pop fl.Population) (fl.State, error) {
	return fl.State{}, c.check(pop)
}

func (c ClusteredSimilarity) check(pop fl.Population) error {
	n := pop.N()
	if c.M < 1 || c.M > n {
		return fmt.Errorf("clients_per_round = %d must be in [1, %d] (the number of clients); lower it: %w", c.M, n, fl.ErrInvalid)
	}
	return checkUrnMass(pop.P, c.M)
}

// Plan implements fl.Planner.
func (c ClusteredSimilarity) Plan(in fl.PlanInput, r *rand.Rand) (fl.Plan, error) {
	if err := c.check(in.Pop); err != nil {
		return fl.Plan{}, err
	}
	if in.Round <= c.Warmup {
		sel, err := MD{M: c.M}.Sample(in.Round, in.Pop, r)
		return fl.Plan{Selection: &sel}, err
	}
	n := in.Pop.N()
	g := make([][]float32, n)
	for k := range n {
		v, err := in.Recall(k)
		if err != nil {
			return fl.Plan{}, err
		}
		g[k] = v
	}
	d, err := UpdateDistances(g, c.Distance)
	if err != nil {
		return fl.Plan{}, err
	}
	tree, err := cluster.Ward(d)
	if err != nil {
		return fl.Plan{}, fmt.Errorf("clustered sampling: %w", err)
	}
	sel, err := similaritySample(tree, in.Pop.P, c.M, r)
	if err != nil {
		return fl.Plan{}, err
	}
	return fl.Plan{Selection: &sel}, nil
}

// Observe implements fl.Learner: each trained client's update becomes its
// representative update.
func (c ClusteredSimilarity) Observe(in fl.ObserveInput) (fl.State, error) {
	for _, k := range in.Selection.Clients {
		d, err := in.Delta(k)
		if err != nil {
			return fl.State{}, err
		}
		in.Remember(k, d)
	}
	return fl.State{}, nil
}

// UpdateDistances returns the N×N matrix of distances between the vectors
// (nil: a zero vector of the others' length), each a float64 sum in
// coordinate order, the rows shared among the cores (pairwise): DistanceArccos clamps the cosine to [−1, 1] and gives 0
// when either norm is 0 (and on the diagonal), as the code does.
func UpdateDistances(g [][]float32, distance string) ([][]float64, error) {
	n := len(g)
	dim := 0
	for _, v := range g {
		if v != nil {
			dim = len(v)
			break
		}
	}
	for k, v := range g {
		if v != nil && len(v) != dim {
			return nil, fmt.Errorf("client %d's remembered update has %d values, another's %d (written for another model?): %w", k, len(v), dim, fl.ErrInvalid)
		}
	}
	d := squareMatrix(n)
	switch distance {
	case DistanceArccos:
		norm := make([]float64, n)
		for k, v := range g {
			norm[k] = math.Sqrt(dot32(v, v))
		}
		pairwise(d, dim, func(u, k int) float64 {
			if norm[u] > 0 && norm[k] > 0 {
				return arccos(dot32(g[u], g[k]) / (norm[u] * norm[k]))
			}
			return 0
		})
	case DistanceL1, DistanceL2:
		pairwise(d, dim, func(u, k int) float64 { return minkowski32(g[u], g[k], dim, distance == DistanceL2) })
	default:
		return nil, fmt.Errorf("distance %q is unknown; use %q, %q or %q: %w", distance, DistanceArccos, DistanceL1, DistanceL2, fl.ErrInvalid)
	}
	return d, nil
}

// squareMatrix returns n rows of n zeros over one backing array.
func squareMatrix(n int) [][]float64 {
	flat := make([]float64, n*n)
	d := make([][]float64, n)
	for i := range d {
		d[i] = flat[i*n : (i+1)*n : (i+1)*n]
	}
	return d
}

// arccos returns arccos(c) with c clamped to [−1, 1], so that rounding never
// gives NaN (specs/hicsfl.md §1.14, pitfall 12).
func arccos(c float64) float64 { return math.Acos(max(-1, min(1, c))) }

func dot32(a, b []float32) float64 {
	if a == nil || b == nil {
		return 0
	}
	s := 0.0
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}

// minkowski32 is Σ|a−b| or Σ(a−b)² over dim coordinates, nil meaning 0.
func minkowski32(a, b []float32, dim int, squared bool) float64 {
	s := 0.0
	for i := range dim {
		var x, y float64
		if a != nil {
			x = float64(a[i])
		}
		if b != nil {
			y = float64(b[i])
		}
		if squared {
			s += (x - y) * (x - y)
		} else {
			s += math.Abs(x - y)
		}
	}
	return s
}

// urnTolerance is the slack in "a cluster's mass is at most 1/m" and "an
// urn is full": the code works in integers of 1e-10 (ε = 10^10), so sums
// that differ from 1/m by rounding count as equal there too.
const urnTolerance = 1e-9

// checkUrnMass checks that every client fits in one urn: p_k ≤ 1/m. Beyond
// it no cut of the tree can make clusters of mass ≤ 1/m, and Algorithm 2
// cannot be unbiased.
func checkUrnMass(p []float64, m int) error {
	for k, pk := range p {
		if pk*float64(m) > 1+urnTolerance {
			return fmt.Errorf("client %d has importance p_k = %v > 1/clients_per_round = 1/%d; clustered sampling puts each client in an urn of mass 1/m, so lower clients_per_round or use importance: uniform: %w", k, pk, m, fl.ErrInvalid)
		}
	}
	return nil
}

// urn is one of Algorithm 2's distributions: clients with their masses.
type urn struct {
	clients []int
	mass    []float64
	fill    float64
}

func (u *urn) add(k int, v float64) {
	u.clients = append(u.clients, k)
	u.mass = append(u.mass, v)
	u.fill += v
}

// similarityUrns is Fraboni et al. 2021's Algorithm 2 on the merge tree of
// the clients (get_clusters_with_alg2 in their code):
//
//  1. the height of each merge becomes the importance mass Σ p_k of the
//     cluster it forms, and the tree is cut where that mass exceeds 1/m
//     (fcluster(Z, ε/m, "distance") with ε = 10^10), so every flat cluster
//     has mass ≤ 1/m;
//  2. the m heaviest flat clusters become the m urns, lightest first (equal
//     masses: the cluster with the lower first client first), each client
//     with mass r = m·p_k;
//  3. the other clusters, lightest first, each with its clients shuffled
//     (r's permutation), are poured into the urns in order: a client fills
//     the current urn up to 1 and the rest of its mass goes to the next.
//
// Every urn then holds mass 1 and Σ_j r_{j,k} = m·p_k. labels are the flat
// clusters of step 1.
func similarityUrns(tree []cluster.Merge, p []float64, m int, r *rand.Rand) ([]urn, []int, error) {
	n := len(p)
	if len(tree) != n-1 {
		return nil, nil, fmt.Errorf("clustered sampling: a tree of %d merges for %d clients: %w", len(tree), n, fl.ErrInvalid)
	}
	if err := checkUrnMass(p, m); err != nil {
		return nil, nil, err
	}
	mass := make([]float64, 2*n-1)
	copy(mass, p)
	byMass := slices.Clone(tree)
	for i, mg := range tree {
		mass[n+i] = mass[mg.A] + mass[mg.B]
		byMass[i].Height = mass[n+i] * float64(m)
	}
	labels, err := cluster.CutHeight(byMass, 1+urnTolerance)
	if err != nil {
		return nil, nil, err
	}
	groups := cluster.Clusters(labels)
	if len(groups) < m {
		return nil, nil, fmt.Errorf("clustered sampling: %d clusters of mass ≤ 1/%d; need %d: %w", len(groups), m, m, fl.ErrInvalid)
	}
	gm := make([]float64, len(groups))
	order := make([]int, len(groups))
	for g, members := range groups {
		order[g] = g
		for _, k := range members {
			gm[g] += p[k]
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(gm[a], gm[b]) })
	fm := float64(m)
	urns := make([]urn, m)
	kept := order[len(order)-m:]
	for j, g := range kept {
		for _, k := range groups[g] {
			urns[j].add(k, fm*p[k])
		}
	}
	j := 0
	for _, g := range order[:len(order)-m] {
		members := slices.Clone(groups[g])
		r.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
		for _, k := range members {
			left := fm * p[k]
			for left > 0 {
				if j == m-1 || urns[j].fill < 1-urnTolerance {
					u := left
					if j < m-1 {
						u = min(left, 1-urns[j].fill)
					}
					urns[j].add(k, u)
					left -= u
				}
				if j < m-1 && urns[j].fill >= 1-urnTolerance {
					j++
				}
			}
		}
	}
	return urns, labels, nil
}

// similaritySample draws one client from each of Algorithm 2's urns (a
// categorical draw over the urn's masses, normalised by its total) and
// returns them with ω_k = count_k/m.
func similaritySample(tree []cluster.Merge, p []float64, m int, r *rand.Rand) (fl.Selection, error) {
	urns, labels, err := similarityUrns(tree, p, m, r)
	if err != nil {
		return fl.Selection{}, err
	}
	count := map[int]int{}
	for _, u := range urns {
		count[u.clients[categorical(u.mass, r)]]++
	}
	var sel fl.Selection
	for _, k := range slices.Sorted(maps.Keys(count)) {
		sel.Clients = append(sel.Clients, k)
		sel.Weights = append(sel.Weights, float64(count[k])/float64(m))
		sel.Draws = append(sel.Draws, count[k])
		sel.Cluster = append(sel.Cluster, labels[k])
	}
	return sel, nil
}

// categorical draws index i with probability w_i / Σ w (w ≥ 0, Σ w > 0),
// summing in index order; zero weights are never drawn.
func categorical(w []float64, r *rand.Rand) int {
	total := 0.0
	for _, v := range w {
		total += v
	}
	u := r.Float64() * total
	pick, acc := -1, 0.0
	for i, v := range w {
		if v <= 0 {
			continue
		}
		acc += v
		pick = i
		if u < acc {
			break
		}
	}
	return pick
}
