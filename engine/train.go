package engine

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// TrainClients trains a chunk of round r's clients, in parallel on the
// engine's slots (docs/architecture.md, "The round"). Each client runs the point's
// algorithm from θ^{r−1}, with what the server sends (its state's sent
// vectors and the round's broadcast) and its own state as of its last
// round; its update goes to blob storage, its new state to its next
// version. Summaries come back in input order. progress, if not nil, is
// called after every local step, possibly from several goroutines at once.
func (e *Engine) TrainClients(ctx context.Context, in steps.TrainInput, progress func(steps.Heartbeat)) ([]fl.ClientSummary, error) {
	env, err := e.roundEnv(ctx, in.RoundRef)
	if err != nil {
		return nil, err
	}
	for _, k := range in.Clients {
		if k < 0 || k >= env.pop.N() {
			return nil, fmt.Errorf("client %d out of [0, %d): %w", k, env.pop.N(), fl.ErrInvalid)
		}
	}
	global, err := e.loadGlobal(ctx, env, in.Round-1)
	if err != nil {
		return nil, err
	}
	st, sent, err := e.clientInputs(ctx, env, in.Round, in.Broadcast)
	if err != nil {
		return nil, err
	}
	known := map[int]float64{}
	for _, a := range in.Answers {
		known[a.Client] = a.Loss
	}
	out := make([]fl.ClientSummary, len(in.Clients))
	err = e.parallel(len(in.Clients), func(i int) error {
		k := in.Clients[i]
		cs, err := e.currentClientState(ctx, env, st, k)
		if err != nil {
			return err
		}
		c := trainedClient{round: in.Round, client: k, global: global, sent: sent, state: cs, progress: progress}
		if l, ok := known[k]; ok {
			c.lossBefore = &l
		}
		sum, err := e.trainClient(ctx, env, c)
		out[i] = sum
		return err
	})
	return out, err
}

// clientInputs returns the server state after round r−1 and what every
// client of round r receives with θ^{r−1}: the state's sent vectors and,
// when the round has one, its broadcast.
func (e *Engine) clientInputs(ctx context.Context, env *pointEnv, r int, broadcast bool) (serverState, fl.State, error) {
	st, err := e.loadState(ctx, env, r-1)
	if err != nil {
		return serverState{}, fl.State{}, err
	}
	sent, err := env.sent(st)
	if err != nil {
		return serverState{}, fl.State{}, err
	}
	if broadcast {
		b, err := e.loadBroadcast(ctx, env, r)
		if err != nil {
			return serverState{}, fl.State{}, err
		}
		sent.Set(algorithm.BroadcastVector, b)
	}
	return st, sent, nil
}

// currentClientState returns client k's state as st names it current;
// empty for a client without state.
func (e *Engine) currentClientState(ctx context.Context, env *pointEnv, st serverState, k int) (fl.State, error) {
	v, ok := st.Versions[k]
	if !ok {
		return fl.State{}, nil
	}
	return e.loadClientState(ctx, env, k, v)
}

// trainedClient is one client's training in a round.
type trainedClient struct {
	round, client int
	global        []float32
	sent, state   fl.State
	lossBefore    *float64 // F_k(θ^t) when a query of the round measured it
	progress      func(steps.Heartbeat)
}

// trainClient runs the point's algorithm for one client, stores its update
// and new state, and returns its summary.
func (e *Engine) trainClient(ctx context.Context, env *pointEnv, c trainedClient) (fl.ClientSummary, error) {
	r, k := c.round, c.client
	sum := fl.ClientSummary{Client: k, NumExamples: len(env.part.Train[k])}
	wantBefore, wantAfter := env.wantLosses()
	if wantBefore {
		if c.lossBefore == nil {
			l, err := e.clientLoss(ctx, env, c.global, k)
			if err != nil {
				return sum, fmt.Errorf("round %d client %d: loss before training: %w", r, k, err)
			}
			c.lossBefore = &l
		}
		sum.LossBefore = c.lossBefore
	}
	local := &clientLocal{e: e, ctx: ctx, env: env, round: r, client: k}
	if c.progress != nil {
		local.report = func(p trainer.Progress) {
			c.progress(steps.Heartbeat{Client: k, Step: p.Step, Steps: p.Steps, Loss: p.Loss})
		}
	}
	up, err := algorithm.TrainClient(ctx, env.alg, algorithm.Client{Round: r, ID: k, Global: c.global, Server: c.sent, State: c.state, Local: local})
	if err != nil {
		return sum, fmt.Errorf("round %d client %d: %s: %w", r, k, env.cfg.AlgorithmName(), err)
	}
	if !local.trained {
		return sum, fmt.Errorf("round %d client %d: algorithm %s did not train: %w", r, k, env.cfg.AlgorithmName(), fl.ErrInvalid)
	}
	if err := checkVector("update", up.Delta, env.net.NumParams(), r, k); err != nil {
		return sum, err
	}
	if err := checkVector("local model", up.Weights, env.net.NumParams(), r, k); err != nil {
		return sum, err
	}
	sum.Samples, sum.Steps, sum.BatchLoss, sum.Scalars = up.Train.Samples, up.Train.Steps, up.Train.MeanLoss, up.Scalars
	if env.cfg.Attack.Active() {
		sum.LabelCounts = up.Train.LabelCounts
	}
	sum.Down, sum.Up = int64(len(c.global)), int64(len(up.Delta)+len(up.Scalars))
	for _, v := range c.sent.Vectors {
		sum.Down += int64(len(v))
	}
	for _, v := range up.Vectors.Vectors {
		sum.Up += int64(len(v))
	}
	_, b := env.net.Output()
	sum.BiasDelta = make([]float64, b.Len)
	for j := range sum.BiasDelta {
		sum.BiasDelta[j] = float64(up.Weights[b.Offset+j]) - float64(c.global[b.Offset+j])
	}
	if wantAfter {
		l, err := e.clientLoss(ctx, env, up.Weights, k)
		if err != nil {
			return sum, fmt.Errorf("round %d client %d: loss after training: %w", r, k, err)
		}
		sum.LossAfter = &l
	}
	if err := e.putUpdate(ctx, env, r, k, up); err != nil {
		return sum, err
	}
	if !up.State.Empty() {
		if err := e.saveClientState(ctx, env, k, r, up.State); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

func checkVector(what string, v []float32, n, r, k int) error {
	if len(v) != n {
		return fmt.Errorf("round %d client %d: %s has %d values; the model has %d: %w", r, k, what, len(v), n, fl.ErrInvalid)
	}
	if allFinite(v) {
		return nil
	}
	for j, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("round %d client %d: %s has %v at parameter %d: %w", r, k, what, x, j, fl.ErrDiverged)
		}
	}
	return nil
}

// updateMeta is an update file's JSON section: whether its round wrote a
// new version of the client's state. The client's summary is not in it:
// TrainClients returns it, and the round hands it on to InspectUpdates,
// Aggregate and CommitRound (steps.Round).
type updateMeta struct {
	WroteState bool `json:"wrote_state,omitempty"`
}

// putUpdate stores client k's upload of round r: Δ_k as "delta" and the
// algorithm's further vectors as "up/<name>".
func (e *Engine) putUpdate(ctx context.Context, env *pointEnv, r, k int, up algorithm.Upload) error {
	f, err := store.NewFile("update", env.net.Key(), r, k).AddF32("delta", up.Delta).AddJSON("meta", updateMeta{WroteState: !up.State.Empty()})
	if err != nil {
		return err
	}
	f.AddVectors(uploadPrefix, up.Vectors.Vectors)
	return e.putTransient(ctx, env.keys.Update(r, k), f)
}

const uploadPrefix = "up/"

// clientLocal is algorithm.Local for one client in one round.
type clientLocal struct {
	e             *Engine
	ctx           context.Context
	env           *pointEnv
	round, client int
	// probe trains on the client's probe stream (attack.clients: all)
	// instead of its training stream.
	probe   bool
	report  func(trainer.Progress)
	mu      sync.Mutex
	trained bool
}

var _ algorithm.Local = (*clientLocal)(nil)

func (l *clientLocal) Hyper() trainer.Hyper { return l.env.roundHyper(l.round) }

// roundHyper returns round r's local hyperparameters: the point's, with
// the per-round decay lr·lr_decay^(r−1).
func (env *pointEnv) roundHyper(r int) trainer.Hyper {
	hp := env.hyper
	hp.LR = env.cfg.RoundLR(r)
	return hp
}

// wantLosses reports whether trained clients measure their full-set losses
// before and after training: both when the point asks for them
// (metrics.client_losses), else those its algorithm's server reads.
func (env *pointEnv) wantLosses() (before, after bool) {
	if env.cfg.Metrics.WantClientLosses() {
		return true, true
	}
	if u, ok := env.alg.(algorithm.LossUser); ok {
		return u.UsesLosses()
	}
	return false, false
}

func (l *clientLocal) Steps() int {
	return trainer.NumSteps(len(l.env.part.Train[l.client]), l.env.hyper)
}
func (l *clientLocal) Net() *trainer.Net { return l.env.net }

func (l *clientLocal) SizeRatio() float64 {
	return float64(l.env.pop.Sizes[l.client]) * float64(l.env.pop.N()) / float64(l.env.totalSize())
}

// Train runs the client's local training with its keyed stream (seed,
// point, round, client, train); a second call in the round is an error, so
// no algorithm can draw the client's minibatches twice.
func (l *clientLocal) Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error) {
	l.mu.Lock()
	if l.trained {
		l.mu.Unlock()
		return trainer.TrainResult{}, fmt.Errorf("local training ran twice in one round: %w", fl.ErrInvalid)
	}
	l.trained = true
	l.mu.Unlock()
	key := fl.Key{Seed: l.env.cfg.Seed, Point: l.env.shared, Round: l.round, Client: l.client, Purpose: fl.PurposeTrain}
	if l.probe {
		key.Point, key.Purpose = l.env.streamID+"/probe", fl.PurposeAttack
	}
	rng := fl.Stream(key)
	return l.e.Trainer.TrainObjective(l.ctx, l.env.net, w, l.env.examples(l.client), l.Hyper(), obj, rng, l.report)
}

// Embed returns the embeddings of the client's training samples under w.
func (l *clientLocal) Embed(w []float32) ([]float32, error) {
	ex := l.env.examples(l.client)
	emb := make([]float32, len(ex.Idx)*l.env.net.Embedding())
	if err := l.e.Trainer.Forward(l.ctx, l.env.net, w, ex, emb, nil); err != nil {
		return nil, err
	}
	return emb, nil
}
