package claims

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/results"
)

// Result is one claim's verdict.
type Result struct {
	File  string `json:"file"`
	Paper string `json:"paper"`
	Claim Claim  `json:"claim"`
	// Verdict is Failed when the claim's SQL failed (Reason holds the
	// error).
	Verdict Verdict `json:"verdict"`
	// Ours is nil unless the SQL gave a value.
	Ours *Value `json:"ours,omitempty"`
	// Read are the claim's sweeps the bucket held with tables (what the
	// SQL read); Missing the others.
	Read    []string `json:"read,omitempty"`
	Missing []string `json:"missing,omitempty"`
	// Reason says why a claim was not run, or how its SQL failed.
	Reason string `json:"reason,omitempty"`
	// Stale lists the methods that some point of the sweeps read was
	// computed at an older revision of than today's (methods.Stale), so
	// ours may not be what the method computes now; empty when none was,
	// or when the points predate recorded revisions.
	Stale []string `json:"stale,omitempty"`
	// Unfinished counts the points of the sweeps read that had started
	// but not finished (running or stopped): a claim reads finished points
	// only (results.OpenFinished), as an archive of the bucket holds them,
	// so ours may change when they finish.
	Unfinished int `json:"unfinished,omitempty"`
}

// Error is a claim whose SQL failed: it names the file and the claim.
type Error struct {
	File, ID string
	Line     int
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: claim %q: %v", e.File, e.Line, e.ID, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Check runs every claim's setup and SQL on the views of no sweep
// (results.Schema): a claim whose SQL does not parse, bind or run is an
// *Error. It needs no bucket.
func Check(ctx context.Context, files []*File) error {
	db, err := results.Schema(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxIdleConns(0) // a fresh connection per claim: no variable or macro carries over
	var errs []error
	for _, f := range files {
		for _, c := range f.Claims {
			if _, err := run(ctx, db.DB, f.Setup, c.SQL, true); err != nil {
				errs = append(errs, &Error{File: f.Path, ID: c.ID, Line: c.Line, Err: err})
			}
		}
	}
	return errors.Join(errs...)
}

// Evaluate gives every claim of files its verdict from the sweeps of the
// bucket at blobURL, in file and claim order. It checks every claim first
// (Check). A claim whose SQL fails gets the verdict Failed and its *Error
// is among those Evaluate returns, joined, beside all the results.
func Evaluate(ctx context.Context, blobURL string, files []*File) ([]Result, error) {
	if err := Check(ctx, files); err != nil {
		return nil, err
	}
	have, err := results.List(ctx, blobURL)
	if err != nil {
		return nil, fmt.Errorf("list the sweeps of %s: %w", blobURL, err)
	}
	dbs := map[string]*sweepsDB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()
	var out []Result
	var errs []error
	for _, f := range files {
		for _, c := range f.Claims {
			r := Result{File: f.Path, Paper: f.Name, Claim: c}
			err := evaluate(ctx, blobURL, have, dbs, f.Setup, &r)
			if err != nil {
				r.Verdict, r.Reason, r.Ours = Failed, err.Error(), nil
				errs = append(errs, &Error{File: f.Path, ID: c.ID, Line: c.Line, Err: err})
			}
			out = append(out, r)
		}
	}
	return out, errors.Join(errs...)
}

// sweepsDB is an open database of some sweeps, with the methods its points
// computed at an older revision (read once, for every claim on it).
type sweepsDB struct {
	*results.DB
	stale []string
}

// evaluate fills r: the sweeps read, ours and the verdict. dbs caches the
// open databases by their sweeps.
func evaluate(ctx context.Context, blobURL string, have []string, dbs map[string]*sweepsDB, setup string, r *Result) error {
	c := r.Claim
	var present []string
	for _, s := range c.Sweeps {
		if slices.Contains(have, s) {
			present = append(present, s)
		} else {
			r.Missing = append(r.Missing, s)
		}
	}
	if len(present) == 0 {
		r.Verdict, r.Reason = NotRun, fmt.Sprintf("none of its sweeps (%s) is in the bucket", strings.Join(c.Sweeps, ", "))
		return nil
	}
	key := strings.Join(present, ",")
	db, ok := dbs[key]
	if !ok {
		rdb, err := results.OpenFinished(ctx, blobURL, present)
		if errors.Is(err, results.ErrNoTables) {
			r.Verdict, r.Reason = NotRun, fmt.Sprintf("its sweeps in the bucket (%s) have written no tables yet", key)
			return nil
		}
		if err != nil {
			return err
		}
		rdb.SetMaxIdleConns(0)
		db = &sweepsDB{DB: rdb}
		if db.stale, err = stale(ctx, rdb.DB); err != nil {
			rdb.Close()
			return err
		}
		dbs[key] = db
	}
	r.Read, r.Unfinished = db.Sweeps, db.Unfinished
	for _, s := range present {
		if !slices.Contains(db.Sweeps, s) {
			r.Missing = append(r.Missing, s)
		}
	}
	v, err := run(ctx, db.DB.DB, setup, c.SQL, false)
	if err != nil {
		return err
	}
	if v == nil {
		r.Verdict, r.Reason = NotRun, fmt.Sprintf("its SQL found no data in %s (no row, or a NULL value)", strings.Join(r.Read, ", "))
		if len(r.Missing) > 0 {
			r.Reason += "; missing: " + strings.Join(r.Missing, ", ")
		}
		return nil
	}
	r.Ours, r.Verdict, r.Stale = v, Judge(c, *v), db.stale
	return nil
}

// stale lists the methods of the sweeps' points that were computed at an
// older revision than today's (methods.Stale), each once.
func stale(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT coalesce(method_revisions, '') FROM points`)
	if err != nil {
		return nil, fmt.Errorf("the points' method revisions: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			return nil, err
		}
		s, err := methods.Stale(rec)
		if err != nil {
			return nil, err
		}
		for _, m := range s {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out, rows.Err()
}

// columns are the columns a claim's SQL may return.
var columns = []string{"value", "lo", "hi", "n"}

// run runs setup and then q on one fresh connection of db and reads its
// one row: nil for no row or a NULL value. With schema (the views of no
// sweep) it only checks that both run.
func run(ctx context.Context, db *sql.DB, setup, q string, schema bool) (*Value, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if strings.TrimSpace(setup) != "" {
		if _, err := conn.ExecContext(ctx, setup); err != nil {
			return nil, fmt.Errorf("setup: %w", err)
		}
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sql: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	for i, c := range cols {
		if !slices.Contains(columns, c) {
			return nil, fmt.Errorf("sql returns the column %q; return value and optionally lo, hi and n", c)
		}
		if _, dup := at[c]; dup {
			return nil, fmt.Errorf("sql returns the column %q twice", c)
		}
		at[c] = i
	}
	if !hasKey(at, "value") {
		return nil, fmt.Errorf("sql returns no column value (its columns: %s)", strings.Join(cols, ", "))
	}
	if hasKey(at, "lo") != hasKey(at, "hi") {
		return nil, errors.New("sql returns one of lo and hi: return both (an interval) or neither")
	}
	var got [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		got = append(got, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sql: %w", err)
	}
	if len(got) > 1 {
		return nil, fmt.Errorf("sql returns %d rows; return one (aggregate, or filter to one setting)", len(got))
	}
	if schema || len(got) == 0 {
		return nil, nil
	}
	return value(got[0], at)
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// value reads a row into a Value: nil when value is NULL.
func value(row []any, at map[string]int) (*Value, error) {
	num := func(name string) (*float64, error) {
		i, ok := at[name]
		if !ok || row[i] == nil {
			return nil, nil
		}
		x, err := toFloat(row[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("column %s is %v; return a finite number, or NULL for none", name, x)
		}
		return &x, nil
	}
	x, err := num("value")
	if err != nil || x == nil {
		return nil, err
	}
	v := &Value{Value: *x}
	if v.Lo, err = num("lo"); err != nil {
		return nil, err
	}
	if v.Hi, err = num("hi"); err != nil {
		return nil, err
	}
	switch {
	case (v.Lo == nil) != (v.Hi == nil):
		return nil, fmt.Errorf("lo is %v and hi %v: give both or neither", fmtPtr(v.Lo), fmtPtr(v.Hi))
	case v.Lo != nil && !(*v.Lo <= v.Value && v.Value <= *v.Hi):
		return nil, fmt.Errorf("the interval [%v, %v] does not hold the value %v", *v.Lo, *v.Hi, v.Value)
	}
	if n, err := num("n"); err != nil {
		return nil, err
	} else if n != nil {
		if *n != math.Trunc(*n) || *n < 0 {
			return nil, fmt.Errorf("column n is %v; return a count", *n)
		}
		k := int64(*n)
		v.N = &k
	}
	return v, nil
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// toFloat converts a DuckDB number to float64.
func toFloat(x any) (float64, error) {
	switch v := x.(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case int32:
		return float64(v), nil
	case int16:
		return float64(v), nil
	case int8:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case uint32:
		return float64(v), nil
	case uint16:
		return float64(v), nil
	case uint8:
		return float64(v), nil
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, nil
	case interface{ Float64() float64 }: // DECIMAL
		return v.Float64(), nil
	}
	return 0, fmt.Errorf("%v is a %T, not a number", x, x)
}
