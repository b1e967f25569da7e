package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/store"
)

// A sweep pinned to another build gets a note naming both builds; one of
// this build, or one with no identity recorded, gets none.
func TestWarnBuild(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	g := &globals{blob: "file://" + dir + "?create_dir=1&metadata=skip", out: &out}
	st, err := store.Open(t.Context(), g.blob)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	warnBuild(t.Context(), g, "s1")
	if out.Len() != 0 {
		t.Fatalf("no identity recorded: got %q, want no note", out.String())
	}
	for _, c := range []struct {
		build string
		note  bool
	}{{g.build(), false}, {"v0-other", true}} {
		out.Reset()
		if err := st.PutJSON(t.Context(), "sweeps/s1/IDENTITY.json", engine.Identity{Bucket: "b", Build: c.build}); err != nil {
			t.Fatal(err)
		}
		warnBuild(t.Context(), g, "s1")
		got := out.String()
		if c.note != (got != "") || (c.note && !strings.Contains(got, `build "v0-other"`)) {
			t.Errorf("sweep of build %q: got note %q, want a note: %v", c.build, got, c.note)
		}
	}
}
