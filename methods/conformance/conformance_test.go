package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/methods/conformance"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// TestRowsCoverRegistry fails when a built-in algorithm or sampler has no
// row in the matrix.
func TestRowsCoverRegistry(t *testing.T) {
	if missing := conformance.Missing(methods.Builtin(), conformance.Rows()); len(missing) > 0 {
		t.Errorf("the conformance matrix has no row for %s: add one to Rows (rows.go)", strings.Join(missing, ", "))
	}
}

// dataDir returns the directory holding fmnist/, or skips the test with
// the reason.
func dataDir(t *testing.T) string {
	dir := os.Getenv("FLSWEEP_DATA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".data", "datasets")
	}
	if _, err := os.Stat(filepath.Join(dir, "fmnist", "MANIFEST.json")); err != nil {
		t.Skipf("no Fashion-MNIST under %s (set FLSWEEP_DATA_DIR to a directory holding fmnist/MANIFEST.json; `make test` fetches it)", dir)
	}
	return dir
}

// TestConformance runs the matrix: Short in `make test`; Full with
// FLSWEEP_CONFORMANCE=full (`make conformance`), in a file bucket under
// FLSWEEP_CONFORMANCE_BLOB (default .data/conformance) so that an
// interrupted run resumes (the short form keeps its runs there too when the
// variable is set, to query them), and the table written to
// FLSWEEP_CONFORMANCE_OUT when set. FLSWEEP_CONFORMANCE_ROWS=feddc,scaffold
// runs only those rows (method or row names) beside FedAvg.
func TestConformance(t *testing.T) {
	dir := dataDir(t)
	s := conformance.Short()
	bkt := memblob.OpenBucket(nil)
	full := os.Getenv("FLSWEEP_CONFORMANCE") == "full"
	if full {
		s = conformance.Full()
	}
	if path := os.Getenv("FLSWEEP_CONFORMANCE_BLOB"); full || path != "" {
		if path == "" {
			path = filepath.Join("..", "..", ".data", "conformance")
		}
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		bkt.Close()
		var err error
		if bkt, err = fileblob.OpenBucket(path, &fileblob.Options{Metadata: fileblob.MetadataDontWrite}); err != nil {
			t.Fatal(err)
		}
	}
	defer bkt.Close()
	e := engine.New(store.New(bkt), &engine.Options{DataDir: dir, Workers: 2})
	start := time.Now()
	var mu sync.Mutex // progress is called from the points' goroutines
	last := map[string]int{}
	rows := conformance.Rows()
	if only := os.Getenv("FLSWEEP_CONFORMANCE_ROWS"); only != "" {
		rows = conformance.Select(rows, strings.Split(only, ","))
		if len(rows) == 0 {
			t.Fatalf("FLSWEEP_CONFORMANCE_ROWS = %q matches no row; give method names (feddc) or row names (\"feddc (official code)\")", only)
		}
	}
	res, err := conformance.Run(t.Context(), e, s, rows, func(p engine.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if testing.Verbose() && (p.Done || p.Round-last[p.Point.ID] >= 10) {
			last[p.Point.ID] = p.Round
			t.Logf("%s %s: round %d/%d %s", time.Since(start).Round(time.Second), p.Point.Label, p.Round, p.Rounds, p.Status)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	table := conformance.Markdown(s, res)
	t.Logf("conformance (%s: %d rounds, seeds %v, margin %.2f) in %s:\n%s", s.Name, s.Rounds, s.Seeds, s.Margin, time.Since(start).Round(time.Second), table)
	if out := os.Getenv("FLSWEEP_CONFORMANCE_OUT"); out != "" {
		head := fmt.Sprintf("Conformance matrix, scale %s: %d rounds, seeds %v, margin %.2f; run time %s.\n\n", s.Name, s.Rounds, s.Seeds, s.Margin, time.Since(start).Round(time.Second))
		if err := os.WriteFile(out, []byte(head+table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range res {
		if r.Row.Name == "fedavg" && r.Verdict != conformance.Refused && conformance.Mean(r.Acc) < s.Floor {
			t.Errorf("FedAvg reaches %.3f in %s, below the floor %.2f: the problem does not separate learning from noise", conformance.Mean(r.Acc), r.Column, s.Floor)
		}
	}
	for _, r := range conformance.Failures(res) {
		t.Errorf("%s %s, %s: %s: %s", r.Row.Kind, r.Row.Name, r.Column, r.Verdict, r.Why)
	}
}

// TestSweepNamesDistinct: every cell of the full matrix has its own valid
// sweep name (fedeba and fedeba+ once shared one).
func TestSweepNamesDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, s := range []conformance.Scale{conformance.Short(), conformance.Full()} {
		for _, r := range conformance.Rows() {
			for _, c := range s.Columns() {
				n := s.SweepName(r, c)
				if err := sweep.ValidName(n); err != nil {
					t.Errorf("%s %s: %v", r.Name, c, err)
				}
				if other, dup := seen[n]; dup {
					t.Errorf("%s %s and %s share the sweep name %s", r.Name, c, other, n)
				}
				seen[n] = r.Name + " " + c.String()
			}
		}
	}
}
