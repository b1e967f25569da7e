package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// StoredSweep is a sweep's spec.json: the parsed spec and the YAML it came from.
type StoredSweep struct {
	Hash  string       `json:"hash"`
	File  string       `json:"file"`
	YAML  string       `json:"yaml"`
	Sweep *sweep.Sweep `json:"sweep"`
}

// PlanSweep parses and validates a spec, records it and each point's
// configuration in the store, and lists the points. It is idempotent; a
// sweep name already used for a different set of points is bad input.
func (e *Engine) PlanSweep(ctx context.Context, in steps.PlanSweepInput) (steps.PlanSweepOutput, error) {
	sw, err := sweep.Parse(in.File, in.Spec)
	if err != nil {
		return steps.PlanSweepOutput{}, err
	}
	if err := sw.Validate(e.Reg); err != nil {
		return steps.PlanSweepOutput{}, err
	}
	sk, err := store.SweepKeys(sw.Name)
	if err != nil {
		return steps.PlanSweepOutput{}, err
	}
	hash := sw.Hash()
	var old StoredSweep
	switch err := e.Store.GetJSON(ctx, sk.Spec(), &old); {
	case err == nil && old.Hash != hash:
		return steps.PlanSweepOutput{}, fmt.Errorf("sweep %q already exists in the store with other points (%s); give this spec another name, or delete %s to start over: %w",
			sw.Name, sk.Spec(), sk.Prefix(), store.ErrInvalid)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return steps.PlanSweepOutput{}, err
	}
	for _, p := range sw.Points {
		pk, err := sk.Point(p.ID)
		if err != nil {
			return steps.PlanSweepOutput{}, err
		}
		m, err := buildMethods(e.Reg, p.Config)
		if err != nil {
			return steps.PlanSweepOutput{}, fmt.Errorf("point %s: %w", p.Label, err)
		}
		if err := e.Store.PutJSON(ctx, pk.Config(), StoredPoint{Sweep: sw.Name, Point: p, Resolved: m.resolved}); err != nil {
			return steps.PlanSweepOutput{}, err
		}
	}
	if err := e.Store.PutJSON(ctx, sk.Spec(), StoredSweep{Hash: hash, File: in.File, YAML: string(in.Spec), Sweep: sw}); err != nil {
		return steps.PlanSweepOutput{}, err
	}
	return PlanOutput(sw), nil
}

// PlanOutput summarises a parsed sweep.
func PlanOutput(sw *sweep.Sweep) steps.PlanSweepOutput {
	out := steps.PlanSweepOutput{
		Name: sw.Name, Hash: sw.Hash(),
		Concurrency: sw.Run.Concurrency, ContinueAsNewEvery: sw.Run.ContinueAsNewEvery,
		TrainQueue: sw.Run.TrainQueue, KeepUpdates: sw.Run.KeepUpdates, ClientsPerActivity: sw.Run.ClientsPerActivity,
	}
	for _, p := range sw.Points {
		c := p.Config
		out.Points = append(out.Points, steps.PointInfo{
			Index: p.Index, ID: p.ID, Label: p.Label, Seed: c.Seed, Rounds: c.Rounds,
			Dataset: c.Dataset.Name, Model: c.Model.Arch, Sampler: c.Sampler.Name, Aggregator: c.Aggregator.Name,
			Algorithm: c.AlgorithmName(),
		})
	}
	return out
}
