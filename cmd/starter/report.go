package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/flsweep/flsweep/report"
	"github.com/flsweep/flsweep/sweep"
)

func reportCommand() *command {
	var dir, claimsDir string
	var target float64
	var flags *flag.FlagSet // to tell a --claims given from its default
	return &command{
		name: "report", args: "SWEEP",
		summary: "write an HTML report of a sweep (finished or running): accuracy and loss per method, rounds to target, client fairness, sampler composition, attacks, partitions",
		flags: func(fs *flag.FlagSet) {
			flags = fs
			fs.StringVar(&dir, "o", "", "output directory (default report-SWEEP)")
			fs.Float64Var(&target, "target", 0, fmt.Sprintf("test accuracy for the rounds-to-target table (default %g × the best final mean accuracy)", report.DefaultTargetShare))
			fs.StringVar(&claimsDir, "claims", defaultClaimsDir, "directory of claims files (DIR/claims.yaml, DIR/*/claims.yaml): the page shows the claims that read the sweep; '' for none")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if err := needArgs(args, 1, "SWEEP"); err != nil {
				return err
			}
			name := args[0]
			if err := sweep.ValidName(name); err != nil {
				return fmt.Errorf("%v: %w", err, errUsage)
			}
			if target < 0 || target > 1 {
				return fmt.Errorf("--target %g: give a test accuracy in [0, 1], e.g. 0.8: %w", target, errUsage)
			}
			if dir == "" {
				dir = "report-" + name
			}
			explicit := false
			flags.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "claims" })
			cs, err := reportClaims(ctx, g.blob, claimsDir, name, explicit)
			if err != nil {
				return err
			}
			r, err := report.Build(ctx, g.blob, name, report.Options{Target: target, Claims: cs})
			if err != nil {
				return err
			}
			if err := report.Write(r, dir); err != nil {
				return err
			}
			page := filepath.Join(dir, "index.html")
			if abs, err := filepath.Abs(page); err == nil {
				page = abs
			}
			fmt.Fprintf(g.out, "%d points (%d unfinished), %d methods: file://%s\n", len(r.Points), len(r.Unfinished()), len(r.Methods), page)
			return nil
		},
	}
}
