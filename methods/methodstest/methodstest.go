// Package methodstest holds methods that exercise the round protocol's
// mechanisms in tests, where no built-in method uses them yet: a sampler
// with memory (Cycle), an algorithm with a broadcast phase that asks the
// selected clients for their gradients (Align), and an inspector that
// records what it saw (Recorder). Registry adds them to the built-in
// methods.
package methodstest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// Registry returns the built-in methods plus sampler "cycle", algorithm
// "align" and inspector "record", which records into rec.
func Registry(rec *Recorder) *methods.Registry {
	r := methods.Builtin()
	r.AddSampler("cycle", func(m int, opts fl.Options) (fl.Planner, error) {
		if err := opts.Decode("sampler (cycle)", &struct{}{}); err != nil {
			return nil, err
		}
		return Cycle{M: m}, nil
	})
	r.AddAlgorithm("align", func(opts fl.Options) (algorithm.Algorithm, error) {
		a := Align{Alpha: 0.5}
		if err := opts.Decode("algorithm (align)", &a); err != nil {
			return nil, err
		}
		return a, nil
	})
	r.AddInspector("record", func(opts fl.Options) (fl.Inspector, error) {
		if err := opts.Decode("inspect (record)", &struct{}{}); err != nil {
			return nil, err
		}
		return rec, nil
	})
	return r
}

// Cycle is a sampler with memory: round t selects the M clients after the
// last one it selected, cyclically, and remembers where it stopped (Meta)
// and how often it chose each client (vector "seen"). A run that loses this
// memory on resume selects other clients. It also remembers, per client, the
// round it last trained in and its output-bias update (read from the
// update the round aggregated), and reports the recalled round as the
// selection's Entropy, so a test sees the per-client memory in the clients
// table.
type Cycle struct {
	M int `json:"m"`
}

type cycleMeta struct {
	Next int `json:"next"`
}

var _ fl.Learner = Cycle{}

// Init implements fl.Learner.
func (c Cycle) Init(pop fl.Population) (fl.State, error) {
	var s fl.State
	s.Set("seen", make([]float32, pop.N()))
	return s, s.SetMeta(cycleMeta{})
}

// Plan implements fl.Planner: it selects from its memory alone.
func (c Cycle) Plan(in fl.PlanInput, _ *rand.Rand) (fl.Plan, error) {
	var m cycleMeta
	if err := in.State.DecodeMeta(&m); err != nil {
		return fl.Plan{}, err
	}
	n := in.Pop.N()
	sel := fl.Selection{}
	for i := range c.M {
		sel.Clients = append(sel.Clients, (m.Next+i)%n)
	}
	slices.Sort(sel.Clients)
	for _, k := range sel.Clients {
		sel.Weights = append(sel.Weights, float64(n)/float64(c.M)*in.Pop.P[k])
		sel.Draws = append(sel.Draws, 1)
		last, err := c.lastSeen(in, k)
		if err != nil {
			return fl.Plan{}, err
		}
		sel.Entropy = append(sel.Entropy, float64(last))
	}
	return fl.Plan{Selection: &sel}, nil
}

// lastSeen recalls the round in which client k last trained, 0 if never:
// the first value of what Observe remembered about it.
func (c Cycle) lastSeen(in fl.PlanInput, k int) (int, error) {
	v, err := in.Recall(k)
	if err != nil || v == nil {
		return 0, err
	}
	if r := int(v[0]); r >= 1 && r < in.Round {
		return r, nil
	}
	return 0, fmt.Errorf("cycle: client %d's memory says round %v, planning round %d: %w", k, v[0], in.Round, fl.ErrInvalid)
}

// Observe implements fl.Learner.
func (c Cycle) Observe(in fl.ObserveInput) (fl.State, error) {
	var m cycleMeta
	if err := in.State.DecodeMeta(&m); err != nil {
		return fl.State{}, err
	}
	seen, err := in.State.Vector("seen", in.Pop.N())
	if err != nil {
		return fl.State{}, err
	}
	next := fl.State{}
	s := slices.Clone(seen)
	for i, k := range in.Selection.Clients {
		s[k]++
		d, err := in.Delta(k)
		if err != nil {
			return fl.State{}, err
		}
		b := in.Output.Bias(d)
		for j, want := range in.Clients[i].BiasDelta {
			if math.Abs(float64(b[j])-want) > 1e-6*(1+math.Abs(want)) {
				return fl.State{}, fmt.Errorf("cycle: client %d's delta has output bias %v, its summary Δb %v", k, b, in.Clients[i].BiasDelta)
			}
		}
		in.Remember(k, append([]float32{float32(in.Round)}, b...))
	}
	next.Set("seen", s)
	return next, next.SetMeta(cycleMeta{Next: (m.Next + c.M) % in.Pop.N()})
}

// Align is FedAvg whose clients train along h = (1 − α)·∇F_k + α·g̃, g̃ the
// mean of the selected clients' full gradients at θ^t: the mechanism of
// FedEBA+'s gradient alignment (specs/fedeba.md §1.5) with uniform
// weights. Its broadcast asks the selected clients for their gradients,
// then sends their mean.
type Align struct {
	algorithm.Base
	Alpha float64 `json:"alpha"`
}

var (
	_ algorithm.Algorithm   = Align{}
	_ algorithm.Broadcaster = Align{}
)

// Broadcast implements algorithm.Broadcaster.
func (Align) Broadcast(b algorithm.BroadcastRound) (algorithm.Broadcast, error) {
	var grads []fl.Answer
	for _, a := range b.Answers {
		if a.Ask == fl.AskGradient {
			grads = append(grads, a)
		}
	}
	if len(grads) == 0 {
		return algorithm.Broadcast{Query: &fl.Query{Ask: fl.AskGradient, Clients: slices.Clone(b.Selection.Clients)}}, nil
	}
	if len(grads) != len(b.Selection.Clients) {
		return algorithm.Broadcast{}, fmt.Errorf("align: %d gradients for %d clients: %w", len(grads), len(b.Selection.Clients), fl.ErrInvalid)
	}
	sum := make([]float64, len(b.Global))
	for _, a := range grads {
		g, err := b.Vector(a)
		if err != nil {
			return algorithm.Broadcast{}, err
		}
		for j, v := range g {
			sum[j] += float64(v)
		}
	}
	mean := make([]float32, len(sum))
	for j, v := range sum {
		mean[j] = float32(v / float64(len(grads)))
	}
	return algorithm.Broadcast{Vector: mean}, nil
}

// Objective implements algorithm.Algorithm: every local step descends
// (1 − α)·∇F_k + α·g̃ with the broadcast g̃.
func (a Align) Objective(c algorithm.Client) (trainer.Objective, error) {
	g, err := c.Server.Vector(algorithm.BroadcastVector, len(c.Global))
	if err != nil {
		return trainer.Objective{}, err
	}
	return trainer.Aligned(a.Alpha, g), nil
}

// Inspection is what Recorder saw of one update.
type Inspection struct {
	Round, Client int
	Delta         string // store.Checksum of the update
	// Of the summary it was handed: the client it names, and its steps.
	SummaryClient, Steps int
}

// Recorder is an inspector that records every update it inspects and finds
// its L2 norm.
type Recorder struct {
	mu   sync.Mutex
	seen []Inspection
}

// Inspect implements fl.Inspector.
func (r *Recorder) Inspect(u fl.Inspection) (json.RawMessage, error) {
	r.mu.Lock()
	r.seen = append(r.seen, Inspection{Round: u.Round, Client: u.Client, Delta: store.Checksum(u.Delta), SummaryClient: u.Summary.Client, Steps: u.Summary.Steps})
	r.mu.Unlock()
	s := 0.0
	for _, v := range u.Delta {
		s += float64(v) * float64(v)
	}
	return json.Marshal(map[string]float64{"norm": math.Sqrt(s)})
}

// Seen returns the inspections so far, in the order they happened.
func (r *Recorder) Seen() []Inspection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// MarshalJSON records no options.
func (r *Recorder) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }
