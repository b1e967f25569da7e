package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	_ "github.com/duckdb/duckdb-go/v2" // the duckdb database/sql driver
	"github.com/parquet-go/parquet-go"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/store"
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
// tells them apart). A local bucket is read in place; any other bucket's
// table files are copied to a temporary directory first, so DuckDB needs no
// network extension.
func querySweepTables(ctx context.Context, g *globals, name, q string, asJSON bool) error {
	names := strings.Split(name, ",")
	for _, n := range names {
		if err := sweep.ValidName(n); err != nil {
			return fmt.Errorf("%v: %w", err, errUsage)
		}
	}
	root := conf.LocalDir(g.blob)
	if root == "" {
		tmp, err := os.MkdirTemp("", "flsweep-query-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		for _, n := range names {
			if err := copyTables(ctx, g.blob, n, tmp); err != nil {
				return err
			}
		}
		root = tmp
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	// attacks exists only in sweeps that attack: an empty file of its
	// schema keeps the view (and queries over it) valid for the others.
	empty, err := os.MkdirTemp("", "flsweep-schema-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(empty)
	emptyAttacks := filepath.Join(empty, "attacks.parquet")
	if err := writeEmpty[store.AttackRow](emptyAttacks); err != nil {
		return err
	}
	for _, t := range []store.Table{store.TableRounds, store.TableClients, store.TablePartitions, store.TablePoints, store.TableAttacks} {
		var globs []string
		for _, n := range names {
			glob := filepath.Join(root, "sweeps", n, "*", "metrics", string(t), "*.parquet")
			if m, _ := filepath.Glob(glob); len(m) == 0 {
				if t == store.TableAttacks {
					continue
				}
				return fmt.Errorf("sweep %s has no %s table under %s; has it run? (`starter sweep status %s`)", n, t, root, n)
			}
			globs = append(globs, "'"+strings.ReplaceAll(glob, "'", "''")+"'")
		}
		if t == store.TableAttacks {
			globs = append(globs, "'"+strings.ReplaceAll(emptyAttacks, "'", "''")+"'")
		}
		view := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet([%s], union_by_name = true)", t, strings.Join(globs, ", "))
		if _, err := db.ExecContext(ctx, view); err != nil {
			return fmt.Errorf("create view %s: %w", t, err)
		}
	}
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

// copyTables copies a sweep's Parquet files from the bucket into dir,
// keeping their keys as paths.
func copyTables(ctx context.Context, blobURL, name, dir string) error {
	st, err := store.Open(ctx, blobURL)
	if err != nil {
		return err
	}
	defer st.Close()
	sk, err := store.SweepKeys(name)
	if err != nil {
		return err
	}
	keys, err := st.List(ctx, sk.Prefix())
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !strings.HasSuffix(k, ".parquet") || !strings.Contains(k, "/metrics/") {
			continue
		}
		b, err := st.Get(ctx, k)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeEmpty writes a Parquet file of T's schema with no rows.
func writeEmpty[T any](path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := parquet.Write(f, []T{}); err != nil {
		f.Close()
		return fmt.Errorf("schema of %s: %w", path, err)
	}
	return f.Close()
}
