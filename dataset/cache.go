package dataset

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"
)

// Cache keeps loaded datasets in memory for the life of a process. It is safe for concurrent use.
// Create one per process (in main) and share it: a worker's activities then load each dataset once.
type Cache struct {
	load  func(ctx context.Context, name, root string) (*Dataset, error) // Load; tests count calls
	group singleflight.Group

	mu   sync.Mutex
	sets map[cacheKey]*Dataset
}

type cacheKey struct{ name, root string }

// NewCache returns an empty Cache that loads with Load.
func NewCache() *Cache {
	return &Cache{load: Load, sets: map[cacheKey]*Dataset{}}
}

// Get returns the dataset Load(ctx, name, root) returns, loading it at most once per (name, root)
// even under concurrent callers. The returned Dataset is shared and must not be modified.
//
// Errors are not cached: a later Get tries again. The load runs detached from any one caller's
// cancellation, so a caller that gives up returns ctx.Err() without failing the others, and the
// result is still cached.
func (c *Cache) Get(ctx context.Context, name, root string) (*Dataset, error) {
	key := cacheKey{name, root}
	c.mu.Lock()
	d, ok := c.sets[key]
	c.mu.Unlock()
	if ok {
		return d, nil
	}
	loadCtx := context.WithoutCancel(ctx)
	ch := c.group.DoChan(name+"\x00"+root, func() (any, error) {
		c.mu.Lock()
		d, ok := c.sets[key]
		c.mu.Unlock()
		if ok {
			return d, nil
		}
		d, err := c.load(loadCtx, name, root)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.sets[key] = d
		c.mu.Unlock()
		return d, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*Dataset), nil
	}
}
