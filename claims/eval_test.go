package claims

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/report/reporttest"
	"github.com/flsweep/flsweep/store"
)

// fixtureBucket writes reporttest's sweep ("fixture") into a fresh bucket.
func fixtureBucket(t *testing.T) string {
	t.Helper()
	blob := "file://" + filepath.ToSlash(t.TempDir()) + "?create_dir=1&metadata=skip"
	if err := reporttest.Write(t.Context(), blob); err != nil {
		t.Fatal(err)
	}
	return blob
}

// The fixture's known values (report/report_test.go states them): at
// target 0.7, fedprox − fedavg in final accuracy is −0.125 on both seeds
// (interval [−0.125, −0.125]) and 0 in rounds to target ([0, 0]);
// scaffold − fedavg pairs on seed 1 only: −2 rounds, no interval. fedavg's
// final accuracies are 0.875 and 0.75 (mean 0.8125); x = acc − 0.8 is
// 0.075 and −0.05: mean 0.0125 ± t_{0.975,1}·0.0883883/√2 = ±0.794, an
// interval around 0. Rounds to 0.7 (first evaluated round with test_acc ≥
// 0.7): fedavg 4 and 4, scaffold 2 on seed 1: a speed-up of 2. Scaffold's
// seed 2 is running (rounds 0..4 committed, 0.7 reached at round 2): a
// claim reads finished points only, so its speed-ups pair seed 1 alone
// (n = 1, no interval), where reading the running point gave n = 2.
const fixtureClaims = `name: Fixture
setup: |
  CREATE OR REPLACE TEMP MACRO pd(m, met) AS TABLE
    SELECT mean AS value, lo, hi, n FROM paired
    WHERE method = m AND baseline = 'algorithm=fedavg' AND metric = met;
  CREATE OR REPLACE TEMP MACRO fedavg_acc() AS TABLE
    SELECT r.seed, r.test_acc AS acc FROM rounds r JOIN points p USING (sweep, point)
    WHERE p.label LIKE 'algorithm=fedavg seed=%' AND r.round = 6;
claims:
  - id: dir-reproduced
    claim: FedProx ends below FedAvg.
    source: fixture
    kind: direction
    direction: negative
    sweeps: [fixture]
    sql: SELECT * FROM pd('algorithm=fedprox(mu=0.1)', 'final_acc')
  - id: dir-not-reproduced
    claim: FedProx ends above FedAvg.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [fixture]
    sql: SELECT * FROM pd('algorithm=fedprox(mu=0.1)', 'final_acc')
  - id: dir-only-no-interval
    claim: SCAFFOLD reaches 0.7 sooner than FedAvg.
    source: fixture
    kind: direction
    direction: negative
    sweeps: [fixture]
    sql: |
      SET VARIABLE target = 0.7;
      SELECT * FROM pd('algorithm=scaffold', 'rounds_to_target')
  - id: dir-zero
    claim: FedProx reaches 0.7 sooner than FedAvg.
    source: fixture
    kind: direction
    direction: negative
    sweeps: [fixture]
    sql: |
      SET VARIABLE target = 0.7;
      SELECT * FROM pd('algorithm=fedprox(mu=0.1)', 'rounds_to_target')
  - id: dir-only-covers
    claim: FedAvg ends above 0.8.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [fixture]
    sql: SELECT avg(acc - 0.8) AS value, avg(acc - 0.8) - ci95_half(acc - 0.8) AS lo, avg(acc - 0.8) + ci95_half(acc - 0.8) AS hi, count(*) AS n FROM fedavg_acc()
  - id: tol-reproduced
    claim: FedAvg ends at 0.80.
    source: fixture
    kind: tolerance
    paper: 0.80
    tolerance: 0.02
    sweeps: [fixture]
    sql: SELECT avg(acc) AS value, count(*) AS n FROM fedavg_acc()
  - id: tol-direction-only
    claim: FedAvg ends at 0.90, above chance.
    source: fixture
    kind: tolerance
    paper: 0.90
    tolerance: 0.02
    direction: positive
    reference: 0.5
    sweeps: [fixture]
    sql: SELECT avg(acc) AS value FROM fedavg_acc()
  - id: tol-not-reproduced
    claim: FedAvg ends at 0.90.
    source: fixture
    kind: tolerance
    paper: 0.90
    tolerance: 0.02
    sweeps: [fixture]
    sql: SELECT avg(acc) AS value FROM fedavg_acc()
  - id: ratio-reproduced
    claim: SCAFFOLD reaches 0.7 2.5× faster than FedAvg.
    source: fixture
    kind: ratio
    paper: 2.5
    tolerance: 0.3
    sweeps: [fixture]
    sql: &speedup |
      WITH hit AS (
        SELECT p.algorithm AS m, r.seed, min(r.round) FILTER (WHERE r.test_acc >= 0.7) AS rounds
        FROM rounds r JOIN points p USING (sweep, point) WHERE r.evaluated GROUP BY ALL),
      s AS (SELECT a.rounds / c.rounds AS x FROM hit a JOIN hit c USING (seed) WHERE a.m = 'fedavg' AND c.m = 'scaffold')
      SELECT avg(x) AS value, avg(x) - ci95_half(x) AS lo, avg(x) + ci95_half(x) AS hi, count(x) AS n FROM s
  - id: ratio-direction-only
    claim: SCAFFOLD reaches 0.7 2.5× faster than FedAvg (within 10%).
    source: fixture
    kind: ratio
    paper: 2.5
    tolerance: 0.1
    sweeps: [fixture]
    sql: *speedup
  - id: ratio-covers-one
    claim: FedAvg ends 1.05× above 0.8.
    source: fixture
    kind: ratio
    paper: 1.05
    tolerance: 0.1
    sweeps: [fixture]
    sql: SELECT avg(acc / 0.8) AS value, avg(acc / 0.8) - ci95_half(acc / 0.8) AS lo, avg(acc / 0.8) + ci95_half(acc / 0.8) AS hi FROM fedavg_acc()
  - id: ratio-not-reproduced
    claim: SCAFFOLD reaches 0.7 twice as slowly as FedAvg.
    source: fixture
    kind: ratio
    paper: 0.5
    tolerance: 0.3
    sweeps: [fixture]
    sql: *speedup
  - id: not-run-absent
    claim: A sweep nobody ran shows something.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [absent-1, absent-2]
    sql: SELECT mean AS value FROM paired
  - id: not-run-no-row
    claim: A method the fixture lacks beats FedAvg.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [fixture, absent-1]
    sql: SELECT * FROM pd('algorithm=fedyogi', 'final_acc')
  - id: not-run-null
    claim: An aggregate over nothing.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [fixture]
    sql: SELECT avg(test_acc) AS value FROM rounds WHERE round > 1000
`

// TestEvaluate: every fixture claim of each kind gets the verdict its
// known values give, with ours as the SQL computed it.
func TestEvaluate(t *testing.T) {
	blob := fixtureBucket(t)
	file, err := Parse("fixture/claims.yaml", []byte(fixtureClaims))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Evaluate(t.Context(), blob, []*File{file})
	if err != nil {
		t.Fatal(err)
	}
	half := 12.706204736174698 * 0.125 / math.Sqrt2 / math.Sqrt2 // t_{0.975,1}·sd/√2, sd = 0.125/√2
	type want struct {
		verdict Verdict
		value   float64
		lo, hi  float64 // NaN: no interval
		n       int64   // -1: no n
	}
	nan := math.NaN()
	wants := map[string]want{
		"dir-reproduced":       {Reproduced, -.125, -.125, -.125, 2},
		"dir-not-reproduced":   {NotReproduced, -.125, -.125, -.125, 2},
		"dir-only-no-interval": {DirectionOnly, -2, nan, nan, 1},
		"dir-zero":             {NotReproduced, 0, 0, 0, 2},
		"dir-only-covers":      {DirectionOnly, .0125, .0125 - half, .0125 + half, 2},
		"tol-reproduced":       {Reproduced, .8125, nan, nan, 2},
		"tol-direction-only":   {DirectionOnly, .8125, nan, nan, -1},
		"tol-not-reproduced":   {NotReproduced, .8125, nan, nan, -1},
		"ratio-reproduced":     {Reproduced, 2, nan, nan, 1},
		"ratio-direction-only": {DirectionOnly, 2, nan, nan, 1},
		"ratio-covers-one":     {DirectionOnly, 1.015625, 1.015625 - half/.8, 1.015625 + half/.8, -1},
		"ratio-not-reproduced": {NotReproduced, 2, nan, nan, 1},
	}
	if len(rs) != len(file.Claims) {
		t.Fatalf("%d results; want one per claim, %d", len(rs), len(file.Claims))
	}
	near := func(a float64, b *float64, w float64) bool {
		if math.IsNaN(w) {
			return b == nil
		}
		return b != nil && math.Abs(*b-w) < 1e-9
	}
	for i, r := range rs {
		if r.Claim.ID != file.Claims[i].ID || r.File != "fixture/claims.yaml" || r.Paper != "Fixture" {
			t.Errorf("result %d is %s of %s (%s); want %s in order", i, r.Claim.ID, r.File, r.Paper, file.Claims[i].ID)
		}
		w, ok := wants[r.Claim.ID]
		if !ok {
			continue
		}
		if r.Verdict != w.verdict || r.Ours == nil {
			t.Errorf("%s: %q, ours %+v (%s); want %q", r.Claim.ID, r.Verdict, r.Ours, r.Reason, w.verdict)
			continue
		}
		o := r.Ours
		gotN := int64(-1)
		if o.N != nil {
			gotN = *o.N
		}
		if !near(0, &o.Value, w.value) || !near(0, o.Lo, w.lo) || !near(0, o.Hi, w.hi) || gotN != w.n {
			t.Errorf("%s: ours %s; want %v [%v, %v], n %d", r.Claim.ID, r.OursText(), w.value, w.lo, w.hi, w.n)
		}
		if !slices.Equal(r.Read, []string{"fixture"}) || len(r.Missing) != 0 {
			t.Errorf("%s: read %v, missing %v; want fixture, none", r.Claim.ID, r.Read, r.Missing)
		}
		if r.Unfinished != 1 || r.Remarks() != "1 point of its sweeps not finished, not read" {
			t.Errorf("%s: unfinished %d, remarks %q; want scaffold's running seed 2 counted and said", r.Claim.ID, r.Unfinished, r.Remarks())
		}
	}
	byID := map[string]Result{}
	for _, r := range rs {
		byID[r.Claim.ID] = r
	}
	for _, tt := range []struct {
		id      string
		reason  string
		missing []string
	}{
		{"not-run-absent", "none of its sweeps (absent-1, absent-2) is in the bucket", []string{"absent-1", "absent-2"}},
		{"not-run-no-row", "its SQL found no data in fixture (no row, or a NULL value); missing: absent-1", []string{"absent-1"}},
		{"not-run-null", "its SQL found no data in fixture", nil},
	} {
		r := byID[tt.id]
		if r.Verdict != NotRun || r.Ours != nil || !strings.HasPrefix(r.Reason, tt.reason) || !slices.Equal(r.Missing, tt.missing) {
			t.Errorf("%s: %q, ours %+v, reason %q, missing %v; want not run: %q, missing %v", tt.id, r.Verdict, r.Ours, r.Reason, r.Missing, tt.reason, tt.missing)
		}
	}
}

// badClaim is a claims file of one claim with the given sweeps and SQL.
func badClaim(t *testing.T, sweeps, q string) *File {
	t.Helper()
	f, err := Parse("bad/claims.yaml", []byte(`name: Bad
claims:
  - id: ok
    claim: FedAvg ran.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [fixture]
    sql: SELECT count(*) AS value FROM points
  - id: broken
    claim: Something.
    source: fixture
    kind: direction
    direction: positive
    sweeps: [`+sweeps+`]
    sql: "`+q+`"
`))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestEvaluateErrors: a claim whose SQL fails is an error naming the file
// and the claim, never a "not run": also when its sweeps are absent (the
// SQL is checked on the empty views first), and when it binds but fails on
// the data (the other claims are still judged).
func TestEvaluateErrors(t *testing.T) {
	blob := fixtureBucket(t)
	tests := []struct {
		name, sweeps, sql string
		want              string // in the error
		results           bool   // the results come back beside the error
	}{
		{"no such column, sweep present", "fixture", "SELECT no_such_column AS value FROM rounds", "no_such_column", false},
		{"no such column, sweep absent", "absent", "SELECT no_such_column AS value FROM rounds", "no_such_column", false},
		{"syntax", "absent", "SELEC 1 AS value", "syntax error", false},
		{"no value column", "absent", "SELECT 1 AS n", "no column value", false},
		{"extra column", "absent", "SELECT 1 AS value, 2 AS extra", `the column \"extra\"`, false},
		{"lo without hi", "absent", "SELECT 1 AS value, 0 AS lo", "one of lo and hi", false},
		{"fails on the data", "fixture", "SELECT CAST(label AS INTEGER) AS value FROM points LIMIT 1", "Conversion Error", true},
		{"two rows", "fixture", "SELECT test_acc AS value FROM rounds WHERE evaluated", "rows; return one", true},
		{"interval without the value", "fixture", "SELECT 1 AS value, 2 AS lo, 3 AS hi", "does not hold the value", true},
		{"infinite", "fixture", "SELECT 'inf'::DOUBLE AS value", "finite", true},
		{"not a number", "fixture", "SELECT 'x' AS value", "not a number", true},
	}
	for _, tt := range tests {
		f := badClaim(t, tt.sweeps, strings.ReplaceAll(tt.sql, `"`, `\"`))
		rs, err := Evaluate(t.Context(), blob, []*File{f})
		var ce *Error
		if !errors.As(err, &ce) || ce.File != "bad/claims.yaml" || ce.ID != "broken" {
			t.Errorf("%s: Evaluate error %v; want an *Error naming bad/claims.yaml and broken", tt.name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `bad/claims.yaml:10: claim "broken"`) || !strings.Contains(msg, strings.ReplaceAll(tt.want, `\"`, `"`)) {
			t.Errorf("%s: error %q; want it to name the file, line and claim, and say %q", tt.name, msg, tt.want)
		}
		if !tt.results {
			if rs != nil {
				t.Errorf("%s: results %v beside a check error; want none", tt.name, rs)
			}
			continue
		}
		if len(rs) != 2 || rs[0].Verdict != DirectionOnly || rs[1].Verdict != Failed || rs[1].Ours != nil || rs[1].Reason == "" {
			t.Errorf("%s: results %+v; want ok judged and broken failed with its reason", tt.name, rs)
		}
	}
}

// TestEvaluateStale marks the fixture's scaffold points as computed at
// SCAFFOLD's first revision (today's is 2, methods.Changes): every claim
// that reads the fixture sweep then says so, and none did before, when the
// points recorded no revisions (points written before revisions were).
func TestEvaluateStale(t *testing.T) {
	blob := fixtureBucket(t)
	file, err := Parse("fixture/claims.yaml", []byte(fixtureClaims))
	if err != nil {
		t.Fatal(err)
	}
	stale := func() map[string][]string {
		rs, err := Evaluate(t.Context(), blob, []*File{file})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, r := range rs {
			if r.Ours != nil {
				out[r.Claim.ID] = r.Stale
			}
		}
		return out
	}
	for id, s := range stale() {
		if len(s) > 0 {
			t.Errorf("claim %s: stale %v before any point recorded a revision", id, s)
		}
	}
	paths, err := filepath.Glob(filepath.Join(conf.LocalDir(blob), "sweeps", "fixture", "*", "metrics", "points", "all.parquet"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("the fixture's points tables: %v, %v", paths, err)
	}
	marked := 0
	for _, p := range paths {
		rows, err := parquet.ReadFile[store.PointRow](p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			rows[i].MethodRevisions = `{"aggregator/fedavg":1,"algorithm/fedavg":1,"sampler/uniform":1}`
			if strings.Contains(rows[i].Label, "scaffold") {
				rows[i].MethodRevisions = `{"aggregator/fedavg":1,"algorithm/scaffold":1,"sampler/uniform":1}`
				marked++
			}
		}
		if err := parquet.WriteFile(p, rows); err != nil {
			t.Fatal(err)
		}
	}
	if marked == 0 {
		t.Fatal("no scaffold point in the fixture")
	}
	got := stale()
	if len(got) == 0 {
		t.Fatal("no claim gave a value")
	}
	for id, s := range got {
		if !slices.Equal(s, []string{"algorithm/scaffold r1 < r2"}) {
			t.Errorf("claim %s: stale %v; want [algorithm/scaffold r1 < r2]", id, s)
		}
	}
}
