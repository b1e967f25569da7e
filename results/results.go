// Package results opens the Parquet tables of one, several or all sweeps of
// a bucket as SQL views (rounds, clients, partitions, points, attacks, and
// paired: the per-seed paired differences between methods, paired.go) in an
// in-process DuckDB, for `starter query`, `starter sweep query` and
// `starter report`.
//
// DuckDB is the engine because it reads Parquet natively, unions files of
// drifting schemas by column name, and answers analytical queries over
// millions of rows in well under a second; writing that by hand over
// parquet-go would be a worse query engine.
package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the duckdb database/sql driver
	"github.com/parquet-go/parquet-go"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// Tables are the views every DB has, in the order they are created: points
// first, which OpenFinished's other views filter on.
var Tables = []store.Table{store.TablePoints, store.TableRounds, store.TableClients, store.TablePartitions, store.TableAttacks}

// ErrNoTables marks a sweep that has written no table yet.
var ErrNoTables = errors.New("no tables")

// DB is a DuckDB database with one view per table over the sweeps' Parquet
// files. Close it to remove any temporary copies.
type DB struct {
	*sql.DB
	// Sweeps are the sweeps the views span.
	Sweeps []string
	// Unfinished counts the points OpenFinished left out: those with a
	// points row whose status is not done or diverged (running, stopped).
	// Always 0 for Open.
	Unfinished int
	finished   bool
	tmp        []string
}

// Close closes the database and removes its temporary files.
func (d *DB) Close() error {
	err := d.DB.Close()
	for _, t := range d.tmp {
		os.RemoveAll(t)
	}
	return err
}

// List returns the names of the sweeps in a bucket, sorted.
func List(ctx context.Context, blobURL string) ([]string, error) {
	st, err := store.Open(ctx, blobURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	dirs, err := st.Dirs(ctx, "sweeps/")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range dirs {
		if sweep.ValidName(d) == nil {
			names = append(names, d)
		}
	}
	return names, nil
}

// Open opens the tables of the named sweeps of a bucket. A local (file://)
// bucket is read in place; any other bucket's table files are copied to a
// temporary directory first, so DuckDB needs no network extension. A sweep
// with no rounds table yet is an error wrapping ErrNoTables, unless
// skipEmpty is set, in which case it is left out (Sweeps says which
// remain). The attacks view exists even when no sweep attacked (empty, with
// its schema), so queries over several sweeps stay valid.
func Open(ctx context.Context, blobURL string, names []string, skipEmpty bool) (*DB, error) {
	return open(ctx, blobURL, names, skipEmpty, false)
}

// OpenFinished is Open(ctx, blobURL, names, true) with every view holding
// the rows of the finished points only (points.status done or diverged, as
// `starter sweep archive` keeps them): a point still running, or stopped,
// has committed some rounds, and a query over a sweep that reads them (a
// rounds-to-target that counts a run's last round, say) is computing on a
// half-run point. The claims read their sweeps this way, so a claim judged
// on a live bucket gives what it gives on the bucket's archive. DB.Unfinished
// counts the points left out.
func OpenFinished(ctx context.Context, blobURL string, names []string) (*DB, error) {
	return open(ctx, blobURL, names, true, true)
}

func open(ctx context.Context, blobURL string, names []string, skipEmpty, finished bool) (*DB, error) {
	if len(names) == 0 {
		return nil, errors.New("results: no sweep named")
	}
	for _, n := range names {
		if err := sweep.ValidName(n); err != nil {
			return nil, err
		}
	}
	d := &DB{finished: finished}
	ok := false
	defer func() {
		if !ok {
			for _, t := range d.tmp {
				os.RemoveAll(t)
			}
		}
	}()
	root := conf.LocalDir(blobURL)
	if root == "" {
		tmp, err := os.MkdirTemp("", "flsweep-query-")
		if err != nil {
			return nil, err
		}
		d.tmp = append(d.tmp, tmp)
		if err := copyTables(ctx, blobURL, names, tmp); err != nil {
			return nil, err
		}
		root = tmp
	}
	empty, err := os.MkdirTemp("", "flsweep-schema-")
	if err != nil {
		return nil, err
	}
	d.tmp = append(d.tmp, empty)
	for _, n := range names {
		glob := tableGlob(root, n, store.TableRounds)
		if m, _ := filepath.Glob(glob); len(m) > 0 {
			d.Sweeps = append(d.Sweeps, n)
			continue
		}
		if !skipEmpty {
			return nil, fmt.Errorf("sweep %s has no rounds table under %s; has it run? (`starter sweep status %s`): %w", n, root, n, ErrNoTables)
		}
	}
	if len(d.Sweeps) == 0 {
		return nil, fmt.Errorf("none of the sweeps %v has tables under %s: %w", names, root, ErrNoTables)
	}
	if err := d.createViews(ctx, root, empty); err != nil {
		return nil, err
	}
	ok = true
	return d, nil
}

// Schema opens the views over no sweep: every view exists, with its
// columns, and has no rows. A query that prepares and runs on it binds
// against the tables' schemas (its tables, columns, functions and types
// exist), which is how package claims checks a claim's SQL without the
// sweeps it reads. Sweeps is empty.
func Schema(ctx context.Context) (*DB, error) {
	empty, err := os.MkdirTemp("", "flsweep-schema-")
	if err != nil {
		return nil, err
	}
	d := &DB{tmp: []string{empty}}
	if err := d.createViews(ctx, "", empty); err != nil {
		os.RemoveAll(empty)
		return nil, err
	}
	return d, nil
}

// createViews opens d's database with one view per table over the
// Parquet files of d.Sweeps under root, plus the paired view and the
// macros (macros.go). Every view also reads an empty file of its
// table's schema, written into empty, so it exists even when no sweep
// has written the table (attacks in a sweep that does not attack; points
// before the first point starts). For OpenFinished the points view keeps the
// finished points' rows, and every other view the rows of the points it
// keeps.
func (d *DB) createViews(ctx context.Context, root, empty string) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	for _, t := range Tables {
		var globs []string
		for _, n := range d.Sweeps {
			glob := tableGlob(root, n, t)
			if m, _ := filepath.Glob(glob); len(m) > 0 {
				globs = append(globs, quote(glob))
			}
		}
		e := filepath.Join(empty, string(t)+".parquet")
		if err := writeEmpty(t, e); err != nil {
			db.Close()
			return err
		}
		globs = append(globs, quote(e))
		src := fmt.Sprintf("read_parquet([%s], union_by_name = true)", strings.Join(globs, ", "))
		view := fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM %s", t, src)
		if d.finished {
			if t == store.TablePoints {
				if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+src+" WHERE status NOT IN "+finishedStatuses).Scan(&d.Unfinished); err != nil {
					db.Close()
					return fmt.Errorf("count the unfinished points: %w", err)
				}
				view += " WHERE status IN " + finishedStatuses
			} else {
				view += " AS t WHERE EXISTS (SELECT 1 FROM points AS f WHERE f.sweep = t.sweep AND f.point = t.point)"
			}
		}
		if _, err := db.ExecContext(ctx, view); err != nil {
			db.Close()
			return fmt.Errorf("create view %s: %w", t, err)
		}
	}
	if err := createMacros(ctx, db); err != nil {
		db.Close()
		return err
	}
	if err := createPaired(ctx, db); err != nil {
		db.Close()
		return err
	}
	d.DB = db
	return nil
}

// finishedStatuses are the statuses of a finished point, as SQL.
const finishedStatuses = "('" + steps.StatusDone + "', '" + steps.StatusDiverged + "')"

func tableGlob(root, name string, t store.Table) string {
	return filepath.Join(root, "sweeps", name, "*", "metrics", string(t), "*.parquet")
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// copyTables copies the sweeps' Parquet files from the bucket into dir,
// keeping their keys as paths.
func copyTables(ctx context.Context, blobURL string, names []string, dir string) error {
	st, err := store.Open(ctx, blobURL)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, name := range names {
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
	}
	return nil
}

// writeEmpty writes a Parquet file of table t's schema with no rows.
func writeEmpty(t store.Table, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	switch t {
	case store.TableRounds:
		err = parquet.Write(f, []store.RoundRow{})
	case store.TableClients:
		err = parquet.Write(f, []store.ClientRow{})
	case store.TablePartitions:
		err = parquet.Write(f, []store.PartitionRow{})
	case store.TablePoints:
		err = parquet.Write(f, []store.PointRow{})
	case store.TableAttacks:
		err = parquet.Write(f, []store.AttackRow{})
	default:
		err = fmt.Errorf("unknown table %q", t)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("schema of %s: %w", path, err)
	}
	return f.Close()
}
