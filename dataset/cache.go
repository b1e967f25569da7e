package dataset

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"
)

// Cache keeps loaded datasets in memory for the life of a process. It is safe for concurrent use.
// Create one per process (in main) and share it: a worker's activities then load each dataset once.
type Cache struct {
	load  func(ctx context.Context, s Spec) (*Dataset, error) // LoadSpec; tests count calls
	group singleflight.Group

	mu   sync.Mutex
	sets map[string]*Dataset // by Spec.key
}

// NewCache returns an empty Cache that loads with LoadSpec.
func NewCache() *Cache {
	return &Cache{load: LoadSpec, sets: map[string]*Dataset{}}
}

// Get returns the dataset Load(ctx, name, root) returns, loading it at most once per (name, root)
// even under concurrent callers. The returned Dataset is shared and must not be modified.
//
// Errors are not cached: a later Get tries again. The load runs detached from any one caller's
// cancellation, so a caller that gives up returns ctx.Err() without failing the others, and the
// result is still cached.
func (c *Cache) Get(ctx context.Context, name, root string) (*Dataset, error) {
	return c.GetSpec(ctx, Spec{Name: name, Root: root})
}

// GetSpec is Get for a Spec: it returns LoadSpec(ctx, s), loading it at most once per Spec.
// Specs that differ only in how they write the same normalisation (Spec.Norm, before and after
// Norm.Resolve) share one copy; a normalised and a plain copy of the same files are two
// entries, each loaded from the files and normalised once.
func (c *Cache) GetSpec(ctx context.Context, s Spec) (*Dataset, error) {
	key := s.key()
	c.mu.Lock()
	d, ok := c.sets[key]
	c.mu.Unlock()
	if ok {
		return d, nil
	}
	loadCtx := context.WithoutCancel(ctx)
	ch := c.group.DoChan(key, func() (any, error) {
		c.mu.Lock()
		d, ok := c.sets[key]
		c.mu.Unlock()
		if ok {
			return d, nil
		}
		d, err := c.load(loadCtx, s)
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
