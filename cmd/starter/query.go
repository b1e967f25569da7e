package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	_ "github.com/duckdb/duckdb-go/v2" // the duckdb database/sql driver

	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/sweep"
)

// defaultQuery summarises each point: its label, status and final accuracy,
// and its best evaluated accuracy and round.
const defaultQuery = `SELECT p.point, p.label, p.status, p.rounds_done, round(p.final_test_acc, 4) AS final_acc,
       round(max(r.test_acc), 4) AS best_acc, arg_max(r.round, r.test_acc) AS best_round
FROM points p JOIN rounds r USING (point)
WHERE r.evaluated GROUP BY p.index, p.point, p.label, p.status, p.rounds_done, p.final_test_acc ORDER BY p.index`

func queryCommand() *command {
	var asJSON bool
	return &command{
		name: "query", args: "NAME[,NAME...] [SQL]",
		summary: "query a sweep's Parquet tables with SQL (DuckDB); the tables are views named rounds, clients, partitions, points, attacks",
		flags:   func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print rows as JSON objects, one per line") },
		run: func(ctx context.Context, g *globals, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return fmt.Errorf("want NAME and an optional SQL query: %w", errUsage)
			}
			q := defaultQuery
			if len(args) == 2 {
				q = args[1]
			}
			return querySweepTables(ctx, g, args[0], q, asJSON)
		},
	}
}

// querySweepTables runs q over views of the tables of one sweep, or of
// several given as NAME,NAME,... (their rows side by side; the sweep column
// tells them apart).
func querySweepTables(ctx context.Context, g *globals, name, q string, asJSON bool) error {
	names := strings.Split(name, ",")
	for _, n := range names {
		if err := sweep.ValidName(n); err != nil {
			return fmt.Errorf("%v: %w", err, errUsage)
		}
	}
	db, err := results.Open(ctx, g.blob, names, false)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(g.out, 2, 4, 2, ' ', 0)
	enc := json.NewEncoder(g.out)
	if !asJSON {
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(cols, "\t")))
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if asJSON {
			obj := map[string]any{}
			for i, c := range cols {
				obj[c] = vals[i]
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
			continue
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				cells[i] = "NULL"
			} else {
				cells[i] = fmt.Sprint(v)
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if asJSON {
		return nil
	}
	return tw.Flush()
}
