package results_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/report/reporttest"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/store"
)

// viewRows returns every row of every view of db, as JSON, sorted, by view.
func viewRows(t *testing.T, db *results.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, v := range views() {
		rows := queryStrings(t, db, "SELECT CAST(to_json(x) AS VARCHAR) FROM "+v+" AS x")
		slices.Sort(rows)
		out[v] = rows
	}
	return out
}

// TestOpenFinished opens reporttest's fixture (five finished points,
// scaffold's seed 2 running with rounds 0..4 committed, fedfv's two
// pending) with OpenFinished: every view, the paired one included, holds
// exactly what Open gives over the sweep's archive (the finished points
// only), the running point's rows are in Open's views and not in these,
// and Unfinished counts the running point.
func TestOpenFinished(t *testing.T) {
	ctx := context.Background()
	srcURL, dstURL, _, src, dst := fixtureBuckets(t)
	if _, err := results.Archive(ctx, src, dst, []string{reporttest.Name}, false); err != nil {
		t.Fatal(err)
	}

	fin, err := results.OpenFinished(ctx, srcURL, []string{reporttest.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer fin.Close()
	all, err := results.Open(ctx, srcURL, []string{reporttest.Name}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	arch, err := results.Open(ctx, dstURL, []string{reporttest.Name}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	if fin.Unfinished != 1 || all.Unfinished != 0 {
		t.Errorf("Unfinished: OpenFinished %d, Open %d; want 1 (scaffold seed 2, running) and 0", fin.Unfinished, all.Unfinished)
	}

	var running string
	if err := all.QueryRowContext(ctx, `SELECT point FROM points WHERE status = 'running'`).Scan(&running); err != nil {
		t.Fatalf("the fixture's running point: %v", err)
	}
	got, want, bucket := viewRows(t, fin), viewRows(t, arch), viewRows(t, all)
	for _, v := range views() {
		g, w := got[v], want[v]
		if !slices.Equal(g, w) {
			t.Errorf("view %s: %d rows over the bucket's finished points, %d over its archive; want the same rows", v, len(g), len(w))
		}
		for _, r := range g {
			if strings.Contains(r, running) {
				t.Errorf("view %s holds a row of the running point %s: %s", v, running, r)
				break
			}
		}
	}
	for _, v := range []store.Table{store.TableRounds, store.TablePoints, store.TablePartitions} {
		n := 0
		for _, r := range bucket[string(v)] {
			if strings.Contains(r, running) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("Open's view %s has no row of the running point; the test shows nothing", v)
		}
	}
}
