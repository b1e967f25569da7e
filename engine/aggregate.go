package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// update is a client's upload as stored.
type update struct {
	delta      []float32
	vectors    fl.State
	wroteState bool
}

// loadUpdate reads client k's upload of round r.
func (e *Engine) loadUpdate(ctx context.Context, env *pointEnv, r, k int) (update, error) {
	key := env.keys.Update(r, k)
	f, err := e.readFile(ctx, env, key, "update", r, k, fmt.Sprintf("update of client %d in round %d", k, r), "was it trained?")
	if err != nil {
		return update{}, err
	}
	var u update
	var m updateMeta
	if err := f.Decode("meta", &m); err != nil {
		return update{}, fmt.Errorf("%s: %w", key, err)
	}
	u.wroteState = m.WroteState
	if u.delta, err = f.Vector("delta", env.net.NumParams()); err != nil {
		return update{}, fmt.Errorf("%s: %w", key, err)
	}
	u.vectors.Vectors = f.VectorsWith(uploadPrefix)
	return u, nil
}

// Aggregate combines round r's stored uploads into the new global model and
// server state (docs/architecture.md, "The round"): the algorithm's server with the
// point's rule, the sampler's memory updated from what the round produced,
// and each trained client's new state version made current.
func (e *Engine) Aggregate(ctx context.Context, in steps.AggregateInput) (steps.AggregateOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	if err := checkSelection(in.Selection, env.pop.N()); err != nil {
		return steps.AggregateOutput{}, err
	}
	if len(in.Clients) != len(in.Selection.Clients) {
		return steps.AggregateOutput{}, fmt.Errorf("aggregate: %d summaries for %d clients: %w", len(in.Clients), len(in.Selection.Clients), fl.ErrInvalid)
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	st, err := e.loadFullState(ctx, env, in.Round-1)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	if len(in.Selection.Clients) == 0 {
		return e.keepRound(ctx, env, in.Round, global, st)
	}
	agg, err := env.alg.Begin(algorithm.Server{Round: in.Round, Global: global, State: st.Algorithm, Selection: in.Selection,
		Clients: in.Clients, Rule: env.rule, N: env.pop.N(), Net: env.net, Hyper: env.roundHyper(in.Round)})
	if err != nil {
		return steps.AggregateOutput{}, fmt.Errorf("round %d: %s: %w", in.Round, env.cfg.AlgorithmName(), err)
	}
	next := serverState{Sampler: st.Sampler, Versions: versionsOf(st.Versions), Memory: versionsOf(st.Memory)}
	learner, _ := env.sampler.(fl.Learner)
	var deltas map[int][]float32 // the learner's, read once
	if learner != nil {
		deltas = map[int][]float32{}
	}
	var superseded map[int]int
	for _, k := range in.Selection.Clients {
		u, err := e.loadUpdate(ctx, env, in.Round, k)
		if err != nil {
			return steps.AggregateOutput{}, err
		}
		if _, ok := slices.BinarySearch(in.Refined, k); ok {
			if u.delta, err = e.loadRefined(ctx, env, in.Round, k); err != nil {
				return steps.AggregateOutput{}, err
			}
		}
		if deltas != nil {
			deltas[k] = u.delta
		}
		if err := agg.Add(k, u.delta, u.vectors); err != nil {
			return steps.AggregateOutput{}, fmt.Errorf("round %d: %s: %w", in.Round, env.cfg.AlgorithmName(), err)
		}
		if u.wroteState {
			if v, ok := next.Versions[k]; ok {
				if superseded == nil {
					superseded = map[int]int{}
				}
				superseded[k] = v
			}
			next.Versions[k] = in.Round
		}
	}
	w := make([]float32, len(global))
	if next.Algorithm, err = agg.Finish(w); err != nil {
		return steps.AggregateOutput{}, fmt.Errorf("round %d: %s: %w", in.Round, env.cfg.AlgorithmName(), err)
	}
	if env.opt != nil {
		step := fl.OptimizerStep{Global: global, Proposed: w, State: st.Optimizer, Trainable: env.trainable, Dst: w}
		if next.Optimizer, err = env.opt.Step(step); err != nil {
			return steps.AggregateOutput{}, fmt.Errorf("round %d: server_optimizer %s: %w", in.Round, env.cfg.ServerOptimizer.Name, err)
		}
	}
	var forgotten map[int]int
	if learner != nil {
		if next.Sampler, forgotten, err = e.observe(ctx, env, learner, in, st, next.Memory, deltas); err != nil {
			return steps.AggregateOutput{}, err
		}
	}
	sha, err := e.saveGlobal(ctx, env, in.Round, w)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	released, err := e.saveState(ctx, env, in.Round, next, &st)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	out := steps.AggregateOutput{ModelSHA256: sha, Superseded: superseded, Forgotten: forgotten, Released: released}
	if rep, ok := agg.(algorithm.Reporting); ok {
		r := rep.Report()
		if r.Weights != nil && len(r.Weights) != len(in.Selection.Clients) {
			return steps.AggregateOutput{}, fmt.Errorf("round %d: %s reported %d weights for %d clients: %w", in.Round, env.cfg.AlgorithmName(), len(r.Weights), len(in.Selection.Clients), fl.ErrInvalid)
		}
		out.Report = &r
	}
	return out, nil
}

// keepRound ends round r, which selected nobody (binomial and poisson
// sampling can), as a no-op: θ^r = θ^{r−1} and the server state is the
// previous one, unchanged. Neither the algorithm's server step nor the
// sampler's Observe runs: with S_t = ∅ the rule θ + η_g Σ_{k∈S} ω_k Δ_k
// leaves θ as it is (Fraboni et al. 2022, App. A.6; specs/sampling-theory.md
// §4.8), and an algorithm's own server step (FedDyn's h, FedDC's mean drift)
// would otherwise move θ with no client's work behind it.
func (e *Engine) keepRound(ctx context.Context, env *pointEnv, r int, global []float32, st serverState) (steps.AggregateOutput, error) {
	sha, err := e.saveGlobal(ctx, env, r, global)
	if err != nil {
		return steps.AggregateOutput{}, err
	}
	if _, err := e.saveState(ctx, env, r, st, &st); err != nil { // every vector keeps its file: nothing released
		return steps.AggregateOutput{}, err
	}
	return steps.AggregateOutput{ModelSHA256: sha}, nil
}

// observe lets the point's sampler learn from round in.Round. What it
// remembers about single clients is written to their memory files now and
// named in memory (updated in place); forgotten returns the versions it
// replaced.
func (e *Engine) observe(ctx context.Context, env *pointEnv, l fl.Learner, in steps.AggregateInput, st serverState,
	memory map[int]int, deltas map[int][]float32) (fl.State, map[int]int, error) {
	remembered := map[int][]float32{}
	w, b := env.net.Output()
	next, err := l.Observe(fl.ObserveInput{Round: in.Round, Pop: env.pop, State: st.Sampler, Selection: in.Selection,
		Answers: in.Answers, Clients: in.Clients,
		Vector: func(a fl.Answer) ([]float32, error) { return e.answerVector(ctx, env, in.Round, a) },
		Rand:   env.sampleStream(in.Round),
		Output: fl.OutputLayer{W: w.Offset, B: b.Offset, Classes: env.net.Classes(), Embedding: env.net.Embedding()},
		Delta: func(k int) ([]float32, error) {
			d, ok := deltas[k]
			if !ok {
				return nil, fmt.Errorf("client %d was not trained in round %d: %w", k, in.Round, fl.ErrInvalid)
			}
			return d, nil
		},
		Remember: func(k int, v []float32) { remembered[k] = slices.Clone(v) },
	})
	if err != nil {
		return fl.State{}, nil, fmt.Errorf("round %d: sampler %s: %w", in.Round, env.cfg.Sampler.Name, err)
	}
	var forgotten map[int]int
	for _, k := range slices.Sorted(maps.Keys(remembered)) {
		if k < 0 || k >= env.pop.N() {
			return fl.State{}, nil, fmt.Errorf("round %d: sampler %s remembered client %d, not in [0, %d): %w", in.Round, env.cfg.Sampler.Name, k, env.pop.N(), fl.ErrInvalid)
		}
		if err := e.saveMemory(ctx, env, k, in.Round, remembered[k]); err != nil {
			return fl.State{}, nil, err
		}
		if v, ok := memory[k]; ok && v != in.Round {
			if forgotten == nil {
				forgotten = map[int]int{}
			}
			forgotten[k] = v
		}
		memory[k] = in.Round
	}
	return next, forgotten, nil
}

// InspectUpdates runs the point's inspectors over a chunk of round r's
// updates before aggregation (docs/architecture.md, "The round").
func (e *Engine) InspectUpdates(ctx context.Context, in steps.InspectInput) ([]steps.Finding, error) {
	if !in.Probe {
		if len(in.Summaries) != len(in.Clients) {
			return nil, fmt.Errorf("inspect round %d: %d summaries for %d clients: %w", in.Round, len(in.Summaries), len(in.Clients), fl.ErrInvalid)
		}
		for i, k := range in.Clients {
			if in.Summaries[i].Client != k {
				return nil, fmt.Errorf("inspect round %d: summary %d is client %d's, not client %d's: %w", in.Round, i, in.Summaries[i].Client, k, fl.ErrInvalid)
			}
		}
	}
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return nil, err
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return nil, err
	}
	if in.Probe {
		if !env.cfg.Attack.At(in.Round) {
			return nil, nil
		}
		return e.probeUpdates(ctx, env, in, global)
	}
	var out []steps.Finding
	if env.cfg.Attack.At(in.Round) {
		if out, err = e.attackUpdates(ctx, env, in.Round, global, in.Clients, in.Summaries); err != nil {
			return nil, err
		}
	}
	for i, k := range in.Clients {
		if len(env.inspectors) == 0 {
			break
		}
		u, err := e.loadUpdate(ctx, env, in.Round, k)
		if err != nil {
			return nil, err
		}
		for _, ins := range env.inspectors {
			res, err := ins.Inspect(fl.Inspection{Round: in.Round, Client: k, Global: global, Delta: u.delta, Summary: in.Summaries[i]})
			if err != nil {
				return nil, fmt.Errorf("round %d client %d: inspector %s: %w", in.Round, k, ins.name, err)
			}
			if res != nil {
				out = append(out, steps.Finding{Inspector: ins.name, Client: k, Result: res})
			}
		}
	}
	return out, nil
}
