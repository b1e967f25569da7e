package engine

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// StepTime is the time this engine's in-process runner spent in one step
// (steps.Info.Name) since the engine was made: its calls and their wall
// times summed, concurrent calls counted each (a fan-out of two
// TrainClients calls that run side by side for 1 s adds 2 s). A step run
// inside another (the steps of a RunRound) is counted in both.
type StepTime struct {
	Step  string
	Calls int
	Total time.Duration
}

// stepClock sums StepTimes; safe for concurrent use.
type stepClock struct {
	mu sync.Mutex
	m  map[string]*StepTime
}

func (c *stepClock) add(step string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*StepTime{}
	}
	t := c.m[step]
	if t == nil {
		t = &StepTime{Step: step}
		c.m[step] = t
	}
	t.Calls++
	t.Total += d
}

// StepTimes returns the time spent in each step run in-process so far,
// the longest first (ties by name).
func (e *Engine) StepTimes() []StepTime {
	c := &e.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]StepTime, 0, len(c.m))
	for _, t := range c.m {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b StepTime) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Step, b.Step))
	})
	return out
}
