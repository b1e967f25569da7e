package engine

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// A round's updates live until its commit, which deletes them unless the
// point keeps updates (run.keep_updates). When one process runs the whole
// round (RunRound, RunRoundInOne) nothing outside it ever reads them, so
// they stay in its memory instead of going to the blob store and back: for
// the demo that was 8 MB written, read and deleted per round, about a tenth
// of a round's CPU. Each write and each read takes a copy of the file, so
// that no writer or reader can change what another sees, as with stored
// files; past transientCap bytes in a round they go to the store again,
// which bounds the memory a round of a big model over many clients takes.

// transientCap is the most bytes of updates one round holds in memory.
var transientCap = 256 << 20

type transientKey struct{}

// transient is one round's updates held in memory, by blob key.
type transient struct {
	mu    sync.Mutex
	files map[string]*store.File
	bytes int // Σ fileSize over files
}

// roundContext returns ctx for a round run whole in this process: carrying
// a new, empty transient unless the point keeps its updates.
func roundContext(ctx context.Context, in steps.RoundInput) context.Context {
	if in.KeepUpdates {
		return ctx
	}
	return context.WithValue(ctx, transientKey{}, &transient{files: map[string]*store.File{}})
}

func transientOf(ctx context.Context) *transient {
	t, _ := ctx.Value(transientKey{}).(*transient)
	return t
}

// putTransient writes f at key: into the round's memory when ctx carries
// one with room left, else to the store.
func (e *Engine) putTransient(ctx context.Context, key string, f *store.File) error {
	if t := transientOf(ctx); t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		bytes := t.bytes - fileSize(t.files[key])
		delete(t.files, key)
		if size := fileSize(f); bytes+size <= transientCap {
			t.files[key], bytes = cloneFile(f), bytes+size
		}
		t.bytes = bytes
		if t.files[key] != nil {
			return nil
		}
	}
	_, err := e.Store.PutFile(ctx, key, f)
	return err
}

// fileSize is the bytes of f's sections; 0 for nil.
func fileSize(f *store.File) int {
	if f == nil {
		return 0
	}
	n := 0
	for _, v := range f.F32 {
		n += 4 * len(v)
	}
	for _, b := range f.JSON {
		n += len(b)
	}
	return n
}

// getFile reads the file at key: a copy from the round's memory when it is
// there, else from the store, verified.
func (e *Engine) getFile(ctx context.Context, key string) (*store.File, error) {
	if t := transientOf(ctx); t != nil {
		t.mu.Lock()
		f, ok := t.files[key]
		t.mu.Unlock()
		if ok {
			return cloneFile(f), nil
		}
	}
	return e.Store.GetFile(ctx, key)
}

// cloneFile returns a deep copy of f (its JSON sections, which readers only
// decode, shared).
func cloneFile(f *store.File) *store.File {
	g := *f
	g.Sections = slices.Clone(f.Sections)
	g.F32 = make(map[string][]float32, len(f.F32))
	for name, v := range f.F32 {
		g.F32[name] = slices.Clone(v)
	}
	g.JSON = maps.Clone(f.JSON)
	return &g
}
