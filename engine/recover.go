package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flsweep/flsweep/errkind"
	"github.com/flsweep/flsweep/store"
)

// Recovery from damaged checkpoints (docs/architecture.md, "Faults").
//
// Every model and state file carries a SHA-256 checksum (store.File), and
// every committed round's manifest the checksum of its model's weights, so a
// damaged file is detected when it is read, never used. The step that reads
// it fails with store.ErrCorrupt (not retried: a retry would read the same
// bytes) and records what it saw in the point's DAMAGE.json. The next
// PreparePoint (the point workflow continues as new to run it) then looks
// for the latest committed round whose checkpoint verifies (deeply, client
// states and sampler memories included, when DAMAGE.json exists),
// withdraws the commits after it (each manifest kept as SUPERSEDED.json)
// and resumes from there, or from the initial model when no checkpoint
// verifies: the withdrawn rounds are recomputed from their inputs,
// bit-identical by the determinism contract, and the commit checks each
// recomputed model against the superseded manifest; a difference stops the
// point with an error, and so does damage a recomputation cannot repair
// (the data, the point's configuration).

// damage is a point's DAMAGE.json: the last damaged file a step found.
type damage struct {
	Key   string    `json:"key"`
	Error string    `json:"error"`
	Found time.Time `json:"found"`
}

func damageKey(env *pointEnv) string { return env.keys.Prefix() + "DAMAGE.json" }

func supersededKey(env *pointEnv, r int) string { return env.keys.Round(r) + "SUPERSEDED.json" }

// recordDamage notes a damaged file for the next PreparePoint. It is best
// effort: the step's error says the same.
func (e *Engine) recordDamage(ctx context.Context, env *pointEnv, key string, err error) {
	_ = e.Store.PutJSON(ctx, damageKey(env), damage{Key: key, Error: err.Error(), Found: time.Now().UTC()})
}

// IsDamaged reports whether err says a stored file is damaged (it failed
// its checks) or missing although the protocol guarantees it: the point
// recovers by restarting from its last good checkpoint (PreparePoint).
func IsDamaged(err error) bool { return damaged(err) }

// damaged reports whether err says a stored file is damaged or missing
// although the protocol guarantees it.
func damaged(err error) bool { return errkind.Is(err, errkind.Damaged) }

// verifyCheckpoint checks round r's checkpoint against its manifest c: the
// model's checksum, the server state (with the algorithm's server memory)
// and, when deep, every client state and sampler memory the state names.
func (e *Engine) verifyCheckpoint(ctx context.Context, env *pointEnv, r int, c *store.Commit, deep bool) error {
	w, err := e.loadGlobal(ctx, env, r)
	if err != nil {
		return err
	}
	if sum := store.Checksum(w); sum != c.GlobalSHA256 {
		return fmt.Errorf("the model of round %d (%s) has checksum %.12s but its manifest says %.12s: %w",
			r, env.keys.Global(r), sum, c.GlobalSHA256, store.ErrCorrupt)
	}
	st, err := e.loadFullState(ctx, env, r)
	if err != nil || !deep {
		return err
	}
	for _, k := range sortedClients(st.Versions) {
		if _, err := e.loadClientState(ctx, env, k, st.Versions[k]); err != nil {
			return err
		}
	}
	for _, k := range sortedClients(st.Memory) {
		if _, err := e.recall(ctx, env, st, k); err != nil {
			return err
		}
	}
	return nil
}

// resumePoint returns the round a point resumes from: its last committed
// round if that checkpoint verifies, else the latest earlier committed
// round whose checkpoint does, after withdrawing the later commits (−1 when
// none does: the point starts again). The message says what was withdrawn
// and why (empty when nothing was).
//
// last and c are store.LastCommitted's answer, c nil when its manifest is
// damaged. The fast path, a last checkpoint that verifies with no damage
// recorded, reads only that checkpoint.
func (e *Engine) resumePoint(ctx context.Context, env *pointEnv, last int, c *store.Commit) (int, *store.Commit, string, error) {
	var dmg damage
	switch err := e.Store.GetJSON(ctx, damageKey(env), &dmg); {
	case errors.Is(err, store.ErrNotFound):
	case errors.Is(err, store.ErrCorrupt):
		dmg.Key = damageKey(env) // unreadable: verify deeply anyway
	case err != nil:
		return -1, nil, "", err
	}
	deep := dmg.Key != ""
	if c != nil && !deep {
		err := e.verifyCheckpoint(ctx, env, last, c, false)
		if err == nil || !damaged(err) {
			return last, c, "", err
		}
	}
	rounds, err := e.Store.CommittedRounds(ctx, env.keys)
	if err != nil {
		return -1, nil, "", err
	}
	var problems []string
	var recovered string
	for i := len(rounds) - 1; i >= 0; i-- {
		r := rounds[i]
		var m store.Commit
		err := e.Store.GetJSON(ctx, env.keys.Committed(r), &m)
		if err == nil && m.Round != r {
			err = fmt.Errorf("%s names round %d: %w", env.keys.Committed(r), m.Round, store.ErrCorrupt)
		}
		if err == nil {
			err = e.verifyCheckpoint(ctx, env, r, &m, deep)
		}
		if err != nil && !damaged(err) {
			return -1, nil, "", err // the store may be unreachable: retried
		}
		if err != nil {
			if i == len(rounds)-1 || env.retained(r) {
				problems = append(problems, fmt.Sprintf("round %d: %v", r, err))
			}
			continue
		}
		if i == len(rounds)-1 {
			return r, &m, "", e.Store.Delete(ctx, damageKey(env))
		}
		if err := e.withdraw(ctx, env, rounds[i+1:]); err != nil {
			return -1, nil, "", err
		}
		recovered = fmt.Sprintf("rounds %d to %d withdrawn and recomputed from round %d's checkpoint: %s",
			rounds[i+1], rounds[len(rounds)-1], r, strings.Join(problems, "; "))
		if deep {
			recovered += fmt.Sprintf(" (damage found: %s: %s)", dmg.Key, dmg.Error)
		}
		return r, &m, recovered, e.Store.Delete(ctx, damageKey(env))
	}
	// No checkpoint verifies: every round is withdrawn, and the point
	// starts again from its initial model, which it can always recompute.
	if err := e.withdraw(ctx, env, rounds); err != nil {
		return -1, nil, "", err
	}
	if len(rounds) > 0 {
		recovered = fmt.Sprintf("rounds %d to %d withdrawn and recomputed from the initial model: %s",
			rounds[0], rounds[len(rounds)-1], strings.Join(problems, "; "))
	}
	return -1, nil, recovered, e.Store.Delete(ctx, damageKey(env))
}

// withdraw uncommits rounds (ascending), the highest first, so that an
// interruption leaves the point resumable from a shorter prefix. Each
// manifest is kept as SUPERSEDED.json for CommitRound's check.
func (e *Engine) withdraw(ctx context.Context, env *pointEnv, rounds []int) error {
	for _, r := range slices.Backward(rounds) {
		var m store.Commit
		switch err := e.Store.GetJSON(ctx, env.keys.Committed(r), &m); {
		case err == nil:
			if err := e.Store.PutJSON(ctx, supersededKey(env, r), m); err != nil {
				return err
			}
		case !damaged(err):
			return err
		}
		if err := e.Store.Delete(ctx, env.keys.Committed(r)); err != nil {
			return err
		}
	}
	return nil
}

// checkRecomputed compares a recomputed round's model with the manifest it
// supersedes: they must be equal (the determinism contract), else the
// commit fails rather than record other numbers for a round the point
// already reported.
func (e *Engine) checkRecomputed(ctx context.Context, env *pointEnv, r int, sha string) error {
	var m store.Commit
	switch err := e.Store.GetJSON(ctx, supersededKey(env, r), &m); {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case errors.Is(err, store.ErrCorrupt):
		return e.Store.Delete(ctx, supersededKey(env, r)) // nothing to compare with
	case err != nil:
		return err
	}
	if m.GlobalSHA256 != sha {
		return fmt.Errorf("round %d recomputed after damage gives model %.12s, but the round first committed %.12s (build %s, now %s); the determinism contract is broken, the point stops: %w",
			r, sha, m.GlobalSHA256, m.CodeVersion, e.Version, store.ErrCorrupt)
	}
	return e.Store.Delete(ctx, supersededKey(env, r))
}
