package results_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/store"
)

// TestT975 checks the t quantiles against their closed forms: for one
// degree of freedom t = tan(π(p − ½)), for two t = (2p − 1)/√(2p(1 − p)),
// p = 0.975; and the normal quantile 1.959963984540054 as df grows.
func TestT975(t *testing.T) {
	for _, tt := range []struct {
		df   int
		want float64
		tol  float64
	}{
		{1, math.Tan(math.Pi * 0.475), 1e-9},
		{2, 0.95 / math.Sqrt(2*0.975*0.025), 1e-9},
		{1e6, 1.959963984540054, 1e-5},
	} {
		if got := results.T975(tt.df); math.Abs(got-tt.want) > tt.tol {
			t.Errorf("T975(%d) = %.15g; want %.15g", tt.df, got, tt.want)
		}
	}
}

// writeTable writes rows as one Parquet part file of a point's table.
func writeTable[T any](t *testing.T, root, sweepName, point string, table store.Table, rows []T) {
	t.Helper()
	dir := filepath.Join(root, "sweeps", sweepName, point, "metrics", string(table))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "all.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(f, rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestPairedKnownValues builds a sweep by hand: methods A and B (the
// baseline) in one setting, seeds 1–3, and a point C of another setting
// (another alpha) that pairs with nothing. Final accuracies A = 0.80, 0.82,
// 0.84 and B = 0.78, 0.79, 0.83 give differences 0.02, 0.03, 0.01: mean
// 0.02, sd 0.01, half-width t_{0.975,2}·0.01/√3 = 4.302653·0.005774 =
// 0.024841, so (−0.004841, 0.044841), which covers 0. Fairness variances
// A = 10, 12, 11 and B = 20, 25, 21: differences −10, −13, −10, mean −11,
// sd √3, half-width 4.302653·1 = 4.302653, so (−15.302653, −6.697347),
// which does not. With target 0.8, A reaches it at rounds 5, 5, 5 and B at
// 10, never, 10: two pairs, differences −5, −5, interval (−5, −5), which
// does not cover 0.
func TestPairedKnownValues(t *testing.T) {
	root := t.TempDir()
	type pt struct {
		id, label, alpha string
		seed             int64
		acc, varPct2     float64
		reached          int32 // the round test_acc first reaches 0.8; 0: never
	}
	points := []pt{
		{"pa1", "algorithm=a seed=1", "0.5", 1, 0.80, 10, 5},
		{"pa2", "algorithm=a seed=2", "0.5", 2, 0.82, 12, 5},
		{"pa3", "algorithm=a seed=3", "0.5", 3, 0.84, 11, 5},
		{"pb1", "algorithm=b seed=1", "0.5", 1, 0.78, 20, 10},
		{"pb2", "algorithm=b seed=2", "0.5", 2, 0.79, 25, 0},
		{"pb3", "algorithm=b seed=3", "0.5", 3, 0.83, 21, 10},
		{"pc1", "algorithm=a seed=1", "0.1", 1, 0.50, 30, 0},
	}
	for _, p := range points {
		alg := p.label[len("algorithm=") : len("algorithm=")+1]
		cfg := `{"partition":{"alpha":` + p.alpha + `},"algorithm":{"name":"` + alg + `"},"seed":` + string(rune('0'+p.seed)) + `}`
		writeTable(t, root, "s", p.id, store.TablePoints, []store.PointRow{{Sweep: "s", Point: p.id, Label: p.label, Seed: p.seed, Config: cfg, Status: "done"}})
		var rounds []store.RoundRow
		for _, r := range []int32{0, 5, 10, 15} {
			acc := 0.5
			switch {
			case r == 15:
				acc = p.acc
			case p.reached > 0 && r >= p.reached:
				acc = 0.8
			}
			row := store.RoundRow{Sweep: "s", Point: p.id, Seed: p.seed, Round: r, Evaluated: true, TestAcc: ptr(acc)}
			if r == 15 {
				row.ClientAccVarPct2 = ptr(p.varPct2)
			}
			rounds = append(rounds, row)
		}
		if p.reached == 0 {
			rounds[3].TestAcc = ptr(math.Min(p.acc, 0.79))
		}
		writeTable(t, root, "s", p.id, store.TableRounds, rounds)
	}
	db, err := results.Open(t.Context(), "file://"+root, []string{"s"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET VARIABLE target = 0.8"); err != nil {
		t.Fatal(err)
	}
	const half = 4.302652729749464 * 0.01 / 1.7320508075688772
	for _, tt := range []struct {
		metric       string
		n            int
		mean, lo, hi float64
		covers       bool
	}{
		{"final_acc", 3, 0.02, 0.02 - half, 0.02 + half, true},
		{"fairness_var_pct2", 3, -11, -11 - 4.302652729749464, -11 + 4.302652729749464, false},
		{"rounds_to_target", 2, -5, -5, -5, false},
	} {
		var n int
		var mean, lo, hi float64
		var covers bool
		err := conn.QueryRowContext(t.Context(), `SELECT n, mean, lo, hi, covers_zero FROM paired
			WHERE method = 'algorithm=a' AND baseline = 'algorithm=b' AND metric = ?`, tt.metric).Scan(&n, &mean, &lo, &hi, &covers)
		if err != nil {
			t.Fatalf("%s: %v", tt.metric, err)
		}
		// 1e-9: float64 sums of a few decimal values.
		if n != tt.n || math.Abs(mean-tt.mean) > 1e-9 || math.Abs(lo-tt.lo) > 1e-9 || math.Abs(hi-tt.hi) > 1e-9 || covers != tt.covers {
			t.Errorf("%s: n %d, mean %v, (%v, %v), covers 0 %v; want %d, %v, (%v, %v), %v", tt.metric, n, mean, lo, hi, covers, tt.n, tt.mean, tt.lo, tt.hi, tt.covers)
		}
	}
	// The other setting's point pairs with nothing; B − A mirrors A − B.
	var others int
	if err := conn.QueryRowContext(t.Context(), `SELECT count(*) FROM paired WHERE setting LIKE '%0.1%'`).Scan(&others); err != nil || others != 0 {
		t.Errorf("pairs in the unpaired setting: %d, %v; want 0", others, err)
	}
	var mirror float64
	if err := conn.QueryRowContext(t.Context(), `SELECT mean FROM paired WHERE method = 'algorithm=b' AND baseline = 'algorithm=a' AND metric = 'final_acc'`).Scan(&mirror); err != nil || math.Abs(mirror+0.02) > 1e-9 {
		t.Errorf("B − A = %v, %v; want −0.02", mirror, err)
	}
}

// TestMacros checks t975 and ci95_half against TestT975's closed forms and
// TestPairedKnownValues' interval: 0.02, 0.03, 0.01 have sd 0.01, so the
// half-width is t_{0.975,2}·0.01/√3 = 0.024841; one value has none.
func TestMacros(t *testing.T) {
	db, err := results.Schema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var t1, t2, tBig float64
	var t0 *float64
	if err := db.QueryRowContext(t.Context(), `SELECT t975(1), t975(2), t975(0), t975(100000)`).Scan(&t1, &t2, &t0, &tBig); err != nil {
		t.Fatal(err)
	}
	if math.Abs(t1-math.Tan(math.Pi*0.475)) > 1e-9 || math.Abs(t2-0.95/math.Sqrt(2*0.975*0.025)) > 1e-9 || t0 != nil || tBig != results.T975(500) {
		t.Errorf("t975(1, 2, 0, 1e5) = %v, %v, %v, %v; want %v, %v, NULL, t975(500) = %v",
			t1, t2, t0, tBig, math.Tan(math.Pi*0.475), 0.95/math.Sqrt(2*0.975*0.025), results.T975(500))
	}
	var half float64
	var one *float64
	if err := db.QueryRowContext(t.Context(), `SELECT ci95_half(x), (SELECT ci95_half(y) FROM (VALUES (1.0)) v(y)) FROM (VALUES (0.02), (0.03), (0.01)) v(x)`).Scan(&half, &one); err != nil {
		t.Fatal(err)
	}
	if want := 4.302652729749464 * 0.01 / math.Sqrt(3); math.Abs(half-want) > 1e-12 || one != nil {
		t.Errorf("ci95_half = %v, of one value %v; want %v, NULL", half, one, want)
	}
}

// TestSchema: the schema DB has every view with its columns and no rows,
// and a query naming a column no table has fails to bind.
func TestSchema(t *testing.T) {
	db, err := results.Schema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range views() {
		var n int
		if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM "+v).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows, %v; want an empty view", v, n, err)
		}
	}
	if _, err := db.QueryContext(t.Context(), `SELECT test_acc, client_acc_var_pct2 FROM rounds`); err != nil {
		t.Errorf("a query over real columns: %v", err)
	}
	if _, err := db.QueryContext(t.Context(), `SELECT no_such_column FROM rounds`); err == nil {
		t.Error("a query over a missing column ran; want a binder error")
	}
}
