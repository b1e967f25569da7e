package engine

import (
	"context"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// TestVectorCacheLRU: the cache keeps copies, drops the least recently
// used past its cap, and does not keep a vector larger than the cap.
func TestVectorCacheLRU(t *testing.T) {
	defer func(c int) { vectorCacheCap = c }(vectorCacheCap)
	vectorCacheCap = 3 * 4 * 4 // three vectors of 4 float32
	var c vectorCache
	vec := func(x float32) []float32 { return []float32{x, x, x, x} }
	a := vec(1)
	c.put("a", a)
	a[0] = 9 // the caller's vector is not the cache's
	c.put("b", vec(2))
	c.put("c", vec(3))
	got, ok := c.get("a") // a is now the most recently used
	if !ok || !slices.Equal(got, vec(1)) {
		t.Fatalf("get(a) = %v, %t; want %v", got, ok, vec(1))
	}
	got[1] = 9 // nor is the reader's
	c.put("d", vec(4))
	if _, ok := c.get("b"); ok {
		t.Error("b, the least recently used, is still held past the cap")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s was dropped; want only b out", k)
		}
	}
	if got, _ := c.get("a"); !slices.Equal(got, vec(1)) {
		t.Errorf("get(a) = %v after its reader changed its copy; want %v", got, vec(1))
	}
	c.put("c", vec(5)) // replaced, not held twice
	if got, _ := c.get("c"); !slices.Equal(got, vec(5)) || c.bytes != 3*16 || c.order.Len() != 3 {
		t.Errorf("after replacing c: get(c) = %v, %d bytes in %d entries; want %v, 48 bytes in 3", got, c.bytes, c.order.Len(), vec(5))
	}
	c.put("big", make([]float32, 13))
	if _, ok := c.get("big"); ok || c.order.Len() != 3 {
		t.Errorf("a vector larger than the cap was kept (%d entries)", c.order.Len())
	}
}

// TestVectorCacheFedFV: FedFV, whose aggregation reads its window of
// remembered updates every round, computes the same bits with the cache
// off, on, and in a process that did not write them; a process that wrote
// an update aggregates from what it wrote even after the stored file is
// damaged (a restarted one finds the damage: TestServerMemorySharedDamage).
func TestVectorCacheFedFV(t *testing.T) {
	spec := memorySpec("fvc", 7, "algorithm: {name: fedfv, tau: 4}")
	_, _, want := runSpec(t, spec, nil)
	func() {
		defer func(c int) { vectorCacheCap = c }(vectorCacheCap)
		vectorCacheCap = 0
		_, _, off := runSpec(t, spec, nil)
		compare(t, "cache off", off, want)
	}()
	e := newEngine(t)
	ctx := context.Background()
	plan, ref, _ := interruptedSpec(t, e, spec, 6) // rounds 0–5 committed
	env, err := e.env(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.loadState(ctx, env, 5)
	if err != nil || len(st.Held) == 0 {
		t.Fatalf("round 5's state holds %v (%v); want FedFV's window", st.Held, err)
	}
	for section, v := range st.Held {
		if _, ok := e.vectors.get(mustVectorKey(t, env, section, v)); !ok {
			t.Errorf("the process that wrote %s of round %d does not hold it", section, v)
		}
	}
	section := slices.Sorted(maps.Keys(st.Held))[0]
	flip(t, e, mustVectorKey(t, env, section, st.Held[section]))
	in := steps.AggregateInput{RoundRef: steps.RoundRef{PointRef: ref, Round: 6}, Selection: fl.Selection{}}
	if _, err := e.Aggregate(ctx, in); err != nil {
		t.Errorf("aggregating round 6 in the process that wrote the window: %v; want its own bytes, not the damaged file", err)
	}
	resumeAllSpec(t, restartedWorker(e), spec, "resumed by another process", plan, want)
}

func mustVectorKey(t *testing.T, env *pointEnv, section string, r int) string {
	t.Helper()
	key, err := env.keys.ServerVector(section, r)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestSameBits: bit patterns, not values: −0 is not +0, a NaN equals its
// own bits.
func TestSameBits(t *testing.T) {
	nan := math.Float32frombits(0x7fc00001)
	for _, tt := range []struct {
		a, b []float32
		want bool
	}{
		{nil, nil, true},
		{nil, []float32{}, true},
		{[]float32{1, 2}, []float32{1, 2}, true},
		{[]float32{1, 2}, []float32{1}, false},
		{[]float32{0}, []float32{float32(math.Copysign(0, -1))}, false},
		{[]float32{nan}, []float32{nan}, true},
		{[]float32{1, 2, 3}, []float32{1, 2, math.Nextafter32(3, 4)}, false},
	} {
		if got := sameBits(tt.a, tt.b); got != tt.want {
			t.Errorf("sameBits(%v, %v) = %t; want %t", tt.a, tt.b, got, tt.want)
		}
	}
}
