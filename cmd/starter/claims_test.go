package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/claims"
	"github.com/flsweep/flsweep/report/reporttest"
)

// fixtureClaims are two claims on reporttest's sweep: FedProx − FedAvg in
// final accuracy is −0.125 on both seeds (interval [−0.125, −0.125]:
// reproduced), and a ratio claim of a sweep the bucket lacks (not run).
const fixtureClaims = `name: Fixture
claims:
  - id: fedprox-below
    claim: FedProx ends below FedAvg.
    source: Table 9
    kind: direction
    direction: negative
    paper: -0.1
    sweeps: [fixture]
    sql: |
      SELECT mean AS value, lo, hi, n FROM paired
      WHERE method = 'algorithm=fedprox(mu=0.1)' AND baseline = 'algorithm=fedavg' AND metric = 'final_acc'
  - id: elsewhere
    claim: A | sweep not in the bucket.
    source: Fig. 1
    kind: ratio
    paper: 2.5
    tolerance: 0.2
    unit: ×
    sweeps: [other]
    sql: SELECT 1 AS value
`

// writeClaimsFile writes content as DIR/name/claims.yaml in a fresh DIR
// and returns DIR.
func writeClaimsFile(t *testing.T, name, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, claims.FileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fixtureBlob writes reporttest's sweep into a fresh bucket.
func fixtureBlob(t *testing.T) string {
	t.Helper()
	blob := "file://" + filepath.ToSlash(filepath.Join(t.TempDir(), "blob")) + "?create_dir=1&metadata=skip"
	if err := reporttest.Write(t.Context(), blob); err != nil {
		t.Fatal(err)
	}
	return blob
}

// TestClaimsCommand: the three formats over a directory of claims files,
// and --check.
func TestClaimsCommand(t *testing.T) {
	blob := fixtureBlob(t)
	dir := writeClaimsFile(t, "fix", fixtureClaims)
	run := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := execute(t.Context(), root(), append([]string{"claims", "--blob", blob}, args...), &out, &errOut)
		return out.String(), err
	}
	md, err := run(dir, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	const wantMD = "| paper | claim | source | paper's value | reproduced if | ours | verdict |\n|---|---|---|---|---|---|---|\n" +
		"| Fixture | FedProx ends below FedAvg. (`fedprox-below`) | Table 9 | -0.1 | interval < 0 | -0.125 [-0.125, -0.125], n = 2 | reproduced (1 point of its sweeps not finished, not read) |\n" +
		"| Fixture | A \\| sweep not in the bucket. (`elsewhere`) | Fig. 1 | 2.5× | ours/paper within ±20%, interval > 1 | — | not run |\n"
	if md != wantMD {
		t.Errorf("markdown:\n%s\nwant:\n%s", md, wantMD)
	}
	table, err := run(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PAPER    CLAIM", "fedprox-below", "reproduced  1 point of its sweeps not finished, not read", "not run     none of its sweeps (other) is in the bucket"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	js, err := run(filepath.Join(dir, "fix", claims.FileName), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []claims.Verdict
	var unfinished []int
	for line := range strings.Lines(js) {
		var r claims.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("json line %q: %v", line, err)
		}
		verdicts, unfinished = append(verdicts, r.Verdict), append(unfinished, r.Unfinished)
	}
	if len(verdicts) != 2 || verdicts[0] != claims.Reproduced || verdicts[1] != claims.NotRun || unfinished[0] != 1 || unfinished[1] != 0 {
		t.Errorf("json verdicts %q, unfinished %v; want reproduced with 1 unfinished, not run", verdicts, unfinished)
	}
	if out, err := run(dir, "--check"); err != nil || out != "2 claims in 1 files: every SQL runs on the tables' schemas\n" {
		t.Errorf("--check: %q, %v", out, err)
	}
	if _, err := run(dir, "--format", "csv"); !errors.Is(err, errUsage) {
		t.Errorf("--format csv: %v; want a usage error", err)
	}
}

// TestClaimsCommandFails: a claim whose SQL fails on the data makes the
// command fail, naming the file and the claim, after printing the others.
func TestClaimsCommandFails(t *testing.T) {
	blob := fixtureBlob(t)
	dir := writeClaimsFile(t, "bad", fixtureClaims+`  - id: broken
    claim: Labels are numbers.
    source: nowhere
    kind: direction
    direction: positive
    sweeps: [fixture]
    sql: SELECT CAST(label AS INTEGER) AS value FROM points LIMIT 1
`)
	var out, errOut bytes.Buffer
	err := execute(t.Context(), root(), []string{"claims", "--blob", blob, dir}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad", claims.FileName)+`:22: claim "broken"`) {
		t.Errorf("error %v; want one naming the file, line and claim", err)
	}
	if !strings.Contains(out.String(), "fedprox-below") || !strings.Contains(out.String(), "broken") {
		t.Errorf("output:\n%s\nwant every claim, the broken one with its error", out.String())
	}
	// starter report fails on it too, saying how to leave the claims out.
	err = execute(t.Context(), root(), []string{"report", reporttest.Name, "--blob", blob, "--claims", dir, "-o", t.TempDir()}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `claim "broken"`) || !strings.Contains(err.Error(), "--claims ''") {
		t.Errorf("report: %v; want the claim's error and the way out", err)
	}
}

// TestReportClaimsDefault: `starter report`'s default claims directory may
// be missing or hold no claims file (the report then has none); given
// explicitly, it must hold one.
func TestReportClaimsDefault(t *testing.T) {
	empty := t.TempDir()
	for _, dir := range []string{filepath.Join(empty, "missing"), empty} {
		if rs, err := reportClaims(t.Context(), "file://"+empty, dir, "fixture", false); rs != nil || err != nil {
			t.Errorf("default %s: %v, %v; want no claims and no error", dir, rs, err)
		}
		if _, err := reportClaims(t.Context(), "file://"+empty, dir, "fixture", true); err == nil {
			t.Errorf("--claims %s: no error; want one saying it holds no claims file", dir)
		}
	}
	if rs, err := reportClaims(t.Context(), "file://"+empty, "", "fixture", true); rs != nil || err != nil {
		t.Errorf("--claims '': %v, %v; want no claims", rs, err)
	}
}
