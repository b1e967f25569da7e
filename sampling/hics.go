package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/cluster"
	"github.com/flsweep/flsweep/fl"
)

// Values of HiCS's options that choose between the paper and the official
// code (github.com/CityChan/HiCS-FL at 25f309d, server/server_hics.py;
// specs/hicsfl.md §5.3).
const (
	HiCSPaper = "paper" // Algorithm 1 as written
	HiCSCode  = "code"  // the official code's variant

	EntropyFromBias    = "bias"    // Ĥ from Δb (the paper, Eq. (7))
	EntropyFromWeights = "weights" // Ĥ from the row means of ΔW (the code's magnitude_gradient)
	CosineOnBias       = "bias"    // the arccos term over Δb (the paper, Eq. (9))
	CosineOnOutput     = "output"  // over [ΔW, Δb] of the output layer (the code's get_gradients_fc)
	WithinSize         = "size"    // within a cluster ∝ p_k (the paper, Eq. (10))
	WithinUniform      = "uniform" // the code's draw: cluster counts first, then uniform without replacement

	EstimatorScaleFree = "scale_free" // OURS: Ĥ from the direction Δb/‖Δb‖₂ (EstimateEntropyScaleFree)
)

// DefaultScaleFreeTemperature is T′ of the scale-free estimator (OURS) for
// C = 10 classes: the T′ that maximises the expected gap in nats between
// a client with no label signal (its Δb an isotropic random direction in
// the zero-sum subspace Σ_c Δb_c = 0, which plain SGD keeps: check A1) and
// a single-class client (Δb ∝ e_y − 1/C, Eq. (6) at δ = 0):
//
//	T′ = argmax E_u[Ĥ′(u)] − Ĥ′(e_y − 1/C)
//
// It is computed without data, so it depends on none of η, R, the
// optimiser, the model or the round: 0.19 (gap 1.192 nats; 1.104 at 0.15,
// 1.190 at 0.20, 1.102 at 0.24), where a single-class client gets Ĥ′ =
// 0.222 and a no-signal one 1.415 on average (10⁵ directions,
// TestScaleFreeTemperatureDefault). The maximiser depends on C (about 0.11
// for C = 100); set scale_free_temperature for other C.
const DefaultScaleFreeTemperature = 0.19

// HiCS is HiCS-FL's sampler: Chen & Vikalo, "Heterogeneity-Guided Client
// Sampling: Towards Fast and Efficient Non-IID Federated Learning", NeurIPS
// 2024, Algorithm 1 (specs/hicsfl.md §1.10). The server keeps every
// client's last output-bias update Δb_k = b_k − b (0 before its first
// round; ClientSummary.BiasDelta), refreshed whenever the client trains,
// and estimates the entropy of its label distribution (Eq. (7)):
//
//	Ĥ_k = H(softmax(Δb_k / T)) = −Σ_c s_c ln s_c,   s = softmax(Δb_k / T)
//
// (EstimateEntropy). Warm-up: rounds t ≤ ⌈N/K⌉ draw min(K, |S₀|) clients
// uniformly without replacement from the clients S₀ not yet drawn, so every
// client trains once. Every later round t:
//
//  1. D(u,k) = arccos(cos(Δb_u, Δb_k)) + λ·|Ĥ_u − Ĥ_k| (Eq. (9), HiCSDistances);
//  2. Ward's clustering of the rows of D into M groups G_m (cluster.Ward,
//     cluster.Cut: the code's AgglomerativeClustering(M, "ward").fit(D));
//  3. π_m ∝ exp(γ_t·H̄_m), H̄_m the mean Ĥ in G_m, γ_t = γ0·(1 − t/T_R)
//     (Eq. (10));
//  4. until K distinct clients are chosen: draw a group m ~ π, then a client
//     k ∈ G_m with probability p_k / Σ_{j∈G_m} p_j, ignoring repeats.
//
// Step 4's loop is drawn exactly as the sequence of its distinct clients:
// the next new client is k with probability ∝ π_{m(k)}·p_k/P_{m(k)} among
// the clients not yet chosen (what the loop gives after discarding the
// draws of chosen clients), one draw per client, so it always ends.
//
// Aggregation weights are ω_k = 1/|S_t| (Algorithm 1 line 17: the plain mean
// of the K local models; 1/K except in a last warm-up round with fewer
// clients). HiCS-FL is biased on purpose: E[ω_k] ≠ p_k.
//
// The official code departs from the paper; each departure is an option
// (defaults: the paper):
//
//   - EntropyFrom "weights": Ĥ from m_c = (1/L)·Σ_j ΔW[c][j], the row means
//     of the output layer's weight update, instead of Δb (§5.3 item 1);
//   - CosineOn "output": the arccos term over [ΔW, Δb] (item 2);
//   - Warmup "code": ⌊N/K⌋ rounds of the fixed blocks [(t−1)K, tK) (item 3);
//   - Freeze: the updates are kept only from warm-up rounds (item 4, the
//     code's "multialpha" case);
//   - FallbackVariance v > 0: a round whose var(Ĥ) over all clients is ≥ v
//     uses Fraboni et al.'s Algorithm 2 on the HiCS distance matrix instead
//     (K urns, ∝ p_k, ω = count/K, no entropy weighting; commit 3ceca3d uses
//     v = 0.1; item 5);
//   - Within "uniform": the code's draw: K cluster draws ~ π, redrawn while
//     the drawn cluster has already given all its clients, then that many
//     clients of each cluster uniformly without replacement (item 6). This
//     is not the paper's loop with equal p_k (the loop favours clusters with
//     fewer chosen clients), it is the code's;
//   - Anneal "code": γ = γ0·(T_R − t′)/T_R with the 0-based t′ = t − 1.
//
// Ours (OURS, not in the paper or the code): Estimator "scale_free" takes
// Ĥ from the direction of the update alone (EstimateEntropyScaleFree):
//
//	Ĥ_k = H(softmax(Δb_k / ‖Δb_k‖₂ / T′))
//
// with its own temperature T′ (ScaleFreeTemperature, default
// DefaultScaleFreeTemperature). Eq. (6) gives E[Δb] = ηR·ΣE·(D − U) when
// the wrong-class confidences E_i are equal (δ = 0), so the direction is a
// function of the label distribution D alone, while the paper's Ĥ also
// depends on ηR·ΣE/T: at the paper's own lr 0.001 with plain SGD on its
// CNN a single-class client's Δb is too small for T = 0.0025, and ΣE
// falls as training proceeds, so refreshed estimates drift towards ln C
// (experiments/hicsfl/README.md). The scale-free Ĥ is what every use of Ĥ
// reads: Eq. (9)'s λ|Ĥ_u − Ĥ_k|, Eq. (10)'s H̄_m, FallbackVariance's
// var(Ĥ) and the clients table's entropy_est; Eq. (9)'s arccos term is
// scale-free already and is unchanged. With EntropyFrom "weights" the
// vector normalised is the ΔW row means m. A client with Δb = 0 (not yet
// trained) gets ln C, as under the paper's estimator.
//
// Oracle uses the true label entropies (fl.Population.Entropy) in place of
// Ĥ everywhere (the code's server_oracle.py), as a reference.
//
// Memory: Δb (and the ΔW row means) in the server state, N·C values each;
// with CosineOn "output" each client's [ΔW, Δb] in its per-client memory.
// Cost per round O(N²·C + N³): the distances, then Ward on N rows of N.
type HiCS struct {
	K                    int     `json:"k"`                      // clients per round
	M                    int     `json:"clusters"`               // M, the number of groups (default K)
	Temperature          float64 `json:"temperature"`            // T (default 0.0025, the paper's FMNIST value)
	Estimator            string  `json:"estimator"`              // "paper" (default) or "scale_free" (OURS)
	ScaleFreeTemperature float64 `json:"scale_free_temperature"` // T′ of "scale_free" (default DefaultScaleFreeTemperature)
	Lambda               float64 `json:"lambda"`                 // λ (default 10)
	Gamma0               float64 `json:"gamma0"`                 // γ0 (default 4)
	Rounds               int     `json:"rounds"`                 // T_R of the annealing (default: the point's rounds)
	Oracle               bool    `json:"oracle"`                 // true entropies instead of Ĥ
	EntropyFrom          string  `json:"entropy_from"`           // "bias" (default) or "weights"
	CosineOn             string  `json:"cosine_on"`              // "bias" (default) or "output"
	Warmup               string  `json:"warmup"`                 // "paper" (default) or "code"
	Anneal               string  `json:"anneal"`                 // "paper" (default) or "code"
	Within               string  `json:"within"`                 // "size" (default) or "uniform"
	Freeze               bool    `json:"freeze_after_warmup"`    // keep only the warm-up's updates
	FallbackVariance     float64 `json:"fallback_variance"`      // > 0: var(Ĥ) ≥ it → Algorithm 2 of clustered sampling
}

var (
	_ fl.Learner   = HiCS{}
	_ fl.Scheduled = HiCS{}
)

// NewHiCS builds HiCS-FL's sampler from its spec options; k is
// clients_per_round. Unset options take the paper's values.
func NewHiCS(k int, opts fl.Options) (fl.Planner, error) {
	h := HiCS{K: k, Temperature: 0.0025, Estimator: HiCSPaper, ScaleFreeTemperature: DefaultScaleFreeTemperature, Lambda: 10, Gamma0: 4,
		EntropyFrom: EntropyFromBias, CosineOn: CosineOnBias, Warmup: HiCSPaper, Anneal: HiCSPaper, Within: WithinSize}
	o := struct {
		M                *int     `json:"clusters"`
		Temperature      *float64 `json:"temperature"`
		Estimator        string   `json:"estimator"`
		ScaleFree        *float64 `json:"scale_free_temperature"`
		Lambda           *float64 `json:"lambda"`
		Gamma0           *float64 `json:"gamma0"`
		Rounds           int      `json:"rounds"`
		Oracle           bool     `json:"oracle"`
		EntropyFrom      string   `json:"entropy_from"`
		CosineOn         string   `json:"cosine_on"`
		Warmup           string   `json:"warmup"`
		Anneal           string   `json:"anneal"`
		Within           string   `json:"within"`
		Freeze           bool     `json:"freeze_after_warmup"`
		FallbackVariance float64  `json:"fallback_variance"`
	}{}
	if err := opts.Decode("sampler (hics)", &o); err != nil {
		return nil, err
	}
	if k < 1 {
		return nil, fmt.Errorf("clients_per_round = %d; it must be at least 1: %w", k, fl.ErrInvalid)
	}
	h.M = k
	if o.M != nil {
		h.M = *o.M
	}
	for _, f := range []struct {
		dst *float64
		src *float64
	}{{&h.Temperature, o.Temperature}, {&h.ScaleFreeTemperature, o.ScaleFree}, {&h.Lambda, o.Lambda}, {&h.Gamma0, o.Gamma0}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	h.Rounds, h.Oracle, h.Freeze, h.FallbackVariance = o.Rounds, o.Oracle, o.Freeze, o.FallbackVariance
	for _, f := range []struct {
		dst      *string
		src      string
		name     string
		one, two string
	}{
		{&h.EntropyFrom, o.EntropyFrom, "entropy_from", EntropyFromBias, EntropyFromWeights},
		{&h.CosineOn, o.CosineOn, "cosine_on", CosineOnBias, CosineOnOutput},
		{&h.Warmup, o.Warmup, "warmup", HiCSPaper, HiCSCode},
		{&h.Anneal, o.Anneal, "anneal", HiCSPaper, HiCSCode},
		{&h.Within, o.Within, "within", WithinSize, WithinUniform},
	} {
		switch f.src {
		case "":
		case f.one, f.two:
			*f.dst = f.src
		default:
			return nil, fmt.Errorf("sampler.%s = %q is unknown; use %q (the paper) or %q (the official code): %w", f.name, f.src, f.one, f.two, fl.ErrInvalid)
		}
	}
	switch o.Estimator {
	case "":
	case HiCSPaper, EstimatorScaleFree:
		h.Estimator = o.Estimator
	default:
		return nil, fmt.Errorf("sampler.estimator = %q is unknown; use %q (the paper's H(softmax(Δb/T))) or %q (ours, H(softmax(Δb/‖Δb‖/T′))): %w", o.Estimator, HiCSPaper, EstimatorScaleFree, fl.ErrInvalid)
	}
	switch {
	case h.Estimator == HiCSPaper && o.ScaleFree != nil:
		return nil, fmt.Errorf("sampler.scale_free_temperature is T′ of estimator %q, but sampler.estimator is %q; set estimator: %s, or drop scale_free_temperature (temperature is the paper's T): %w", EstimatorScaleFree, h.Estimator, EstimatorScaleFree, fl.ErrInvalid)
	case h.Estimator == EstimatorScaleFree && o.Temperature != nil:
		return nil, fmt.Errorf("sampler.temperature is T of the paper's estimator, unused with estimator %q; set scale_free_temperature (T′, default %v) instead: %w", EstimatorScaleFree, DefaultScaleFreeTemperature, fl.ErrInvalid)
	case !(h.ScaleFreeTemperature > 0) || math.IsInf(h.ScaleFreeTemperature, 0):
		return nil, fmt.Errorf("sampler.scale_free_temperature = %v; T′ must be a finite number > 0 (default %v, for 10 classes): %w", h.ScaleFreeTemperature, DefaultScaleFreeTemperature, fl.ErrInvalid)
	}
	switch {
	case h.M < 1:
		return nil, fmt.Errorf("sampler.clusters = %d; HiCS-FL needs at least 1 group (the paper uses clients_per_round): %w", h.M, fl.ErrInvalid)
	case !(h.Temperature > 0) || math.IsInf(h.Temperature, 0):
		return nil, fmt.Errorf("sampler.temperature = %v; T must be a finite number > 0 (the paper: 0.0025 for FMNIST, 0.0015 for CIFAR10): %w", h.Temperature, fl.ErrInvalid)
	case !(h.Lambda >= 0) || math.IsInf(h.Lambda, 0):
		return nil, fmt.Errorf("sampler.lambda = %v; λ must be a finite number ≥ 0 (the paper: 10): %w", h.Lambda, fl.ErrInvalid)
	case !(h.Gamma0 >= 0) || math.IsInf(h.Gamma0, 0):
		return nil, fmt.Errorf("sampler.gamma0 = %v; γ0 must be a finite number ≥ 0 (the paper: 4): %w", h.Gamma0, fl.ErrInvalid)
	case h.Rounds < 0:
		return nil, fmt.Errorf("sampler.rounds = %d; T_R must be ≥ 1, or 0 for the point's rounds: %w", h.Rounds, fl.ErrInvalid)
	case !(h.FallbackVariance >= 0) || math.IsInf(h.FallbackVariance, 0):
		return nil, fmt.Errorf("sampler.fallback_variance = %v; use 0 (never, the paper) or a variance > 0 (the code: 0.1): %w", h.FallbackVariance, fl.ErrInvalid)
	}
	return h, nil
}

// WithRounds implements fl.Scheduled: T_R is the point's rounds unless the
// options set it.
func (h HiCS) WithRounds(rounds int) fl.Planner {
	if h.Rounds == 0 {
		h.Rounds = rounds
	}
	return h
}

// State vector names.
const (
	hicsSeen  = "seen"  // N: 1 once the client has trained
	hicsBias  = "bias"  // N·C: Δb_k, row k
	hicsWMean = "wmean" // N·C: the row means of ΔW_k (EntropyFrom "weights")
)

// Init implements fl.Learner.
func (h HiCS) Init(pop fl.Population) (fl.State, error) {
	if err := h.check(pop); err != nil {
		return fl.State{}, err
	}
	var s fl.State
	s.Set(hicsSeen, make([]float32, pop.N()))
	return s, nil
}

func (h HiCS) check(pop fl.Population) error {
	n := pop.N()
	switch {
	case h.K > n:
		return fmt.Errorf("clients_per_round = %d exceeds the %d clients; lower it: %w", h.K, n, fl.ErrInvalid)
	case h.M > n:
		return fmt.Errorf("sampler.clusters = %d exceeds the %d clients; lower it: %w", h.M, n, fl.ErrInvalid)
	case h.Oracle && len(pop.Entropy) != n:
		return fmt.Errorf("sampler.oracle needs the true label entropy of each of the %d clients; the population has %d: %w", n, len(pop.Entropy), fl.ErrInvalid)
	case h.FallbackVariance > 0:
		return checkUrnMass(pop.P, h.K)
	}
	return nil
}

// WarmupRounds returns the number of warm-up rounds for n clients: ⌈n/K⌉
// (the paper) or ⌊n/K⌋ (the code).
func (h HiCS) WarmupRounds(n int) int {
	if h.Warmup == HiCSCode {
		return n / h.K
	}
	return (n + h.K - 1) / h.K
}

// Gamma returns the annealing coefficient of round t (1-based):
// γ0·(1 − t/T_R) (the paper), or γ0·(1 − (t−1)/T_R) (the code's 0-based
// round).
func (h HiCS) Gamma(t int) float64 {
	if h.Anneal == HiCSCode {
		t--
	}
	return h.Gamma0 * (1 - float64(t)/float64(h.Rounds))
}

// hicsMemory is HiCS's state, decoded.
type hicsMemory struct {
	seen         []float32
	bias, wmean  []float32 // nil until the first observation
	classes      int
	n            int
	entropyInput []float32 // bias or wmean, per EntropyFrom
}

func (h HiCS) memory(s fl.State, pop fl.Population, classes int) (hicsMemory, error) {
	n := pop.N()
	m := hicsMemory{n: n, classes: classes}
	var err error
	if m.seen, err = s.Vector(hicsSeen, n); err != nil {
		return m, err
	}
	if v, ok := s.Vectors[hicsBias]; ok {
		if classes == 0 && n > 0 {
			m.classes = len(v) / n
		}
		if m.bias, err = s.Vector(hicsBias, n*m.classes); err != nil {
			return m, err
		}
	}
	if h.EntropyFrom == EntropyFromWeights {
		if _, ok := s.Vectors[hicsWMean]; ok {
			if m.wmean, err = s.Vector(hicsWMean, n*m.classes); err != nil {
				return m, err
			}
		}
		m.entropyInput = m.wmean
	} else {
		m.entropyInput = m.bias
	}
	if m.classes < 2 {
		return m, fmt.Errorf("hics: the population gives %d classes and no bias update was observed yet; HiCS-FL needs C ≥ 2 (fl.Population.Classes): %w", m.classes, fl.ErrInvalid)
	}
	return m, nil
}

// entropies returns Ĥ_k for every client (the true entropies for the oracle).
func (h HiCS) entropies(m hicsMemory, pop fl.Population) []float64 {
	if h.Oracle {
		return slices.Clone(pop.Entropy)
	}
	out := make([]float64, m.n)
	v := make([]float64, m.classes)
	for k := range out {
		clear(v)
		if m.entropyInput != nil {
			for c := range v {
				v[c] = float64(m.entropyInput[k*m.classes+c])
			}
		}
		if h.Estimator == EstimatorScaleFree {
			out[k] = EstimateEntropyScaleFree(v, h.ScaleFreeTemperature)
		} else {
			out[k] = EstimateEntropy(v, h.Temperature)
		}
	}
	return out
}

// Plan implements fl.Planner.
func (h HiCS) Plan(in fl.PlanInput, r *rand.Rand) (fl.Plan, error) {
	if err := h.check(in.Pop); err != nil {
		return fl.Plan{}, err
	}
	if h.Rounds < 1 {
		return fl.Plan{}, fmt.Errorf("hics: T_R = %d; set sampler.rounds, or let the engine pass the point's rounds (fl.Scheduled): %w", h.Rounds, fl.ErrInvalid)
	}
	mem, err := h.memory(in.State, in.Pop, in.Pop.Classes)
	if err != nil {
		return fl.Plan{}, err
	}
	n := in.Pop.N()
	H := h.entropies(mem, in.Pop)
	sel := fl.Selection{}
	if in.Round <= h.WarmupRounds(n) {
		sel.Clients = h.warmup(in.Round, mem.seen, r)
	} else {
		var vecs [][]float32
		if h.CosineOn == CosineOnOutput {
			vecs = make([][]float32, n)
			for k := range vecs {
				if vecs[k], err = in.Recall(k); err != nil {
					return fl.Plan{}, err
				}
			}
		} else if mem.bias != nil {
			vecs = make([][]float32, n)
			for k := range vecs {
				vecs[k] = mem.bias[k*mem.classes : (k+1)*mem.classes]
			}
		} else {
			vecs = make([][]float32, n) // no update yet: every cosine term is 0
		}
		d, err := HiCSDistances(vecs, H, h.Lambda)
		if err != nil {
			return fl.Plan{}, err
		}
		tree, err := cluster.Ward(d)
		if err != nil {
			return fl.Plan{}, fmt.Errorf("hics: %w", err)
		}
		if h.FallbackVariance > 0 && variance(H) >= h.FallbackVariance {
			s, err := similaritySample(tree, in.Pop.P, h.K, r)
			if err != nil {
				return fl.Plan{}, err
			}
			for _, k := range s.Clients {
				s.Entropy = append(s.Entropy, H[k])
			}
			return fl.Plan{Selection: &s}, nil
		}
		labels, err := cluster.Cut(tree, h.M)
		if err != nil {
			return fl.Plan{}, fmt.Errorf("hics: %w", err)
		}
		groups := cluster.Clusters(labels)
		pi := ClusterProbabilities(groups, H, h.Gamma(in.Round))
		if h.Within == WithinUniform {
			sel.Clients = codeDraw(groups, pi, h.K, r)
		} else {
			if sel.Clients, err = paperDraw(groups, pi, in.Pop.P, h.K, r); err != nil {
				return fl.Plan{}, err
			}
		}
		slices.Sort(sel.Clients)
		for _, k := range sel.Clients {
			sel.Cluster = append(sel.Cluster, labels[k])
		}
	}
	slices.Sort(sel.Clients)
	w := 1 / float64(len(sel.Clients))
	for _, k := range sel.Clients {
		sel.Weights = append(sel.Weights, w)
		sel.Draws = append(sel.Draws, 1)
		sel.Entropy = append(sel.Entropy, H[k])
	}
	return fl.Plan{Selection: &sel}, nil
}

// warmup returns warm-up round t's clients: min(K, |S₀|) drawn uniformly
// without replacement from the clients not yet trained (the paper), or
// the block [(t−1)K, tK) (the code).
func (h HiCS) warmup(t int, seen []float32, r *rand.Rand) []int {
	if h.Warmup == HiCSCode {
		out := make([]int, h.K)
		for i := range out {
			out[i] = (t-1)*h.K + i
		}
		return out
	}
	var pool []int
	for k, s := range seen {
		if s == 0 {
			pool = append(pool, k)
		}
	}
	if len(pool) == 0 { // every client trained already: nothing left to visit
		pool = make([]int, len(seen))
		for k := range pool {
			pool[k] = k
		}
	}
	pick := partialShuffle(len(pool), min(h.K, len(pool)), r)
	out := make([]int, len(pick))
	for i, j := range pick {
		out[i] = pool[j]
	}
	return out
}

// paperDraw is Algorithm 1 lines 7–12 with p̃_m ∝ p_k: K distinct clients
// drawn one at a time, each new one k with probability ∝ π_{m(k)}·p_k/P_{m(k)}
// among those not yet chosen.
func paperDraw(groups [][]int, pi, p []float64, k int, r *rand.Rand) ([]int, error) {
	w := make([]float64, len(p))
	for m, g := range groups {
		pm := 0.0
		for _, c := range g {
			pm += p[c]
		}
		for _, c := range g {
			w[c] = pi[m] * p[c] / pm
		}
	}
	return weightedWithoutReplacement(w, k, r)
}

// codeDraw is the official code's sample_clients_entropy: K cluster draws
// ~ π, each redrawn while its cluster has already been drawn |G_m| times,
// then count_m clients of each cluster (in cluster order) uniformly without
// replacement.
func codeDraw(groups [][]int, pi []float64, k int, r *rand.Rand) []int {
	count := make([]int, len(groups))
	for range k {
		m := categorical(pi, r)
		for count[m] >= len(groups[m]) {
			m = categorical(pi, r)
		}
		count[m]++
	}
	var out []int
	for m, g := range groups {
		for _, j := range partialShuffle(len(g), count[m], r) {
			out = append(out, g[j])
		}
	}
	return out
}

// Observe implements fl.Learner: each trained client's Δb (and ΔW's row
// means, and [ΔW, Δb] in its per-client memory, when the options use them)
// replace its old ones; with Freeze only in warm-up rounds.
func (h HiCS) Observe(in fl.ObserveInput) (fl.State, error) {
	n := in.Pop.N()
	classes := in.Output.Classes
	mem, err := h.memory(in.State, in.Pop, classes)
	if err != nil {
		return fl.State{}, err
	}
	next := fl.State{}
	seen := slices.Clone(mem.seen)
	bias := mem.bias
	if bias == nil {
		bias = make([]float32, n*classes)
	} else {
		bias = slices.Clone(bias)
	}
	var wmean []float32
	if h.EntropyFrom == EntropyFromWeights {
		if wmean = mem.wmean; wmean == nil {
			wmean = make([]float32, n*classes)
		} else {
			wmean = slices.Clone(wmean)
		}
	}
	update := !h.Freeze || in.Round <= h.WarmupRounds(n)
	for i, k := range in.Selection.Clients {
		seen[k] = 1
		if !update {
			continue
		}
		db := in.Clients[i].BiasDelta
		if len(db) != classes {
			return fl.State{}, fmt.Errorf("hics: client %d's bias update has %d values; the output layer has %d classes: %w", k, len(db), classes, fl.ErrInvalid)
		}
		for c, v := range db {
			bias[k*classes+c] = float32(v)
		}
		if h.EntropyFrom == EntropyFromBias && h.CosineOn == CosineOnBias {
			continue
		}
		delta, err := in.Delta(k)
		if err != nil {
			return fl.State{}, err
		}
		dw := in.Output.Weights(delta)
		if wmean != nil {
			l := in.Output.Embedding
			for c := range classes {
				s := 0.0
				for _, v := range dw[c*l : (c+1)*l] {
					s += float64(v)
				}
				wmean[k*classes+c] = float32(s / float64(l))
			}
		}
		if h.CosineOn == CosineOnOutput {
			in.Remember(k, append(slices.Clone(dw), in.Output.Bias(delta)...))
		}
	}
	next.Set(hicsSeen, seen)
	next.Set(hicsBias, bias)
	if wmean != nil {
		next.Set(hicsWMean, wmean)
	}
	return next, nil
}

// EstimateEntropy returns HiCS-FL's heterogeneity estimate of a client
// from its output-layer update v (Chen & Vikalo 2024, Eq. (7)):
//
//	Ĥ = −Σ_c s_c ln s_c,   s_c = exp(v_c/T) / Σ_j exp(v_j/T)
//
// in nats, computed in float64 with the maximum subtracted first:
// Ĥ = ln Σ_c e_c − Σ_c e_c·(z_c − z_max)/Σ_c e_c with z = v/T and
// e_c = exp(z_c − z_max), so |v/T| of 10⁴ or more neither overflows nor
// gives NaN. Ĥ ∈ [0, ln C], and Ĥ = ln C exactly for v = 0.
func EstimateEntropy(v []float64, temperature float64) float64 {
	return softmaxEntropy(v, 1, 1, temperature)
}

// EstimateEntropyScaleFree returns our scale-free variant of HiCS-FL's
// estimate (OURS; HiCS's Estimator "scale_free"): the entropy of the
// softmax of the update's direction at temperature T′,
//
//	Ĥ′ = −Σ_c s_c ln s_c,   s_c = exp(u_c/T′) / Σ_j exp(u_j/T′),   u = v/‖v‖₂
//
// so v and c·v give the same Ĥ′ for every c > 0. It computes u_c =
// (v_c/a)/‖v/a‖₂ with a = max_c |v_c|, so neither tiny nor huge values
// under- or overflow. For v = 0 (a client not yet trained) u is taken as 0
// and Ĥ′ = ln C, as EstimateEntropy gives for v = 0. Ĥ′ ∈ [0, ln C].
func EstimateEntropyScaleFree(v []float64, temperature float64) float64 {
	a := 0.0
	for _, x := range v {
		a = max(a, math.Abs(x))
	}
	if a == 0 {
		return softmaxEntropy(v, 1, 1, temperature)
	}
	ss := 0.0
	for _, x := range v {
		ss += (x / a) * (x / a)
	}
	return softmaxEntropy(v, a, math.Sqrt(ss), temperature)
}

// softmaxEntropy is H(softmax(z)) in nats for z_c = v_c/a/n/temperature,
// computed with the maximum subtracted first: Ĥ = ln Σ_c e_c − Σ_c
// e_c·(z_c − z_max)/Σ_c e_c, e_c = exp(z_c − z_max). a = n = 1 gives
// EstimateEntropy's z = v/T bit for bit (v/1 is v).
func softmaxEntropy(v []float64, a, n, temperature float64) float64 {
	if len(v) == 0 {
		return 0
	}
	zmax := math.Inf(-1)
	for _, x := range v {
		zmax = max(zmax, x/a/n/temperature)
	}
	var s, sz float64
	for _, x := range v {
		z := x/a/n/temperature - zmax
		e := math.Exp(z)
		s += e
		sz += e * z
	}
	h := math.Log(s) - sz/s
	return max(0, min(h, math.Log(float64(len(v)))))
}

// HiCSDistances returns HiCS-FL's client distance matrix (Eq. (9)):
//
//	D(u,k) = arccos(cos(v_u, v_k)) + λ·|H_u − H_k|
//
// with the cosine clamped to [−1, 1], the arccos term 0 when either vector
// is 0 or nil (the code's get_similarity), and D(k,k) = 0. v is Δb (the
// paper) or [ΔW, Δb] (the code), H the entropy estimates.
func HiCSDistances(v [][]float32, H []float64, lambda float64) ([][]float64, error) {
	if len(v) != len(H) {
		return nil, fmt.Errorf("hics: %d vectors and %d entropies; give one of each per client: %w", len(v), len(H), fl.ErrInvalid)
	}
	d, err := UpdateDistances(v, DistanceArccos)
	if err != nil {
		return nil, err
	}
	for u := range d {
		for k := u + 1; k < len(d); k++ {
			x := d[u][k] + lambda*math.Abs(H[u]-H[k])
			d[u][k], d[k][u] = x, x
		}
	}
	return d, nil
}

// ClusterProbabilities returns π of Eq. (10): π_m ∝ exp(γ·H̄_m), H̄_m the
// mean of H over group m, computed with the maximum exponent subtracted.
func ClusterProbabilities(groups [][]int, H []float64, gamma float64) []float64 {
	pi := make([]float64, len(groups))
	zmax := math.Inf(-1)
	for m, g := range groups {
		s := 0.0
		for _, k := range g {
			s += H[k]
		}
		pi[m] = gamma * s / float64(len(g))
		zmax = max(zmax, pi[m])
	}
	total := 0.0
	for m := range pi {
		pi[m] = math.Exp(pi[m] - zmax)
		total += pi[m]
	}
	for m := range pi {
		pi[m] /= total
	}
	return pi
}

// variance is numpy's var: the population variance, 1/N.
func variance(x []float64) float64 {
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (v - mean) * (v - mean)
	}
	return s / float64(len(x))
}
