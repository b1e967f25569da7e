package main

import (
	"testing"
	"time"

	"github.com/flsweep/flsweep/steps"
)

// TestETA: no estimate until a round completes while watching; then the
// observed rate over the rounds left; none while paused, and the time spent
// paused does not count.
func TestETA(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pts := func(r1, r2 int, s2 string) []pointLine {
		return []pointLine{
			{Status: steps.StatusRunning, Round: r1, Rounds: 10},
			{Status: s2, Round: r2, Rounds: 10},
		}
	}
	var e etaClock
	tests := []struct {
		at     time.Duration
		pts    []pointLine
		paused bool
		want   string
	}{
		{0, pts(2, 0, steps.StatusPending), false, "ETA —"},
		{30 * time.Second, pts(2, 0, steps.StatusPending), false, "ETA —"},
		// 2 rounds in 60 s: 30 s a round, 16 rounds left.
		{60 * time.Second, pts(4, 0, steps.StatusPending), false, "ETA 8m0s (2.0 rounds/min)"},
		{90 * time.Second, pts(4, 0, steps.StatusPending), true, "ETA — (paused)"},
		{time.Hour, pts(4, 0, steps.StatusPending), false, "ETA —"},
		// A stopped point's rounds are no longer left: 5 rounds at 10 s.
		{time.Hour + 10*time.Second, pts(5, 0, steps.StatusStopped), false, "ETA 50s (6.0 rounds/min)"},
	}
	for _, tt := range tests {
		if got := e.update(t0.Add(tt.at), linesWork(tt.pts), tt.paused); got != tt.want {
			t.Errorf("update(+%s) = %q; want %q", tt.at, got, tt.want)
		}
	}
}
