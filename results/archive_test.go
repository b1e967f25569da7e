package results_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/results"
)

// roundsOf returns the rows of a query over the rounds view of the fixture
// sweep in the bucket at url, one string per row.
func roundsOf(t *testing.T, url string) []string {
	t.Helper()
	db, err := results.Open(t.Context(), url, []string{"fixture"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return queryStrings(t, db, `
		SELECT p.label || ' r' || r.round || ' ' || coalesce(CAST(r.test_acc AS VARCHAR), '-')
		FROM rounds r JOIN points p USING (point) ORDER BY 1`)
}

// TestArchive archives reporttest's fixture sweep (five finished points,
// scaffold's seed 2 still running, fedfv's two pending, and a planned point
// with only its config.json) and checks that the
// archive answers the rounds view exactly as the bucket does for the five
// finished points and holds nothing of the running one, no checkpoint and
// no state; that archiving again writes nothing; that a file the archive
// holds with other bytes is an error naming it, which writes nothing, and
// --replace mends it; and that an unknown sweep is an error.
func TestArchive(t *testing.T) {
	ctx := context.Background()
	srcURL, dstURL, dstDir, src, dst := fixtureBuckets(t)

	// A checkpoint and a commit beside a finished point's tables, which the
	// archive must leave behind.
	finished, err := src.List(ctx, "sweeps/fixture/")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range finished {
		if strings.HasSuffix(k, "/DONE.json") {
			pt := strings.TrimSuffix(k, "DONE.json")
			for _, extra := range []string{"rounds/000006/global.bin", "rounds/000006/COMMITTED.json"} {
				if err := src.Put(ctx, pt+extra, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			break
		}
	}

	// A point planned and not started: its folder holds config.json only.
	if err := src.Put(ctx, "sweeps/fixture/p0123456789abcdef0123456789abcdef/config.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}

	st, err := results.Archive(ctx, src, dst, []string{"fixture"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Points != 5 || st.Skipped != 2 || st.Started != 1 || st.Copied == 0 || st.Same != 0 {
		t.Fatalf("first archive: %+v; want 5 points, 2 skipped (1 started, 1 planned), files copied, none the same", st)
	}

	var want []string
	for _, r := range roundsOf(t, srcURL) {
		if !strings.HasPrefix(r, "algorithm=scaffold seed=2 ") {
			want = append(want, r)
		}
	}
	got := roundsOf(t, dstURL)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("archive's rounds:\n%s\nwant the bucket's finished points':\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) == 0 || len(got) == len(roundsOf(t, srcURL)) {
		t.Errorf("archive has %d rounds rows; want the finished points' (fewer than the bucket's, more than none)", len(got))
	}

	keys, err := dst.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		base := k[strings.LastIndex(k, "/")+1:]
		if !(strings.Contains(k, "/metrics/") && strings.HasSuffix(k, ".parquet")) && base != "DONE.json" && base != "config.json" && base != "spec.json" {
			t.Errorf("archive holds %s: no checkpoint, commit or state belongs in it", k)
		}
	}

	again, err := results.Archive(ctx, src, dst, []string{"fixture"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Copied != 0 || again.Same != st.Copied || again.Points != 5 {
		t.Errorf("second archive: %+v; want nothing copied, %d files the same", again, st.Copied)
	}

	// A file of the archive with other bytes: an error naming it, and no
	// file written, not even the one that was missing.
	var parquet string
	for _, k := range keys {
		if strings.HasSuffix(k, ".parquet") {
			parquet = k
			break
		}
	}
	if err := os.WriteFile(filepath.Join(dstDir, filepath.FromSlash(parquet)), []byte("other bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dst.Delete(ctx, keys[len(keys)-1]); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Archive(ctx, src, dst, []string{"fixture"}, false); err == nil || !strings.Contains(err.Error(), parquet) || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("archive over a changed file: error %v; want one naming %s and --replace", err, parquet)
	}
	if ok, err := dst.Exists(ctx, keys[len(keys)-1]); err != nil || ok {
		t.Errorf("after the refused archive, %s exists = %v (%v); want nothing written", keys[len(keys)-1], ok, err)
	}
	mended, err := results.Archive(ctx, src, dst, []string{"fixture"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if mended.Copied != 2 {
		t.Errorf("archive --replace: %+v; want the changed and the missing file copied", mended)
	}
	if got := roundsOf(t, dstURL); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after --replace the archive's rounds differ from the bucket's")
	}

	if _, err := results.Archive(ctx, src, dst, []string{"nosuch"}, false); err == nil || !strings.Contains(err.Error(), "no sweep nosuch") {
		t.Errorf("archive of an unknown sweep: error %v; want one saying there is no such sweep", err)
	}
	if _, err := results.Archive(ctx, src, dst, []string{"../x"}, false); err == nil {
		t.Error("archive of sweep ../x: no error; want the name refused")
	}
}
