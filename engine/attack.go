package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// attackInspector names the attacks' findings among the inspect phase's.
// Registered inspectors cannot take it: it is not a registry name.
const attackInspector = "attack:"

// attackFinding is the attacks' finding on one client's update: the truth
// and each method's recovered histogram. CommitRound turns it into attacks
// rows.
type attackFinding struct {
	Probe    bool           `json:"probe,omitempty"`
	Truth    []int          `json:"truth"`
	Modelled bool           `json:"modelled"`
	Local    attack.Local   `json:"local"`
	Results  []attackResult `json:"results"`
}

type attackResult struct {
	Method        string       `json:"method"`
	Counts        []int        `json:"counts,omitempty"`
	Score         attack.Score `json:"score"`
	Heuristic     bool         `json:"heuristic,omitempty"`
	NotApplicable string       `json:"not_applicable,omitempty"`
}

// auxSet draws the attacker's auxiliary set (sweep.AttackConfig): n
// samples of every class of the test split, which no client trains on
// (clients train on ds.Train; their local test sets are read, never
// trained on). The draw is a partial shuffle of each class's test indices
// from the stream (seed, "", 0, server, attack), so every point of a seed
// attacks with the same set.
func auxSet(ds *dataset.Dataset, seed uint64, n int) (trainer.Examples, error) {
	byClass := make([][]int, ds.Classes)
	for i, y := range ds.Test.Y {
		byClass[y] = append(byClass[y], i)
	}
	r := fl.Stream(fl.Key{Seed: seed, Client: fl.Server, Purpose: fl.PurposeAttack})
	idx := make([]int, 0, n*ds.Classes)
	for j, c := range byClass {
		if len(c) < n {
			return trainer.Examples{}, fmt.Errorf("attack.aux_per_class = %d, but the test split of %s has %d samples of class %d; lower attack.aux_per_class: %w",
				n, ds.Name, len(c), j, fl.ErrInvalid)
		}
		for i := range n {
			k := i + r.IntN(len(c)-i)
			c[i], c[k] = c[k], c[i]
		}
		idx = append(idx, c[:n]...)
	}
	return trainer.Examples{X: ds.Test.X, Y: ds.Test.Y, Dim: ds.Dim(), Idx: idx}, nil
}

// attackUpdates attacks the updates of clients in round r (every method of
// the point's attack block) and returns one finding per client. A method
// that does not apply is recorded; any other error fails the step.
func (e *Engine) attackUpdates(ctx context.Context, env *pointEnv, r int, global []float32, clients []int, sums []fl.ClientSummary) ([]steps.Finding, error) {
	st, sent, err := e.clientInputs(ctx, env, r, false)
	if err != nil {
		return nil, err
	}
	var out []steps.Finding
	for i, k := range clients {
		u, err := e.loadUpdate(ctx, env, r, k)
		if err != nil {
			return nil, err
		}
		cs, err := e.currentClientState(ctx, env, st, k)
		if err != nil {
			return nil, err
		}
		f, err := e.attackClient(ctx, env, r, k, global, algorithm.Client{Round: r, ID: k, Global: global, Server: sent, State: cs,
			Local: &clientLocal{e: e, ctx: ctx, env: env, round: r, client: k}}, u, sums[i].LabelCounts)
		if err != nil {
			return nil, fmt.Errorf("round %d client %d: attack: %w", r, k, err)
		}
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		out = append(out, steps.Finding{Inspector: attackInspector, Client: k, Result: b})
	}
	return out, nil
}

// probeUpdates attacks round r's probe updates (attack.clients: all) of
// a chunk of the clients the round did not select (steps.Round chunks
// them): each trains from θ^{r−1} as the round would have trained it (its
// state as its last round left it, the server's sent vectors and the
// round's broadcast) on its probe stream; the update is attacked and
// dropped, and no state is written.
func (e *Engine) probeUpdates(ctx context.Context, env *pointEnv, in steps.InspectInput, global []float32) ([]steps.Finding, error) {
	r := in.Round
	for _, k := range in.Clients {
		if k < 0 || k >= env.pop.N() {
			return nil, fmt.Errorf("probe round %d: client %d out of [0, %d): %w", r, k, env.pop.N(), fl.ErrInvalid)
		}
	}
	st, sent, err := e.clientInputs(ctx, env, r, in.Broadcast)
	if err != nil {
		return nil, err
	}
	probes := in.Clients
	out := make([]steps.Finding, len(probes))
	err = e.parallel(len(probes), func(i int) error {
		k := probes[i]
		cs, err := e.currentClientState(ctx, env, st, k)
		if err != nil {
			return err
		}
		c := algorithm.Client{Round: r, ID: k, Global: global, Server: sent, State: cs,
			Local: &clientLocal{e: e, ctx: ctx, env: env, round: r, client: k, probe: true}}
		up, err := algorithm.TrainClient(ctx, env.alg, c)
		if err != nil {
			return fmt.Errorf("round %d client %d: probe update: %w", r, k, err)
		}
		if err := checkVector("probe update", up.Delta, env.net.NumParams(), r, k); err != nil {
			return err
		}
		c.Local = &clientLocal{e: e, ctx: ctx, env: env, round: r, client: k, probe: true}
		f, err := e.attackClient(ctx, env, r, k, global, c, update{delta: up.Delta}, up.Train.LabelCounts)
		if err != nil {
			return fmt.Errorf("round %d client %d: attack on its probe update: %w", r, k, err)
		}
		f.Probe = true
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		out[i] = steps.Finding{Inspector: attackInspector, Client: k, Result: b}
		return nil
	})
	return out, err
}

// attackClient runs every method on client k's update u, scored against
// truth, the label counts of the samples its training processed.
func (e *Engine) attackClient(ctx context.Context, env *pointEnv, r, k int, global []float32, c algorithm.Client, u update, truth []int) (attackFinding, error) {
	if len(truth) != env.net.Classes() {
		return attackFinding{}, fmt.Errorf("the update's summary has %d label counts for %d classes (was it trained before the attack block was added?): %w",
			len(truth), env.net.Classes(), fl.ErrInvalid)
	}
	local, lerr := attack.FromHyper(env.roundHyper(r), len(env.part.Train[k]))
	f := attackFinding{Truth: truth, Local: local}
	in := attack.Input{Net: env.net, Global: global, Delta: u.delta, Local: local, Aux: env.aux}
	if x, ok, err := algorithm.Expose(env.alg, c, u.delta); err != nil {
		return f, err
	} else if ok {
		o := x.Objective
		in.Delta, in.Scheme, f.Modelled = x.Delta, attack.Scheme{Prox: o.Prox, Anchor: o.Anchor, Linear: o.Linear, AfterStep: o.AfterStep}, true
	}
	for _, m := range env.cfg.Attack.Methods {
		res := attackResult{Method: m}
		if lerr != nil { // the local training is outside every method (a schedule within the round)
			if !errors.Is(lerr, attack.ErrNotApplicable) {
				return f, lerr
			}
			res.NotApplicable = lerr.Error()
			f.Results = append(f.Results, res)
			continue
		}
		a, aerr := attack.New(m)
		if aerr != nil {
			return f, aerr
		}
		got, aerr := a.Recover(ctx, e.Trainer, in, env.attackStream(r, k, m))
		switch {
		case errors.Is(aerr, attack.ErrNotApplicable):
			res.NotApplicable = aerr.Error()
		case aerr != nil:
			return f, fmt.Errorf("%s: %w", m, aerr)
		default:
			if res.Score, aerr = attack.Evaluate(f.Truth, got.Counts); aerr != nil {
				return f, aerr
			}
			res.Counts, res.Heuristic = got.Counts, got.Heuristic
		}
		f.Results = append(f.Results, res)
	}
	return f, nil
}

// attackStream is method m's stream on client k's update of round r:
// keyed by (seed, point/m, r, k, attack), so that adding a method shifts
// no other method's draws.
func (env *pointEnv) attackStream(r, k int, m string) *rand.Rand {
	return fl.Stream(fl.Key{Seed: env.cfg.Seed, Point: env.streamID + "/" + m, Round: r, Client: k, Purpose: fl.PurposeAttack})
}

// attackRows turns round r's attack findings into attacks rows, and
// returns the other inspectors' findings.
func (env *pointEnv) attackRows(r int, fs []steps.Finding, testAcc *float64) ([]store.AttackRow, []steps.Finding, error) {
	var rows []store.AttackRow
	var rest []steps.Finding
	for _, f := range fs {
		if f.Inspector != attackInspector {
			rest = append(rest, f)
			continue
		}
		var a attackFinding
		if err := json.Unmarshal(f.Result, &a); err != nil {
			return nil, nil, fmt.Errorf("commit: attack finding of client %d: %w", f.Client, err)
		}
		for _, res := range a.Results {
			row := store.AttackRow{
				Sweep: env.sweep, Point: env.point.ID, Seed: int64(env.cfg.Seed), Round: int32(r), Client: int32(f.Client),
				Method: res.Method, Algorithm: env.cfg.AlgorithmName(), Modelled: a.Modelled, Heuristic: res.Heuristic,
				Model: env.net.Key(), Optimizer: cmp.Or(a.Local.Optimizer, trainer.OptimizerSGD), Momentum: a.Local.Momentum, Nesterov: a.Local.Nesterov,
				LocalSteps: int32(a.Local.Steps), BatchSize: int32(a.Local.Batch), Samples: int32(a.Local.Total()),
				AuxPerClass: int32(env.cfg.Attack.AuxPerClass), TrueCounts: int32s(a.Truth), Counts: int32s(res.Counts),
				NotApplicable: res.NotApplicable, TestAcc: testAcc, Probe: a.Probe,
			}
			if res.NotApplicable == "" {
				row.CAcc, row.IAcc = ptr(res.Score.CAcc), ptr(res.Score.IAcc)
			}
			rows = append(rows, row)
		}
	}
	slices.SortFunc(rows, lessAttack)
	return rows, rest, nil
}

func attackRound(r store.AttackRow) int32 { return r.Round }
func lessAttack(a, b store.AttackRow) int {
	return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(a.Client, b.Client), cmp.Compare(a.Method, b.Method))
}
