package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// RefineUpdates runs the point's refine phase over round r's updates
// (docs/architecture.md, "The round"): the algorithm's server scores the
// trained clients' local models θ^{r−1} + Δ_k on its public data and
// refines some of them; each refined model's update θ'_k − θ^{r−1} is
// stored beside the uploaded one, which stays as it was, so a retried
// phase reads the same inputs and writes the same files.
func (e *Engine) RefineUpdates(ctx context.Context, in steps.RefineInput) (steps.RefineOutput, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.RefineOutput{}, err
	}
	ref, ok := env.alg.(algorithm.Refiner)
	if !ok {
		return steps.RefineOutput{}, fmt.Errorf("round %d: algorithm %s has no refine phase: %w", in.Round, env.cfg.AlgorithmName(), fl.ErrInvalid)
	}
	if err := checkSelection(in.Selection, env.pop.N()); err != nil {
		return steps.RefineOutput{}, err
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return steps.RefineOutput{}, err
	}
	clients := in.Selection.Clients
	local := make([][]float32, len(clients))
	for i, k := range clients {
		u, err := e.loadUpdate(ctx, env, in.Round, k)
		if err != nil {
			return steps.RefineOutput{}, err
		}
		w := make([]float32, len(global))
		for j := range w {
			w[j] = global[j] + u.delta[j]
		}
		local[i] = w
	}
	pub := &publicData{e: e, ctx: ctx, env: env, round: in.Round, ex: publicExamples(env)}
	res, err := ref.Refine(ctx, algorithm.Refinement{Round: in.Round, Global: global, Clients: clients, Local: local,
		Public: pub, Net: env.net, Hyper: env.roundHyper(in.Round)})
	if err != nil {
		return steps.RefineOutput{}, fmt.Errorf("round %d: %s: %w", in.Round, env.cfg.AlgorithmName(), err)
	}
	if len(res.PublicAcc) != len(clients) {
		return steps.RefineOutput{}, fmt.Errorf("round %d: %s scored %d of %d clients: %w", in.Round, env.cfg.AlgorithmName(), len(res.PublicAcc), len(clients), fl.ErrInvalid)
	}
	out := steps.RefineOutput{Down: res.Down, Up: res.Up, Samples: res.Samples, Penalty: res.Penalty, Leak: ref.PublicFrom() == algorithm.PublicTest}
	for i, k := range clients {
		w, refined := res.Weights[k]
		out.Clients = append(out.Clients, steps.RefinedClient{Client: k, PublicAcc: res.PublicAcc[i], Refined: refined})
		if !refined {
			continue
		}
		if err := checkVector("refined model", w, len(global), in.Round, k); err != nil {
			return steps.RefineOutput{}, err
		}
		f := store.NewFile("update", env.net.Key(), in.Round, k).AddF32("delta", algorithm.Delta(w, global))
		if err := e.putTransient(ctx, refinedKey(env, in.Round, k), f); err != nil {
			return steps.RefineOutput{}, err
		}
		out.Refined = append(out.Refined, k)
	}
	if len(out.Refined) != len(res.Weights) {
		return steps.RefineOutput{}, fmt.Errorf("round %d: %s refined a client it was not given: %w", in.Round, env.cfg.AlgorithmName(), fl.ErrInvalid)
	}
	slices.Sort(out.Refined)
	return out, nil
}

// refinedKey is where client k's refined update of round r lives: under
// the round's updates, which the commit deletes.
func refinedKey(env *pointEnv, r, k int) string {
	return fmt.Sprintf("%srefined/%06d.bin", env.keys.Updates(r), k)
}

// loadRefined reads client k's refined update of round r.
func (e *Engine) loadRefined(ctx context.Context, env *pointEnv, r, k int) ([]float32, error) {
	key := refinedKey(env, r, k)
	f, err := e.readFile(ctx, env, key, "update", r, k, fmt.Sprintf("refined update of client %d in round %d", k, r), "was the round refined?")
	if err != nil {
		return nil, err
	}
	d, err := f.Vector("delta", env.net.NumParams())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return d, nil
}

// publicData is algorithm.Public over the point's public set: the
// partition's reserved training samples, or with a leaking algorithm the
// whole test split. Samples are clean: no client's feature noise.
type publicData struct {
	e     *Engine
	ctx   context.Context
	env   *pointEnv
	round int
	ex    trainer.Examples
}

var _ algorithm.Public = (*publicData)(nil)

func (p *publicData) examples() trainer.Examples { return p.ex }

// publicExamples is the point's public set as a trainer view.
func publicExamples(env *pointEnv) trainer.Examples {
	d := env.data
	if r, ok := env.alg.(algorithm.Refiner); ok && r.PublicFrom() == algorithm.PublicTest {
		idx := make([]int, len(d.Test.Y))
		for i := range idx {
			idx[i] = i
		}
		return trainer.Examples{X: d.Test.X, Y: d.Test.Y, Dim: d.Dim(), Idx: idx}
	}
	return trainer.Examples{X: d.Train.X, Y: d.Train.Y, Dim: d.Dim(), Idx: env.part.Public}
}

func (p *publicData) Len() int     { return len(p.examples().Idx) }
func (p *publicData) Classes() int { return p.env.net.Classes() }

func (p *publicData) Labels() []uint8 {
	ex := p.examples()
	y := make([]uint8, len(ex.Idx))
	for i, k := range ex.Idx {
		y[i] = ex.Y[k]
	}
	return y
}

func (p *publicData) Forward(w []float32) ([]float32, []bool, error) {
	ex := p.examples()
	c := p.env.net.Classes()
	emb := make([]float32, len(ex.Idx)*p.env.net.Embedding())
	logits := make([]float32, len(ex.Idx)*c)
	if err := p.e.Trainer.Forward(p.ctx, p.env.net, w, ex, emb, logits); err != nil {
		return nil, nil, err
	}
	correct := make([]bool, len(ex.Idx))
	for i, k := range ex.Idx {
		row := logits[i*c : (i+1)*c]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		correct[i] = best == int(ex.Y[k])
	}
	return emb, correct, nil
}

func (p *publicData) Train(k int, w []float32, hp trainer.Hyper, obj trainer.Objective) (trainer.TrainResult, error) {
	r := fl.Stream(fl.Key{Seed: p.env.cfg.Seed, Point: p.env.streamID, Round: p.round, Client: k, Purpose: fl.PurposeRefine})
	return p.e.Trainer.TrainObjective(p.ctx, p.env.net, w, p.examples(), hp, obj, r, nil)
}
