package sampling

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/gp"
)

// FedCor selects clients by the correlations of their loss changes (Tang,
// Ning, Wang, Sun, Wang, Li, Chen, "FedCor: Correlation-Based Active Client
// Selection Strategy for Heterogeneous Federated Learning", CVPR 2022,
// arXiv:2103.13822; specs/hicsfl.md §2). The loss change of client k in
// round t,
//
//	ΔL_k^t = F_k(θ^t) − F_k(θ^{t−1}),
//
// is modelled as a Gaussian process over the clients with mean μ and
// covariance Σ = X Xᵀ + σ_n² I, X the learned client embeddings (package gp:
// the official code's Poly_Kernel of order 1, unnormalised, D = 15,
// σ_n = 0.01).
//
// Schedule (round t = 1, 2, …; W = Warmup, I = Interval):
//
//   - Random rounds: the warm-up t ≤ W, and the GP-training rounds t > W
//     with (t − W) mod I = 0. They select m clients at random ∝ p_k without
//     replacement (numpy's choice(replace=False, p=p), as HiCS-FL's code) and
//     record every client's loss change, the GP's training data.
//   - The loss changes come from asking all n clients for F_k(θ^{t−1})
//     (fl.AskLoss) at the start of each random round and of the round after
//     it; the previous answers are kept in the state. Each asking round costs
//     n downloads of θ, n forward passes over every client's full training
//     set (one pass over the whole training data) and n uploaded floats.
//     The paper needs them only for the GP's data; the official codes
//     evaluate every client every round, which LossesEveryRound reproduces
//     (the cost; the selections are the same).
//   - The GP is fitted when the loss changes of round W (WarmupEpochs Adam
//     steps) or of a later random round (Epochs steps) arrive, at the start
//     of the next round, before it selects: the embeddings (drawn N(0, 1/D)
//     before the first fit, from the round's stream) maximise the leave-one-out
//     predictive log-probability of the last History+1 random rounds' loss
//     changes, the round s one weighted Gamma^{(t−1)−s}, with Adam (LR), μ set
//     to the same discounted mean first (gp.Problem, gp.Fit). A fit resets
//     the discounts α to 1.
//   - Other rounds select greedily (gp.Select): m times
//     k = argmax (Σ_i p_i Σ_ik)·α_k/√Σ_kk, then Σ ← Σ − Σ_{:,k}Σ_{k,:}/Σ_kk;
//     each selected client's α_k is then multiplied by Beta, the paper's
//     annealing coefficient.
//   - Every selection is aggregated with ω_k = 1/m (both codes' average).
//
// The values are the official codes' (HiCS-FL's configs/…/…_fedcor_*.json
// and server_fedcor.py; FedCor's src/options.py and GPR.py): warm-up 25
// (the HiCS-FL code's epochs 0…25 are 26 rounds: Warmup 26 reproduces its
// schedule exactly), GPR_interval 5, 1000 Adam steps after the warm-up and
// 100 later (GPR_Epoch), lr 0.01, group_size 10 rounds of history, GPR_gamma
// 0.8, discount β 0.9, dimension 15, σ_n 0.01.
//
// Departures of the codes offered as options: LOO "first" sums only client
// 0's leave-one-out term, which is what GPR.Log_LOO_Predictive_Probability
// computes (its inner loop runs over len(data), the number of samples in a
// round's tensor, 1, instead of the clients); "all" (default) is the
// leave-one-out objective the paper states. Not offered: the FedCor code's
// extra off-model random round that generates GP data (the HiCS-FL code,
// followed here, trains on the real random rounds instead), its uniform
// warm-up selection, ε-greedy and dynamic client counts, the marginal
// likelihood objective, the squared-exponential and normalised kernels.
type FedCor struct {
	M                int     `json:"m"`
	Warmup           int     `json:"warmup"`
	Interval         int     `json:"interval"`
	WarmupEpochs     int     `json:"warmup_epochs"`
	Epochs           int     `json:"epochs"`
	LR               float64 `json:"lr"`
	Dimension        int     `json:"dimension"`
	Noise            float64 `json:"noise"`
	History          int     `json:"history"`
	Gamma            float64 `json:"gamma"`
	Beta             float64 `json:"beta"`
	LOO              string  `json:"loo"` // "all" or "first"
	LossesEveryRound bool    `json:"losses_every_round"`
}

// FedCor's LOO option values.
const (
	LOOAll   = "all"
	LOOFirst = "first"
)

var _ fl.Learner = FedCor{}

// NewFedCor builds FedCor from its options (see FedCor); m is
// clients_per_round.
func NewFedCor(m int, opts fl.Options) (fl.Planner, error) {
	f := FedCor{Warmup: 25, Interval: 5, WarmupEpochs: 1000, Epochs: 100, LR: 0.01, Dimension: 15, Noise: 0.01,
		History: 10, Gamma: 0.8, Beta: 0.9, LOO: LOOAll}
	if err := opts.Decode("sampler (fedcor)", &f); err != nil {
		return nil, err
	}
	f.M = m
	var bad string
	switch {
	case m < 1:
		bad = fmt.Sprintf("clients_per_round = %d; it must be at least 1", m)
	case f.Warmup < 1:
		bad = fmt.Sprintf("sampler.warmup = %d; the GP needs at least one warm-up round", f.Warmup)
	case f.Interval < 1:
		bad = fmt.Sprintf("sampler.interval = %d; it must be at least 1", f.Interval)
	case f.WarmupEpochs < 0 || f.Epochs < 0:
		bad = fmt.Sprintf("sampler.warmup_epochs = %d, epochs = %d; they count Adam steps, at least 0", f.WarmupEpochs, f.Epochs)
	case !(f.LR > 0):
		bad = fmt.Sprintf("sampler.lr = %v; it must be positive", f.LR)
	case f.Dimension < 1:
		bad = fmt.Sprintf("sampler.dimension = %d; it must be at least 1", f.Dimension)
	case !(f.Noise > 0):
		bad = fmt.Sprintf("sampler.noise = %v; σ_n must be positive (it keeps Σ invertible)", f.Noise)
	case f.History < 0:
		bad = fmt.Sprintf("sampler.history = %d; it must be at least 0", f.History)
	case !(f.Gamma > 0 && f.Gamma <= 1):
		bad = fmt.Sprintf("sampler.gamma = %v; it must be in (0, 1]", f.Gamma)
	case !(f.Beta > 0 && f.Beta <= 1):
		bad = fmt.Sprintf("sampler.beta = %v; it must be in (0, 1]", f.Beta)
	case f.LOO != LOOAll && f.LOO != LOOFirst:
		bad = fmt.Sprintf("sampler.loo = %q; use %q or %q", f.LOO, LOOAll, LOOFirst)
	}
	if bad != "" {
		return nil, fmt.Errorf("%s: %w", bad, fl.ErrInvalid)
	}
	return f, nil
}

// fedcorState is FedCor's memory (fl.State.Meta), in float64.
type fedcorState struct {
	// Losses are F_k(θ^{t−1}) as answered in round LossRound = t.
	Losses    []float64 `json:"losses,omitempty"`
	LossRound int       `json:"loss_round,omitempty"`
	// Data are the loss changes of the last random rounds, oldest first.
	Data []fedcorSample `json:"data,omitempty"`
	// X are the embeddings (n×D, row-major), nil before the first fit; Mu
	// the GP's mean; Alpha the discounts α_k.
	X     []float64 `json:"x,omitempty"`
	Mu    []float64 `json:"mu,omitempty"`
	Alpha []float64 `json:"alpha"`
}

type fedcorSample struct {
	Round  int       `json:"round"`
	Change []float64 `json:"change"`
}

// random reports whether round t selects at random (warm-up or GP training).
func (f FedCor) random(t int) bool {
	return t >= 1 && (t <= f.Warmup || (t-f.Warmup)%f.Interval == 0)
}

// asks reports whether round t asks every client for its loss.
func (f FedCor) asks(t int) bool { return f.LossesEveryRound || f.random(t) || f.random(t-1) }

// Init implements fl.Learner.
func (f FedCor) Init(pop fl.Population) (fl.State, error) {
	var s fl.State
	alpha := make([]float64, pop.N())
	for k := range alpha {
		alpha[k] = 1
	}
	err := s.SetMeta(fedcorState{Alpha: alpha})
	return s, err
}

func (f FedCor) decode(st fl.State, n int) (fedcorState, error) {
	var s fedcorState
	if err := st.DecodeMeta(&s); err != nil {
		return s, err
	}
	if len(s.Alpha) != n || (s.X != nil && len(s.X) != n*f.Dimension) || (s.Losses != nil && len(s.Losses) != n) {
		return s, fmt.Errorf("fedcor: state for %d clients and dimension %d does not fit %d clients and dimension %d (was it written by another point?): %w",
			len(s.Alpha), len(s.X)/max(len(s.Alpha), 1), n, f.Dimension, fl.ErrInvalid)
	}
	return s, nil
}

// losses returns every client's loss from round t's answers, in client order.
func losses(answers []fl.Answer, n int) ([]float64, error) {
	if len(answers) != n {
		return nil, fmt.Errorf("fedcor: %d answers for %d clients; it asks every client once: %w", len(answers), n, fl.ErrInvalid)
	}
	out := make([]float64, n)
	seen := make([]bool, n)
	for _, a := range answers {
		if a.Ask != fl.AskLoss || a.Client < 0 || a.Client >= n || seen[a.Client] {
			return nil, fmt.Errorf("fedcor: answer %+v is not one loss per client: %w", a, fl.ErrInvalid)
		}
		seen[a.Client] = true
		out[a.Client] = a.Loss
	}
	return out, nil
}

// advance is what round t learns from its answers, before it selects: the
// loss changes of round t−1 if it was a random round, and the GP fitted to
// them if they complete the warm-up or a training round. Plan and Observe
// both run it, from the same state, answers and stream.
func (f FedCor) advance(s fedcorState, t int, answers []fl.Answer, pop fl.Population, r *rand.Rand) (fedcorState, error) {
	n := pop.N()
	if !f.asks(t) {
		return s, nil
	}
	ls, err := losses(answers, n)
	if err != nil {
		return s, err
	}
	prev := t - 1
	if f.random(prev) && s.LossRound == prev && s.Losses != nil {
		change := make([]float64, n)
		for k := range change {
			change[k] = ls[k] - s.Losses[k]
		}
		s.Data = append(slices.DeleteFunc(slices.Clone(s.Data), func(d fedcorSample) bool { return d.Round < prev-f.History }),
			fedcorSample{Round: prev, Change: change})
		if prev >= f.Warmup {
			epochs := f.Epochs
			if prev == f.Warmup {
				epochs = f.WarmupEpochs
			}
			if err := f.fit(&s, prev, n, epochs, r); err != nil {
				return s, fmt.Errorf("fedcor: GP fit on the loss changes up to round %d: %v: %w", prev, err, fl.ErrDiverged)
			}
		}
	}
	s.Losses, s.LossRound = ls, t
	return s, nil
}

// fit fits the GP to the data, newest round newest, and resets α.
func (f FedCor) fit(s *fedcorState, newest, n, epochs int, r *rand.Rand) error {
	ys := make([][]float64, len(s.Data))
	w := make([]float64, len(s.Data))
	for e, d := range s.Data {
		ys[e] = d.Change
		w[e] = math.Pow(f.Gamma, float64(newest-d.Round))
	}
	if s.X == nil {
		s.X = make([]float64, n*f.Dimension)
		for i := range s.X {
			s.X[i] = r.NormFloat64() / math.Sqrt(float64(f.Dimension))
		}
	} else {
		s.X = slices.Clone(s.X)
	}
	s.Mu = gp.Mean(ys, w, n)
	p := gp.Problem{N: n, D: f.Dimension, Noise: f.Noise, Mu: s.Mu, Ys: ys, W: w}
	if f.LOO == LOOFirst {
		p.Terms = []int{0}
	}
	if _, err := gp.Fit(p, s.X, epochs, f.LR); err != nil {
		return err
	}
	for k := range s.Alpha {
		s.Alpha[k] = 1
	}
	return nil
}

// Plan implements fl.Planner.
func (f FedCor) Plan(in fl.PlanInput, r *rand.Rand) (fl.Plan, error) {
	n := in.Pop.N()
	if f.M > n {
		return fl.Plan{}, fmt.Errorf("clients_per_round = %d exceeds the %d clients; lower it: %w", f.M, n, fl.ErrInvalid)
	}
	if f.asks(in.Round) && len(in.Answers) == 0 {
		all := make([]int, n)
		for k := range all {
			all[k] = k
		}
		return fl.Plan{Query: &fl.Query{Ask: fl.AskLoss, Clients: all}}, nil
	}
	s, err := f.decode(in.State, n)
	if err != nil {
		return fl.Plan{}, err
	}
	s.Alpha = slices.Clone(s.Alpha)
	if s, err = f.advance(s, in.Round, in.Answers, in.Pop, r); err != nil {
		return fl.Plan{}, err
	}
	var picked []int
	if f.random(in.Round) || s.X == nil {
		if picked, err = weightedWithoutReplacement(in.Pop.P, f.M, r); err != nil {
			return fl.Plan{}, err
		}
	} else {
		picked = gp.Select(s.X, n, f.Dimension, f.Noise, in.Pop.P, s.Alpha, f.M)
	}
	sel := fl.Selection{Clients: slices.Sorted(slices.Values(picked)), Weights: make([]float64, f.M), Draws: make([]int, f.M)}
	for i := range sel.Weights {
		sel.Weights[i], sel.Draws[i] = 1/float64(f.M), 1
	}
	return fl.Plan{Selection: &sel}, nil
}

// Observe implements fl.Learner: it replays what round in.Round's Plan
// learnt, keeps the round's losses, and anneals the discounts of the
// clients the GP selected.
func (f FedCor) Observe(in fl.ObserveInput) (fl.State, error) {
	n := in.Pop.N()
	s, err := f.decode(in.State, n)
	if err != nil {
		return fl.State{}, err
	}
	s.Alpha = slices.Clone(s.Alpha)
	if s, err = f.advance(s, in.Round, in.Answers, in.Pop, in.Rand); err != nil {
		return fl.State{}, err
	}
	if !f.random(in.Round) && s.X != nil {
		for _, k := range in.Selection.Clients {
			s.Alpha[k] *= f.Beta
		}
	}
	var out fl.State
	err = out.SetMeta(s)
	return out, err
}
