package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// SelectClients asks the point's sampler for round r's decision: the clients
// to train with their weights, or a question for some clients first
// (docs/architecture.md, "The round"). The sampler decides from its memory
// after round r−1 and the answers so far.
func (e *Engine) SelectClients(ctx context.Context, in steps.SelectInput) (fl.Plan, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return fl.Plan{}, err
	}
	st, err := e.loadSamplerState(ctx, env, in.Round-1)
	if err != nil {
		return fl.Plan{}, err
	}
	return e.plan(ctx, env, in.Round, st, in.Answers, in.Note)
}

// plan runs the sampler and checks what it returns.
func (e *Engine) plan(ctx context.Context, env *pointEnv, r int, st serverState, answers []fl.Answer, note json.RawMessage) (fl.Plan, error) {
	p, err := env.sampler.Plan(fl.PlanInput{Round: r, Pop: env.pop, State: st.Sampler, Answers: answers, Note: note,
		Vector: func(a fl.Answer) ([]float32, error) { return e.answerVector(ctx, env, r, a) },
		Recall: func(k int) ([]float32, error) { return e.recall(ctx, env, st, k) },
	}, env.sampleStream(r))
	if err != nil {
		return fl.Plan{}, fmt.Errorf("round %d: sampler %s: %w", r, env.cfg.Sampler.Name, err)
	}
	switch {
	case (p.Query == nil) == (p.Selection == nil):
		return fl.Plan{}, fmt.Errorf("round %d: sampler %s returned %s; a plan holds a query or a selection: %w", r, env.cfg.Sampler.Name, planString(p), fl.ErrInvalid)
	case p.Query != nil:
		err = p.Query.Validate(env.pop.N())
	default:
		err = checkSelection(*p.Selection, env.pop.N())
	}
	if err != nil {
		return fl.Plan{}, fmt.Errorf("round %d: sampler %s: %w", r, env.cfg.Sampler.Name, err)
	}
	return p, nil
}

// sampleStream returns round r's sampling stream, derived afresh: every Plan
// call of the round and the sampler's Observe draw the same numbers. With
// common random numbers it is every point's of the seed.
func (env *pointEnv) sampleStream(r int) *rand.Rand {
	return fl.Stream(fl.Key{Seed: env.cfg.Seed, Point: env.shared, Round: r, Client: fl.Server, Purpose: fl.PurposeSample})
}

func planString(p fl.Plan) string {
	if p.Query == nil && p.Selection == nil {
		return "neither"
	}
	return "both"
}

// checkSelection checks the selection contract of fl.Selection.
func checkSelection(s fl.Selection, n int) error {
	if len(s.Weights) != len(s.Clients) || len(s.Draws) != len(s.Clients) {
		return fmt.Errorf("selection of %d clients has %d weights and %d draws: %w", len(s.Clients), len(s.Weights), len(s.Draws), fl.ErrInvalid)
	}
	if (s.Entropy != nil && len(s.Entropy) != len(s.Clients)) || (s.Cluster != nil && len(s.Cluster) != len(s.Clients)) {
		return fmt.Errorf("selection of %d clients has %d entropies and %d clusters; give one per client or none: %w", len(s.Clients), len(s.Entropy), len(s.Cluster), fl.ErrInvalid)
	}
	for i, k := range s.Clients {
		if k < 0 || k >= n || (i > 0 && k <= s.Clients[i-1]) {
			return fmt.Errorf("selected clients %v must be distinct, ascending and in [0, %d): %w", s.Clients, n, fl.ErrInvalid)
		}
	}
	return nil
}

// QueryClients answers the round's in.Query-th question for a chunk of
// clients, at the global model θ^{r−1} on each client's full training set.
// Gradients go to blob storage; the answers carry losses and sizes.
func (e *Engine) QueryClients(ctx context.Context, in steps.QueryInput) ([]fl.Answer, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return nil, err
	}
	q := fl.Query{Ask: in.Ask, Clients: in.Clients}
	if err := q.Validate(env.pop.N()); err != nil {
		return nil, fmt.Errorf("round %d query %d: %w", in.Round, in.Query, err)
	}
	if in.Query < 1 || in.Query > steps.MaxQueries {
		return nil, fmt.Errorf("round %d: query index %d out of [1, %d]: %w", in.Round, in.Query, steps.MaxQueries, fl.ErrInvalid)
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return nil, err
	}
	out := make([]fl.Answer, len(in.Clients))
	err = e.parallel(len(in.Clients), func(i int) error {
		k := in.Clients[i]
		a := fl.Answer{Query: in.Query, Ask: in.Ask, Client: k, Samples: len(env.part.Train[k])}
		loss, err := e.clientLoss(ctx, env, global, k)
		if err != nil {
			return fmt.Errorf("round %d query %d client %d: %w", in.Round, in.Query, k, err)
		}
		a.Loss = loss
		if in.Ask == fl.AskGradient {
			g := make([]float32, env.net.NumParams())
			if _, err := e.Trainer.Gradient(ctx, env.net, global, env.examples(k), env.hyper.BatchSize, g); err != nil {
				return fmt.Errorf("round %d query %d client %d: %w", in.Round, in.Query, k, err)
			}
			f := store.NewFile("answer", env.net.Key(), in.Round, k).AddF32("gradient", g)
			if _, err := e.Store.PutFile(ctx, env.keys.Answer(in.Round, in.Query, k), f); err != nil {
				return err
			}
		}
		out[i] = a
		return nil
	})
	return out, err
}

// answerVector reads the gradient of a gradient answer.
func (e *Engine) answerVector(ctx context.Context, env *pointEnv, r int, a fl.Answer) ([]float32, error) {
	if a.Ask != fl.AskGradient {
		return nil, fmt.Errorf("round %d: client %d's answer to query %d is a %s, not a vector: %w", r, a.Client, a.Query, a.Ask, fl.ErrInvalid)
	}
	f, err := e.readFile(ctx, env, env.keys.Answer(r, a.Query, a.Client), "answer", r, a.Client,
		fmt.Sprintf("client %d's gradient for query %d of round %d", a.Client, a.Query, r), "was the query run?")
	if err != nil {
		return nil, err
	}
	return f.Vector("gradient", env.net.NumParams())
}

// Broadcast asks the point's algorithm for the vector round r's clients
// train with (docs/architecture.md, "The round"): a question for the selected
// clients first, or the vector, written to blob storage.
func (e *Engine) Broadcast(ctx context.Context, in steps.BroadcastInput) (steps.BroadcastOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.BroadcastOutput{}, err
	}
	bc, ok := env.alg.(algorithm.Broadcaster)
	if !ok {
		return steps.BroadcastOutput{}, fmt.Errorf("algorithm %s has no broadcast phase: %w", env.cfg.AlgorithmName(), fl.ErrInvalid)
	}
	if err := checkSelection(in.Selection, env.pop.N()); err != nil {
		return steps.BroadcastOutput{}, err
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.BroadcastOutput{}, err
	}
	st, err := e.loadState(ctx, env, in.Round-1)
	if err != nil {
		return steps.BroadcastOutput{}, err
	}
	out, err := bc.Broadcast(algorithm.BroadcastRound{
		Round: in.Round, Global: global, State: st.Algorithm, Selection: in.Selection, Answers: in.Answers,
		Vector: func(a fl.Answer) ([]float32, error) { return e.answerVector(ctx, env, in.Round, a) },
	})
	if err != nil {
		return steps.BroadcastOutput{}, fmt.Errorf("round %d: broadcast: %w", in.Round, err)
	}
	if out.Query != nil {
		if err := out.Query.Validate(env.pop.N()); err != nil {
			return steps.BroadcastOutput{}, fmt.Errorf("round %d: broadcast: %w", in.Round, err)
		}
		return steps.BroadcastOutput{Query: out.Query}, nil
	}
	if out.Vector == nil {
		return steps.BroadcastOutput{}, e.Store.Delete(ctx, env.keys.Broadcast(in.Round))
	}
	if len(out.Vector) != env.net.NumParams() || !allFinite(out.Vector) {
		return steps.BroadcastOutput{}, fmt.Errorf("round %d: broadcast vector has %d values (want %d) or a NaN/Inf: %w", in.Round, len(out.Vector), env.net.NumParams(), fl.ErrDiverged)
	}
	f := store.NewFile("broadcast", env.net.Key(), in.Round, fl.Server).AddF32("vector", out.Vector)
	_, err = e.Store.PutFile(ctx, env.keys.Broadcast(in.Round), f)
	return steps.BroadcastOutput{Sent: true}, err
}

// loadBroadcast reads round r's broadcast vector.
func (e *Engine) loadBroadcast(ctx context.Context, env *pointEnv, r int) ([]float32, error) {
	f, err := e.readFile(ctx, env, env.keys.Broadcast(r), "broadcast", r, fl.Server, fmt.Sprintf("broadcast vector of round %d", r),
		"was the broadcast step run?")
	if err != nil {
		return nil, err
	}
	return f.Vector("vector", env.net.NumParams())
}

// clientLoss returns F_k(w): the mean loss of w over client k's full
// training set, summed in float64 in sample order. Every "loss of a client"
// the engine records comes from here (queries, before and after training,
// evaluations), so equal models give equal bits.
func (e *Engine) clientLoss(ctx context.Context, env *pointEnv, w []float32, k int) (float64, error) {
	res, err := e.Trainer.Evaluate(ctx, env.net, w, env.examples(k))
	if err != nil {
		return 0, err
	}
	loss := res.LossSum / float64(res.N)
	if !finite(loss) {
		return 0, fmt.Errorf("client %d: loss %v: %w", k, loss, fl.ErrDiverged)
	}
	return loss, nil
}

func allFinite(v []float32) bool {
	var check float32
	for _, x := range v {
		check += x - x
	}
	return check == 0
}

func finite(x float64) bool { return x == x && x-x == 0 }
