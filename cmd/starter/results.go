package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"golang.org/x/sync/errgroup"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/workflows"
)

// pointResult is a point's line in the results table.
type pointResult struct {
	Index   int     `json:"index"`
	ID      string  `json:"id"`
	Label   string  `json:"label"`
	Status  string  `json:"status"`
	Rounds  int     `json:"rounds_done"`
	Of      int     `json:"rounds"`
	TestAcc float64 `json:"test_acc"`
	Model   string  `json:"model_sha256"`
	Error   string  `json:"error,omitempty"`
}

// printResults reads a sweep's spec and each point's DONE.json or latest
// commit from blob storage and prints a table. A point without DONE.json is
// stopped if its points row says so, else incomplete.
//
// live, when not nil, holds the statuses the sweep workflow reported; a point
// that failed there (and so left nothing in storage) shows as failed, with
// its error.
func printResults(ctx context.Context, g *globals, name string, asJSON bool, live map[string]workflows.PointStatus) error {
	st, err := store.Open(ctx, g.blob)
	if err != nil {
		return err
	}
	defer st.Close()
	sk, err := store.SweepKeys(name)
	if err != nil {
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	var ss engine.StoredSweep
	if err := st.GetJSON(ctx, sk.Spec(), &ss); err != nil {
		if live != nil && errors.Is(err, store.ErrNotFound) {
			// The sweep ran, but its workers wrote elsewhere: workers of
			// another bucket serve this queue (another checkout's dev
			// server and worker on the same port), or the bucket was
			// emptied since.
			return fmt.Errorf("sweep %s ran on the Temporal server at %s (queue %q), but %s holds none of its results: "+
				"the workers serving that queue write to another bucket (is another checkout's dev server and worker answering on %s?) or this bucket was emptied; "+
				"pass that bucket with --blob, or stop the other workers (`make down` in their checkout) and start the sweep under a new name: %w",
				name, g.temporal.Address, g.queue, g.blob, g.temporal.Address, err)
		}
		return fmt.Errorf("sweep %s has no results in %s: %w", name, g.blob, err)
	}
	// One point's reads at a time would take minutes for a large sweep on
	// a remote bucket: 16 at a time.
	rows := make([]pointResult, len(ss.Sweep.Points))
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(16)
	for i, p := range ss.Sweep.Points {
		pk, err := sk.Point(p.ID)
		if err != nil {
			return err
		}
		eg.Go(func() error {
			row := pointResult{Index: p.Index, ID: p.ID, Label: p.Label, Of: p.Config.Rounds, Status: steps.StatusPending}
			var done steps.PointResult
			switch err := st.GetJSON(ectx, pk.Done(), &done); {
			case err == nil:
				row.Status, row.Rounds, row.TestAcc, row.Model = done.Status, done.RoundsDone, done.TestAcc, done.ModelSHA256
			case errors.Is(err, store.ErrNotFound):
				last, c, err := st.LastCommitted(ectx, pk)
				if err != nil {
					return err
				}
				if c != nil {
					row.Status, row.Rounds, row.Model = "incomplete", last, c.GlobalSHA256
					if row.TestAcc, err = st.LatestAccuracy(ectx, pk, *c, p.Config.EvalEvery); err != nil {
						return err
					}
					// A stopped point has no DONE.json (a later run continues
					// it); its points row says it was stopped.
					if pr, err := store.ReadRows[store.PointRow](ectx, st, pk.Compacted(store.TablePoints)); err == nil &&
						len(pr) == 1 && pr[0].Status == steps.StatusStopped && int(pr[0].RoundsDone) == last {
						row.Status = steps.StatusStopped
					}
				}
			default:
				return err
			}
			if l, ok := live[p.ID]; ok && l.Status == steps.StatusFailed {
				row.Status, row.Error = steps.StatusFailed, l.Error
			}
			rows[i] = row
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(g.out).Encode(rows)
	}
	tw := tabwriter.NewWriter(g.out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POINT\tLABEL\tSTATUS\tROUNDS\tTEST ACC\tMODEL")
	for _, r := range rows {
		model := r.Model
		if len(model) > 12 {
			model = model[:12]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%.4f\t%s\n", r.ID, r.Label, r.Status, r.Rounds, r.Of, r.TestAcc, model)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(g.out, "\npoint %s (%s) failed: %s\n", r.ID, r.Label, r.Error)
		}
	}
	if dir := conf.LocalDir(g.blob); dir != "" {
		tables := filepath.Join(dir, "sweeps", name, "*", "metrics")
		fmt.Fprintf(g.out, "\nParquet tables: %s/{rounds,clients,partitions,points}/*.parquet\n", tables)
	} else {
		fmt.Fprintf(g.out, "\nParquet tables: %s under sweeps/%s/<point>/metrics/<table>/\n", g.blob, name)
	}
	fmt.Fprintf(g.out, "SQL: starter sweep query %s \"SELECT round, avg(test_acc) FROM rounds WHERE evaluated GROUP BY 1 ORDER BY 1\"\n", name)
	return nil
}
