package fl

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// Ask names what a query asks of each client: a quantity of the global model
// θ^t on the client's full local training set.
type Ask string

const (
	// AskLoss asks for F_k(θ^t), the mean cross-entropy (pow-d's candidates,
	// FedCor's loss changes, FedEBA+'s fairness angle).
	AskLoss Ask = "loss"
	// AskGradient asks for ∇F_k(θ^t) and F_k(θ^t). The gradient is a
	// model-sized vector: it stays in blob storage, where a server step reads
	// it (FedEBA+'s gradient alignment, DivFL's client gradients).
	AskGradient Ask = "gradient"
)

// Query asks some clients a question before the server decides (docs/architecture.md, "The round").
type Query struct {
	Ask     Ask   `json:"ask"`
	Clients []int `json:"clients"` // distinct, ascending
	// Note, if not empty, is handed back unread with the answers
	// (PlanInput.Note): what the planner decided before asking, so that the
	// call that reads the answers need not decide it again (DivFL's code
	// setting keeps its selection there instead of recomputing N distances
	// over N remembered gradients).
	Note json.RawMessage `json:"note,omitempty"`
}

// Validate checks q against a population of n clients.
func (q Query) Validate(n int) error {
	if q.Ask != AskLoss && q.Ask != AskGradient {
		return fmt.Errorf("query asks %q; a query asks %q or %q: %w", q.Ask, AskLoss, AskGradient, ErrInvalid)
	}
	if len(q.Clients) == 0 {
		return fmt.Errorf("query of %q names no client: %w", q.Ask, ErrInvalid)
	}
	for i, k := range q.Clients {
		if k < 0 || k >= n || (i > 0 && k <= q.Clients[i-1]) {
			return fmt.Errorf("query clients %v must be distinct, ascending and in [0, %d): %w", q.Clients, n, ErrInvalid)
		}
	}
	return nil
}

// Answer is one client's answer to a query. A vector answer (AskGradient)
// stays in blob storage under a key derived from (round, query, client).
type Answer struct {
	Query   int     `json:"query"` // 1-based index of the query within its round
	Ask     Ask     `json:"ask"`
	Client  int     `json:"client"`
	Loss    float64 `json:"loss"`    // F_k(θ^t)
	Samples int     `json:"samples"` // the samples it was computed on (n_k)
}

// Plan is a decision of a round's server: ask Query first, or go on with
// Selection. Exactly one of them is set.
type Plan struct {
	Query     *Query     `json:"query,omitempty"`
	Selection *Selection `json:"selection,omitempty"`
}

// PlanInput is what a Planner decides round Round from.
type PlanInput struct {
	Round int
	Pop   Population
	// State is the sampler's memory after the previous round: Learner.Init's
	// value before round 1, empty for samplers without memory.
	State State
	// Answers holds every answer given so far in this round, in the order
	// asked; empty on the first call.
	Answers []Answer
	// Note is the Note of the query the last answers answer (Query.Note);
	// empty on the first call, and when the query had none or was run by
	// a build that did not pass notes.
	Note json.RawMessage
	// Vector reads the vector of a gradient answer (DivFL's client
	// gradients) from blob storage.
	Vector func(a Answer) ([]float32, error)
	// Recall reads what the sampler last remembered about client k
	// (ObserveInput.Remember), or nil if it never did (clustered sampling's
	// representative updates). Each call reads blob storage.
	Recall func(k int) ([]float32, error)
}

// A Planner picks a round's clients, possibly after asking some of them a
// question first (pow-d asks d candidates for their loss). The engine calls
// Plan with no answers, runs the returned Query if any, and calls Plan again
// with the answers, a bounded number of times, until it returns a Selection.
// Plan must be pure: equal inputs and an equal stream give an equal Plan; the
// stream is derived afresh for every call, so a Plan called again draws the
// same numbers.
type Planner interface {
	Plan(in PlanInput, r *rand.Rand) (Plan, error)
}

// A Learner is a Planner that remembers what it learns (HiCS-FL's bias
// updates, clustered sampling's representative updates, FedCor's GP). Its
// state lives in the server state written with every round's model, so a
// resumed run plans exactly as an uninterrupted one.
type Learner interface {
	Planner
	// Init returns the memory before round 1.
	Init(pop Population) (State, error)
	// Observe returns the memory after round in.Round, from the memory
	// before it and what the round produced.
	Observe(in ObserveInput) (State, error)
}

// A Scheduled planner's schedule depends on how many rounds T_R the point
// runs (HiCS-FL's annealing γ_t = γ0·(1 − t/T_R), Chen & Vikalo, NeurIPS
// 2024, Eq. (10)). The engine calls WithRounds once, where it builds the
// point's methods, with the point's rounds, so the planner's resolved
// options record the T_R it runs with.
type Scheduled interface {
	Planner
	// WithRounds returns the planner for a point of the given number of
	// rounds; a planner whose options already fix T_R returns itself.
	WithRounds(rounds int) Planner
}

// ObserveInput is what a Learner learns from one round.
type ObserveInput struct {
	Round     int
	Pop       Population
	State     State
	Selection Selection
	Answers   []Answer
	Clients   []ClientSummary // in Selection.Clients order
	// Vector reads the vector of a gradient answer of the round, as
	// PlanInput.Vector does (DivFL remembers its clients' gradients).
	Vector func(a Answer) ([]float32, error)
	// Output locates the model's output layer in a delta.
	Output OutputLayer
	// Delta returns selected client k's uploaded update Δ_k = θ_k − θ^t
	// (whole model; read once from blob storage, so cheap to call again).
	Delta func(k int) ([]float32, error)
	// Rand is the round's sampling stream, derived afresh from the same key
	// as the streams of the round's Plan calls: it draws the numbers they
	// drew, so Observe can replay a random computation its Plan made (FedCor
	// fits its GP while it plans, then again to remember the fit).
	Rand *rand.Rand
	// Remember stores a vector about client k in the sampler's per-client
	// memory, replacing the previous one; PlanInput.Recall reads it back in
	// later rounds. Per-client memory lives in one blob per client, not in
	// the server state, so a large population does not make every round
	// read and write N model-sized vectors.
	Remember func(k int, v []float32)
}

// OutputLayer locates a model's output layer q = W z + b in its flat
// parameter vector: W (Classes × Embedding, row-major) at offset W and b
// (Classes) at offset B.
type OutputLayer struct {
	W, B               int
	Classes, Embedding int
}

// Bias returns the output-bias part of a flat vector v (Δb of a delta).
func (o OutputLayer) Bias(v []float32) []float32 { return v[o.B : o.B+o.Classes] }

// Weights returns the output-weight part of v, row-major (ΔW of a delta).
func (o OutputLayer) Weights(v []float32) []float32 { return v[o.W : o.W+o.Classes*o.Embedding] }

// Planned returns a Sampler as a Planner that never asks: its Plan is the
// sampler's Sample.
func Planned(s Sampler) Planner { return planned{s} }

type planned struct{ s Sampler }

func (p planned) Plan(in PlanInput, r *rand.Rand) (Plan, error) {
	sel, err := p.s.Sample(in.Round, in.Pop, r)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Selection: &sel}, nil
}

// Unplanned returns the Sampler p wraps, if p came from Planned.
func Unplanned(p Planner) (Sampler, bool) {
	w, ok := p.(planned)
	return w.s, ok
}

// MarshalJSON records the wrapped sampler's resolved options.
func (p planned) MarshalJSON() ([]byte, error) { return json.Marshal(p.s) }

// An Inspector looks at each trained client's update before the round
// aggregates it (docs/architecture.md, "The round"): the label-recovery attacks run
// here. It sees only what an honest-but-curious server sees.
type Inspector interface {
	// Inspect returns a small JSON finding about one update, or nil.
	Inspect(u Inspection) (json.RawMessage, error)
}

// Inspection is one client's update as the server received it.
type Inspection struct {
	Round   int
	Client  int
	Global  []float32 // θ^t
	Delta   []float32 // the uploaded Δ_k
	Summary ClientSummary
}
