package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the duckdb database/sql driver

	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/sweep"
)

// defaultQuery summarises each point of one sweep: its label, status and
// final accuracy, and its best evaluated accuracy and round.
const defaultQuery = `SELECT p.point, p.label, p.status, p.rounds_done, round(p.final_test_acc, 4) AS final_acc,
       round(max(r.test_acc), 4) AS best_acc, arg_max(r.round, r.test_acc) AS best_round
FROM points p JOIN rounds r USING (sweep, point)
WHERE r.evaluated GROUP BY p.index, p.point, p.label, p.status, p.rounds_done, p.final_test_acc ORDER BY p.index`

// defaultQuerySweeps is defaultQuery over several sweeps, with the sweep
// column. Points are joined on (sweep, point): a point's ID is a hash of its
// configuration, so two sweeps may hold the same ID.
const defaultQuerySweeps = `SELECT p.sweep, p.point, p.label, p.status, p.rounds_done, round(p.final_test_acc, 4) AS final_acc,
       round(max(r.test_acc), 4) AS best_acc, arg_max(r.round, r.test_acc) AS best_round
FROM points p JOIN rounds r USING (sweep, point)
WHERE r.evaluated GROUP BY p.sweep, p.index, p.point, p.label, p.status, p.rounds_done, p.final_test_acc ORDER BY p.sweep, p.index`

const queryViews = "the views rounds, clients, partitions, points and attacks"

// sweepsQueryCommand is `starter query`: SQL over the tables of one,
// several or all sweeps of the bucket.
func sweepsQueryCommand() *command {
	var names sweepNames
	var all bool
	var format string
	return &command{
		name: "query", args: "--sweep NAME [--sweep NAME ...] | --all  [SQL]",
		summary: "query the Parquet tables of one, several or all sweeps with SQL (DuckDB) over " + queryViews +
			", each spanning the chosen sweeps (the sweep column tells them apart; join on (sweep, point)). " +
			"Without SQL it prints each point's final and best accuracy",
		flags: func(fs *flag.FlagSet) {
			fs.Var(&names, "sweep", "a sweep to query; repeat it or give a comma list (a,b)")
			fs.BoolVar(&all, "all", false, "query every sweep of the bucket that has written tables (the others are named on stderr)")
			fs.StringVar(&format, "format", string(formatTable), formatHelp)
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if len(args) > 1 {
				return fmt.Errorf("want at most one SQL query (quote it), got %d arguments: %w", len(args), errUsage)
			}
			f, err := parseFormat(format, "--format")
			if err != nil {
				return err
			}
			switch {
			case len(names) == 0 && !all:
				return fmt.Errorf("name the sweeps to query: --sweep NAME (repeatable, or a,b), or --all for every sweep: %w", errUsage)
			case len(names) > 0 && all:
				return fmt.Errorf("--sweep and --all exclude each other: give one: %w", errUsage)
			}
			q := defaultQuerySweeps
			if len(args) == 1 {
				q = args[0]
			}
			return runQuery(ctx, g, os.Stderr, querySel{names: names, all: all, flag: "--sweep"}, q, f)
		},
	}
}

// queryCommand is `starter sweep query`, the one-argument form of
// `starter query`.
func queryCommand() *command {
	var asJSON bool
	var format string
	return &command{
		name: "query", args: "NAME[,NAME...] [SQL]",
		summary: "query a sweep's Parquet tables with SQL (DuckDB) over " + queryViews + " (`starter query` is the same over several or --all sweeps)",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "the same as --format json")
			fs.StringVar(&format, "format", string(formatTable), formatHelp)
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return fmt.Errorf("want NAME and an optional SQL query: %w", errUsage)
			}
			f, err := parseFormat(format, "--format")
			if err != nil {
				return err
			}
			if asJSON {
				if f != formatTable && f != formatJSON {
					return fmt.Errorf("--json and --format %s disagree: give one: %w", f, errUsage)
				}
				f = formatJSON
			}
			var names sweepNames
			if err := names.Set(args[0]); err != nil {
				return fmt.Errorf("NAME: %v: %w", err, errUsage)
			}
			q := defaultQuery
			if len(names) > 1 {
				q = defaultQuerySweeps
			}
			if len(args) == 2 {
				q = args[1]
			}
			return runQuery(ctx, g, os.Stderr, querySel{names: names, flag: "NAME"}, q, f)
		},
	}
}

// sweepNames is a repeatable flag of sweep names, each a name or a comma
// list; every name is checked as it is set.
type sweepNames []string

func (s *sweepNames) String() string { return strings.Join(*s, ",") }

func (s *sweepNames) Set(v string) error {
	for n := range strings.SplitSeq(v, ",") {
		n = strings.TrimSpace(n)
		if err := sweep.ValidName(n); err != nil {
			return err
		}
		if !slices.Contains(*s, n) {
			*s = append(*s, n)
		}
	}
	return nil
}

// querySel says which sweeps a query spans: names, or all of the bucket's.
// flag names the argument that gave the names, for error messages.
type querySel struct {
	names []string
	all   bool
	flag  string
}

// runQuery runs q over views spanning the selected sweeps and prints the
// rows to g.out in format f. A name that is not a sweep of the bucket is a
// usage error listing the bucket's sweeps. With all, sweeps that have
// written no table yet are left out and named on stderr.
func runQuery(ctx context.Context, g *globals, stderr io.Writer, sel querySel, q string, f queryFormat) error {
	have, err := results.List(ctx, g.blob)
	if err != nil {
		return fmt.Errorf("list the sweeps of %s: %w", g.blob, err)
	}
	names := sel.names
	if sel.all {
		if len(have) == 0 {
			return fmt.Errorf("bucket %s has no sweeps (start one with `starter sweep start -f SPEC.yaml`)", g.blob)
		}
		names = have
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return fmt.Errorf("%s %s: no such sweep in %s; it has %s (or check --blob): %w", sel.flag, n, g.blob, listOr(have), errUsage)
		}
	}
	db, err := results.Open(ctx, g.blob, names, sel.all)
	if err != nil {
		return err
	}
	defer db.Close()
	if sel.all && len(db.Sweeps) < len(names) {
		var skipped []string
		for _, n := range names {
			if !slices.Contains(db.Sweeps, n) {
				skipped = append(skipped, n)
			}
		}
		fmt.Fprintf(stderr, "starter: skipped %d sweeps with no tables yet: %s\n", len(skipped), strings.Join(skipped, ", "))
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	return printRows(g.out, rows, f)
}

func listOr(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// printRows prints the rows in format f and reports the rows' error.
func printRows(w io.Writer, rows *sql.Rows, f queryFormat) error {
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	p := newRowPrinter(w, cols, f)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := p.row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return p.flush()
}
