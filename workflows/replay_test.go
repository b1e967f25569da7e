package workflows_test

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/flsweep/flsweep/workflows"
)

// TestReplayRecordedHistories replays histories recorded from a real dev
// server (see integration.recordHistories): a change to the workflows that
// would break the sweeps running when it is deployed fails here. Histories
// cover a sweep, every Continue-As-New run of a point, and an evaluated round;
// the control-* ones a sweep paused, unpaused and one of its points stopped
// (integration.TestPauseStopResume), signals included; runround-point-run1 a
// point whose 60 rounds ran in batches of RunRound activities (the demo's
// workload, one seed, on a dev server).
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d recorded histories; want the sweep, 3 point runs and a round", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			workflows.Register(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Errorf("replay %s: %v", f, err)
			}
		})
	}
}
