package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

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
//
// With in.PageSize > 0 it also writes the point list in pages of that many
// points (store.Keys.PlanPage, then PlanIndex last) and returns a summary:
// the points themselves only for a sweep of at most steps.MaxListed points;
// ReadPlan reads the pages (docs/architecture.md, "Temporal"). A sweep
// planned before (its spec.json holds the same hash) is not written again:
// spec.json is written after every point's config.json, and the index after
// every page.
func (e *Engine) PlanSweep(ctx context.Context, in steps.PlanSweepInput) (steps.PlanSweepOutput, error) {
	if in.PageSize < 0 || in.PageSize > steps.MaxPageSize {
		return steps.PlanSweepOutput{}, fmt.Errorf("plan page size %d: want 1 to %d, or 0 for no pages: %w", in.PageSize, steps.MaxPageSize, store.ErrInvalid)
	}
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
	planned := false
	err = e.Store.GetJSON(ctx, sk.Spec(), &old)
	if err == nil && old.Hash != hash {
		// A sweep planned before the streams option keeps its streams: the
		// same spec, parsed as then, gives its stored points exactly.
		if lsw, lerr := sweep.ParseLegacyStreams(in.File, in.Spec); lerr == nil && lsw.Hash() == old.Hash {
			sw, hash = lsw, old.Hash
		}
	}
	switch {
	case err == nil && old.Hash != hash:
		if old.Sweep != nil && len(old.Sweep.Points) > 0 && sweep.LegacyPointID(old.Sweep.Points[0].ID) {
			return steps.PlanSweepOutput{}, sweep.ErrOlderBuild(fmt.Sprintf("sweep %q (%s)", sw.Name, sk.Spec()), old.Sweep.Points[0].ID)
		}
		return steps.PlanSweepOutput{}, fmt.Errorf("sweep %q already exists in the store with other points (%s); give this spec another name, or delete %s to start over: %w",
			sw.Name, sk.Spec(), sk.Prefix(), store.ErrInvalid)
	case err == nil:
		planned = true
	case !errors.Is(err, store.ErrNotFound):
		return steps.PlanSweepOutput{}, err
	}
	// Check every point before writing anything, on re-planning too (a
	// colliding ID must be caught whenever it appears): bad input leaves the
	// bucket as it was. The checks read each stored config.json, so they run
	// planWriters at a time, as the writes do.
	stored := make([]StoredPoint, len(sw.Points))
	keys := make([]store.PointKeys, len(sw.Points))
	missing := make([]bool, len(sw.Points))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(planWriters)
	for i, p := range sw.Points {
		pk, err := sk.Point(p.ID)
		if err != nil {
			return steps.PlanSweepOutput{}, err
		}
		keys[i] = pk
		if _, err := e.dataRoot(p.Config); err != nil {
			return steps.PlanSweepOutput{}, fmt.Errorf("point %s: %w", p.Label, err)
		}
		m, err := buildMethods(e.Reg, p.Config)
		if err != nil {
			return steps.PlanSweepOutput{}, fmt.Errorf("point %s: %w", p.Label, err)
		}
		stored[i] = StoredPoint{Sweep: sw.Name, Point: p, Resolved: m.resolved}
		g.Go(func() error {
			var err error
			missing[i], err = checkStoredPoint(gctx, e.Store, pk, p)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return steps.PlanSweepOutput{}, err
	}
	// A planned sweep writes only the config.json files it lacks: a point
	// whose folder was lost, or a bucket that holds an archive's finished
	// points (results.Archive) and is to run the rest.
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(planWriters)
	for i := range sw.Points {
		if !planned || missing[i] {
			g.Go(func() error { return e.Store.PutJSON(gctx, keys[i].Config(), stored[i]) })
		}
	}
	if err := g.Wait(); err != nil {
		return steps.PlanSweepOutput{}, err
	}
	out := PlanOutput(sw)
	if in.PageSize > 0 {
		if err := e.writePlanPages(ctx, sk, in.PageSize, out.Points); err != nil {
			return steps.PlanSweepOutput{}, err
		}
	}
	if !planned {
		if err := e.Store.PutJSON(ctx, sk.Spec(), StoredSweep{Hash: hash, File: in.File, YAML: string(in.Spec), Sweep: sw}); err != nil {
			return steps.PlanSweepOutput{}, err
		}
	}
	if in.PageSize > 0 {
		out.PageSize = in.PageSize
		if len(out.Points) > steps.MaxListed {
			out.Points = nil
		}
	}
	return out, nil
}

// checkStoredPoint compares p with the point configuration stored under its
// ID, if any: the same ID with another configuration is a hash collision (or
// a tampered file), and must not let p's rounds mix with the stored ones.
// It reports whether none is stored.
func checkStoredPoint(ctx context.Context, st *store.Store, pk store.PointKeys, p sweep.Point) (missing bool, err error) {
	var sp StoredPoint
	switch err := st.GetJSON(ctx, pk.Config(), &sp); {
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	if !bytes.Equal(sp.Point.Config.Canonical(), p.Config.Canonical()) {
		return false, fmt.Errorf("point %s (%s) has ID %s, but %s holds another configuration under that ID (a hash collision, or an edited file); "+
			"the stored point is kept: change this point (another seed or grid value) or give the spec another name: %w",
			p.Label, p.ID, p.ID, pk.Config(), store.ErrInvalid)
	}
	return false, nil
}

// planWriters bounds the concurrent writes of PlanSweep.
const planWriters = 16

// planIndex is a plan's index.json: written after every page.
type planIndex struct {
	Hash     string `json:"hash"`
	Count    int    `json:"count"`
	PageSize int    `json:"page_size"`
	Pages    int    `json:"pages"`
}

// writePlanPages writes points in pages of size, then the index; nothing
// when the index is there already.
func (e *Engine) writePlanPages(ctx context.Context, sk store.Keys, size int, points []steps.PointInfo) error {
	indexKey, err := sk.PlanIndex(size)
	if err != nil {
		return err
	}
	if ok, err := e.Store.Exists(ctx, indexKey); err != nil || ok {
		return err
	}
	pages := (len(points) + size - 1) / size
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(planWriters)
	for i := range pages {
		key, err := sk.PlanPage(size, i)
		if err != nil {
			return err
		}
		page := points[i*size : min(len(points), (i+1)*size)]
		g.Go(func() error { return e.Store.PutJSON(gctx, key, page) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return e.Store.PutJSON(ctx, indexKey, planIndex{Count: len(points), PageSize: size, Pages: pages})
}

// ReadPlan returns one page of a planned sweep's points (PlanSweep with a
// page size wrote them), each with the final status in its DONE.json, if it
// has one. A page past the last is bad input.
func (e *Engine) ReadPlan(ctx context.Context, in steps.PlanPageInput) (steps.PlanPage, error) {
	sk, err := store.SweepKeys(in.Sweep)
	if err != nil {
		return steps.PlanPage{}, err
	}
	key, err := sk.PlanPage(in.PageSize, in.Page)
	if err != nil {
		return steps.PlanPage{}, err
	}
	var page steps.PlanPage
	if err := e.Store.GetJSON(ctx, key, &page.Points); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return steps.PlanPage{}, fmt.Errorf("sweep %s has no plan page %d of %d points (%s); plan it first (PlanSweep with page_size %d): %w",
				in.Sweep, in.Page, in.PageSize, key, in.PageSize, store.ErrInvalid)
		}
		return steps.PlanPage{}, err
	}
	page.Ended = make([]string, len(page.Points))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(planWriters)
	for i, p := range page.Points {
		pk, err := sk.Point(p.ID)
		if err != nil {
			return steps.PlanPage{}, err
		}
		g.Go(func() error {
			var done steps.PointResult
			switch err := e.Store.GetJSON(gctx, pk.Done(), &done); {
			case errors.Is(err, store.ErrNotFound):
				return nil
			case err != nil:
				return err
			}
			page.Ended[i] = done.Status
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return steps.PlanPage{}, err
	}
	return page, nil
}

// PlanOutput summarises a parsed sweep, listing every point.
func PlanOutput(sw *sweep.Sweep) steps.PlanSweepOutput {
	out := steps.PlanSweepOutput{
		Name: sw.Name, Hash: sw.Hash(), Count: len(sw.Points),
		Concurrency: sw.Run.Concurrency, ContinueAsNewEvery: sw.Run.ContinueAsNewEvery,
		TrainQueue: sw.Run.TrainQueue, KeepUpdates: sw.Run.KeepUpdates, ClientsPerActivity: sw.Run.ClientsPerActivity,
	}
	for _, p := range sw.Points {
		out.Points = append(out.Points, PointInfo(p))
	}
	return out
}

// PointInfo is a point's summary.
func PointInfo(p sweep.Point) steps.PointInfo {
	c := p.Config
	return steps.PointInfo{
		Index: p.Index, ID: p.ID, Label: p.Label, Seed: c.Seed, Rounds: c.Rounds,
		Dataset: c.Dataset.Name, Model: c.Model.Arch, Sampler: c.Sampler.Name, Aggregator: c.Aggregator.Name,
		Algorithm: c.AlgorithmName(),
	}
}
