package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// parallel runs f(0..n-1) concurrently, each call holding one of the
// engine's slots (Workers), shared by every step running in this process,
// and returns the errors joined. f must not call parallel itself: a call
// holding a slot that waits for another could wait forever.
func (e *Engine) parallel(n int, f func(i int) error) error {
	e.slotsOnce.Do(func() { e.slots = make(chan struct{}, e.workers()) })
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.slots <- struct{}{}
			defer func() { <-e.slots }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readFile reads the blob file at key and checks that its header is a
// file of kind for this point's model, round r and client (fl.Server for
// the server's files). what names the file in errors; a missing file is
// errMissing, with hint saying why it should be there.
func (e *Engine) readFile(ctx context.Context, env *pointEnv, key, kind string, r, client int, what, hint string) (*store.File, error) {
	f, err := e.getFile(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = fmt.Errorf("%s (%s) is missing; %s: %w", what, key, hint, errMissing)
	case err != nil && !errors.Is(err, store.ErrCorrupt):
		return nil, err // the store may be unreachable: retried
	case err == nil && (f.Kind != kind || f.Arch != env.net.Key() || f.Round != r || f.Client != client):
		err = fmt.Errorf("%s: header says %s for %s round %d client %d; want the %s for %s round %d client %d: %w",
			key, f.Kind, f.Arch, f.Round, f.Client, what, env.net.Key(), r, client, store.ErrCorrupt)
	}
	if err != nil {
		// Never used; recorded so that the point's next start recovers
		// (engine/recover.go).
		e.recordDamage(ctx, env, key, err)
		return nil, err
	}
	return f, nil
}

// loadGlobal reads and verifies the global model after round r.
func (e *Engine) loadGlobal(ctx context.Context, env *pointEnv, r int) ([]float32, error) {
	f, err := e.readFile(ctx, env, env.keys.Global(r), "global", r, fl.Server, fmt.Sprintf("global model of round %d", r),
		"the point can resume only from a retained checkpoint")
	if err != nil {
		return nil, err
	}
	return f.Vector("weights", env.net.NumParams())
}

// saveGlobal writes the global model after round r and returns its
// checksum.
func (e *Engine) saveGlobal(ctx context.Context, env *pointEnv, r int, w []float32) (string, error) {
	f := store.NewFile("global", env.net.Key(), r, fl.Server).AddF32("weights", w)
	if _, err := e.Store.PutFile(ctx, env.keys.Global(r), f); err != nil {
		return "", err
	}
	return store.Checksum(w), nil
}

// roundEnv returns the point's environment after checking that this worker
// holds the data the point runs on.
func (e *Engine) roundEnv(ctx context.Context, in steps.RoundRef) (*pointEnv, error) {
	env, err := e.env(ctx, in.PointRef)
	if err != nil {
		return nil, err
	}
	if in.Round < 1 || in.Round > env.cfg.Rounds {
		return nil, fmt.Errorf("round %d out of [1, %d]: %w", in.Round, env.cfg.Rounds, fl.ErrInvalid)
	}
	if in.DataDigest != "" && in.DataDigest != env.data.Digest {
		return nil, fmt.Errorf("this worker's %s data (digest %.12s) differs from the data the point started with (%.12s); point the worker's --data-dir at the same files: %w",
			env.data.Name, env.data.Digest, in.DataDigest, fl.ErrInvalid)
	}
	return env, nil
}
