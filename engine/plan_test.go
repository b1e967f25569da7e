package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// TestPlanPages: with a page size, PlanSweep writes the points in pages
// that ReadPlan returns in spec order, lists them only for a small sweep,
// and refuses a page past the end and a bad page size as bad input.
func TestPlanPages(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	out, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "s.yaml", Spec: scaleSpec("paged", 250), PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 250 || out.PageSize != 100 || out.Points != nil {
		t.Fatalf("summary: count %d, page size %d, %d points; want 250, 100 and none listed", out.Count, out.PageSize, len(out.Points))
	}
	sw, err := sweep.Parse("s.yaml", scaleSpec("paged", 250))
	if err != nil {
		t.Fatal(err)
	}
	all := PlanOutput(sw).Points
	for page, want := range [][]steps.PointInfo{all[:100], all[100:200], all[200:]} {
		got, err := e.ReadPlan(ctx, steps.PlanPageInput{Sweep: "paged", PageSize: 100, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Points) != len(want) || got.Points[0] != want[0] || got.Points[len(want)-1] != want[len(want)-1] || len(got.Ended) != len(want) || got.Ended[0] != "" {
			t.Errorf("page %d: %d points from %+v, ended %v; want %d from %+v, none ended", page, len(got.Points), got.Points[0], got.Ended, len(want), want[0])
		}
	}
	// A point with DONE.json shows as ended.
	sk, _ := store.SweepKeys("paged")
	pk, _ := sk.Point(all[101].ID)
	if err := e.Store.PutJSON(ctx, pk.Done(), steps.PointResult{Point: all[101].ID, Status: steps.StatusDiverged}); err != nil {
		t.Fatal(err)
	}
	if got, err := e.ReadPlan(ctx, steps.PlanPageInput{Sweep: "paged", PageSize: 100, Page: 1}); err != nil || got.Ended[1] != steps.StatusDiverged || got.Ended[0] != "" {
		t.Errorf("page 1 with point 101 diverged: ended %v, %v", got.Ended[:3], err)
	}
	if _, err := e.ReadPlan(ctx, steps.PlanPageInput{Sweep: "paged", PageSize: 100, Page: 3}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("page 3 of 3: %v; want ErrInvalid", err)
	}
	if _, err := e.ReadPlan(ctx, steps.PlanPageInput{Sweep: "../x", PageSize: 100, Page: 0}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("sweep ../x: %v; want ErrInvalid", err)
	}
	for _, size := range []int{-1, steps.MaxPageSize + 1} {
		if _, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "s.yaml", Spec: scaleSpec("paged", 250), PageSize: size}); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("page size %d: %v; want ErrInvalid", size, err)
		}
	}
	// A small sweep lists its points too.
	small, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "s.yaml", Spec: scaleSpec("small", 3), PageSize: 100})
	if err != nil || len(small.Points) != 3 {
		t.Fatalf("small sweep: %d points listed, %v; want 3", len(small.Points), err)
	}
}
