package sampling

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// Clustered is clustered sampling with clusters built from the importances
// (Fraboni, Vidal, Kameni, Lorenzi, "Clustered Sampling: Low-Variance and
// Improved Representativity for Clients Selection in Federated Learning",
// ICML 2021, Algorithm 1; analysed in Fraboni et al. 2022, App. A.7 and B.6).
// ClustersAlg1 splits the importance mass m·p into m distributions r_k with
// Σ_i r_{k,i} = 1 and Σ_k r_{k,i} = m p_i (eq. 54); each round draws one
// client l_k ~ r_k from every cluster, independently, and weights
//
//	ω_i = (1/m) Σ_{k=1..m} 1(l_k = i)   (eq. 55, whose Σ_{k=1..K} is a typo for m)
//
// so Σ ω = 1 and E[ω_i] = p_i. A client drawn from several clusters trains
// once and counts once per draw, as in MD (which is the case r_{k,i} = p_i).
// Cov[ω_i, ω_j] = −(1/m²) Σ_k r_{k,i} r_{k,j} is not of the form −α p_i p_j:
// Assumption 1 fails, so Closed reports the effective α of eq. 22.
//
// The clusters depend on p only, so they are the same in every round; they
// are rebuilt from pop.P on each call (O(n log n + m)), which keeps the
// sampler a pure function of its arguments. Selection.Cluster gives each
// selected client the first cluster it was drawn from.
//
// Similarity-based clustering (the ICML paper's Algorithm 2) is another
// sampler, clustered-similarity.
type Clustered struct {
	M int `json:"m"` // clusters, one draw each, per round; 1 <= M <= n
}

var _ fl.Sampler = Clustered{}

// NewClustered builds the sampler from its spec options (none).
func NewClustered(m int, opts fl.Options) (fl.Sampler, error) {
	if err := opts.Decode("sampler (clustered)", &struct{}{}); err != nil {
		return nil, err
	}
	if m < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", m, fl.ErrInvalid)
	}
	return Clustered{M: m}, nil
}

// ClusterRow is one of Algorithm 1's distributions r_k, sparse: client
// Clients[j] is drawn with probability R[j]. Clients ascend and Σ R = 1.
type ClusterRow struct {
	Clients []int
	R       []float64
}

// alg1Scale is the integer resolution of Algorithm 1's masses, ε = 10^10 in
// the authors' code.
const alg1Scale = 10_000_000_000

// ClustersAlg1 returns the m clusters of Algorithm 1 (Fraboni et al. ICML
// 2021) for importances p, exactly as the authors' code computes them
// (Labs-Federated-Learning, branch impact_client_sampling,
// FL/sampling.py get_clusters_with_alg1; specs/sampling-theory.md §2 "(Cl)"):
//
//  1. client i gets the integer mass int(p_i·m·ε), ε = 10^10 (truncated, as
//     numpy's astype(int));
//  2. clients are taken by decreasing mass; equal masses in decreasing
//     client order (np.flip(np.argsort(·)) of a stable sort);
//  3. each client's mass fills the current cluster up to ε, spilling into
//     the next ones, so a client can be split across consecutive clusters,
//     and one with m·p_i ≥ 1 fills whole clusters (it is always drawn);
//  4. each row is divided by its sum (this only absorbs the truncation).
//
// numpy's default argsort is not stable beyond 16 elements, so with ties
// among more than 16 clients the authors' code may order the tied clients
// differently; any order gives valid clusters, and this one is
// reproducible. It returns an error wrapping fl.ErrInvalid if m is not in
// [1, n], an importance is negative or not finite, or the masses do not fill
// exactly m clusters (p does not sum to 1).
func ClustersAlg1(p []float64, m int) ([]ClusterRow, error) {
	n := len(p)
	if err := checkBudget(m, n); err != nil {
		return nil, err
	}
	mass := make([]int64, n)
	for i, pi := range p {
		if !(pi >= 0) || math.IsInf(pi, 0) {
			return nil, fmt.Errorf("clustered: importance p_%d = %v; importances must be finite and >= 0: %w", i, pi, fl.ErrInvalid)
		}
		mass[i] = int64(pi * float64(m) * alg1Scale) // the code's w * n_sampled * epsilon, left to right
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Or(cmp.Compare(mass[b], mass[a]), cmp.Compare(b, a)) })
	rows := make([]ClusterRow, m)
	fill := make([]int64, m)
	masses := make([][]int64, m)
	k := 0
	for _, i := range order {
		for left := mass[i]; left > 0; {
			if k == m {
				return nil, fmt.Errorf("clustered: the importances sum to more than 1 (mass %d left of client %d after %d full clusters); normalise them: %w", left, i, m, fl.ErrInvalid)
			}
			u := min(alg1Scale-fill[k], left)
			rows[k].Clients = append(rows[k].Clients, i)
			masses[k] = append(masses[k], u)
			fill[k] += u
			left -= u
			if fill[k] == alg1Scale {
				k++
			}
		}
	}
	for k := range rows {
		if fill[k] == 0 {
			return nil, fmt.Errorf("clustered: cluster %d of %d is empty; the importances sum to less than 1, normalise them: %w", k, m, fl.ErrInvalid)
		}
		// Clients were appended in decreasing mass; store them ascending.
		idx := make([]int, len(rows[k].Clients))
		for j := range idx {
			idx[j] = j
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(rows[k].Clients[a], rows[k].Clients[b]) })
		cl, r := make([]int, len(idx)), make([]float64, len(idx))
		for j, x := range idx {
			cl[j], r[j] = rows[k].Clients[x], float64(masses[k][x])/float64(fill[k])
		}
		rows[k] = ClusterRow{Clients: cl, R: r}
	}
	return rows, nil
}

// Sample implements fl.Sampler: one Float64 from r per cluster, in cluster
// order.
func (c Clustered) Sample(t int, pop fl.Population, r *rand.Rand) (fl.Selection, error) {
	rows, err := ClustersAlg1(pop.P, c.M)
	if err != nil {
		return fl.Selection{}, err
	}
	counts := make(map[int]int, c.M)
	first := make(map[int]int, c.M)
	for k, row := range rows {
		i := row.draw(r.Float64())
		if counts[i] == 0 {
			first[i] = k
		}
		counts[i]++
	}
	var sel fl.Selection
	for k := 0; k < pop.N(); k++ {
		if n := counts[k]; n > 0 {
			sel.Clients = append(sel.Clients, k)
			sel.Weights = append(sel.Weights, float64(n)/float64(c.M))
			sel.Draws = append(sel.Draws, n)
			sel.Cluster = append(sel.Cluster, first[k])
		}
	}
	return sel, nil
}

// draw returns the client whose cumulative probability first exceeds u in
// [0, 1); the last client with a positive probability absorbs rounding.
func (row ClusterRow) draw(u float64) int {
	acc, last := 0.0, -1
	for j, q := range row.R {
		if q <= 0 {
			continue
		}
		acc += q
		last = row.Clients[j]
		if u < acc {
			return last
		}
	}
	return last
}

// Closed implements ClosedForm (App. A.7, eqs. 59–61):
//
//	Var[ω_i] = p_i/m − (1/m²) Σ_k r_{k,i}²,   Σ = 1/m − (1/m²) Σ_{k,i} r_{k,i}²,   VarSum = 0,
//	E[N] = Σ_i [1 − Π_k (1 − r_{k,i})].
//
// Assumption 1 fails, so Alpha is the effective α = (Σ − VarSum)/(1 − Sp2)
// of eq. 22 and Gamma = Σ + α·Sp2 the γ it gives; Effective is set.
// Corollary 2 bounds clustered sampling with MD's α = 1/m instead. Var[N]
// comes from the probabilities that two clients are both missed,
// Π_k (1 − r_{k,i} − r_{k,j}), which differ from the product of the single
// ones only for clients that share a cluster.
func (c Clustered) Closed(p []float64) (Characteristics, error) {
	rows, err := ClustersAlg1(p, c.M)
	if err != nil {
		return Characteristics{}, err
	}
	n, fm := len(p), float64(c.M)
	ch := Characteristics{Mean: append([]float64(nil), p...), Var: make([]float64, n), Effective: true}
	sq := make([]float64, n)   // Σ_k r_{k,i}²
	miss := make([]float64, n) // P(i ∉ S) = Π_k (1 − r_{k,i})
	for i := range miss {
		miss[i] = 1
	}
	for _, row := range rows {
		for j, i := range row.Clients {
			sq[i] += row.R[j] * row.R[j]
			miss[i] *= 1 - row.R[j]
		}
	}
	for i, pi := range p {
		ch.Var[i] = pi/fm - sq[i]/(fm*fm)
		ch.Sigma += ch.Var[i]
		ch.MeanN += 1 - miss[i]
		ch.VarN += miss[i] - miss[i]*miss[i]
	}
	// Cov[1(i∉S), 1(j∉S)] for the pairs that share a cluster, in order.
	var shared [][2]int
	for _, row := range rows {
		for a, i := range row.Clients {
			for _, j := range row.Clients[a+1:] {
				shared = append(shared, [2]int{i, j})
			}
		}
	}
	slices.SortFunc(shared, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, pr := range slices.Compact(shared) {
		both := 1.0
		for _, row := range rows {
			both *= 1 - row.prob(pr[0]) - row.prob(pr[1])
		}
		ch.VarN += 2 * (math.Max(both, 0) - miss[pr[0]]*miss[pr[1]])
	}
	sp2 := SumSquares(p)
	ch.Alpha = ch.Sigma / (1 - sp2) // VarSum = 0
	ch.Gamma = ch.Sigma + ch.Alpha*sp2
	return ch, nil
}

// prob returns r_{k,i}.
func (row ClusterRow) prob(i int) float64 {
	if j, ok := slices.BinarySearch(row.Clients, i); ok {
		return row.R[j]
	}
	return 0
}
