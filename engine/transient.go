package engine

import (
	"context"
	"sync"

	"github.com/flsweep/flsweep/store"
)

// A round's updates live until its commit, which deletes them unless the
// point keeps updates (run.keep_updates). When one process runs the whole
// round (RunRound, RunRoundInOne) nothing outside it ever reads them, so
// they stay in its memory instead of going to the blob store and back: for
// the demo that was 8 MB written, read and deleted per round, about a tenth
// of a round's CPU. They are held encoded, as the store would hold them, and
// decoded and verified on every read as a stored file is, so that nothing
// downstream can tell the difference; past transientCap bytes in a round
// they go to the store again, which bounds the memory a round of a big
// model over many clients takes.

// transientCap is the most bytes of updates one round holds in memory.
var transientCap = 256 << 20

type transientKey struct{}

// transient is one round's updates held in memory, by blob key.
type transient struct {
	mu    sync.Mutex
	files map[string][]byte
	bytes int
}

// withTransient returns ctx carrying a new, empty transient for a round
// run whole in this process.
func withTransient(ctx context.Context) context.Context {
	return context.WithValue(ctx, transientKey{}, &transient{files: map[string][]byte{}})
}

func transientOf(ctx context.Context) *transient {
	t, _ := ctx.Value(transientKey{}).(*transient)
	return t
}

// putTransient writes f at key: into the round's memory when ctx carries
// one with room left, else to the store.
func (e *Engine) putTransient(ctx context.Context, key string, f *store.File) error {
	if t := transientOf(ctx); t != nil {
		b, _, err := f.Encode()
		if err != nil {
			return err
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.bytes+len(b)-len(t.files[key]) <= transientCap {
			t.bytes += len(b) - len(t.files[key])
			t.files[key] = b
			return nil
		}
		delete(t.files, key)
	}
	_, err := e.Store.PutFile(ctx, key, f)
	return err
}

// getFile reads and verifies the file at key: from the round's memory when
// it is there, else from the store.
func (e *Engine) getFile(ctx context.Context, key string) (*store.File, error) {
	if t := transientOf(ctx); t != nil {
		t.mu.Lock()
		b, ok := t.files[key]
		t.mu.Unlock()
		if ok {
			return store.DecodeFile(key, b)
		}
	}
	return e.Store.GetFile(ctx, key)
}
