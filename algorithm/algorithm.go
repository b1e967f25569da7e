// Package algorithm implements federated-learning algorithms: what a client
// does with the global model in a round (its local objective, the state it
// keeps between its rounds, what it uploads) and how the server turns the
// uploads into the next global model and its own state.
//
// An algorithm is plain Go. Its state comes in and goes out explicitly
// (fl.State); it trains through the Local it is handed, which is bound to
// the client's data, the round's hyperparameters and the client's keyed
// random stream; it knows nothing of Temporal or blob storage. The engine
// loads and stores the states (docs/architecture.md, "State").
//
// Each algorithm's equations live in one file, named after it, with its
// paper cited: fedavg.go (FedAvg and FedProx), scaffold.go, feddyn.go,
// moon.go, fednova.go, feddc.go; the fairness methods fedeba.go (FedEBA,
// FedEBA+, Prac-FedEBA+), qffl.go, term.go, afl.go, fedmgda.go (whose QP
// solver is package qp's SimplexBox), propfair.go and fedfv.go; FNR-FL,
// with its refine phase (Refiner), in fnrfl.go. exposure.go says what a
// curious server knows of each client's round (Expose, for the attacks),
// derived from the algorithm's Objective.
//
// # Aggregation weights
//
// Every algorithm aggregates with the point's rule (package aggregate) and
// the sampler's weights ω_k(S_t): θ^{t+1} = θ^t + η_g Σ_k ω_k Δ_k before any
// algorithm-specific server step. The papers' plain means over the
// participants are the uniform sampler's weights under importance: uniform
// (ω_k = 1/m), and NIID-Bench's size-weighted means over the participants are
// aggregator {normalize: true} under importance: size.
//
// The fairness methods choose the weights themselves: TERM, AFL and
// FedMGDA+ run the rule with their weights in place of ω_k (so η_g is the
// rule's server_lr), FedEBA and its variants take the rule's server_lr for
// their own combination, and all of them report their weights (Reporting);
// q-FFL's normalised step and FedFV's projected mean replace the rule and
// ignore ω_k and η_g.
package algorithm

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// Algorithm is an FL algorithm's client and server halves. Embed Base for
// the halves an algorithm does not change.
type Algorithm interface {
	// Check reports whether the algorithm can run with this model and
	// local optimiser; errors name the field and the fix and wrap
	// fl.ErrInvalid.
	Check(spec trainer.Spec, hp trainer.Hyper) error

	// Init returns the server's memory before round 1, for a model of
	// numParams values (SCAFFOLD's c = 0).
	Init(numParams int) (fl.State, error)
	// Sends names the vectors of the server's memory that every selected
	// client receives with θ^t (SCAFFOLD's c); the others stay on the
	// server.
	Sends() []string

	// Objective is the client's local objective in round c.Round: the
	// terms it adds to the cross-entropy (trainer.Objective), from what
	// the client holds (c.Server, c.State, and c.Local's embeddings; not
	// its training, which has not run). It is the one statement of what a
	// client trains with: TrainClient trains with it, and Expose tells the
	// attacks from it.
	Objective(c Client) (trainer.Objective, error)

	// Begin starts aggregating round r's uploads.
	Begin(r Server) (Aggregation, error)
}

// A Trainer is an algorithm whose client uploads more than its update, or
// keeps state (SCAFFOLD's Δc_i and c_i, FedNova's a_k): TrainClient hands
// its Train the objective Objective returned, to train with as it is.
type Trainer interface {
	Train(ctx context.Context, c Client, obj trainer.Objective) (Upload, error)
}

// TrainClient runs client c.ID's local round of a: it trains a copy of θ^t
// with a.Objective(c) and uploads Δ_k = θ_k − θ^t, or hands the objective
// to a's own Train when a is a Trainer.
func TrainClient(ctx context.Context, a Algorithm, c Client) (Upload, error) {
	obj, err := a.Objective(c)
	if err != nil {
		return Upload{}, err
	}
	if t, ok := a.(Trainer); ok {
		return t.Train(ctx, c, obj)
	}
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	return Upload{Weights: w, Delta: Delta(w, c.Global), Train: res}, nil
}

// Base is the halves an algorithm leaves as FedAvg has them: no check,
// no server memory, nothing sent, the plain cross-entropy, and the point's
// rule as the server. Algorithms embed it and override what they change.
type Base struct{}

func (Base) Check(trainer.Spec, trainer.Hyper) error     { return nil }
func (Base) Init(int) (fl.State, error)                  { return fl.State{}, nil }
func (Base) Sends() []string                             { return nil }
func (Base) Objective(Client) (trainer.Objective, error) { return trainer.Objective{}, nil }
func (Base) Begin(r Server) (Aggregation, error)         { return ruleOnly{}.Begin(r) }

// Client is one client's round as its algorithm sees it.
type Client struct {
	Round  int
	ID     int
	Global []float32 // θ^t, read only
	// Server holds the vectors the algorithm's Sends names, from the
	// server's memory after round t−1, and the round's broadcast vector
	// under BroadcastVector when the round has one.
	Server fl.State
	// State is the client's own memory, as its last round left it; empty
	// in its first round.
	State fl.State
	Local Local
}

// BroadcastVector names the round's broadcast vector in Client.Server.
const BroadcastVector = "broadcast"

// Local is a client's local training: bound to its training data, the
// round's hyperparameters and its random stream.
type Local interface {
	// Train trains w in place, from the values it holds (a copy of θ^t
	// for most algorithms), with obj's terms added to the cross-entropy.
	// It consumes the client's training stream: call it once per round.
	Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error)
	// Embed returns the embeddings (trainer.Forward) of the client's
	// training samples under w, one row of Embedding() values per sample,
	// in the order Train's Objective.Contrast expects.
	Embed(w []float32) ([]float32, error)
	// Hyper returns the round's local hyperparameters (after lr_decay).
	Hyper() trainer.Hyper
	// Steps returns the optimiser steps Train will take (K).
	Steps() int
	// Net returns the model's architecture.
	Net() *trainer.Net
	// SizeRatio returns n_k·N/Σ_j n_j: the client's training-set size
	// relative to the mean client's (the official FedDyn and FedDC codes'
	// weight_list entry).
	SizeRatio() float64
}

// Upload is what a client's round produces.
type Upload struct {
	// Weights is θ_k, the trained local model: the engine measures its
	// loss and its output-bias update Δb from it.
	Weights []float32
	// Delta is what the server aggregates: θ_k − θ^t for most algorithms.
	Delta []float32
	// Vectors are further uploads (SCAFFOLD's Δc_k).
	Vectors fl.State
	// Scalars are small per-client outputs the server needs (FedNova's
	// a_k); they travel in the client's summary.
	Scalars map[string]float64
	// State is the client's memory after this round; empty keeps none.
	State fl.State
	// Train is what local training reported.
	Train trainer.TrainResult
}

// Server is one round's aggregation as an algorithm sees it.
type Server struct {
	Round  int
	Global []float32 // θ^t, read only
	// State is the server's memory after round t−1.
	State     fl.State
	Selection fl.Selection
	Clients   []fl.ClientSummary // in Selection.Clients order
	Rule      fl.Rule            // the point's aggregation rule
	N         int                // clients in the population
	Net       *trainer.Net       // the model's architecture; nil: every entry is a trainable parameter
	// Hyper is the round's local hyperparameters (after lr_decay), as
	// the clients trained with them: q-FFL's L = 1/η_L.
	Hyper trainer.Hyper
}

// Aggregation accumulates a round's uploads. Add is called once per selected
// client, in ascending client order, so results are bit-reproducible; Finish
// writes θ^{t+1} into dst and returns the server's memory after the round.
type Aggregation interface {
	Add(client int, delta []float32, up fl.State) error
	Finish(dst []float32) (fl.State, error)
}

// A LossUser is an algorithm whose server reads the clients' full-set
// losses before or after training (fl.ClientSummary.LossBefore and
// LossAfter): the engine measures those it reads even when the point's
// metrics.client_losses is false, and only those.
type LossUser interface {
	// UsesLosses reports which losses the server reads: before
	// training, F_k(θ^t), and after it, F_k(θ_k).
	UsesLosses() (before, after bool)
}

// A Reporter is an algorithm whose reported model is not the iterate the
// clients train from: AFL reports the running average of its iterates
// (Mohri et al. 2019). Evaluation scores Reported's model; the rounds'
// model_sha256 stays the iterate's.
type Reporter interface {
	// Reported returns the model to evaluate after a round, from the
	// round's θ and the server's memory after it.
	Reported(global []float32, state fl.State) ([]float32, error)
}

// A Reporting aggregation says how it weighed the round's clients, for the
// clients and rounds tables (fl.AggReport). Aggregations without it
// weighed them by the selection's ω_k.
type Reporting interface {
	Report() fl.AggReport
}

// Delta returns θ_k − θ^t.
func Delta(w, global []float32) []float32 {
	d := make([]float32, len(w))
	for j := range w {
		d[j] = w[j] - global[j]
	}
	return d
}

// ruleOnly is the server half of the algorithms whose server is the rule:
// no memory, nothing sent, uploads aggregated as they come.
type ruleOnly struct{}

func (ruleOnly) Init(int) (fl.State, error) { return fl.State{}, nil }
func (ruleOnly) Sends() []string            { return nil }
func (ruleOnly) Begin(r Server) (Aggregation, error) {
	agg, err := r.Rule.Begin(r.Global, r.Selection, r.Clients)
	if err != nil {
		return nil, err
	}
	return plainAgg{agg}, nil
}

// plainAgg adapts a rule's aggregation.
type plainAgg struct{ fl.Aggregation }

func (a plainAgg) Add(client int, delta []float32, _ fl.State) error {
	return a.Aggregation.Add(client, delta)
}
func (a plainAgg) Finish(dst []float32) (fl.State, error) {
	return fl.State{}, a.Aggregation.Finish(dst)
}

// lossesBefore returns F_k(θ^t) of the round's clients (ClientSummary's
// LossBefore), in Selection order, for the algorithms whose server weighs
// clients by their loss at the global model.
func lossesBefore(name string, r Server) ([]float64, error) { return clientLosses(name, r, false) }

// clientLosses returns the round's clients' losses before training,
// F_k(θ^t), or after it, F_k(θ_k) (ClientSummary's LossBefore or
// LossAfter), in Selection order.
func clientLosses(name string, r Server, after bool) ([]float64, error) {
	if len(r.Clients) != len(r.Selection.Clients) {
		return nil, fmt.Errorf("%s: %d summaries for %d clients: %w", name, len(r.Clients), len(r.Selection.Clients), fl.ErrInvalid)
	}
	which := "before"
	if after {
		which = "after"
	}
	f := make([]float64, len(r.Clients))
	for i, s := range r.Clients {
		l := s.LossBefore
		if after {
			l = s.LossAfter
		}
		if l == nil {
			return nil, fmt.Errorf("%s: client %d's summary has no loss %s training (the engine measures it for a LossUser; was it trained by another algorithm?): %w", name, s.Client, which, fl.ErrInvalid)
		}
		if v := *l; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%s: client %d's loss %s training is %v; want a finite cross-entropy ≥ 0: %w", name, s.Client, which, v, fl.ErrDiverged)
		}
		f[i] = *l
	}
	return f, nil
}

// reweighted begins the point's rule with the selection's weights replaced
// by w (TERM's, AFL's and FedMGDA+'s weights in place of the sampler's ω_k),
// so the rule's server_lr is η_g.
func reweighted(r Server, w []float64) (fl.Aggregation, error) {
	sel := r.Selection
	sel.Weights = w
	return r.Rule.Begin(r.Global, sel, r.Clients)
}

// clientVector returns the named vector of a client's state, or n zeros in
// the client's first round (empty state): every client-state vector of the
// built-in algorithms starts at 0.
func clientVector(s fl.State, name string, n int) ([]float32, error) {
	if s.Empty() {
		return make([]float32, n), nil
	}
	return s.Vector(name, n)
}

// trainable reports, for each entry of n's flat vector, whether it is a
// trainable parameter (and not a BatchNorm running statistic). FedDyn's and
// FedDC's corrections act on the trainable entries only, as their official
// codes, which flatten model.parameters(), do.
func trainable(n *trainer.Net, size int) []bool {
	t := make([]bool, size)
	if n == nil {
		for j := range t {
			t[j] = true
		}
		return t
	}
	for _, p := range n.Params() {
		for j := p.Offset; j < p.Offset+p.Len; j++ {
			t[j] = p.Trainable
		}
	}
	return t
}

// finite checks an option value.
func finite(name string, v float64, lo float64, open bool) error {
	ok := !math.IsNaN(v) && !math.IsInf(v, 0) && (v > lo || (!open && v == lo))
	if !ok {
		op := "≥"
		if open {
			op = ">"
		}
		return fmt.Errorf("%s = %v; it must be a finite number %s %v: %w", name, v, op, lo, fl.ErrInvalid)
	}
	return nil
}

// A Broadcaster is an algorithm whose server sends the round's selected
// clients one vector, computed from their answers to its questions, that
// they all train with (FedEBA+'s aligned gradient g̃, specs/fedeba.md §1.5).
// The engine calls Broadcast with the answers so far until it returns no
// Query; the Vector then reaches every client's Client.Server under
// BroadcastVector.
type Broadcaster interface {
	Broadcast(b BroadcastRound) (Broadcast, error)
}

// BroadcastRound is what a Broadcaster decides from.
type BroadcastRound struct {
	Round     int
	Global    []float32 // θ^t, read only
	State     fl.State  // the server's memory after round t−1
	Selection fl.Selection
	Answers   []fl.Answer
	// Vector returns the vector of an answer to an fl.AskGradient query.
	Vector func(a fl.Answer) ([]float32, error)
}

// Broadcast is a Broadcaster's decision: ask Query first, or send Vector
// (nil: nothing this round).
type Broadcast struct {
	Query  *fl.Query
	Vector []float32
}

// A Refiner is an algorithm with a refine phase (FNR-FL): after the round's
// clients trained and before aggregation, its server scores their local
// models on its public data and trains some of them further there; the
// refined models' updates replace the uploaded ones in the aggregation.
type Refiner interface {
	// PublicFrom says where the public data comes from: PublicTrain (the
	// partition's reserved public set) or PublicTest (the test split: a
	// leak, for diagnostics only).
	PublicFrom() string
	Refine(ctx context.Context, r Refinement) (Refined, error)
}

// Where a Refiner's public data comes from.
const (
	PublicTrain = "train"
	PublicTest  = "test"
)

// Refinement is one round's refine phase as a Refiner sees it.
type Refinement struct {
	Round   int
	Global  []float32
	Clients []int       // the round's trained clients, in selection order
	Local   [][]float32 // their local models θ^t + Δ_k, in Clients order; read only
	Public  Public
	Net     *trainer.Net
	Hyper   trainer.Hyper // the round's local hyperparameters
}

// Public is the server's public data, bound to the trainer. Its samples are
// clean (no client's feature noise) and in a fixed order.
type Public interface {
	Len() int
	Classes() int
	Labels() []uint8 // in the set's order
	// Forward returns the embeddings of the public samples under w (eval
	// mode), Len rows of Net.Embedding() values, and whether w predicts
	// each one's label.
	Forward(w []float32) (emb []float32, correct []bool, err error)
	// Train trains w in place on the public set with hp and obj, drawing
	// (dropout) from client k's refine stream of the round.
	Train(k int, w []float32, hp trainer.Hyper, obj trainer.Objective) (trainer.TrainResult, error)
}

// Refined is a Refiner's result.
type Refined struct {
	// Weights are the refined local models, by client.
	Weights map[int][]float32
	// PublicAcc is each client's accuracy on the public set, in
	// Refinement.Clients order.
	PublicAcc []float64
	// Penalty is the refinement's regulariser summed over its steps.
	Penalty float64
	// Samples counts the samples passed through models (forward, and
	// backward when training); Up and Down the values exchanged with
	// clients beyond the upload of their models.
	Samples, Up, Down int64
}
