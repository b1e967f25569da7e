package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/steps"
)

// TestRoundLR checks that the per-round learning-rate decay reaches local
// training (sweep.Config.RoundLR, lr·lr_decay^(t−1)). With lr_decay 1e-30
// round 1 trains at the full rate and every later round at ~1e-31, which
// leaves every float32 weight unchanged: the global model moves in round 1
// and then stays bit-identical.
func TestRoundLR(t *testing.T) {
	e := newEngine(t)
	in := steps.PlanSweepInput{File: "t.yaml", Spec: []byte(strings.Replace(spec, "local_steps: 4}", "local_steps: 4, lr_decay: 1.0e-30}", 1))}
	if _, err := e.RunSweep(context.Background(), in, nil); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanSweep(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for _, r := range take(t, e, plan).Rounds {
		if r.Point == plan.Points[0].ID {
			shas = append(shas, r.ModelSHA256)
		}
	}
	if len(shas) != 6 {
		t.Fatalf("got %d round rows; want rounds 0–5", len(shas))
	}
	if shas[1] == shas[0] {
		t.Error("round 1 left the model unchanged; want it trained at the full rate")
	}
	for r := 2; r < len(shas); r++ {
		if shas[r] != shas[1] {
			t.Errorf("round %d changed the model; want lr·1e-30^%d to change nothing", r, r-1)
		}
	}
}
