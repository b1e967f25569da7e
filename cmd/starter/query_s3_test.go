package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/report/reporttest"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/store/miniotest"
)

// TestQueryS3: `starter query --all` over a real S3 bucket (MinIO, built
// by `make test` into bin/minio and named by MINIO_BIN) answers as over a
// local directory, the empty sweep skipped; and `starter report` reads a
// sweep from that bucket as from a local one.
func TestQueryS3(t *testing.T) {
	srv := miniotest.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", miniotest.User)
	t.Setenv("AWS_SECRET_ACCESS_KEY", miniotest.Secret)
	g := &globals{blob: srv.BlobURL, out: &bytes.Buffer{}}
	st, err := store.Open(t.Context(), g.blob)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	writeQuerySweeps(t, st)
	var stderr bytes.Buffer
	if err := runQuery(t.Context(), g, &stderr, querySel{all: true, flag: "--sweep"}, defaultQuerySweeps, formatTable); err != nil {
		t.Fatal(err)
	}
	if got := g.out.(*bytes.Buffer).String(); got != wantAcrossSweeps {
		t.Errorf("query --all on S3 printed\n%s\nwant\n%s", got, wantAcrossSweeps)
	}
	if got, want := stderr.String(), "starter: skipped 1 sweeps with no tables yet: empty\n"; got != want {
		t.Errorf("query --all on S3 said on stderr %q; want %q", got, want)
	}
	if err := reporttest.Write(t.Context(), g.blob); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, errOut bytes.Buffer
	if err := execute(t.Context(), root(), []string{"report", reporttest.Name, "-o", out, "--blob", g.blob}, &stdout, &errOut); err != nil {
		t.Fatalf("starter report on S3: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(stdout.String(), "8 points (3 unfinished), 4 methods") {
		t.Errorf("starter report on S3 printed %q; want the fixture's 8 points, 3 unfinished, 4 methods", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Errorf("starter report on S3 wrote no page: %v", err)
	}
}
