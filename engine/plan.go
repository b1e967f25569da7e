package engine

import (
	"bytes"
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
		if old.Sweep != nil && len(old.Sweep.Points) > 0 && sweep.LegacyPointID(old.Sweep.Points[0].ID) {
			return steps.PlanSweepOutput{}, sweep.ErrOlderBuild(fmt.Sprintf("sweep %q (%s)", sw.Name, sk.Spec()), old.Sweep.Points[0].ID)
		}
		return steps.PlanSweepOutput{}, fmt.Errorf("sweep %q already exists in the store with other points (%s); give this spec another name, or delete %s to start over: %w",
			sw.Name, sk.Spec(), sk.Prefix(), store.ErrInvalid)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return steps.PlanSweepOutput{}, err
	}
	// Check every point before writing anything: bad input leaves the
	// bucket as it was.
	stored := make([]StoredPoint, len(sw.Points))
	for i, p := range sw.Points {
		pk, err := sk.Point(p.ID)
		if err != nil {
			return steps.PlanSweepOutput{}, err
		}
		if err := checkStoredPoint(ctx, e.Store, pk, p); err != nil {
			return steps.PlanSweepOutput{}, err
		}
		if _, err := e.dataRoot(p.Config); err != nil {
			return steps.PlanSweepOutput{}, fmt.Errorf("point %s: %w", p.Label, err)
		}
		m, err := buildMethods(e.Reg, p.Config)
		if err != nil {
			return steps.PlanSweepOutput{}, fmt.Errorf("point %s: %w", p.Label, err)
		}
		stored[i] = StoredPoint{Sweep: sw.Name, Point: p, Resolved: m.resolved}
	}
	for i, p := range sw.Points {
		pk, _ := sk.Point(p.ID)
		if err := e.Store.PutJSON(ctx, pk.Config(), stored[i]); err != nil {
			return steps.PlanSweepOutput{}, err
		}
	}
	if err := e.Store.PutJSON(ctx, sk.Spec(), StoredSweep{Hash: hash, File: in.File, YAML: string(in.Spec), Sweep: sw}); err != nil {
		return steps.PlanSweepOutput{}, err
	}
	return PlanOutput(sw), nil
}

// checkStoredPoint compares p with the point configuration stored under its
// ID, if any: the same ID with another configuration is a hash collision (or
// a tampered file), and must not let p's rounds mix with the stored ones.
func checkStoredPoint(ctx context.Context, st *store.Store, pk store.PointKeys, p sweep.Point) error {
	var sp StoredPoint
	switch err := st.GetJSON(ctx, pk.Config(), &sp); {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	if !bytes.Equal(sp.Point.Config.Canonical(), p.Config.Canonical()) {
		return fmt.Errorf("point %s (%s) has ID %s, but %s holds another configuration under that ID (a hash collision, or an edited file); "+
			"the stored point is kept: change this point (another seed or grid value) or give the spec another name: %w",
			p.Label, p.ID, p.ID, pk.Config(), store.ErrInvalid)
	}
	return nil
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
