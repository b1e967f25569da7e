package main

import (
	"bytes"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/sweep"
)

// TestArchiveCommand archives the fixture sweep into a plain directory and
// reads the claims back from it with --blob DIR: the same verdicts as from
// the bucket, since the claim reads finished points only. Archiving twice
// writes nothing the second time; no sweep named, or no --to, is a usage
// error.
func TestArchiveCommand(t *testing.T) {
	blob := fixtureBlob(t)
	dir := writeClaimsFile(t, "fix", fixtureClaims)
	archive := filepath.Join(t.TempDir(), "archive")
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := execute(t.Context(), root(), args, &out, &errOut)
		return out.String(), err
	}
	out, err := run("sweep", "archive", "--blob", blob, "--to", archive, "fixture")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "archived 5 finished points of fixture (left out: 1 started and not finished, 0 not started)") {
		t.Errorf("first archive printed %q", out)
	}
	out, err = run("sweep", "archive", "fixture", "--to", archive, "--blob", blob)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, ": 0 files written (0.0 MB),") {
		t.Errorf("second archive printed %q; want nothing written", out)
	}
	fromBucket, err := run("claims", "--blob", blob, dir, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	fromArchive, err := run("claims", "--blob", archive, dir, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	// The same verdicts and values; the bucket's also say that its running
	// point was not read (the archive holds no unfinished point).
	const remark = " (1 point of its sweeps not finished, not read)"
	if fromArchive != strings.ReplaceAll(fromBucket, remark, "") || !strings.Contains(fromBucket, remark) || !strings.Contains(fromArchive, "| reproduced |") {
		t.Errorf("claims from the archive:\n%s\nfrom the bucket:\n%s", fromArchive, fromBucket)
	}
	for _, args := range [][]string{{"sweep", "archive", "--to", archive}, {"sweep", "archive", "fixture"}} {
		if _, err := run(args...); err == nil || !strings.Contains(err.Error(), "needs --to DIR") {
			t.Errorf("%v: error %v; want the usage", args, err)
		}
	}
}

// TestPointFilter: run's --only keeps the points whose label or ID
// matches, and refuses an expression that does not compile or matches none.
func TestPointFilter(t *testing.T) {
	points := []sweep.Point{{ID: "p01", Label: "algorithm=fedavg seed=0"}, {ID: "p02", Label: "algorithm=fedavg seed=1"}, {ID: "p03", Label: "algorithm=fedprox(mu=0.1) seed=0"}}
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{"", nil},
		{"fedavg", []string{"p01", "p02"}},
		{`seed=0$`, []string{"p01", "p03"}},
		{`^p02$`, []string{"p02"}},
		{`fedprox\(mu=0\.1\)|seed=1`, []string{"p02", "p03"}},
	} {
		keep, err := pointFilter(tt.expr, points)
		if err != nil {
			t.Fatalf("%q: %v", tt.expr, err)
		}
		got := slices.Sorted(maps.Keys(keep))
		if !slices.Equal(got, tt.want) {
			t.Errorf("--only %q keeps %v; want %v", tt.expr, got, tt.want)
		}
	}
	for _, expr := range []string{"fedavg(", "scaffold"} {
		if _, err := pointFilter(expr, points); err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--only") {
			t.Errorf("--only %q: error %v; want a usage error naming --only", expr, err)
		}
	}
}
