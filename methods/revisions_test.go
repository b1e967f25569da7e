package methods_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/methods"
)

// TestRevisions: a method's revision is 1 plus its changes; Stale names the
// recorded methods behind today's revision, sorted, and nothing for a point
// that recorded none; every change names a registered method.
func TestRevisions(t *testing.T) {
	if r := methods.Revision("algorithm", "feddc"); r != 2 {
		t.Errorf("feddc's revision = %d; want 2 (one change)", r)
	}
	if r := methods.Revision("algorithm", "fedavg"); r != 1 {
		t.Errorf("fedavg's revision = %d; want 1", r)
	}
	rv := methods.RevisionsOf([2]string{"sampler", "uniform"}, [2]string{"algorithm", "scaffold"}, [2]string{"server_optimizer", ""})
	if got, want := rv.JSON(), `{"algorithm/scaffold":2,"sampler/uniform":1}`; got != want {
		t.Errorf("RevisionsOf(...).JSON() = %s; want %s (no entry for an unnamed method)", got, want)
	}
	got, err := methods.Stale(`{"sampler/uniform":1,"algorithm/scaffold":1,"algorithm/feddc":1,"algorithm/fedavg":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"algorithm/feddc r1 < r2", "algorithm/scaffold r1 < r2"}; !slices.Equal(got, want) {
		t.Errorf("Stale = %v; want %v", got, want)
	}
	if got, err := methods.Stale(rv.JSON()); err != nil || len(got) != 0 {
		t.Errorf("Stale(today's revisions) = %v, %v; want nothing", got, err)
	}
	if got, err := methods.Stale(""); err != nil || got != nil {
		t.Errorf("Stale(\"\") = %v, %v; want nothing (unknown)", got, err)
	}
	if _, err := methods.Stale("{"); err == nil {
		t.Error("Stale of broken JSON: no error")
	}
	reg := methods.Builtin()
	names := map[string][]string{"sampler": reg.Samplers(), "aggregator": reg.Rules(), "algorithm": reg.Algorithms(),
		"server_optimizer": reg.ServerOptimizers(), "inspect": reg.Inspectors()}
	for _, c := range methods.Changes {
		block, name, _ := strings.Cut(c.Method, "/")
		if !slices.Contains(names[block], name) {
			t.Errorf("change %q names no registered method", c.Method)
		}
		if c.Commit == "" || c.What == "" {
			t.Errorf("change %q says neither its commit nor what it changed", c.Method)
		}
	}
}
