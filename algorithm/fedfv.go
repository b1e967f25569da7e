package algorithm

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/flsweep/flsweep/fl"
)

// FedFV is federated fair averaging (Wang, Fan, Qi, Wen, Wang & Yu,
// "Federated Learning with Fair Averaging", IJCAI 2021, arXiv:2104.14937,
// Algorithm 1), with the authors' official code (easyFL) where the paper
// leaves a detail open. Clients run FedAvg's local SGD; the server reads
// each selected client's pseudo-gradient g_i = θ^t − θ_i = −Δ_i and its
// loss F_i(θ^t) on its training set before training
// (fl.ClientSummary.LossBefore, which the engine measures for a
// LossUser), and steps
//
//	θ^{t+1} = θ^t − g
//
// with g built in four steps:
//
//  1. Internal conflicts. Sort the m selected clients by F_i(θ^t),
//     ascending. The clients from position ⌈(m−1)(1−α)⌉ on (the highest
//     losses; none when α = 0, all when α = 1) keep g_i' = g_i. Every other
//     g_i' starts at g_i and is projected, against each original g_j in
//     ascending-loss order (j ≠ i), whenever they conflict:
//
//     g_i' ← g_i' − (g_j·g_i' / ‖g_j‖²)·g_j   if g_j·g_i' < 0
//
//  2. g = (1/m) Σ_i g_i'.
//
//  3. External conflicts. The server remembers each client's last g_i and
//     the round it came from. For each round s of the window below, oldest
//     first, the remembered g_c of the clients last seen in round s that
//     conflict with the current g (g·g_c < 0) are summed into g_con, and if
//     g·g_con < 0 then g ← g − (g·g_con / ‖g_con‖²)·g_con.
//
//  4. Rescale to the length of the plain mean: g ← g·‖(1/m) Σ_i g_i‖ / ‖g‖.
//
// The window of round t has τ rounds. External "previous" (the default)
// reads rounds t−τ … t−1, the clients seen before this round: the code
// released with the paper (easyFL, May 2021) loops k = τ … 1 over round
// t − k. External "current" reads rounds t−τ+1 … t: easyFL since August
// 2021 and FLGo loop k = τ−1 … 0, and because the server records this
// round's g_i before the projection, the k = 0 term projects g against
// this round's own conflicting (unprojected) g_i. The rewrite of the loop
// looks like an off-by-one, not a stated change. Either way the step runs
// only once the window's oldest round exists (the codes' gate t ≥ τ, in
// their round numbering), and a client selected this round counts in
// round t only.
//
// Departures, all deliberate:
//   - The number of clients kept is the code's m − ⌈(m−1)(1−α)⌉, which is
//     ⌈αm⌉ (the code's comment says "the αm largest losses") for most m
//     and α but not all (m = 3, α = 0.4 keeps 1 client, not 2).
//   - Equal losses are ordered by client ID (easyFL's stable sort keeps
//     the order in which the clients were sampled).
//   - The point's rule and the sampler's weights ω_k are not used: the
//     papers' plain mean over the distinct selected clients, with no server
//     learning rate. With replacement (md) a client drawn twice counts
//     once; easyFL would count it twice.
//   - Dot products and norms are float64, summed in index order, over
//     float32 vectors; easyFL's are float32 torch reductions.
//   - If g is 0 after the projections, θ does not move (easyFL divides by
//     ‖g‖ = 0 and gets NaN).
//
// Memory: the server state keeps the remembered g_c of the clients that a
// later round's window can still read, up to τ·m model-sized vectors
// ((τ−1)·m with "current"), each under its own name ("g/<c>"). They are
// server memory (its clients are not sent them): the engine keeps each in
// its own file from the round the client trained, so a round writes its m
// new updates and reads the window's; only aggregation reads them.
//
// The internal projections cost m² model-length dot products; from 32
// selected clients they run in the Gram form (projectedGram).
type FedFV struct {
	Base
	Alpha    float64 `json:"alpha"`
	Tau      int     `json:"tau"`
	External string  `json:"external"`
}

// FedFV's windows for the external conflicts.
const (
	ExternalPrevious = "previous" // rounds t−τ … t−1: the code released with the paper
	ExternalCurrent  = "current"  // rounds t−τ+1 … t: easyFL since August 2021 and FLGo
)

var (
	_ Algorithm = FedFV{}
	_ LossUser  = FedFV{}
)

// NewFedFV builds FedFV from {alpha, tau, external}. α = 0.1 and τ = 10 are
// the FedEBA+ paper's picks (its Tables 8 and 19; its grid is α ∈ {0.1,
// 0.2, 0.5}, τ ∈ {0, 1, 10}); easyFL's defaults are α = 0.1, τ = 1.
func NewFedFV(opts fl.Options) (Algorithm, error) {
	a := FedFV{Alpha: 0.1, Tau: 10, External: ExternalPrevious}
	if err := opts.Decode("algorithm (fedfv)", &a); err != nil {
		return nil, err
	}
	if !(a.Alpha >= 0 && a.Alpha <= 1) {
		return nil, fmt.Errorf("algorithm.alpha = %v; α is the fraction of clients whose update is never projected, in [0, 1] (0.1 in the papers): %w", a.Alpha, fl.ErrInvalid)
	}
	if a.Tau < 0 {
		return nil, fmt.Errorf("algorithm.tau = %d; τ counts the past rounds the external projection reads: use 0 (none) or more: %w", a.Tau, fl.ErrInvalid)
	}
	if a.External != ExternalPrevious && a.External != ExternalCurrent {
		return nil, fmt.Errorf("algorithm.external = %q is unknown; use %s (rounds t−τ … t−1, the code released with the paper) or %s (rounds t−τ+1 … t, FLGo): %w", a.External, ExternalPrevious, ExternalCurrent, fl.ErrInvalid)
	}
	return a, nil
}

// UsesLosses implements LossUser: the server sorts by F_i(θ^t).
func (FedFV) UsesLosses() (before, after bool) { return true, false }

// window returns the rounds from … to whose remembered updates round t's
// external step reads, and whether the step runs.
func (a FedFV) window(t int) (from, to int, ok bool) {
	to = t - 1
	if a.External == ExternalCurrent {
		to = t
	}
	from = to - a.Tau + 1
	return from, to, a.Tau > 0 && from >= 1
}

// fedfvMeta is FedFV's server metadata: the round each remembered update
// g_c (vector "g/<c>") is from.
type fedfvMeta struct {
	Seen map[int]int `json:"seen,omitempty"`
}

const fedfvPrefix = "g/"

// fedfvUpdate is a client's remembered pseudo-gradient.
type fedfvUpdate struct {
	client, round int
	g             []float32
}

// Begin implements Algorithm.
func (a FedFV) Begin(r Server) (Aggregation, error) {
	n := len(r.Global)
	loss, err := lossesBefore("fedfv", r)
	if err != nil {
		return nil, err
	}
	var m fedfvMeta
	if err := r.State.DecodeMeta(&m); err != nil {
		return nil, err
	}
	if len(m.Seen) != len(r.State.Vectors) {
		return nil, fmt.Errorf("fedfv state: %d remembered rounds for %d vectors (was it written by another method?): %w", len(m.Seen), len(r.State.Vectors), fl.ErrInvalid)
	}
	past := make([]fedfvUpdate, 0, len(m.Seen))
	for c, s := range m.Seen {
		g, err := r.State.Vector(fedfvPrefix+strconv.Itoa(c), n)
		if err != nil {
			return nil, err
		}
		past = append(past, fedfvUpdate{client: c, round: s, g: g})
	}
	slices.SortFunc(past, func(x, y fedfvUpdate) int { return cmp.Compare(x.client, y.client) })
	return &fedfvAgg{a: a, round: r.Round, global: r.Global, clients: r.Selection.Clients, loss: loss, past: past}, nil
}

type fedfvAgg struct {
	a       FedFV
	round   int
	global  []float32
	clients []int     // the selected clients, ascending
	loss    []float64 // F_i(θ^t), in clients order
	g       [][]float32
	past    []fedfvUpdate // the remembered updates, by client
}

// Add implements Aggregation: g_i = −Δ_i, exactly (negation is exact).
func (a *fedfvAgg) Add(client int, delta []float32, _ fl.State) error {
	i := len(a.g)
	if i >= len(a.clients) || a.clients[i] != client || len(delta) != len(a.global) {
		return fmt.Errorf("fedfv: update of client %d (%d values) is not the next selected client's, in %v with %d values: %w", client, len(delta), a.clients, len(a.global), fl.ErrInvalid)
	}
	g := make([]float32, len(delta))
	for j, v := range delta {
		g[j] = -v
	}
	a.g = append(a.g, g)
	return nil
}

// Finish implements Aggregation.
func (a *fedfvAgg) Finish(dst []float32) (fl.State, error) {
	m, n := len(a.clients), len(a.global)
	if len(a.g) != m {
		return fl.State{}, fmt.Errorf("fedfv: %d updates for %d selected clients: %w", len(a.g), m, fl.ErrInvalid)
	}
	g := a.projected()
	mean := make([]float64, n) // (1/m) Σ_i g_i, for the rescaling
	for _, gi := range a.g {
		for j, v := range gi {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(m)
	}
	seen := a.remembered()
	if from, to, ok := a.a.window(a.round); ok {
		for s := from; s <= to; s++ {
			a.external(g, seen, s)
		}
	}
	if gn := norm64(g); gn > 0 {
		mn := norm64(mean)
		for j := range g {
			g[j] = g[j] / gn * mn
		}
	}
	for j := range dst {
		v := float32(float64(a.global[j]) - g[j])
		if v != v || v-v != 0 {
			return fl.State{}, fmt.Errorf("fedfv: parameter %d became %v: %w", j, v, fl.ErrDiverged)
		}
		dst[j] = v
	}
	from, _, _ := a.a.window(a.round + 1)
	var s fl.State
	meta := fedfvMeta{Seen: map[int]int{}}
	for _, u := range seen {
		if a.a.Tau > 0 && u.round >= from {
			s.Set(fedfvPrefix+strconv.Itoa(u.client), u.g)
			meta.Seen[u.client] = u.round
		}
	}
	if len(meta.Seen) > 0 {
		if err := s.SetMeta(meta); err != nil {
			return fl.State{}, err
		}
	}
	return s, nil
}

// fedfvGramFrom is the number of selected clients from which the internal
// projections run in the Gram form (projectedGram); below it they run
// directly (projectedDirect), as every FedFV result before the Gram form
// was computed, so those re-run bit for bit.
const fedfvGramFrom = 32

// projected returns g = (1/m) Σ_i g_i' after the internal projections
// (steps 1 and 2).
func (a *fedfvAgg) projected() []float64 {
	order, kept := a.order()
	if len(a.clients) >= fedfvGramFrom {
		return a.projectedGram(order, kept)
	}
	return a.projectedDirect(order, kept)
}

// order returns the clients' indices by ascending loss (ties by client:
// a.clients is ascending) and which of them keep g_i' = g_i.
func (a *fedfvAgg) order() (order []int, kept []bool) {
	m := len(a.clients)
	order = make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(a.loss[x], a.loss[y]) })
	kept = make([]bool, m)
	if a.a.Alpha > 0 {
		for _, i := range order[int(math.Ceil(float64(m-1)*(1-a.a.Alpha))):] {
			kept[i] = true
		}
	}
	return order, kept
}

// projectedDirect projects one working vector at a time: m(m−1) dot
// products of model length, each summed in index order (a chain of
// dependent additions: about 0.7 s for m = 100 and the 54,410-parameter
// MLP).
func (a *fedfvAgg) projectedDirect(order []int, kept []bool) []float64 {
	m, n := len(a.clients), len(a.global)
	norm2 := make([]float64, m)
	for i, gi := range a.g {
		norm2[i] = dot32(gi, gi)
	}
	sum, w := make([]float64, n), make([]float64, n)
	for i, gi := range a.g {
		for j, v := range gi {
			w[j] = float64(v)
		}
		for _, k := range order {
			if kept[i] || k == i {
				continue
			}
			if d := dot(a.g[k], w); d < 0 { // g_k·g_i' < 0: project g_i' onto g_k's normal plane
				c := d / norm2[k]
				for j, v := range a.g[k] {
					w[j] -= c * float64(v)
				}
			}
		}
		for j := range sum {
			sum[j] += w[j]
		}
	}
	for j := range sum {
		sum[j] /= float64(m)
	}
	return sum
}

// projectedGram computes projectedDirect's g from the m×m Gram matrix
// G_kj = g_k·g_j (one Dgemm). Every g_i' stays a combination
// g_i − Σ_k c_k g_k of the originals, so g_k·g_i' = G_ki − Σ_j c_j G_kj
// costs O(m) instead of a dot product of model length, and the sum is
// Σ_k (coefficient of g_k) g_k: the m²·|θ|/2 products of symmetricGram
// (gonum's Dgemm's sums, bit for bit, over one triangle), then O(m³ + m·|θ|), instead of m²·|θ|
// dependent additions. The same projections in exact arithmetic;
// in floating point the values differ from projectedDirect's by rounding
// (TestFedFVGramForm states the tolerance), so a conflict within rounding
// of 0 may be decided the other way, as it may between any two summation
// orders.
func (a *fedfvAgg) projectedGram(order []int, kept []bool) []float64 {
	m, n := len(a.clients), len(a.global)
	x := make([]float64, m*n)
	for i, gi := range a.g {
		for j, v := range gi {
			x[i*n+j] = float64(v)
		}
	}
	gram := make([]float64, m*m)
	symmetricGram(x, m, n, gram)
	coef := make([]float64, m) // Σ_i g_i' = Σ_k coef_k g_k
	c := make([]float64, m)    // g_i' = g_i − Σ_k c_k g_k
	for i := range m {
		coef[i]++
		if kept[i] {
			continue
		}
		clear(c)
		for _, k := range order {
			if k == i {
				continue
			}
			row := gram[k*m : (k+1)*m]
			d := row[i]
			for j, cj := range c {
				if cj != 0 {
					d -= cj * row[j]
				}
			}
			if d < 0 {
				c[k] += d / row[k]
			}
		}
		for k, ck := range c {
			coef[k] -= ck
		}
	}
	sum := make([]float64, n)
	for k, ck := range coef {
		if ck == 0 {
			continue
		}
		xk := x[k*n : (k+1)*n]
		for j, v := range xk {
			sum[j] += ck * v
		}
	}
	for j := range sum {
		sum[j] /= float64(m)
	}
	return sum
}

// remembered returns every client's last update after this round, by
// client: the state's, with this round's clients' replaced by their g_i.
func (a *fedfvAgg) remembered() []fedfvUpdate {
	out := make([]fedfvUpdate, 0, len(a.past)+len(a.clients))
	for _, u := range a.past {
		if _, found := slices.BinarySearch(a.clients, u.client); !found {
			out = append(out, u)
		}
	}
	for i, k := range a.clients {
		out = append(out, fedfvUpdate{client: k, round: a.round, g: a.g[i]})
	}
	slices.SortFunc(out, func(x, y fedfvUpdate) int { return cmp.Compare(x.client, y.client) })
	return out
}

// external projects g away from the sum of the updates last seen in round
// s that conflict with it, if the sum conflicts with it (step 3).
func (a *fedfvAgg) external(g []float64, seen []fedfvUpdate, s int) {
	var con []float64
	for _, u := range seen {
		if u.round != s || dot(u.g, g) >= 0 {
			continue
		}
		if con == nil {
			con = make([]float64, len(g))
		}
		for j, v := range u.g {
			con[j] += float64(v)
		}
	}
	if con == nil {
		return
	}
	if d := dot64(g, con); d < 0 {
		c := d / dot64(con, con)
		for j, v := range con {
			g[j] -= c * v
		}
	}
}

// dot returns Σ_j x_j y_j in float64, in index order.
func dot(x []float32, y []float64) float64 {
	s := 0.0
	for j, v := range x {
		s += float64(v) * y[j]
	}
	return s
}

func dot32(x, y []float32) float64 {
	s := 0.0
	for j, v := range x {
		s += float64(v) * float64(y[j])
	}
	return s
}

func dot64(x, y []float64) float64 {
	s := 0.0
	for j, v := range x {
		s += v * y[j]
	}
	return s
}

func norm64(x []float64) float64 { return math.Sqrt(dot64(x, x)) }
