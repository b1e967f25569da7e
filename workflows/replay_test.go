package workflows_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/workflows"
)

// TestReplayRecordedHistories replays histories recorded from a real dev
// server (see integration.recordHistories): a change to the workflows that
// would break the sweeps running when it is deployed fails here. Histories
// cover a sweep, every Continue-As-New run of a point, and an evaluated round;
// the control-* ones a sweep paused, unpaused and one of its points stopped
// (integration.TestPauseStopResume), signals included; runround-point-run1 a
// point whose 60 rounds ran in batches of RunRound activities (the demo's
// workload, one seed, on a dev server); labelled-* a sweep with labelled
// point workflow IDs (integration.TestUIListShowsPoints). Each replays under
// the workflow ID it was recorded with (testdata/history-ids.json): a point
// names its rounds after its own ID.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d recorded histories; want the sweep, 3 point runs and a round", len(files))
	}
	b, err := os.ReadFile("testdata/history-ids.json")
	if err != nil {
		t.Fatal(err)
	}
	var ids map[string]string
	if err := json.Unmarshal(b, &ids); err != nil {
		t.Fatalf("testdata/history-ids.json: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			id := ids[filepath.Base(f)]
			if id == "" {
				t.Fatalf("testdata/history-ids.json names no workflow ID for %s", filepath.Base(f))
			}
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			h, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatalf("read %s: %v", f, err)
			}
			rp := worker.NewWorkflowReplayer()
			workflows.Register(rp)
			if err := rp.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: id},
			}); err != nil {
				t.Errorf("replay %s as %s: %v", f, id, err)
			}
		})
	}
}
