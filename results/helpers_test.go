package results_test

import (
	"context"
	"testing"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/report/reporttest"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/store"
)

// views are the views of every DB: the tables' and the paired view.
func views() []string {
	var out []string
	for _, t := range results.Tables {
		out = append(out, string(t))
	}
	return append(out, "paired")
}

// queryStrings runs q, which returns one text column, on db and returns its
// rows in the query's order.
func queryStrings(t *testing.T, db *results.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fixtureBuckets writes reporttest's fixture sweep into a fresh bucket, src,
// beside an empty one, dst (in directory dstDir), both open until the test
// ends.
func fixtureBuckets(t *testing.T) (srcURL, dstURL, dstDir string, src, dst *store.Store) {
	t.Helper()
	ctx := context.Background()
	srcURL, dstDir = conf.DirURL(t.TempDir()), t.TempDir()
	dstURL = conf.DirURL(dstDir)
	if err := reporttest.Write(ctx, srcURL); err != nil {
		t.Fatal(err)
	}
	var err error
	if src, err = store.Open(ctx, srcURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	if dst, err = store.Open(ctx, dstURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	return srcURL, dstURL, dstDir, src, dst
}
