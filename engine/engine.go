// Package engine runs sweeps: it is the single implementation of every step
// of a round (select, query, broadcast, train, inspect, aggregate, evaluate,
// commit; docs/architecture.md) on top of blob storage. Temporal activities
// call these steps (package activities); the in-process runner (RunPoint,
// RunSweep) walks the same round protocol (steps.Round) and calls them
// directly. Both therefore produce bit-identical models and rows, which is
// the system's core test.
//
// The engine knows nothing of Temporal. Progress is reported through plain
// callbacks, and errors are classified with IsBadInput and IsDiverged.
package engine

import (
	"container/list"
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/errkind"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
	"github.com/flsweep/flsweep/trainer"
)

// Engine holds what every step needs. It is safe for concurrent use; create
// one per process.
type Engine struct {
	Store   *store.Store
	Data    *dataset.Cache
	DataDir string // default location of datasets: DataDir/<name> when a spec gives no root
	Reg     *methods.Registry
	Trainer *trainer.Trainer
	// Workers bounds the clients trained, queried or evaluated at once in
	// this process, across all steps running in it (0: GOMAXPROCS).
	Workers int
	// Version identifies the build; every committed round records it.
	Version string

	envs         envCache
	slotsOnce    sync.Once
	slots        chan struct{}
	handlersOnce sync.Once
	steps        map[string]handler
	idMu         sync.Mutex
	bucketID     string // the bucket's identity marker, once read (BucketID)
	clock        stepClock
	vectors      vectorCache // the server's vector files this process wrote or read (vectorcache.go)
}

// Options configure New.
type Options struct {
	DataDir string
	Workers int
	Version string
	// Registry resolves the spec's method names; nil means methods.Builtin().
	Registry *methods.Registry
	// Kernels is the trainer's kernel choice (the zero value: the
	// default kernels). Version should name its numerics
	// (trainer.KernelChoice.Numerics), as the points it trains record it.
	Kernels trainer.KernelChoice
}

// New returns an engine over st with the built-in methods.
func New(st *store.Store, opts *Options) *Engine {
	if opts == nil {
		opts = &Options{}
	}
	reg := opts.Registry
	if reg == nil {
		reg = methods.Builtin()
	}
	return &Engine{
		Store:   st,
		Data:    dataset.NewCache(),
		DataDir: opts.DataDir,
		Reg:     reg,
		Trainer: trainer.New(&trainer.Options{Kernels: opts.Kernels}),
		Workers: opts.Workers,
		Version: opts.Version,
		envs:    envCache{max: 32},
	}
}

func (e *Engine) workers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// dataRoot is where this engine reads c's data: within DataDir
// (sweep.DataRoot), or a bucket URL.
func (e *Engine) dataRoot(c sweep.Config) (string, error) {
	return sweep.DataRoot(e.DataDir, c.Dataset)
}

// IsBadInput reports whether err comes from input that can never work: a bad
// spec, unknown method, missing dataset (errkind.Invalid), or a stored file
// that failed its checks (errkind.Damaged, which a point may first recover
// from: IsDamaged). Such errors must not be retried.
func IsBadInput(err error) bool {
	k := errkind.Of(err)
	return k == errkind.Invalid || k == errkind.Damaged
}

// IsDiverged reports whether err is a numerical blow-up (NaN or Inf): an
// outcome of the point, not a failure to retry.
func IsDiverged(err error) bool { return errkind.Is(err, errkind.Diverged) }

// errMissing marks a blob the protocol guarantees but that is absent (a
// committed round without its model): the store was damaged.
var errMissing = errkind.New(errkind.Damaged, "missing")

// envCache keeps recently used point environments (data, partition, model
// description) so consecutive activities of a point do not rebuild them.
type envCache struct {
	max   int
	mu    sync.Mutex
	order *list.List // of *pointEnv, most recent first
	byKey map[string]*list.Element
	group singleflight.Group
}

func (c *envCache) get(ctx context.Context, key string, build func() (*pointEnv, error)) (*pointEnv, error) {
	c.mu.Lock()
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
		c.order = list.New()
	}
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*pointEnv), nil
	}
	c.mu.Unlock()
	v, err, _ := c.group.Do(key, func() (any, error) { return build() })
	if err != nil {
		return nil, err
	}
	env := v.(*pointEnv)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; !ok {
		c.byKey[key] = c.order.PushFront(env)
		for c.order.Len() > c.max {
			last := c.order.Back()
			c.order.Remove(last)
			delete(c.byKey, last.Value.(*pointEnv).cacheKey)
		}
	}
	return env, nil
}
