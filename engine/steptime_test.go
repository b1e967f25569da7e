package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/flsweep/flsweep/steps"
)

// TestStepTimes: after an in-process sweep of 2 points of 5 rounds, the
// engine has timed 10 SelectClients and 10 CommitRound calls, every step
// it timed took some time, the list is the longest first, and the store
// counted the time of its reads and writes.
func TestStepTimes(t *testing.T) {
	e := newEngine(t)
	if got := e.StepTimes(); len(got) != 0 {
		t.Fatalf("a new engine has step times %+v", got)
	}
	runLocal(t, e)
	times := e.StepTimes()
	calls := map[string]int{}
	for _, st := range times {
		calls[st.Step] = st.Calls
		if st.Calls < 1 || st.Total <= 0 {
			t.Errorf("step %s: %d calls in %v", st.Step, st.Calls, st.Total)
		}
	}
	for _, name := range []string{steps.SelectClients.Name, steps.CommitRound.Name} {
		if calls[name] != 10 {
			t.Errorf("%s: %d calls; want 10 (2 points × 5 rounds)", name, calls[name])
		}
	}
	if !slices.IsSortedFunc(times, func(a, b StepTime) int { return int(b.Total - a.Total) }) {
		t.Errorf("step times not the longest first: %+v", times)
	}
	tr := e.Store.Traffic()
	if tr.Puts == 0 || tr.Gets == 0 || tr.PutTime <= 0 || tr.GetTime <= 0 || tr.PutTime > time.Hour {
		t.Errorf("store traffic %+v: want timed reads and writes", tr)
	}
}
