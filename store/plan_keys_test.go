package store

import (
	"errors"
	"strings"
	"testing"
)

// TestPlanKeys: the plan's keys are files beside spec.json (no directory: a
// sweep's directories are its points), and bad page sizes or pages are
// refused.
func TestPlanKeys(t *testing.T) {
	sk, err := SweepKeys("big")
	if err != nil {
		t.Fatal(err)
	}
	if k, err := sk.PlanPage(500, 3); err != nil || k != "sweeps/big/plan-500-000003.json" {
		t.Errorf("PlanPage(500, 3) = %q, %v", k, err)
	}
	if k, err := sk.PlanIndex(500); err != nil || k != "sweeps/big/plan-500-index.json" || strings.Count(k, "/") != 2 {
		t.Errorf("PlanIndex(500) = %q, %v", k, err)
	}
	for _, c := range [][2]int{{0, 0}, {-1, 0}, {MaxPageSize + 1, 0}, {500, -1}, {500, 1_000_000}} {
		if _, err := sk.PlanPage(c[0], c[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("PlanPage(%d, %d): %v; want ErrInvalid", c[0], c[1], err)
		}
	}
}
