package engine

import (
	"container/list"
	"slices"
	"sync"
)

// The server's per-vector files (keys.ServerVector) are written once, in
// the round their vector changed, and never rewritten with other bytes: a
// round run again (a retried step, a point recovering from damage) writes
// the same bits, by the determinism contract. FedFV names up to τ·m of them
// in every state, and its aggregation read them all, every round: at 10,000
// clients, 100 a round, 115 MB a round read from the store.
// So this process keeps the vectors it wrote or read, verified, by blob
// key, up to vectorCacheCap bytes, the least recently used out first, and
// readVectors takes them from here before the store. A hit is a copy, as a
// read is: an algorithm may change what it is handed.
//
// What a hit does not do is read the store: a file damaged there after this
// process wrote or read it is not found by the aggregation of a process
// that holds it (it hands on the bytes that were written), but by the
// checkpoint verification of a point's next start (PreparePoint) and by
// any other process's read, which recover as before.

// vectorCacheCap is the most bytes of vectors an engine keeps; 0 turns the
// cache off.
var vectorCacheCap = 512 << 20

// vectorCache is an LRU of vectors by blob key.
type vectorCache struct {
	mu    sync.Mutex
	bytes int
	order list.List // of *cachedVector, most recently used at the front
	byKey map[string]*list.Element
}

type cachedVector struct {
	key string
	v   []float32
}

// get returns a copy of the vector at key, or nil, false.
func (c *vectorCache) get(key string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return slices.Clone(el.Value.(*cachedVector).v), true
}

// put keeps a copy of v as the vector at key, dropping the least recently
// used vectors past vectorCacheCap (v itself when it alone is larger).
func (c *vectorCache) put(key string, v []float32) {
	size := 4 * len(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
	}
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	if size > vectorCacheCap {
		return
	}
	for c.bytes+size > vectorCacheCap {
		c.remove(c.order.Back())
	}
	c.byKey[key] = c.order.PushFront(&cachedVector{key: key, v: slices.Clone(v)})
	c.bytes += size
}

func (c *vectorCache) remove(el *list.Element) {
	cv := c.order.Remove(el).(*cachedVector)
	delete(c.byKey, cv.key)
	c.bytes -= 4 * len(cv.v)
}
