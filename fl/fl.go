// Package fl holds the federated-learning vocabulary shared by every method:
// random streams keyed by (seed, point, round, client, purpose), the client
// population a sampler draws from, the selection it returns, the aggregation
// contract, and the registry that maps the names in a sweep spec to methods.
//
// The package is plain Go: no Temporal, no blob storage, no gorgonia. The round
// itself, which needs a trainer and data, is composed in package engine.
package fl

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/errkind"
)

// ErrInvalid marks bad input: a spec, option or argument that can never work.
// Callers treat it as non-retryable.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid input")

// ErrDiverged marks a numerical blow-up (NaN or Inf) in a model or update. It
// is an outcome of the point, recorded, not retried.
var ErrDiverged = errkind.New(errkind.Diverged, "diverged")

// Population is what a sampler may know about the clients: plain data, loaded
// by the caller. Sizes[k] is client k's number of training samples n_k and
// P[k] its importance p_k (Σ p_k = 1) in the objective Σ_k p_k L_k
// (Fraboni et al. 2022, arXiv:2107.12211, eq. (1)).
type Population struct {
	Sizes []int
	P     []float64
	// Entropy[k] is the true entropy (nats) of client k's training label
	// distribution. Only oracle samplers (HiCS-FL's oracle) may read it: a
	// real server never knows it.
	Entropy []float64
	// Classes is the number of classes C of the task (the length of a
	// ClientSummary.BiasDelta); 0 when the caller does not say.
	Classes int
}

// N returns the number of clients.
func (p Population) N() int { return len(p.Sizes) }

// Selection is one round's sample: the distinct clients to train, in
// ascending order, with their aggregation weights ω_k(S_t) and the number of
// times each was drawn (1 unless the scheme samples with replacement).
type Selection struct {
	Clients []int     `json:"clients"`
	Weights []float64 `json:"weights"`
	Draws   []int     `json:"draws"`
	// Entropy and Cluster are, when the sampler has them, what it knew of
	// each selected client when it chose (in Clients order): HiCS-FL's
	// entropy estimate Ĥ_k (the true label entropy for its oracle), and the
	// client's cluster. The clients table records them as entropy_est and
	// cluster.
	Entropy []float64 `json:"entropy,omitempty"`
	Cluster []int     `json:"cluster,omitempty"`
}

// Sampler picks round t's clients and their stochastic weights ω_k(S_t).
// It must be pure: equal arguments give an equal Selection. It never reads the
// clock or globals; all randomness comes from r.
type Sampler interface {
	Sample(t int, pop Population, r *rand.Rand) (Selection, error)
}

// ClientSummary is what the server learns about a trained client besides
// the vectors it uploads (which stay in blob storage). Every loss is a mean
// cross-entropy; each field's name says on what and at which model.
type ClientSummary struct {
	Client      int `json:"client"`
	NumExamples int `json:"n"`       // n_k, the client's training-set size
	Samples     int `json:"samples"` // samples processed in local training
	Steps       int `json:"steps"`   // τ_k, local optimiser steps
	// BatchLoss is the mean over the local steps of each minibatch's loss:
	// what the client saw while training.
	BatchLoss float64 `json:"batch_loss"`
	// LossBefore is F_k(θ^t), the loss of the received global model on the
	// client's full training set before training; LossAfter is F_k(θ_k),
	// the local model's loss on the same set after training. nil when not
	// measured. FedEBA uses LossAfter for its weights and
	// LossBefore for its fairness angle (Wang et al., specs/fedeba.md §1.1, §1.3).
	LossBefore *float64 `json:"loss_before,omitempty"`
	LossAfter  *float64 `json:"loss_after,omitempty"`
	// BiasDelta is Δb = b_k − b, the update of the output layer's bias
	// (one value per class): HiCS-FL's and the label-recovery attacks'
	// signal.
	BiasDelta []float64 `json:"bias_delta,omitempty"`
	// Scalars are an algorithm's small per-client outputs, by name (FedNova's
	// normalising factor a_k as "fednova.a").
	Scalars map[string]float64 `json:"scalars,omitempty"`
	// LabelCounts are the label counts of the samples local training
	// processed (trainer.TrainResult.LabelCounts): the truth the
	// label-recovery attacks are scored against. No server-side method
	// may read them; only the attacks' evaluator does.
	LabelCounts []int `json:"label_counts,omitempty"`
	// Down and Up count the values the client received (θ^t, the server's
	// sent vectors, the round's broadcast) and uploaded (its update, further
	// vectors and scalars) for its training.
	Down int64 `json:"down"`
	Up   int64 `json:"up"`
}

// AggReport is what an algorithm's server decided in a round beyond the
// new model: the effective weight of each selected client's update (in
// Selection.Clients order; FedEBA's softmax p_i), and FedEBA+'s fairness
// angle φ_t (degrees) and whether the round was gradient-aligned. Nil
// fields were not decided.
type AggReport struct {
	Weights   []float64 `json:"weights,omitempty"`
	FairAngle *float64  `json:"fair_angle,omitempty"`
	Aligned   *bool     `json:"aligned,omitempty"`
}

// Rule turns a round's client deltas into a new global model.
type Rule interface {
	// Begin starts aggregating onto global for the clients of sel, whose
	// summaries sums are in the same order as sel.Clients.
	Begin(global []float32, sel Selection, sums []ClientSummary) (Aggregation, error)
}

// Aggregation accumulates the deltas Δ_k = θ_k − θ of one round. Add is called
// once per selected client in ascending client order, so results are
// bit-reproducible; Finish writes the new global model into dst.
type Aggregation interface {
	Add(client int, delta []float32) error
	Finish(dst []float32) error
}

// ServerOptimizer is the server's optimiser across rounds (Reddi et al.,
// "Adaptive Federated Optimization", ICLR 2021, Algorithm 2): it treats the
// round's proposed step, the algorithm's new model minus θ^t, as the
// pseudo-gradient Δ_t and turns it into the step actually taken, keeping
// its moments in State between rounds (state.bin beside the algorithm's).
// Like a Sampler it is pure: equal arguments give equal results.
type ServerOptimizer interface {
	// Init returns the optimiser's memory before round 1 for a model of
	// numParams values.
	Init(numParams int) (State, error)
	// Step writes θ^{t+1} into s.Dst and returns the memory after the round.
	Step(s OptimizerStep) (State, error)
}

// OptimizerStep is one round of a ServerOptimizer.
type OptimizerStep struct {
	Global   []float32 // θ^t, read only
	Proposed []float32 // the algorithm's θ^{t+1}: Δ_t = Proposed − Global; read only unless it is Dst
	State    State     // the optimiser's memory after round t−1
	// Trainable marks the entries the optimiser steps; the others (BatchNorm
	// running statistics) take the proposed value. nil: every entry.
	Trainable []bool
	Dst       []float32 // θ^{t+1}; may be Proposed itself
}

// Importance names how client importances p_k are set.
const (
	ImportanceSize    = "size"    // p_k = n_k / M, M = Σ n_k (Fraboni et al. 2022, case (b))
	ImportanceUniform = "uniform" // p_k = 1/n (case (a))
)

// NewPopulation builds the population of clients with the given training
// sizes and importance rule. The same p must be used everywhere a scheme needs
// it: objective, sampling probabilities and weights (specs/sampling-theory.md §4.5).
func NewPopulation(sizes []int, importance string) (Population, error) {
	n := len(sizes)
	if n == 0 {
		return Population{}, fmt.Errorf("population: no clients: %w", ErrInvalid)
	}
	total := 0
	for k, s := range sizes {
		if s <= 0 {
			return Population{}, fmt.Errorf("population: client %d has %d training samples; every client needs at least one: %w", k, s, ErrInvalid)
		}
		total += s
	}
	p := make([]float64, n)
	switch importance {
	case ImportanceSize, "":
		for k, s := range sizes {
			p[k] = float64(s) / float64(total)
		}
	case ImportanceUniform:
		for k := range p {
			p[k] = 1 / float64(n)
		}
	default:
		return Population{}, fmt.Errorf("importance = %q is unknown; use %q or %q: %w", importance, ImportanceSize, ImportanceUniform, ErrInvalid)
	}
	return Population{Sizes: slices.Clone(sizes), P: p}, nil
}
