package dataset

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingCache returns a Cache whose loads are counted and go through load.
func countingCache(load func(ctx context.Context, name, root string) (*Dataset, error)) (*Cache, *atomic.Int64) {
	c := NewCache()
	var n atomic.Int64
	c.load = func(ctx context.Context, s Spec) (*Dataset, error) {
		n.Add(1)
		return load(ctx, s.Name, s.Root)
	}
	return c, &n
}

func TestCacheLoadsOnce(t *testing.T) {
	const callers = 32
	release := make(chan struct{})
	c, loads := countingCache(func(ctx context.Context, name, root string) (*Dataset, error) {
		<-release // hold the first load so that the other callers pile up behind it
		return Load(ctx, name, root)
	})
	var wg sync.WaitGroup
	got := make([]*Dataset, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() { got[i], errs[i] = c.Get(context.Background(), "synthetic", "") })
	}
	time.Sleep(10 * time.Millisecond) // not needed for correctness: any interleaving must load once
	close(release)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || got[i] != got[0] {
			t.Errorf("Get #%d = %p, %v; want %p, nil", i, got[i], errs[i], got[0])
		}
	}
	if d, err := c.Get(context.Background(), "synthetic", ""); err != nil || d != got[0] {
		t.Errorf("later Get = %p, %v; want the cached %p", d, err, got[0])
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d concurrent Gets loaded %d times; want 1", callers, n)
	}
}

func TestCacheKeys(t *testing.T) {
	c, loads := countingCache(func(ctx context.Context, name, root string) (*Dataset, error) {
		return &Dataset{Name: name + "@" + root}, nil
	})
	tests := []struct {
		giveName, giveRoot string
		wantName           string
	}{
		{"fmnist", "/a", "fmnist@/a"},
		{"fmnist", "/b", "fmnist@/b"},
		{"mnist", "/a", "mnist@/a"},
		{"fmnist", "/a", "fmnist@/a"},
	}
	for _, tt := range tests {
		d, err := c.Get(context.Background(), tt.giveName, tt.giveRoot)
		if err != nil || d.Name != tt.wantName {
			t.Errorf("Get(%s, %s) = %v, %v; want %s", tt.giveName, tt.giveRoot, d, err, tt.wantName)
		}
	}
	if n := loads.Load(); n != 3 {
		t.Errorf("loads = %d; want 3 (one per distinct name and root)", n)
	}
}

func TestCacheDoesNotCacheErrors(t *testing.T) {
	boom := errors.New("transient")
	fail := true
	c, loads := countingCache(func(ctx context.Context, name, root string) (*Dataset, error) {
		if fail {
			return nil, boom
		}
		return &Dataset{Name: name}, nil
	})
	if _, err := c.Get(context.Background(), "x", ""); !errors.Is(err, boom) {
		t.Errorf("first Get = %v; want %v", err, boom)
	}
	fail = false
	if d, err := c.Get(context.Background(), "x", ""); err != nil || d.Name != "x" {
		t.Errorf("second Get = %v, %v; want the dataset", d, err)
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("loads = %d; want 2", n)
	}
}

func TestCacheCallerCancels(t *testing.T) {
	release := make(chan struct{})
	c, loads := countingCache(func(ctx context.Context, name, root string) (*Dataset, error) {
		<-release
		if err := ctx.Err(); err != nil {
			return nil, err // the load must not see a caller's cancellation
		}
		return &Dataset{Name: name}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d, err := c.Get(ctx, "x", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context = %v, %v; want context.Canceled", d, err)
	}
	// The load the cancelled caller started runs on; a patient caller gets its result.
	type result struct {
		d   *Dataset
		err error
	}
	done := make(chan result)
	go func() {
		d, err := c.Get(context.Background(), "x", "")
		done <- result{d, err}
	}()
	close(release)
	if r := <-done; r.err != nil || r.d.Name != "x" {
		t.Errorf("patient Get = %v, %v; want the dataset", r.d, r.err)
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("loads = %d; want 1", n)
	}
}
