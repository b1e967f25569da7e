package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sync/errgroup"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/store"
)

// serverState is the server's memory after a round: the sampler's and the
// algorithm's states, and which version of each client's state is current.
// It is written beside the round's model (state.bin) and read by the next
// round's steps, so a retried, resumed or continued-as-new round reads what
// the uninterrupted run read (docs/architecture.md, "State").
type serverState struct {
	Sampler   fl.State
	Algorithm fl.State
	// Optimizer is the server optimiser's memory (its moments); empty
	// without one.
	Optimizer fl.State
	// Versions maps a client to the round whose training wrote its current
	// state; clients without state are absent.
	Versions map[int]int
	// Memory maps a client to the round in which the sampler last
	// remembered something about it (fl.ObserveInput.Remember).
	Memory map[int]int
	// Held maps each vector of the algorithm and the server optimiser, by
	// section ("<owner>/<name>"), to the round whose file holds it
	// (keys.ServerVector); nil for a state written before per-vector files
	// or not yet saved.
	Held map[string]int
	// prints are the vectors' fingerprints as loadFullState read them, so
	// that saving the next state can tell a vector an algorithm left alone
	// from one it changed in place.
	prints map[string]uint64
}

// stateMeta is state.bin's JSON section. The method names let a point
// refuse a state file written by another method.
type stateMeta struct {
	Round         int             `json:"round"`
	Sampler       string          `json:"sampler,omitempty"`
	Algorithm     string          `json:"algorithm,omitempty"`
	SamplerMeta   json.RawMessage `json:"sampler_meta,omitempty"`
	AlgorithmMeta json.RawMessage `json:"algorithm_meta,omitempty"`
	// ServerOptimizer names the server optimiser whose memory the file
	// holds; empty for points without one (every file written before them).
	ServerOptimizer string      `json:"server_optimizer,omitempty"`
	Versions        map[int]int `json:"versions,omitempty"`
	Memory          map[int]int `json:"memory,omitempty"`
	// Private names the vector sections kept outside state.bin,
	// "<owner>/<name>": with Held, every vector of the algorithm and the
	// server optimiser, each in its own file; without, as points begun
	// before per-vector files wrote them, the algorithm's vectors its
	// clients are not sent and the optimiser's moments, in this round's
	// server.bin (keys.ServerMemory), the sent ones being in state.bin.
	// Empty: every vector is in state.bin (files written before
	// server.bin, and points that keep none).
	Private []string `json:"private,omitempty"`
	// Held maps each private section to the round whose file holds it
	// (keys.ServerVector): a vector is written in the round it changes and
	// named from there until it changes again, so a round writes only the
	// vectors that changed (FedFV's m new updates, not its τ·m history). A
	// point begun before per-vector files writes them from its next round.
	Held map[string]int `json:"held,omitempty"`
}

// Vector sections of state.bin are named "<owner>/<name>".
const (
	ownSampler   = "sampler/"
	ownAlgorithm = "algorithm/"
	ownOptimizer = "server_optimizer/"
)

// initState returns the server state before round 1.
func (env *pointEnv) initState() (serverState, error) {
	var st serverState
	var err error
	if l, ok := env.sampler.(fl.Learner); ok {
		if st.Sampler, err = l.Init(env.pop); err != nil {
			return st, err
		}
	}
	if st.Algorithm, err = env.alg.Init(env.net.NumParams()); err != nil {
		return st, err
	}
	if env.opt != nil {
		st.Optimizer, err = env.opt.Init(env.net.NumParams())
	}
	return st, err
}

// saveState writes the server state after round r and returns the
// versions of the vector files it no longer names (released), for the
// commit to delete unless a kept checkpoint still names them. Every vector
// of the algorithm and of the server optimiser goes to a file of its own
// (keys.ServerVector), written first so that no state.bin names a file not
// yet written; a vector bit-equal to prev's (the state after round r−1, or
// nil) keeps prev's file. state.bin holds the metadata and the sampler's
// vectors: all that selection reads.
func (e *Engine) saveState(ctx context.Context, env *pointEnv, r int, st serverState, prev *serverState) (released map[string]int, err error) {
	meta := stateMeta{Round: r, Sampler: env.cfg.Sampler.Name, Algorithm: env.cfg.AlgorithmName(),
		SamplerMeta: st.Sampler.Meta, AlgorithmMeta: st.Algorithm.Meta, ServerOptimizer: env.cfg.ServerOptimizer.Name,
		Versions: st.Versions, Memory: st.Memory}
	private := sections(st)
	var before map[string][]float32
	if prev != nil {
		before = sections(*prev)
	}
	if len(private) > 0 {
		meta.Private = slices.Sorted(maps.Keys(private))
		meta.Held = make(map[string]int, len(private))
	}
	// The changed vectors are written side by side (FedFV writes m a
	// round: one at a time, at 100 clients a round, writing them took
	// about 40% of its aggregation's CPU in a profile).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(vectorReaders)
	for _, section := range meta.Private {
		v := private[section]
		if pv, ok := prev.held(section); ok && sameBits(before[section], v) && prev.prints[section] == fingerprint(v) {
			meta.Held[section] = pv
			continue
		}
		key, err := env.keys.ServerVector(section, r)
		if err != nil {
			g.Wait() // the writes begun: not left running past the step
			return nil, fmt.Errorf("%s: %w", env.cfg.AlgorithmName(), err)
		}
		meta.Held[section] = r
		g.Go(func() error {
			f := store.NewFile("server", env.net.Key(), r, fl.Server).AddF32(section, v)
			if _, err := e.Store.PutFile(gctx, key, f); err != nil {
				return err
			}
			e.vectors.put(key, v)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if prev != nil {
		for section, pv := range prev.Held {
			if v, ok := meta.Held[section]; !ok || v != pv {
				if released == nil {
					released = map[string]int{}
				}
				released[section] = pv
			}
		}
	}
	f, err := store.NewFile("state", env.net.Key(), r, fl.Server).AddJSON("meta", meta)
	if err != nil {
		return nil, err
	}
	f.AddVectors(ownSampler, st.Sampler.Vectors)
	_, err = e.Store.PutFile(ctx, env.keys.State(r), f)
	return released, err
}

// sections returns the algorithm's and the server optimiser's vectors by
// section, "<owner>/<name>".
func sections(st serverState) map[string][]float32 {
	out := make(map[string][]float32, len(st.Algorithm.Vectors)+len(st.Optimizer.Vectors))
	for name, v := range st.Algorithm.Vectors {
		out[ownAlgorithm+name] = v
	}
	for name, v := range st.Optimizer.Vectors {
		out[ownOptimizer+name] = v
	}
	return out
}

// held returns the round whose file holds section in st (nil: none).
func (st *serverState) held(section string) (int, bool) {
	if st == nil {
		return 0, false
	}
	v, ok := st.Held[section]
	return v, ok
}

// printSeed keys the fingerprints of one process.
var printSeed = maphash.MakeSeed()

// fingerprint hashes v's bits: equal for a vector as read and as saved
// unless it was changed in between (two different vectors collide with
// probability 2⁻⁶⁴).
func fingerprint(v []float32) uint64 {
	return maphash.Bytes(printSeed, f32Bytes(v))
}

// sameBits reports whether a and b hold the same float32 bit patterns:
// their bytes compared as bytes (FedFV compares its whole window every
// round, τ·m model-sized vectors; a loop over Float32bits took about 25 ms
// a round of CPU at m = 100 in a profile).
func sameBits(a, b []float32) bool {
	return len(a) == len(b) && bytes.Equal(f32Bytes(a), f32Bytes(b))
}

// f32Bytes views v's memory as bytes.
func f32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// loadSamplerState reads state.bin of round r alone, checking that it
// belongs to this point's architecture and methods: the metadata, the
// client versions and the sampler's vectors (with, for a point begun before
// per-vector files, the algorithm's sent vectors), all that selection
// reads.
func (e *Engine) loadSamplerState(ctx context.Context, env *pointEnv, r int) (serverState, error) {
	st, _, err := e.readState(ctx, env, r)
	return st, err
}

// loadState reads the server state after round r that every step but
// aggregation needs: loadSamplerState's and the algorithm's vectors its
// clients are sent. loadFullState reads the rest too.
func (e *Engine) loadState(ctx context.Context, env *pointEnv, r int) (serverState, error) {
	st, private, err := e.readState(ctx, env, r)
	if err != nil || st.Held == nil {
		return st, err
	}
	var sent []string
	for _, name := range env.alg.Sends() {
		if section := ownAlgorithm + name; slices.Contains(private, section) {
			sent = append(sent, section)
		}
	}
	if len(sent) == 0 {
		return st, nil
	}
	vs, err := e.readVectors(ctx, env, r, sent, st.Held)
	if err != nil {
		return serverState{}, err
	}
	for _, section := range sent {
		st.Algorithm.Set(strings.TrimPrefix(section, ownAlgorithm), vs[section])
	}
	return st, nil
}

// loadFullState reads the whole server state after round r: loadState's
// and the vectors only aggregation reads (the server memory), from their
// per-vector files or, for a point begun before them, from server.bin.
func (e *Engine) loadFullState(ctx context.Context, env *pointEnv, r int) (serverState, error) {
	st, private, err := e.readState(ctx, env, r)
	if err != nil || len(private) == 0 {
		return st, err
	}
	vs, err := e.readVectors(ctx, env, r, private, st.Held)
	if err != nil {
		return serverState{}, err
	}
	st.prints = make(map[string]uint64, len(private))
	for _, section := range private {
		v := vs[section]
		st.prints[section] = fingerprint(v)
		switch {
		case strings.HasPrefix(section, ownAlgorithm):
			st.Algorithm.Set(strings.TrimPrefix(section, ownAlgorithm), v)
		case strings.HasPrefix(section, ownOptimizer):
			st.Optimizer.Set(strings.TrimPrefix(section, ownOptimizer), v)
		default:
			return serverState{}, fmt.Errorf("%s: the server state of round %d names section %q, of no owner: %w", env.keys.State(r), r, section, store.ErrCorrupt)
		}
	}
	return st, nil
}

// vectorReaders bounds the state vector files read, or written, at once.
const vectorReaders = 8

// readVectors reads the named sections of the server state after round r:
// each from its file of round held[section], on up to vectorReaders
// goroutines, or, when held is nil (a point begun before per-vector
// files), from round r's server.bin.
func (e *Engine) readVectors(ctx context.Context, env *pointEnv, r int, sections []string, held map[string]int) (map[string][]float32, error) {
	named := fmt.Sprintf("the server state of round %d names it; the store was damaged", r)
	if held == nil {
		key := env.keys.ServerMemory(r)
		f, err := e.readFile(ctx, env, key, "server", r, fl.Server, fmt.Sprintf("the server memory of round %d", r), named)
		if err != nil {
			return nil, err
		}
		vs := f.VectorsWith("")
		for _, section := range sections {
			if _, ok := vs[section]; !ok {
				return nil, fmt.Errorf("%s has no vector %q, which the server state of round %d names: %w", key, section, r, store.ErrCorrupt)
			}
		}
		return vs, nil
	}
	keys := make([]string, len(sections))
	for i, section := range sections {
		v, ok := held[section]
		if !ok || v > r || v < 0 {
			return nil, fmt.Errorf("%s: the server state of round %d holds section %q in round %d's file: %w", env.keys.State(r), r, section, v, store.ErrCorrupt)
		}
		key, err := env.keys.ServerVector(section, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v: %w", env.keys.State(r), err, store.ErrCorrupt)
		}
		keys[i] = key
	}
	vs := make([][]float32, len(sections))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(vectorReaders)
	for i, section := range sections {
		g.Go(func() error {
			var ok bool
			if vs[i], ok = e.vectors.get(keys[i]); ok {
				return nil
			}
			v := held[section]
			f, err := e.readFile(gctx, env, keys[i], "server", v, fl.Server, fmt.Sprintf("state vector %s of round %d", section, v), named)
			if err != nil {
				return err
			}
			if vs[i], err = f.Vector(section, -1); err != nil {
				return fmt.Errorf("%s: %v: %w", keys[i], err, store.ErrCorrupt)
			}
			e.vectors.put(keys[i], vs[i])
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(sections))
	for i, section := range sections {
		out[section] = vs[i]
	}
	return out, nil
}

// readState reads state.bin of round r, and the sections of the vectors
// kept outside it (stateMeta.Private).
func (e *Engine) readState(ctx context.Context, env *pointEnv, r int) (serverState, []string, error) {
	key := env.keys.State(r)
	f, err := e.readFile(ctx, env, key, "state", r, fl.Server, fmt.Sprintf("server state of round %d", r),
		"the point can resume only from a retained checkpoint")
	if err != nil {
		return serverState{}, nil, err
	}
	var m stateMeta
	if err := f.Decode("meta", &m); err != nil {
		return serverState{}, nil, fmt.Errorf("%s: %w", key, err)
	}
	alg, sampler := env.cfg.AlgorithmName(), env.cfg.Sampler.Name
	if m.Algorithm == "" && m.Sampler == "" { // written before methods had state: FedAvg's
		m.Algorithm, m.Sampler = "fedavg", sampler
	}
	if m.Algorithm != alg || m.Sampler != sampler {
		return serverState{}, nil, fmt.Errorf("%s was written by algorithm %q with sampler %q, but this point runs %q with %q; the file belongs to another point or was damaged: %w",
			key, m.Algorithm, m.Sampler, alg, sampler, store.ErrCorrupt)
	}
	if opt := env.cfg.ServerOptimizer.Name; m.ServerOptimizer != opt {
		return serverState{}, nil, fmt.Errorf("%s was written with server optimizer %q, but this point runs %q; the file belongs to another point or was damaged: %w",
			key, m.ServerOptimizer, opt, store.ErrCorrupt)
	}
	st := serverState{Sampler: fl.State{Meta: m.SamplerMeta, Vectors: f.VectorsWith(ownSampler)},
		Algorithm: fl.State{Meta: m.AlgorithmMeta, Vectors: f.VectorsWith(ownAlgorithm)},
		Optimizer: fl.State{Vectors: f.VectorsWith(ownOptimizer)}, Versions: m.Versions, Memory: m.Memory, Held: m.Held}
	if len(m.Private) > 0 && m.Held != nil && len(m.Held) != len(m.Private) {
		return serverState{}, nil, fmt.Errorf("%s names %d private sections but holds %d: %w", key, len(m.Private), len(m.Held), store.ErrCorrupt)
	}
	return st, m.Private, nil
}

// sent returns the part of the algorithm's state its clients receive.
func (env *pointEnv) sent(st serverState) (fl.State, error) {
	var out fl.State
	for _, name := range env.alg.Sends() {
		v, err := st.Algorithm.Vector(name, -1)
		if err != nil {
			return out, fmt.Errorf("server state of %s: %w", env.cfg.AlgorithmName(), err)
		}
		out.Set(name, v)
	}
	return out, nil
}

// saveMemory writes what the sampler remembered about client k in round r.
func (e *Engine) saveMemory(ctx context.Context, env *pointEnv, k, r int, v []float32) error {
	f := store.NewFile("memory", env.net.Key(), r, k).AddF32("vector", v)
	_, err := e.Store.PutFile(ctx, env.keys.ClientMemory(k, r), f)
	return err
}

// recall returns what the sampler remembered about client k as of the
// server state st, or nil.
func (e *Engine) recall(ctx context.Context, env *pointEnv, st serverState, k int) ([]float32, error) {
	if k < 0 || k >= env.pop.N() {
		return nil, fmt.Errorf("recall: client %d is not in [0, %d): %w", k, env.pop.N(), fl.ErrInvalid)
	}
	v, ok := st.Memory[k]
	if !ok {
		return nil, nil
	}
	f, err := e.readFile(ctx, env, env.keys.ClientMemory(k, v), "memory", v, k, fmt.Sprintf("the sampler's memory of client %d from round %d", k, v),
		"the server state names it as current; the store was damaged")
	if err != nil {
		return nil, err
	}
	return f.Vector("vector", -1)
}

// clientMeta is a client state file's JSON section.
type clientMeta struct {
	Algorithm string          `json:"algorithm"`
	Meta      json.RawMessage `json:"meta,omitempty"`
}

// saveClientState writes client k's state as written by round r.
func (e *Engine) saveClientState(ctx context.Context, env *pointEnv, k, r int, s fl.State) error {
	f, err := store.NewFile("client", env.net.Key(), r, k).AddJSON("meta", clientMeta{Algorithm: env.cfg.AlgorithmName(), Meta: s.Meta})
	if err != nil {
		return err
	}
	f.AddVectors("", s.Vectors)
	_, err = e.Store.PutFile(ctx, env.keys.ClientState(k, r), f)
	return err
}

// loadClientState reads client k's state version v (written in round v),
// checking that it belongs to this point's architecture and algorithm.
func (e *Engine) loadClientState(ctx context.Context, env *pointEnv, k, v int) (fl.State, error) {
	key := env.keys.ClientState(k, v)
	f, err := e.readFile(ctx, env, key, "client", v, k, fmt.Sprintf("client %d's state version %d", k, v),
		"the server state names it as current; the store was damaged")
	if err != nil {
		return fl.State{}, err
	}
	var m clientMeta
	if err := f.Decode("meta", &m); err != nil {
		return fl.State{}, fmt.Errorf("%s: %w", key, err)
	}
	if m.Algorithm != env.cfg.AlgorithmName() {
		return fl.State{}, fmt.Errorf("%s was written by algorithm %q, but this point runs %q: %w", key, m.Algorithm, env.cfg.AlgorithmName(), store.ErrCorrupt)
	}
	s := fl.State{Meta: m.Meta, Vectors: f.VectorsWith("")}
	return s, nil
}

// stateNeeded reports whether client state version v, superseded in round
// r, is still read by a kept checkpoint: the server states of rounds v..r−1
// name it, and those of them that are retained stay.
func (env *pointEnv) stateNeeded(v, r int) bool {
	for q := v; q < r; q++ {
		if env.retained(q) {
			return true
		}
	}
	return false
}

// versionsOf returns a copy of m (never nil).
func versionsOf(m map[int]int) map[int]int {
	out := maps.Clone(m)
	if out == nil {
		out = map[int]int{}
	}
	return out
}

// sortedClients returns m's keys, sorted.
func sortedClients(m map[int]int) []int {
	return slices.Sorted(maps.Keys(m))
}
