package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/store"
)

// queryBucket is a bucket with sweeps one and two, each of one point with
// the same ID (as two sweeps of one configuration have), and a sweep dir
// "empty" that has a spec but no tables yet.
//
//	one: label "algorithm=fedavg seed=0",  test_acc by round 0.1, 0.5, 0.4
//	two: label "algorithm=fedprox seed=0", test_acc by round 0.2, 0.3, 0.7
func queryBucket(t *testing.T) (*globals, *store.Store) {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	g := &globals{blob: "file://" + dir + "?create_dir=1&metadata=skip", out: &bytes.Buffer{}}
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	writeQuerySweeps(t, st)
	return g, st
}

func writeQuerySweeps(t *testing.T, st *store.Store) {
	t.Helper()
	writeQuerySweep(t, st, "one", "algorithm=fedavg seed=0", []float64{0.1, 0.5, 0.4})
	writeQuerySweep(t, st, "two", "algorithm=fedprox seed=0", []float64{0.2, 0.3, 0.7})
	if err := st.Put(t.Context(), "sweeps/empty/spec.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
}

// wantAcrossSweeps is the default query's table over sweeps one and two.
const wantAcrossSweeps = "" +
	"SWEEP  POINT        LABEL                     STATUS  ROUNDS_DONE  FINAL_ACC  BEST_ACC  BEST_ROUND\n" +
	"one    p0000000001  algorithm=fedavg seed=0   done    2            0.4        0.5       1\n" +
	"two    p0000000001  algorithm=fedprox seed=0  done    2            0.7        0.7       2\n"

// fixturePoint has the form of an older build's point ID (p + 10 hex digits): a
// sweep stored by a build before 128-bit IDs stays readable (TestOlderBuildSweep).
const fixturePoint = "p0000000001"

func writeQuerySweep(t *testing.T, st *store.Store, name, label string, accs []float64) {
	t.Helper()
	ctx := t.Context()
	sk, _ := store.SweepKeys(name)
	pk, _ := sk.Point(fixturePoint)
	rounds := make([]store.RoundRow, len(accs))
	for r := range rounds {
		rounds[r] = store.RoundRow{Sweep: name, Point: fixturePoint, Round: int32(r), Evaluated: true, TestAcc: &accs[r]}
	}
	last := accs[len(accs)-1]
	for _, err := range []error{
		store.WriteRows(ctx, st, pk.Compacted(store.TableRounds), rounds),
		store.WriteRows(ctx, st, pk.Compacted(store.TableClients), []store.ClientRow{{Sweep: name, Point: fixturePoint}}),
		store.WriteRows(ctx, st, pk.Compacted(store.TablePartitions), []store.PartitionRow{
			{Sweep: name, Point: fixturePoint, LabelCounts: []int32{3, 1}},
		}),
		store.WriteRows(ctx, st, pk.Compacted(store.TablePoints), []store.PointRow{
			{Sweep: name, Point: fixturePoint, Label: label, Status: "done", RoundsDone: int32(len(accs) - 1), FinalTestAcc: &last},
		}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// runStarter runs the starter's command line and returns what it printed.
func runStarter(ctx context.Context, g *globals, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := execute(ctx, root(), append(args, "--blob", g.blob), &out, &errOut)
	return out.String(), err
}

// TestQueryAcrossSweeps: `starter query` without SQL prints the summary of
// every point of both sweeps, one row per point even though the two share a
// point ID (the default query joins on (sweep, point)).
func TestQueryAcrossSweeps(t *testing.T) {
	g, _ := queryBucket(t)
	for _, args := range [][]string{
		{"query", "--sweep", "one", "--sweep", "two"},
		{"query", "--sweep", "one,two"},
		{"query", "--sweep", "two,one", "--format", "table"},
	} {
		got, err := runStarter(t.Context(), g, args...)
		if err != nil {
			t.Fatalf("starter %v: %v", args, err)
		}
		if got != wantAcrossSweeps {
			t.Errorf("starter %v printed\n%s\nwant\n%s", args, got, wantAcrossSweeps)
		}
	}
	// A comparison of methods across the sweeps, in SQL.
	got, err := runStarter(t.Context(), g, "query", "--sweep", "one,two", "--format", "csv",
		`SELECT regexp_replace(p.label, ' ?seed=\d+', '') AS method, max(r.test_acc) AS best
		 FROM rounds r JOIN points p USING (sweep, point) GROUP BY ALL ORDER BY best DESC`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "method,best\nalgorithm=fedprox,0.7\nalgorithm=fedavg,0.5\n"; got != want {
		t.Errorf("comparison across sweeps printed %q; want %q", got, want)
	}
}

// TestQueryAll: --all spans every sweep with tables and names the skipped
// empty one on stderr.
func TestQueryAll(t *testing.T) {
	g, _ := queryBucket(t)
	var stderr bytes.Buffer
	err := runQuery(t.Context(), g, &stderr, querySel{all: true, flag: "--sweep"},
		"SELECT sweep, count(*) AS n FROM rounds GROUP BY sweep ORDER BY sweep", formatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.out.(*bytes.Buffer).String(), "sweep,n\none,3\ntwo,3\n"; got != want {
		t.Errorf("--all printed %q; want %q", got, want)
	}
	if got, want := stderr.String(), "starter: skipped 1 sweeps with no tables yet: empty\n"; got != want {
		t.Errorf("--all said on stderr %q; want %q", got, want)
	}
	// Through the command line, too.
	out, err := runStarter(t.Context(), g, "query", "--all", "--format", "json", "SELECT DISTINCT sweep FROM points ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"sweep\":\"one\"}\n{\"sweep\":\"two\"}\n"; out != want {
		t.Errorf("query --all printed %q; want %q", out, want)
	}
}

// TestQueryFormats: each format's exact output of floats (rounded in the
// table, exact in csv and json), NULL, NaN, lists, strings needing quotes and
// a repeated column name.
func TestQueryFormats(t *testing.T) {
	const q = `SELECT p.sweep, p.final_test_acc / 3 AS third, p.alpha, 'nan'::DOUBLE AS bad, 1e6::DOUBLE AS big,
		pa.label_counts, [p.final_test_acc, NULL] AS l, 'say "hi", ' || p.sweep AS s, p.seed, pa.seed
		FROM points p JOIN partitions pa USING (sweep, point) ORDER BY p.sweep`
	tests := []struct {
		give string
		want string
	}{
		{"table", "" +
			"SWEEP  THIRD     ALPHA  BAD  BIG      LABEL_COUNTS  L            S              SEED  SEED\n" +
			"one    0.133333  NULL   NaN  1000000  [3, 1]        [0.4, null]  say \"hi\", one  0     0\n" +
			"two    0.233333  NULL   NaN  1000000  [3, 1]        [0.7, null]  say \"hi\", two  0     0\n"},
		{"csv", "" +
			"sweep,third,alpha,bad,big,label_counts,l,s,seed,seed\n" +
			"one,0.13333333333333333,,NaN,1000000,\"[3, 1]\",\"[0.4, null]\",\"say \"\"hi\"\", one\",0,0\n" +
			"two,0.2333333333333333,,NaN,1000000,\"[3, 1]\",\"[0.7, null]\",\"say \"\"hi\"\", two\",0,0\n"},
		{"json", "" +
			`{"sweep":"one","third":0.13333333333333333,"alpha":null,"bad":null,"big":1000000,"label_counts":[3,1],"l":[0.4,null],"s":"say \"hi\", one","seed":0,"seed_2":0}` + "\n" +
			`{"sweep":"two","third":0.2333333333333333,"alpha":null,"bad":null,"big":1000000,"label_counts":[3,1],"l":[0.7,null],"s":"say \"hi\", two","seed":0,"seed_2":0}` + "\n"},
	}
	g, _ := queryBucket(t)
	for _, tt := range tests {
		got, err := runStarter(t.Context(), g, "query", "--sweep", "one,two", "--format", tt.give, q)
		if err != nil {
			t.Fatalf("--format %s: %v", tt.give, err)
		}
		if got != tt.want {
			t.Errorf("--format %s printed\n%s\nwant\n%s", tt.give, got, tt.want)
		}
	}
}

// TestSweepQuery: `sweep query` is the one-argument form; --json still
// prints JSON lines, and NAME,NAME spans several sweeps, attacks included
// where only one sweep attacked.
func TestSweepQuery(t *testing.T) {
	g, st := queryBucket(t)
	ctx := t.Context()
	got, err := runStarter(ctx, g, "sweep", "query", "one")
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"POINT        LABEL                    STATUS  ROUNDS_DONE  FINAL_ACC  BEST_ACC  BEST_ROUND\n" +
		"p0000000001  algorithm=fedavg seed=0  done    2            0.4        0.5       1\n"
	if got != want {
		t.Errorf("sweep query one printed\n%s\nwant\n%s", got, want)
	}
	got, err = runStarter(ctx, g, "sweep", "query", "one,two", "SELECT sweep, count(*) AS n FROM rounds GROUP BY sweep ORDER BY sweep", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"sweep\":\"one\",\"n\":3}\n{\"sweep\":\"two\",\"n\":3}\n"; got != want {
		t.Errorf("query over one,two printed %q; want %q", got, want)
	}
	sk, _ := store.SweepKeys("two")
	pk, _ := sk.Point(fixturePoint)
	iacc := 0.75
	if err := store.WriteRows(ctx, st, pk.Compacted(store.TableAttacks), []store.AttackRow{
		{Sweep: "two", Method: "rlu", IAcc: &iacc, TrueCounts: []int32{3, 1}, Counts: []int32{2, 2}},
	}); err != nil {
		t.Fatal(err)
	}
	got, err = runStarter(ctx, g, "sweep", "query", "one,two", "SELECT sweep, method, iacc, counts[1] AS c1 FROM attacks", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"sweep\":\"two\",\"method\":\"rlu\",\"iacc\":0.75,\"c1\":2}\n"; got != want {
		t.Errorf("attacks over one,two printed %q; want %q", got, want)
	}
	got, err = runStarter(ctx, g, "sweep", "query", "one", "SELECT count(*) AS n FROM attacks", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if got != "{\"n\":0}\n" {
		t.Errorf("attacks of a sweep without attacks: %q; want an empty view", got)
	}
	_, err = runStarter(ctx, g, "sweep", "query", "one,empty", "SELECT 1")
	if err == nil || !strings.Contains(err.Error(), "sweep empty has no rounds table") {
		t.Errorf("sweep query over a sweep that never ran: %v; want an error naming it", err)
	}
}

// TestQueryErrors: bad calls are usage errors that name the flag and the fix.
func TestQueryErrors(t *testing.T) {
	tests := []struct {
		give []string
		want string
	}{
		{[]string{"query"}, "--sweep NAME (repeatable, or a,b), or --all"},
		{[]string{"query", "--all", "--sweep", "one"}, "--sweep and --all exclude each other"},
		{[]string{"query", "--sweep", "one", "--format", "xml"}, `--format "xml": want table, csv or json`},
		{[]string{"query", "--sweep", "One!"}, `invalid value "One!" for flag -sweep: name = "One!": use 1-63 characters`},
		{[]string{"query", "--sweep", "one,"}, `invalid value "one," for flag -sweep: name = ""`},
		{[]string{"query", "--sweep", "three"}, "--sweep three: no such sweep in file://"},
		{[]string{"query", "--sweep", "three"}, "it has empty, one, two (or check --blob)"},
		{[]string{"query", "--sweep", "one", "SELECT 1", "SELECT 2"}, "want at most one SQL query (quote it), got 2"},
		{[]string{"sweep", "query", "three"}, "NAME three: no such sweep"},
		{[]string{"sweep", "query", "one", "--json", "--format", "csv"}, "--json and --format csv disagree"},
	}
	g, _ := queryBucket(t)
	for _, tt := range tests {
		_, err := runStarter(t.Context(), g, tt.give...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("starter %q: %v; want a usage error containing %q", tt.give, err, tt.want)
		}
	}
	// Bad SQL is an error of the query, not of the call.
	_, err := runStarter(t.Context(), g, "query", "--sweep", "one", "SELECT nope FROM rounds")
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "query: ") {
		t.Errorf("bad SQL: %v; want a query error", err)
	}
}
