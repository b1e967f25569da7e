package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/store"
)

// archiveCommand is `sweep archive --to DIR NAME...`: the finished points'
// results of sweeps, copied into a small bucket of their own
// (results.Archive) that query, claims and the paired view read with
// --blob DIR.
func archiveCommand() *command {
	var to string
	var replace bool
	return &command{
		name: "archive", args: "NAME [NAME ...]",
		summary: "copy the results (Parquet tables, DONE.json, config.json, spec.json) of the sweeps' finished points into another bucket or a directory, without checkpoints or states, for `--blob DIR` of query and claims (experiments/archive holds the experiments')",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&to, "to", "", "the archive: a directory or a bucket URL (required)")
			fs.BoolVar(&replace, "replace", false, "overwrite archived files whose bytes differ from the bucket's (a re-run point)")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if to == "" || len(args) == 0 {
				return fmt.Errorf("sweep archive needs --to DIR and at least one sweep NAME: %w", errUsage)
			}
			return archiveSweeps(ctx, g, bucketURL(to), args, replace)
		},
	}
}

func archiveSweeps(ctx context.Context, g *globals, to string, names []string, replace bool) error {
	src, err := store.Open(ctx, g.blob)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := store.Open(ctx, to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dst.Close()
	st, err := results.Archive(ctx, src, dst, names, replace)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.out, "archived %d finished points of %s (left out: %d started and not finished, %d not started): %d files written (%.1f MB), %d already there\n",
		st.Points, strings.Join(names, ", "), st.Started, st.Skipped-st.Started, st.Copied, float64(st.Bytes)/1e6, st.Same)
	return nil
}

// bucketURL reads a bucket flag: a URL (file://, s3://, mem://) as it is,
// anything else as a local directory.
func bucketURL(s string) string {
	if strings.Contains(s, "://") {
		return s
	}
	return conf.DirURL(s)
}
