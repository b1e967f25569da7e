package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
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
	streamID string // the Point of the point's own streams (sweep.StreamID)
	// shared is the Point of its sampling and training streams: "" (those
	// of every point of its seed) with common random numbers, else streamID.
	shared string
	cfg    sweep.Config
	keys   store.PointKeys
	data   *dataset.Dataset
	part   partition.Partition
	noise  partition.Noise // feature noise of the clients' samples; zero: none
	stats  []partition.ClientStats
	pop    fl.Population
	net    *trainer.Net
	// trainable marks the model's trainable entries (not BatchNorm
	// running statistics): what a server optimiser steps.
	trainable []bool
	hyper     trainer.Hyper
	// aux is the attacker's auxiliary set when the point runs attacks.
	aux trainer.Examples
	pointMethods
}

// pointMethods are a point's methods, built from its configuration.
type pointMethods struct {
	sampler    fl.Planner
	rule       fl.Rule
	alg        algorithm.Algorithm
	opt        fl.ServerOptimizer // nil: the algorithm's step as it is
	inspectors []inspector
	attacks    bool  // the point's attack block is active
	probe      []int // rounds whose unselected clients train probe updates
	// resolved is every method's resolved options (the points table's
	// methods_json and config.json's "resolved").
	resolved json.RawMessage
}

type inspector struct {
	name string
	fl.Inspector
}

// phases returns the optional phases the point's methods use, in a
// population of n clients.
func (m pointMethods) phases(n int) steps.Phases {
	_, broadcasts := m.alg.(algorithm.Broadcaster)
	_, refines := m.alg.(algorithm.Refiner)
	p := steps.Phases{Broadcast: broadcasts, Inspect: len(m.inspectors) > 0 || m.attacks, Refine: refines, Probe: m.probe}
	if len(p.Probe) > 0 {
		p.Population = n
	}
	return p
}

// buildMethods builds c's sampler, rule, algorithm and inspectors, checks
// the algorithm against the model and optimiser, and records every
// method's resolved options.
func buildMethods(reg *methods.Registry, c sweep.Config) (pointMethods, error) {
	var m pointMethods
	var err error
	if m.sampler, err = reg.Sampler(c.Sampler.Name, c.ClientsPerRound, c.Sampler.Options); err != nil {
		return m, err
	}
	if s, ok := m.sampler.(fl.Scheduled); ok {
		m.sampler = s.WithRounds(c.Rounds)
	}
	if m.rule, err = reg.Rule(c.Aggregator.Name, c.Aggregator.Options); err != nil {
		return m, err
	}
	if m.alg, err = reg.Algorithm(c.Algorithm.Name, c.Algorithm.Options); err != nil {
		return m, err
	}
	if err := m.alg.Check(c.TrainerSpec(), c.Hyper()); err != nil {
		return m, err
	}
	if m.opt, err = reg.ServerOptimizer(c.ServerOptimizer.Name, c.ServerOptimizer.Options); err != nil {
		return m, err
	}
	type named struct {
		Name    string `json:"name"`
		Options any    `json:"options"`
	}
	rec := struct {
		Sampler    named   `json:"sampler"`
		Aggregator named   `json:"aggregator"`
		Algorithm  named   `json:"algorithm"`
		Optimizer  *named  `json:"server_optimizer,omitempty"`
		Inspect    []named `json:"inspect,omitempty"`
	}{
		Sampler:    named{c.Sampler.Name, m.sampler},
		Aggregator: named{c.Aggregator.Name, m.rule},
		Algorithm:  named{c.AlgorithmName(), m.alg},
	}
	if m.opt != nil {
		rec.Optimizer = &named{c.ServerOptimizer.Name, m.opt}
	}
	for i, in := range c.Inspect {
		ins, err := reg.Inspector(in.Name, in.Options)
		if err != nil {
			return m, fmt.Errorf("inspect[%d]: %w", i, err)
		}
		m.inspectors = append(m.inspectors, inspector{in.Name, ins})
		rec.Inspect = append(rec.Inspect, named{in.Name, ins})
	}
	m.attacks, m.probe = c.Attack.Active(), c.Attack.ProbeRounds(c.Rounds)
	if m.resolved, err = methods.Resolved(rec); err != nil {
		return m, err
	}
	return m, nil
}

// StoredPoint is a point's config.json: the configuration as resolved from
// the spec, and every method's resolved options (defaults applied).
type StoredPoint struct {
	Sweep    string          `json:"sweep"`
	Point    sweep.Point     `json:"point"`
	Resolved json.RawMessage `json:"resolved,omitempty"`
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
		if sweep.LegacyPointID(ref.Point) {
			return nil, sweep.ErrOlderBuild(fmt.Sprintf("point %s/%s", ref.Sweep, ref.Point), ref.Point)
		}
		var sp StoredPoint
		err = e.Store.GetJSON(ctx, pk.Config(), &sp)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("point %s/%s is not in this worker's blob store (%s missing); every worker of a task queue must use the same --blob: %w",
				ref.Sweep, ref.Point, pk.Config(), fl.ErrInvalid)
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
	sp, err := e.split(ctx, c)
	if err != nil {
		return nil, err
	}
	env := &pointEnv{sweep: sweepName, point: p, streamID: sweep.StreamID(c), shared: sweep.StreamID(c), cfg: c, data: sp.Data, part: sp.Part, noise: sp.Noise, stats: sp.Stats, pop: sp.Pop, hyper: c.Hyper()}
	if c.CommonStreams() {
		env.shared = ""
	}
	if env.net, err = trainer.NewNet(c.TrainerSpec(), sp.Data.Shape, sp.Data.Classes); err != nil {
		return nil, err
	}
	env.trainable = make([]bool, env.net.NumParams())
	for _, p := range env.net.Params() {
		for j := p.Offset; j < p.Offset+p.Len; j++ {
			env.trainable[j] = p.Trainable
		}
	}
	if env.pointMethods, err = buildMethods(e.Reg, c); err != nil {
		return nil, err
	}
	if c.Attack.Active() {
		if env.aux, err = auxSet(sp.Data, c.Seed, c.Attack.AuxPerClass); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// examples returns client k's training data as a trainer view. With
// feature noise it is client k's noisy copy of its samples, rebuilt on each
// call (partition.Noise makes the copy a pure function of the seed, client
// and sample, so nothing is cached): n_k·Dim float32 values while the
// client trains, the same in every round.
func (env *pointEnv) examples(k int) trainer.Examples {
	s := env.data.Train
	if env.noise.Std(k) == 0 {
		return trainer.Examples{X: s.X, Y: s.Y, Dim: env.data.Dim(), Idx: env.part.Train[k]}
	}
	return env.noisy(s, partition.SourceTrain, k, env.part.Train[k])
}

// noisy returns client k's noisy copy of the samples idx of split s (named
// from) as a trainer view over the copy, in the order of idx.
func (env *pointEnv) noisy(s dataset.Split, from partition.Source, k int, idx []int) trainer.Examples {
	dim := env.data.Dim()
	ex := trainer.Examples{X: env.noise.Copy(s.X, dim, idx, from, k), Y: make([]uint8, len(idx)), Dim: dim, Idx: make([]int, len(idx))}
	for p, i := range idx {
		ex.Y[p], ex.Idx[p] = s.Y[i], p
	}
	return ex
}

// testSplit returns the split the clients' local test sets index.
func (env *pointEnv) testSplit() dataset.Split {
	if env.part.TestFrom == partition.SourceTrain {
		return env.data.Train
	}
	return env.data.Test
}

// totalSize returns Σ_k n_k.
func (env *pointEnv) totalSize() int {
	t := 0
	for _, n := range env.pop.Sizes {
		t += n
	}
	return t
}
