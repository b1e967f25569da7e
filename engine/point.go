package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/sampling"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// doneManifest is a point's DONE.json.
type doneManifest = steps.PointResult

// PreparePoint readies a point to run: it checks the configuration and the
// data, records the partition, and on a fresh start creates, evaluates and
// commits round 0 (the initial model). It returns the highest committed
// round, from which the point resumes.
func (e *Engine) PreparePoint(ctx context.Context, ref steps.PointRef) (steps.PrepareOutput, error) {
	env, err := e.env(ctx, ref)
	if err != nil {
		return steps.PrepareOutput{}, err
	}
	out := steps.PrepareOutput{Rounds: env.cfg.Rounds, EvalEvery: env.cfg.EvalEvery, NumParams: env.net.NumParams(),
		DataDigest: env.data.Digest, Phases: env.phases(env.pop.N()), ClientsPerRound: env.cfg.ClientsPerRound}
	var done doneManifest
	switch err := e.Store.GetJSON(ctx, env.keys.Done(), &done); {
	case err == nil:
		out.Done, out.Status, out.LastCommitted, out.TestAcc = true, done.Status, done.RoundsDone, done.TestAcc
		return out, nil
	case !errors.Is(err, store.ErrNotFound):
		return out, err
	}
	if err := e.writePartitionRows(ctx, env); err != nil {
		return out, err
	}
	last, c, err := e.Store.LastCommitted(ctx, env.keys)
	if err != nil && !errors.Is(err, store.ErrCorrupt) {
		return out, err
	}
	if err == nil && last >= 0 {
		if err := e.checkBuild(ref, last, c); err != nil {
			return out, err
		}
	}
	if err != nil || last >= 0 {
		// A damaged checkpoint is never loaded: the point resumes from
		// the latest one that verifies (resumePoint).
		if last, c, out.Recovered, err = e.resumePoint(ctx, env, last, c); err != nil {
			return out, fmt.Errorf("resume point %s: %w", ref.Point, err)
		}
	}
	if last < 0 {
		if c, err = e.initPoint(ctx, env); err != nil {
			return out, err
		}
		last = 0
	} else {
		if err := e.checkBuild(ref, last, c); err != nil {
			return out, err
		}
		if c.DataDigest != env.data.Digest {
			return out, fmt.Errorf("point %s started on %s data with digest %.12s, but this worker's data has digest %.12s; point --data-dir at the same files: %w",
				ref.Point, env.data.Name, c.DataDigest, env.data.Digest, fl.ErrInvalid)
		}
	}
	// Rounds between evaluations carry no accuracy: the point resumes
	// showing the latest evaluated round's, as its progress did.
	out.LastCommitted = last
	if out.TestAcc, err = e.Store.LatestAccuracy(ctx, env.keys, *c, env.cfg.EvalEvery); err != nil {
		return out, err
	}
	return out, e.writePointRow(ctx, env, steps.StatusRunning, last, nil, c.GlobalSHA256)
}

// initPoint creates the initial model from the init stream shared by all
// points of the seed, evaluates it and commits it as round 0.
func (e *Engine) initPoint(ctx context.Context, env *pointEnv) (*store.Commit, error) {
	w := make([]float32, env.net.NumParams())
	if err := env.net.Init(w, fl.Stream(fl.Key{Seed: env.cfg.Seed, Round: 0, Client: fl.Server, Purpose: fl.PurposeInit})); err != nil {
		return nil, err
	}
	sha, err := e.saveGlobal(ctx, env, 0, w)
	if err != nil {
		return nil, err
	}
	st, err := env.initState()
	if err != nil {
		return nil, err
	}
	if _, err := e.saveState(ctx, env, 0, st, nil); err != nil {
		return nil, err
	}
	ev, per, err := e.evaluate(ctx, env, w)
	if err != nil {
		return nil, err
	}
	in := steps.CommitInput{RoundRef: steps.RoundRef{PointRef: steps.PointRef{Sweep: env.sweep, Point: env.point.ID}},
		Model: steps.AggregateOutput{ModelSHA256: sha}, Eval: &ev}
	if _, err := e.commit(ctx, env, in, &per); err != nil {
		return nil, err
	}
	_, c, err := e.Store.LastCommitted(ctx, env.keys)
	return c, err
}

// FinishPoint closes a point: it compacts its metric tables, drops what is
// not retained, records the final status and writes DONE.json last.
//
// A stopped point (steps.StatusStopped: ended early on request) is closed
// the same way, so its rows are read like a finished point's, but without
// DONE.json: DONE.json means the point is over for good, and PreparePoint
// returns at once for a point that has it. Without it, a later run of the
// point (`starter sweep resume`) continues after its last committed round;
// the compacted tables then take new part files beside them, and the next
// FinishPoint compacts again (store.ReadTable reads both meanwhile).
func (e *Engine) FinishPoint(ctx context.Context, in steps.FinishInput) (steps.PointResult, error) {
	env, err := e.env(ctx, in.PointRef)
	if err != nil {
		return steps.PointResult{}, err
	}
	var done doneManifest
	switch err := e.Store.GetJSON(ctx, env.keys.Done(), &done); {
	case err == nil:
		return done, nil
	case !errors.Is(err, store.ErrNotFound):
		return steps.PointResult{}, err
	}
	status := cmp.Or(in.Status, steps.StatusDone)
	last, c, err := e.Store.LastCommitted(ctx, env.keys)
	if err != nil {
		return steps.PointResult{}, err
	}
	if c == nil {
		return steps.PointResult{}, fmt.Errorf("finish point %s: no committed round: %w", in.Point, errMissing)
	}
	if status == steps.StatusDone && last != env.cfg.Rounds {
		return steps.PointResult{}, fmt.Errorf("finish point %s: %d of %d rounds committed: %w", in.Point, last, env.cfg.Rounds, fl.ErrInvalid)
	}
	if err := store.Compact(ctx, e.Store, env.keys, store.TableRounds, roundOf, lessRound); err != nil {
		return steps.PointResult{}, err
	}
	if err := store.Compact(ctx, e.Store, env.keys, store.TableClients, clientRound, lessClient); err != nil {
		return steps.PointResult{}, err
	}
	if env.attacks {
		if err := store.Compact(ctx, e.Store, env.keys, store.TableAttacks, attackRound, lessAttack); err != nil {
			return steps.PointResult{}, err
		}
	}
	if err := e.prune(ctx, env, last, in.KeepUpdates); err != nil {
		return steps.PointResult{}, err
	}
	rounds, err := store.ReadTable(ctx, e.Store, env.keys, store.TableRounds, roundOf, lessRound)
	if err != nil {
		return steps.PointResult{}, err
	}
	res := steps.PointResult{Point: in.Point, Status: status, RoundsDone: last, ModelSHA256: c.GlobalSHA256}
	var final *store.RoundRow
	for i := range rounds {
		if rounds[i].Evaluated && int(rounds[i].Round) <= last {
			final = &rounds[i]
		}
	}
	if final != nil {
		res.TestAcc, res.TestLoss = *final.TestAcc, *final.TestLoss
	}
	if err := e.writePointRow(ctx, env, status, last, final, c.GlobalSHA256); err != nil {
		return steps.PointResult{}, err
	}
	if status == steps.StatusStopped {
		return res, nil
	}
	return res, e.Store.PutJSON(ctx, env.keys.Done(), res)
}

// prune removes every checkpoint that is not retained, every client-state
// version, sampler-memory version and state-vector file that no kept
// checkpoint names, and every transient file, whatever crashes or late
// duplicate attempts left behind.
func (e *Engine) prune(ctx context.Context, env *pointEnv, last int, keepUpdates bool) error {
	rounds, err := e.Store.CommittedRounds(ctx, env.keys)
	if err != nil {
		return err
	}
	var errs []error
	needed := map[string]bool{} // client-state keys a kept checkpoint names
	for _, q := range rounds {
		if q != last && !env.retained(q) {
			errs = append(errs, e.Store.Delete(ctx, env.keys.Global(q)), e.Store.Delete(ctx, env.keys.State(q)), e.Store.Delete(ctx, env.keys.ServerMemory(q)))
			continue
		}
		st, err := e.loadSamplerState(ctx, env, q)
		if err != nil {
			return err
		}
		for k, v := range st.Versions {
			needed[env.keys.ClientState(k, v)] = true
		}
		for k, v := range st.Memory {
			needed[env.keys.ClientMemory(k, v)] = true
		}
		for section, v := range st.Held {
			key, err := env.keys.ServerVector(section, v)
			if err != nil {
				return fmt.Errorf("%s: %w", env.keys.State(q), err)
			}
			needed[key] = true
		}
	}
	for _, prefix := range []string{env.keys.Clients(), env.keys.Memory(), env.keys.ServerVectors()} {
		keys, err := e.Store.List(ctx, prefix)
		if err != nil {
			return err
		}
		for _, key := range keys {
			if !needed[key] {
				errs = append(errs, e.Store.Delete(ctx, key))
			}
		}
	}
	dirs, err := e.Store.Dirs(ctx, env.keys.Rounds())
	if err != nil {
		return err
	}
	for _, d := range dirs {
		var q int
		if _, err := fmt.Sscanf(d, "%d", &q); err == nil {
			errs = append(errs, e.Store.Delete(ctx, env.keys.Eval(q)), e.Store.Delete(ctx, env.keys.Broadcast(q)),
				e.Store.DeletePrefix(ctx, env.keys.Queries(q)))
			if !keepUpdates {
				errs = append(errs, e.Store.DeletePrefix(ctx, env.keys.Updates(q)))
			}
		}
	}
	return errors.Join(errs...)
}

// writePartitionRows records the point's partitions table (PartitionRows).
func (e *Engine) writePartitionRows(ctx context.Context, env *pointEnv) error {
	sp := &Split{Data: env.data, Part: env.part, Noise: env.noise, Stats: env.stats, Pop: env.pop}
	return store.WriteRows(ctx, e.Store, env.keys.Compacted(store.TablePartitions), PartitionRows(env.sweep, env.point, sp))
}

func (e *Engine) writePointRow(ctx context.Context, env *pointEnv, status string, last int, final *store.RoundRow, sha string) error {
	c := env.cfg
	cfg, err := json.Marshal(c)
	if err != nil {
		return err
	}
	row := store.PointRow{
		Sweep: env.sweep, Point: env.point.ID, Index: int32(env.point.Index), Label: env.point.Label, Seed: int64(c.Seed),
		Dataset: c.Dataset.Name, DataDigest: env.data.Digest, Partition: c.Partition.Scheme, NumClients: int32(c.Partition.Clients),
		Model: env.net.Key(), NumParams: int64(env.net.NumParams()), Optimizer: c.Train.Optimizer, LR: c.Train.LR,
		BatchSize: int32(c.Train.BatchSize), LocalSteps: int32(c.Train.LocalSteps), LocalEpochs: int32(c.Train.LocalEpochs),
		Rounds: int32(c.Rounds), ClientsPerRound: int32(c.ClientsPerRound), Importance: c.Importance,
		Sampler: c.Sampler.Name, Aggregator: c.Aggregator.Name, Algorithm: c.AlgorithmName(), Methods: string(env.resolved),
		Config: string(cfg), Status: status, RoundsDone: int32(last),
		FinalModelSHA256: sha, CodeVersion: e.Version, MethodRevisions: revisionsOf(c).JSON(),
	}
	if err := env.closedForms(&row); err != nil {
		return err
	}
	if c.Partition.Alpha != 0 { // the label or size concentration of dirichlet, quantity, mixed, unbalanced
		row.Alpha = ptr(c.Partition.Alpha)
	}
	if final != nil {
		row.FinalTestAcc, row.FinalTestLoss = final.TestAcc, final.TestLoss
	}
	return store.WriteRows(ctx, e.Store, env.keys.Compacted(store.TablePoints), []store.PointRow{row})
}

// revisionsOf returns the revisions of c's methods (points.method_revisions).
func revisionsOf(c sweep.Config) methods.Revisions {
	names := [][2]string{{"sampler", c.Sampler.Name}, {"aggregator", c.Aggregator.Name}, {"algorithm", c.AlgorithmName()}, {"server_optimizer", c.ServerOptimizer.Name}}
	for _, in := range c.Inspect {
		names = append(names, [2]string{"inspect", in.Name})
	}
	return methods.RevisionsOf(names...)
}

// closedForms fills the points row's sampling_* columns from the sampler's
// closed forms for the point's importances (sampling.ClosedForm); they stay
// null for samplers without them. A sampler that cannot draw from the
// point's importances (poisson with m·p_max > 1) fails here, before round 1.
func (env *pointEnv) closedForms(row *store.PointRow) error {
	s, ok := fl.Unplanned(env.sampler)
	if !ok {
		return nil
	}
	cf, ok := s.(sampling.ClosedForm)
	if !ok {
		return nil
	}
	ch, err := cf.Closed(env.pop.P)
	if err != nil {
		return fmt.Errorf("sampler %s: %w", env.cfg.Sampler.Name, err)
	}
	row.SamplingSigma, row.SamplingAlpha, row.SamplingVarSum = ptr(ch.Sigma), ptr(ch.Alpha), ptr(ch.VarSum)
	row.SamplingGamma, row.SamplingExpectedClients = ptr(ch.Gamma), ptr(ch.MeanN)
	return nil
}

func int32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func roundOf(r store.RoundRow) int32      { return r.Round }
func clientRound(r store.ClientRow) int32 { return r.Round }
func lessRound(a, b store.RoundRow) int   { return cmp.Compare(a.Round, b.Round) }
func lessClient(a, b store.ClientRow) int {
	return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(a.Client, b.Client))
}
