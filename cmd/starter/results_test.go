package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/temporalclient"
	"github.com/flsweep/flsweep/workflows"
)

// TestResultsMissingAfterRun checks the message when a sweep ran but the
// bucket holds none of its results (its workers wrote to another bucket):
// it names the bucket, the server and the ways out.
func TestResultsMissingAfterRun(t *testing.T) {
	g := &globals{temporal: temporalclient.Config{Address: "localhost:7233"}, queue: "fl", blob: "file://" + t.TempDir() + "?create_dir=1", out: &bytes.Buffer{}}
	err := printResults(t.Context(), g, "demo", false, map[string]workflows.PointStatus{})
	if err == nil {
		t.Fatal("no error for a sweep without results")
	}
	for _, want := range []string{"sweep demo ran on the Temporal server at localhost:7233", g.blob, "--blob", "new name"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Without a run (sweep results NAME), the plain message.
	err = printResults(t.Context(), g, "demo", false, nil)
	if err == nil || !strings.Contains(err.Error(), "sweep demo has no results in") {
		t.Errorf("results of an unknown sweep: %v", err)
	}
}
