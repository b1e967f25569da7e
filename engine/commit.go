package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// CommitRound closes round r (docs/architecture.md, "The round"): it writes the
// round's metric rows, then the COMMITTED manifest, then drops transient
// files, checkpoints and client-state versions that no kept checkpoint
// needs. Committing a committed round again changes nothing.
func (e *Engine) CommitRound(ctx context.Context, in steps.CommitInput) (steps.RoundSummary, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	var c store.Commit
	switch err := e.Store.GetJSON(ctx, env.keys.Committed(in.Round), &c); {
	case err == nil:
		return summaryOf(c, in.Eval), e.cleanRound(ctx, env, in.Round, in.KeepUpdates, in.Model)
	case !errors.Is(err, store.ErrNotFound):
		return steps.RoundSummary{}, err
	}
	if err := checkSelection(in.Selection, env.pop.N()); err != nil {
		return steps.RoundSummary{}, err
	}
	if len(in.Clients) != len(in.Selection.Clients) {
		return steps.RoundSummary{}, fmt.Errorf("commit: %d summaries for %d clients: %w", len(in.Clients), len(in.Selection.Clients), fl.ErrInvalid)
	}
	var per *ClientEvals
	if in.Eval != nil {
		per = &ClientEvals{}
		if err := e.Store.GetJSON(ctx, env.keys.Eval(in.Round), per); err != nil {
			return steps.RoundSummary{}, fmt.Errorf("round %d: evaluation results: %w", in.Round, err)
		}
	}
	return e.commit(ctx, env, in, per)
}

// commit writes round r's rows and manifest.
func (e *Engine) commit(ctx context.Context, env *pointEnv, in steps.CommitInput, per *ClientEvals) (steps.RoundSummary, error) {
	r := in.Round
	var testAcc *float64
	if in.Eval != nil {
		testAcc = ptr(in.Eval.TestAcc)
	}
	attacks, rest, err := env.attackRows(r, in.Findings, testAcc)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	in.Findings = rest
	rounds, clients, err := env.rows(in, per)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	if len(attacks) > 0 {
		if err := store.WriteRows(ctx, e.Store, env.keys.Part(store.TableAttacks, r), attacks); err != nil {
			return steps.RoundSummary{}, err
		}
	}
	rounds[0].CodeVersion = e.Version
	if err := store.WriteRows(ctx, e.Store, env.keys.Part(store.TableRounds, r), rounds); err != nil {
		return steps.RoundSummary{}, err
	}
	if err := store.WriteRows(ctx, e.Store, env.keys.Part(store.TableClients, r), clients); err != nil {
		return steps.RoundSummary{}, err
	}
	c := store.Commit{Round: r, Global: env.keys.Global(r), GlobalSHA256: in.Model.ModelSHA256, Clients: in.Selection.Clients,
		DataDigest: env.data.Digest, CodeVersion: e.Version}
	if rounds[0].BatchLoss != nil {
		c.TrainLoss = *rounds[0].BatchLoss
	}
	if in.Eval != nil {
		c.Evaluated, c.TestAcc, c.TestLoss = true, in.Eval.TestAcc, in.Eval.TestLoss
	}
	if err := e.checkRecomputed(ctx, env, r, c.GlobalSHA256); err != nil {
		return steps.RoundSummary{}, err
	}
	if err := e.Store.PutJSON(ctx, env.keys.Committed(r), c); err != nil {
		return steps.RoundSummary{}, err
	}
	return summaryOf(c, in.Eval), e.cleanRound(ctx, env, r, in.KeepUpdates, in.Model)
}

func summaryOf(c store.Commit, ev *steps.EvalSummary) steps.RoundSummary {
	return steps.RoundSummary{Round: c.Round, Clients: len(c.Clients), BatchLoss: c.TrainLoss, ModelSHA256: c.GlobalSHA256, Eval: ev}
}

// cleanRound drops round r's transient files, the previous round's
// checkpoint unless it is retained, and the client-state, sampler-memory
// and server-memory versions round r superseded unless a retained
// checkpoint still names them.
func (e *Engine) cleanRound(ctx context.Context, env *pointEnv, r int, keepUpdates bool, model steps.AggregateOutput) error {
	var errs []error
	if !keepUpdates {
		errs = append(errs, e.Store.DeletePrefix(ctx, env.keys.Updates(r)))
	}
	errs = append(errs, e.Store.Delete(ctx, env.keys.Eval(r)), e.Store.Delete(ctx, env.keys.Broadcast(r)),
		e.Store.DeletePrefix(ctx, env.keys.Queries(r)))
	if q := r - 1; q >= 0 && !env.retained(q) {
		errs = append(errs, e.Store.Delete(ctx, env.keys.Global(q)), e.Store.Delete(ctx, env.keys.State(q)), e.Store.Delete(ctx, env.keys.ServerMemory(q)))
	}
	for _, k := range sortedClients(model.Superseded) {
		if v := model.Superseded[k]; !env.stateNeeded(v, r) {
			errs = append(errs, e.Store.Delete(ctx, env.keys.ClientState(k, v)))
		}
	}
	for _, k := range sortedClients(model.Forgotten) {
		if v := model.Forgotten[k]; !env.stateNeeded(v, r) {
			errs = append(errs, e.Store.Delete(ctx, env.keys.ClientMemory(k, v)))
		}
	}
	for _, section := range slices.Sorted(maps.Keys(model.Released)) {
		if v := model.Released[section]; !env.stateNeeded(v, r) {
			key, err := env.keys.ServerVector(section, v)
			if err != nil {
				return err
			}
			errs = append(errs, e.Store.Delete(ctx, key))
		}
	}
	return errors.Join(errs...)
}

// retained reports whether round q's checkpoint is kept after later rounds
// commit: the initial model and every checkpoint_every-th round. The latest
// round is always kept because only the next commit drops it.
func (env *pointEnv) retained(q int) bool {
	return q == 0 || q%env.cfg.CheckpointEvery == 0 || q == env.cfg.Rounds
}

// rows builds round r's metric rows: one rounds row, and clients rows for
// the clients queried or trained in the round and, on evaluation rounds,
// for every client.
func (env *pointEnv) rows(in steps.CommitInput, per *ClientEvals) ([]store.RoundRow, []store.ClientRow, error) {
	sel, sums, ev := in.Selection, in.Clients, in.Eval
	seed := int64(env.cfg.Seed)
	rr := store.RoundRow{Sweep: env.sweep, Point: env.point.ID, Seed: seed, Round: int32(in.Round), Clients: int32(len(sel.Clients)),
		ModelSHA256: in.Model.ModelSHA256, Queried: int32(len(in.Answers))}
	byClient := map[int]*store.ClientRow{}
	row := func(k int) *store.ClientRow {
		if byClient[k] == nil {
			byClient[k] = &store.ClientRow{}
		}
		return byClient[k]
	}
	comm := env.communication(in)
	rr.RoundTrips, rr.DownFloats, rr.UpFloats = comm.trips, comm.down, comm.up
	for _, a := range in.Answers {
		if a.Ask == fl.AskLoss || a.Ask == fl.AskGradient {
			row(a.Client).QueryLoss = ptr(a.Loss)
		}
		rr.QuerySamples += int64(a.Samples)
		if a.Ask == fl.AskGradient {
			rr.QueryGradSamples += int64(a.Samples)
		}
	}
	if len(sums) > 0 {
		loss := 0.0
		for i, s := range sums {
			loss += s.BatchLoss
			rr.Draws += int32(sel.Draws[i])
			rr.WeightSum += sel.Weights[i]
			rr.TrainSamples += int64(s.Samples)
			cr := row(s.Client)
			cr.Selected, cr.Draws, cr.Weight = true, int32(sel.Draws[i]), sel.Weights[i]
			cr.BatchLoss, cr.TrainSamples, cr.Steps = ptr(s.BatchLoss), ptr(int32(s.Samples)), ptr(int32(s.Steps))
			cr.TrainLossBefore, cr.TrainLossAfter, cr.BiasDelta = s.LossBefore, s.LossAfter, s.BiasDelta
			if sel.Entropy != nil {
				cr.EntropyEst = ptr(sel.Entropy[i])
			}
			if sel.Cluster != nil {
				cr.Cluster = ptr(int32(sel.Cluster[i]))
			}
		}
		rr.BatchLoss = ptr(loss / float64(len(sums)))
	}
	if rep := in.Model.Report; rep != nil {
		rr.FairAngle, rr.Aligned = rep.FairAngle, rep.Aligned
		if rep.Weights != nil {
			h := 0.0
			for i, w := range rep.Weights {
				row(sel.Clients[i]).AggWeight = ptr(w)
				if w > 0 {
					h -= w * math.Log(w)
				}
			}
			rr.AggEntropy = ptr(h)
		}
	}
	if rf := in.Refine; rf != nil {
		rr.Refined, rr.RefineSamples, rr.RefinePenalty, rr.PublicLeak = ptr(int32(len(rf.Refined))), ptr(rf.Samples), ptr(rf.Penalty), rf.Leak
		for _, c := range rf.Clients {
			cr := row(c.Client)
			cr.PublicAcc, cr.Refined = ptr(c.PublicAcc), ptr(c.Refined)
		}
	}
	if err := recordFindings(row, in.Findings); err != nil {
		return nil, nil, err
	}
	if ev != nil {
		rr.Evaluated = true
		rr.TestLoss, rr.TestAcc = ptr(ev.TestLoss), ptr(ev.TestAcc)
		rr.ClientAccMean, rr.ClientAccVar = ptr(ev.ClientAccMean), ptr(ev.ClientAccVar)
		rr.ClientAccWorst, rr.ClientAccBest = ptr(ev.ClientAccWorst), ptr(ev.ClientAccBest)
		rr.ClientAccVarPct2, rr.ClientAccStd = ev.ClientAccVarPct2, ev.ClientAccStd
		rr.ClientAccWorst10, rr.ClientAccBest10 = ev.ClientAccWorst10, ev.ClientAccBest10
		rr.ClientAccCV, rr.ClientAccAngle, rr.ClientAccKL = ev.ClientAccCV, ev.ClientAccAngle, ev.ClientAccKL
		rr.GlobalTrainLoss = ev.GlobalTrainLoss
		for k := range per.N {
			cr := row(k)
			cr.TestN = ptr(int32(per.N[k]))
			if per.N[k] > 0 {
				cr.TestLoss = ptr(per.LossSum[k] / float64(per.N[k]))
				cr.TestAcc = ptr(float64(per.Correct[k]) / float64(per.N[k]))
			}
			if per.TrainLoss != nil {
				cr.EvalTrainLoss = ptr(per.TrainLoss[k])
			}
		}
	}
	clients := make([]store.ClientRow, 0, len(byClient))
	for k, cr := range byClient {
		cr.Sweep, cr.Point, cr.Seed, cr.Round, cr.Client = env.sweep, env.point.ID, seed, int32(in.Round), int32(k)
		clients = append(clients, *cr)
	}
	slices.SortFunc(clients, lessClient)
	return []store.RoundRow{rr}, clients, nil
}

// recordFindings puts each client's findings into its row, as a JSON object
// by inspector name.
func recordFindings(row func(int) *store.ClientRow, fs []steps.Finding) error {
	by := map[int]map[string]json.RawMessage{}
	for _, f := range fs {
		if by[f.Client] == nil {
			by[f.Client] = map[string]json.RawMessage{}
		}
		by[f.Client][f.Inspector] = f.Result
	}
	for k, m := range by {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("commit: findings of client %d: %w", k, err)
		}
		row(k).Findings = string(b)
	}
	return nil
}

// comm is a round's communication: client fan-outs, and values sent and
// uploaded.
type comm struct {
	trips    int32
	down, up int64
}

// communication counts a round's traffic in values (docs/architecture.md,
// "Communication"): a client that answered a query received θ^t and
// uploaded its loss (and its gradient); a trained client received θ^t
// (once, if it was asked before), the algorithm's sent vectors and the
// broadcast, and uploaded its update, further vectors and scalars.
func (env *pointEnv) communication(in steps.CommitInput) comm {
	p := int64(env.net.NumParams())
	var c comm
	c.trips = int32(in.Queries) // the broadcast travels with the training request
	if len(in.Clients) > 0 {
		c.trips++
	}
	if rf := in.Refine; rf != nil {
		// FNR-FL's two-phase upload: the scores first, then Δ_j to the
		// refined clients and every model (counted with the updates).
		c.up += rf.Up
		c.down += rf.Down
		if len(rf.Refined) > 0 {
			c.trips++
		}
	}
	asked := map[int]bool{}
	for _, a := range in.Answers {
		if !asked[a.Client] {
			asked[a.Client] = true
			c.down += p
		}
		c.up++
		if a.Ask == fl.AskGradient {
			c.up += p
		}
	}
	for _, s := range in.Clients {
		c.down += s.Down
		if asked[s.Client] {
			c.down -= p
		}
		c.up += s.Up
	}
	return c
}

func ptr[T any](v T) *T { return &v }
