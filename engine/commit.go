package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// CommitRound closes round r: it writes the round's metric rows, then the
// COMMITTED manifest, then drops transient files and checkpoints that are
// not retained. Committing a committed round again changes nothing.
func (e *Engine) CommitRound(ctx context.Context, in steps.CommitInput) (steps.RoundSummary, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return steps.RoundSummary{}, err
	}
	var c store.Commit
	switch err := e.Store.GetJSON(ctx, env.keys.Committed(in.Round), &c); {
	case err == nil:
		return summaryOf(c, in.Eval), e.cleanRound(ctx, env, in.Round, in.KeepUpdates)
	case !errors.Is(err, store.ErrNotFound):
		return steps.RoundSummary{}, err
	}
	var per *ClientEvals
	if in.Eval != nil {
		per = &ClientEvals{}
		if err := e.Store.GetJSON(ctx, env.keys.Eval(in.Round), per); err != nil {
			return steps.RoundSummary{}, fmt.Errorf("round %d: evaluation results: %w", in.Round, err)
		}
	}
	return e.commit(ctx, env, in.Round, in.Selection, in.Clients, in.Model.ModelSHA256, in.Eval, per, in.KeepUpdates)
}

// commit writes round r's rows and manifest. It is the one implementation
// used by both engines.
func (e *Engine) commit(ctx context.Context, env *pointEnv, r int, sel fl.Selection, sums []fl.ClientSummary, sha string, ev *steps.EvalSummary, per *ClientEvals, keep bool) (steps.RoundSummary, error) {
	rounds, clients := env.rows(r, sel, sums, sha, ev, per)
	rounds[0].CodeVersion = e.Version
	if err := store.WriteRows(ctx, e.Store, env.keys.Part(store.TableRounds, r), rounds); err != nil {
		return steps.RoundSummary{}, err
	}
	if err := store.WriteRows(ctx, e.Store, env.keys.Part(store.TableClients, r), clients); err != nil {
		return steps.RoundSummary{}, err
	}
	c := store.Commit{Round: r, Global: env.keys.Global(r), GlobalSHA256: sha, Clients: sel.Clients, DataDigest: env.data.Digest, CodeVersion: e.Version}
	if rounds[0].TrainLoss != nil {
		c.TrainLoss = *rounds[0].TrainLoss
	}
	if ev != nil {
		c.Evaluated, c.TestAcc, c.TestLoss = true, ev.TestAcc, ev.TestLoss
	}
	if err := e.Store.PutJSON(ctx, env.keys.Committed(r), c); err != nil {
		return steps.RoundSummary{}, err
	}
	return summaryOf(c, ev), e.cleanRound(ctx, env, r, keep)
}

func summaryOf(c store.Commit, ev *steps.EvalSummary) steps.RoundSummary {
	return steps.RoundSummary{Round: c.Round, Clients: len(c.Clients), TrainLoss: c.TrainLoss, ModelSHA256: c.GlobalSHA256, Eval: ev}
}

// cleanRound drops round r's transient files and the previous round's
// checkpoint unless it is retained.
func (e *Engine) cleanRound(ctx context.Context, env *pointEnv, r int, keepUpdates bool) error {
	var errs []error
	if !keepUpdates {
		errs = append(errs, e.Store.DeletePrefix(ctx, env.keys.Updates(r)))
	}
	errs = append(errs, e.Store.Delete(ctx, env.keys.Eval(r)))
	if q := r - 1; q >= 0 && !env.retained(q) {
		errs = append(errs, e.Store.Delete(ctx, env.keys.Global(q)), e.Store.Delete(ctx, env.keys.State(q)))
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
// the trained clients and, on evaluation rounds, for every client.
func (env *pointEnv) rows(r int, sel fl.Selection, sums []fl.ClientSummary, sha string, ev *steps.EvalSummary, per *ClientEvals) ([]store.RoundRow, []store.ClientRow) {
	seed := int64(env.cfg.Seed)
	rr := store.RoundRow{Sweep: env.sweep, Point: env.point.ID, Seed: seed, Round: int32(r), Clients: int32(len(sel.Clients)), ModelSHA256: sha}
	byClient := map[int]*store.ClientRow{}
	if len(sums) > 0 {
		loss := 0.0
		for i, s := range sums {
			loss += s.Loss
			rr.Draws += int32(sel.Draws[i])
			rr.WeightSum += sel.Weights[i]
			rr.TrainSamples += int64(s.Samples)
			byClient[s.Client] = &store.ClientRow{
				Selected: true, Draws: int32(sel.Draws[i]), Weight: sel.Weights[i],
				TrainLoss: ptr(s.Loss), TrainSamples: ptr(int32(s.Samples)), Steps: ptr(int32(s.Steps)),
			}
		}
		rr.TrainLoss = ptr(loss / float64(len(sums)))
	}
	if ev != nil {
		rr.Evaluated = true
		rr.TestLoss, rr.TestAcc = ptr(ev.TestLoss), ptr(ev.TestAcc)
		rr.ClientAccMean, rr.ClientAccVar = ptr(ev.ClientAccMean), ptr(ev.ClientAccVar)
		rr.ClientAccWorst, rr.ClientAccBest = ptr(ev.ClientAccWorst), ptr(ev.ClientAccBest)
		for k := range per.N {
			row := byClient[k]
			if row == nil {
				row = &store.ClientRow{}
				byClient[k] = row
			}
			row.TestN = ptr(int32(per.N[k]))
			if per.N[k] > 0 {
				row.TestLoss = ptr(per.LossSum[k] / float64(per.N[k]))
				row.TestAcc = ptr(float64(per.Correct[k]) / float64(per.N[k]))
			}
		}
	}
	clients := make([]store.ClientRow, 0, len(byClient))
	for k, row := range byClient {
		row.Sweep, row.Point, row.Seed, row.Round, row.Client = env.sweep, env.point.ID, seed, int32(r), int32(k)
		clients = append(clients, *row)
	}
	slices.SortFunc(clients, lessClient)
	return []store.RoundRow{rr}, clients
}

func ptr[T any](v T) *T { return &v }
