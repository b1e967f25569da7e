package attackbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/trainer"
)

// world is one seed's federation: the clients' data, the global model,
// and the algorithm's server and client states.
type world struct {
	c     Config
	seed  uint64
	point string
	tr    *trainer.Trainer
	ds    *dataset.Dataset
	net   *trainer.Net
	hp    trainer.Hyper
	alg   algorithm.Algorithm
	part  [][]int // the clients' training samples, indices into ds.Train
	pop   fl.Population

	global []float32
	server fl.State   // the algorithm's memory after the last round
	states []fl.State // each client's memory, as its last round left it
}

// newWorld partitions the training split and initialises the model, from
// the streams the engine uses for them (engine/partition.go, makePartition;
// engine/point.go).
func newWorld(c Config, seed uint64, ds *dataset.Dataset, net *trainer.Net, tr *trainer.Trainer) (*world, error) {
	w := &world{c: c, seed: seed, point: c.point(), tr: tr, ds: ds, net: net, hp: c.hyper(), alg: c.algorithm(), states: make([]fl.State, c.Clients)}
	r := fl.Stream(fl.Key{Seed: seed, Round: 0, Client: fl.Server, Purpose: fl.PurposePartition})
	var err error
	if w.part, err = partition.Dirichlet(ds.Train.Y, ds.Classes, c.Clients, partition.DirichletOptions{Alpha: c.Alpha}, r); err != nil {
		return nil, fmt.Errorf("--alpha %g, --clients %d on %s: %w", c.Alpha, c.Clients, c.Dataset, err)
	}
	sizes := make([]int, len(w.part))
	for k, idx := range w.part {
		sizes[k] = len(idx)
	}
	if w.pop, err = fl.NewPopulation(sizes, fl.ImportanceSize); err != nil {
		return nil, err
	}
	w.global = make([]float32, net.NumParams())
	if err := net.Init(w.global, fl.Stream(fl.Key{Seed: seed, Round: 0, Client: fl.Server, Purpose: fl.PurposeInit})); err != nil {
		return nil, err
	}
	if w.server, err = w.alg.Init(net.NumParams()); err != nil {
		return nil, err
	}
	return w, nil
}

// examples returns client k's training data.
func (w *world) examples(k int) trainer.Examples {
	return trainer.Examples{X: w.ds.Train.X, Y: w.ds.Train.Y, Dim: w.ds.Dim(), Idx: w.part[k]}
}

// client returns client k's round t as its algorithm sees it, with a fresh
// Local.
func (w *world) client(ctx context.Context, t, k int) (algorithm.Client, error) {
	var sent fl.State
	for _, name := range w.alg.Sends() {
		v, err := w.server.Vector(name, len(w.global))
		if err != nil {
			return algorithm.Client{}, err
		}
		sent.Set(name, v)
	}
	return algorithm.Client{Round: t, ID: k, Global: w.global, Server: sent, State: w.states[k], Local: &local{ctx: ctx, w: w, round: t, client: k}}, nil
}

// train runs client k's round t.
func (w *world) train(ctx context.Context, t, k int) (algorithm.Client, algorithm.Upload, error) {
	cl, err := w.client(ctx, t, k)
	if err != nil {
		return cl, algorithm.Upload{}, err
	}
	up, err := algorithm.TrainClient(ctx, w.alg, cl)
	if err != nil {
		return cl, up, fmt.Errorf("client %d: %w", k, err)
	}
	if !cl.Local.(*local).trained {
		return cl, up, fmt.Errorf("client %d: the algorithm did not train", k)
	}
	return cl, up, nil
}

// round runs FL round t: every client trains, the algorithm's server
// aggregates with FedAvg's rule θ + Σ_k p_k Δ_k, p_k = n_k/n, and the
// clients keep the states they wrote.
func (w *world) round(ctx context.Context, t int) error {
	n := w.c.Clients
	ups := make([]algorithm.Upload, n)
	sel := fl.Selection{Clients: make([]int, n), Weights: slices.Clone(w.pop.P)}
	sums := make([]fl.ClientSummary, n)
	for k := range n {
		_, up, err := w.train(ctx, t, k)
		if err != nil {
			return err
		}
		ups[k], sel.Clients[k] = up, k
		sums[k] = fl.ClientSummary{Client: k, NumExamples: len(w.part[k]), Samples: up.Train.Samples, Steps: up.Train.Steps, BatchLoss: up.Train.MeanLoss, Scalars: up.Scalars}
	}
	agg, err := w.alg.Begin(algorithm.Server{Round: t, Global: w.global, State: w.server, Selection: sel, Clients: sums,
		Rule: aggregate.WeightedDelta{EtaG: 1}, N: n, Net: w.net, Hyper: w.hp})
	if err != nil {
		return err
	}
	for k, up := range ups {
		if err := agg.Add(k, up.Delta, up.Vectors); err != nil {
			return err
		}
	}
	next := make([]float32, len(w.global))
	if w.server, err = agg.Finish(next); err != nil {
		return err
	}
	w.global = next
	for k, up := range ups {
		if !up.State.Empty() {
			w.states[k] = up.State
		}
	}
	return nil
}

// accuracy returns θ^t's accuracy on the whole test split.
func (w *world) accuracy(ctx context.Context) (float64, error) {
	test := w.ds.Test
	idx := make([]int, test.N)
	for i := range idx {
		idx[i] = i
	}
	res, err := w.tr.Evaluate(ctx, w.net, w.global, trainer.Examples{X: test.X, Y: test.Y, Dim: w.ds.Dim(), Idx: idx})
	if err != nil {
		return 0, err
	}
	return float64(res.Correct) / float64(res.N), nil
}

// attackRound runs round t's local training on every client and attacks
// each update with every method, as the server of §3.1 would before
// aggregating. The round is not aggregated.
func (w *world) attackRound(ctx context.Context, t int, methods []attack.Attack) ([]Record, error) {
	aux, err := w.aux(t)
	if err != nil {
		return nil, err
	}
	var recs []Record
	for k := range w.c.Clients {
		cl, up, err := w.train(ctx, t, k)
		if err != nil {
			return nil, err
		}
		exp, ok, err := algorithm.Expose(w.alg, cl, up.Delta)
		if err != nil {
			return nil, fmt.Errorf("client %d: exposure: %w", k, err)
		}
		if !ok {
			return nil, fmt.Errorf("algorithm %T trains with a term the attacks do not model (algorithm.Expose)", w.alg)
		}
		l, err := attack.FromHyper(w.hp, len(w.part[k]))
		if err != nil {
			return nil, err
		}
		o := exp.Objective
		in := attack.Input{Net: w.net, Global: w.global, Delta: exp.Delta, Local: l,
			Scheme: attack.Scheme{Prox: o.Prox, Anchor: o.Anchor, Linear: o.Linear, AfterStep: o.AfterStep}, Aux: aux}
		truth := up.Train.LabelCounts
		for _, m := range methods {
			rec := Record{Seed: w.seed, Client: k, Method: m.Name(), Truth: truth}
			r := fl.Stream(fl.Key{Seed: w.seed, Point: w.point + "/" + m.Name(), Round: t, Client: k, Purpose: fl.PurposeAttack})
			res, err := m.Recover(ctx, w.tr, in, r)
			switch {
			case errors.Is(err, attack.ErrNotApplicable):
				rec.NotApplicable = true
			case err != nil:
				return nil, fmt.Errorf("client %d: %s: %w", k, m.Name(), err)
			default:
				rec.Counts, rec.Heuristic = res.Counts, res.Heuristic
				if rec.Score, err = attack.Evaluate(truth, res.Counts); err != nil {
					return nil, fmt.Errorf("client %d: %s: %w", k, m.Name(), err)
				}
			}
			recs = append(recs, rec)
		}
	}
	return recs, nil
}

// aux draws the server's auxiliary set of round t: AuxPerClass samples of
// every class, without replacement, from the test split (no client trains
// on it), from the stream (seed, point, t, server, attack). The samples are
// in class order.
func (w *world) aux(t int) (trainer.Examples, error) {
	idx, err := drawAux(w.ds.Test.Y, w.ds.Classes, w.c.AuxPerClass, fl.Stream(fl.Key{Seed: w.seed, Point: w.point, Round: t, Client: fl.Server, Purpose: fl.PurposeAttack}))
	if err != nil {
		return trainer.Examples{}, fmt.Errorf("%s: %w", w.c.Dataset, err)
	}
	return trainer.Examples{X: w.ds.Test.X, Y: w.ds.Test.Y, Dim: w.ds.Dim(), Idx: idx}, nil
}

// drawAux returns per indices of each class's samples among labels, a
// uniform draw without replacement (a partial Fisher–Yates shuffle of the
// class's indices in order), class by class.
func drawAux(labels []uint8, classes, per int, r *rand.Rand) ([]int, error) {
	pools := make([][]int, classes)
	for i, y := range labels {
		pools[y] = append(pools[y], i)
	}
	idx := make([]int, 0, classes*per)
	for j, pool := range pools {
		if len(pool) < per {
			return nil, fmt.Errorf("--aux-per-class = %d exceeds the %d test samples of class %d; lower it: %w", per, len(pool), j, fl.ErrInvalid)
		}
		for i := range per {
			k := i + r.IntN(len(pool)-i)
			pool[i], pool[k] = pool[k], pool[i]
		}
		idx = append(idx, pool[:per]...)
	}
	return idx, nil
}

// local is algorithm.Local for one client in one round: what
// engine/train.go's clientLocal does, on the world's data.
type local struct {
	ctx           context.Context
	w             *world
	round, client int
	trained       bool
}

var _ algorithm.Local = (*local)(nil)

// Train trains with the client's stream (seed, point, round, client,
// train); a second call in the round is an error.
func (l *local) Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error) {
	if l.trained {
		return trainer.TrainResult{}, fmt.Errorf("local training ran twice in one round: %w", fl.ErrInvalid)
	}
	l.trained = true
	r := fl.Stream(fl.Key{Seed: l.w.seed, Point: l.w.point, Round: l.round, Client: l.client, Purpose: fl.PurposeTrain})
	return l.w.tr.TrainObjective(l.ctx, l.w.net, w, l.w.examples(l.client), l.w.hp, obj, r, nil)
}

func (l *local) Embed(w []float32) ([]float32, error) {
	ex := l.w.examples(l.client)
	emb := make([]float32, len(ex.Idx)*l.w.net.Embedding())
	if err := l.w.tr.Forward(l.ctx, l.w.net, w, ex, emb, nil); err != nil {
		return nil, err
	}
	return emb, nil
}

func (l *local) Hyper() trainer.Hyper { return l.w.hp }
func (l *local) Steps() int           { return trainer.NumSteps(len(l.w.part[l.client]), l.w.hp) }
func (l *local) Net() *trainer.Net    { return l.w.net }

func (l *local) SizeRatio() float64 {
	total := 0
	for _, s := range l.w.pop.Sizes {
		total += s
	}
	return float64(l.w.pop.Sizes[l.client]) * float64(len(l.w.pop.Sizes)) / float64(total)
}
