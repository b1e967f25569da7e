package engine

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
	"github.com/flsweep/flsweep/trainer"
)

// pointEnv is everything a point's steps need, built once per process from
// the point's stored configuration. It is read-only after construction.
type pointEnv struct {
	cacheKey string
	sweep    string
	point    sweep.Point
	cfg      sweep.Config
	keys     store.PointKeys
	data     *dataset.Dataset
	part     partition.Partition
	stats    []partition.ClientStats
	pop      fl.Population
	net      *trainer.Net
	hyper    trainer.Hyper
	sampler  fl.Sampler
	rule     fl.Rule
}

// StoredPoint is a point's config.json.
type StoredPoint struct {
	Sweep string      `json:"sweep"`
	Point sweep.Point `json:"point"`
}

func (e *Engine) env(ctx context.Context, ref steps.PointRef) (*pointEnv, error) {
	return e.envs.get(ctx, ref.Sweep+"/"+ref.Point, func() (*pointEnv, error) {
		sk, err := store.SweepKeys(ref.Sweep)
		if err != nil {
			return nil, err
		}
		pk, err := sk.Point(ref.Point)
		if err != nil {
			return nil, err
		}
		var sp StoredPoint
		err = e.Store.GetJSON(ctx, pk.Config(), &sp)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("point %s/%s is not in this worker's blob store (%s missing); every worker of a task queue must use the same --blob: %w",
				ref.Sweep, ref.Point, pk.Config(), errMissing)
		}
		if err != nil {
			return nil, fmt.Errorf("point %s/%s: %w", ref.Sweep, ref.Point, err)
		}
		if sweep.PointID(sp.Point.Config) != ref.Point {
			return nil, fmt.Errorf("point %s/%s: stored configuration hashes to %s: %w", ref.Sweep, ref.Point, sweep.PointID(sp.Point.Config), store.ErrCorrupt)
		}
		env, err := e.buildEnv(ctx, ref.Sweep, sp.Point)
		if err != nil {
			return nil, err
		}
		env.keys = pk
		env.cacheKey = ref.Sweep + "/" + ref.Point
		return env, nil
	})
}

// buildEnv validates a point's configuration and builds its data, partition
// and methods.
func (e *Engine) buildEnv(ctx context.Context, sweepName string, p sweep.Point) (*pointEnv, error) {
	c := p.Config
	if err := c.Validate(e.Reg); err != nil {
		return nil, err
	}
	ds, err := e.Data.Get(ctx, c.Dataset.Name, e.dataRoot(c))
	if err != nil {
		return nil, err
	}
	env := &pointEnv{sweep: sweepName, point: p, cfg: c, data: ds, hyper: c.Hyper()}
	if env.net, err = trainer.NewNet(c.TrainerSpec(), ds.Shape, ds.Classes); err != nil {
		return nil, err
	}
	if env.part, err = makePartition(c, ds); err != nil {
		return nil, err
	}
	env.stats = partition.Stats(env.part, ds.Train.Y, ds.Test.Y, ds.Classes)
	sizes := make([]int, len(env.part.Train))
	for k, idx := range env.part.Train {
		sizes[k] = len(idx)
	}
	if env.pop, err = fl.NewPopulation(sizes, c.Importance); err != nil {
		return nil, err
	}
	if env.sampler, err = e.Reg.Sampler(c.Sampler.Name, c.ClientsPerRound, c.Sampler.Options); err != nil {
		return nil, err
	}
	if env.rule, err = e.Reg.Rule(c.Aggregator.Name, c.Aggregator.Options); err != nil {
		return nil, err
	}
	return env, nil
}

// makePartition splits the training data into clients and gives each a
// local test set, from the stream that all points of a seed share.
func makePartition(c sweep.Config, ds *dataset.Dataset) (partition.Partition, error) {
	r := fl.Stream(fl.Key{Seed: c.Seed, Round: 0, Client: fl.Server, Purpose: fl.PurposePartition})
	pc := c.Partition
	labels := ds.Train.Y
	var train [][]int
	var err error
	switch pc.Scheme {
	case "iid":
		train, err = partition.IID(len(labels), pc.Clients, r)
	case "dirichlet":
		train, err = partition.Dirichlet(labels, ds.Classes, pc.Clients, partition.DirichletOptions{Alpha: pc.Alpha, MinSize: pc.MinSize}, r)
	case "shards":
		train, err = partition.Shards(labels, pc.Clients, pc.ShardsPerClient, r)
	default:
		err = fmt.Errorf("partition.scheme = %q is unknown: %w", pc.Scheme, fl.ErrInvalid)
	}
	if err != nil {
		return partition.Partition{}, fmt.Errorf("partition (%s, %d clients of %s): %w", pc.Scheme, pc.Clients, ds.Name, err)
	}
	switch pc.Test {
	case "holdout":
		keep, test, err := partition.HoldOut(train, labels, pc.TestFraction, r)
		if err != nil {
			return partition.Partition{}, fmt.Errorf("partition.test = holdout: %w", err)
		}
		return partition.Partition{Train: keep, Test: test, TestFrom: partition.SourceTrain}, nil
	default: // "split"
		sizes := make([]int, len(train))
		for k, idx := range train {
			sizes[k] = max(1, int(math.Round(pc.TestFraction*float64(len(idx)))))
		}
		test, err := partition.FromTestSet(train, labels, ds.Test.Y, ds.Classes, sizes, r)
		if err != nil {
			return partition.Partition{}, fmt.Errorf("partition.test = split: %w", err)
		}
		return partition.Partition{Train: train, Test: test, TestFrom: partition.SourceTest}, nil
	}
}

// examples returns client k's training data as a trainer view.
func (env *pointEnv) examples(k int) trainer.Examples {
	s := env.data.Train
	return trainer.Examples{X: s.X, Y: s.Y, Dim: env.data.Dim(), Idx: env.part.Train[k]}
}

// testSplit returns the split the clients' local test sets index.
func (env *pointEnv) testSplit() dataset.Split {
	if env.part.TestFrom == partition.SourceTrain {
		return env.data.Train
	}
	return env.data.Test
}
