package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// TestOlderBuildSweep: a sweep stored by a build with 10-digit point IDs
// (the query fixture's p0000000001) is still read by sweep results, query
// and report; sweep resume refuses it with the older-build error and how to
// proceed, before contacting Temporal, and writes nothing.
func TestOlderBuildSweep(t *testing.T) {
	g, st := queryBucket(t)
	ctx := t.Context()
	spec := "name: one\nalgorithm: fedavg\nrounds: 2\n"
	sw, err := sweep.Parse("one.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	sw.Points[0].ID = fixturePoint
	if !sweep.LegacyPointID(fixturePoint) {
		t.Fatalf("fixture point %s is not an older build's ID", fixturePoint)
	}
	sk, _ := store.SweepKeys("one")
	pk, _ := sk.Point(fixturePoint)
	for _, err := range []error{
		st.PutJSON(ctx, sk.Spec(), engine.StoredSweep{Hash: sw.Hash(), File: "one.yaml", YAML: spec, Sweep: sw}),
		st.PutJSON(ctx, pk.Config(), engine.StoredPoint{Sweep: "one", Point: sw.Points[0]}),
		st.PutJSON(ctx, pk.Done(), steps.PointResult{Status: steps.StatusDone, RoundsDone: 2, ModelSHA256: "0123456789abcdef"}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	out, err := runStarter(ctx, g, "sweep", "results", "one")
	if err != nil || !strings.Contains(out, fixturePoint) || !strings.Contains(out, "done") {
		t.Errorf("sweep results of an older build's sweep: %v\n%s", err, out)
	}
	out, err = runStarter(ctx, g, "query", "--sweep", "one")
	if err != nil || !strings.Contains(out, fixturePoint) {
		t.Errorf("query of an older build's sweep: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if _, err := runStarter(ctx, g, "report", "-o", dir, "one"); err != nil {
		t.Errorf("report of an older build's sweep: %v", err)
	} else if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		t.Errorf("report wrote no index.html: %v", err)
	}

	before, _ := st.List(ctx, "sweeps/")
	_, err = runStarter(ctx, g, "sweep", "resume", "one", "--address", "127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "planned by an older flsweep build") || !strings.Contains(err.Error(), "with the build that planned it") {
		t.Errorf("sweep resume of an older build's sweep: %v; want the older-build error", err)
	}
	if after, _ := st.List(ctx, "sweeps/"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("sweep resume changed the bucket:\nbefore %v\nafter  %v", before, after)
	}
}
