package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

func runCommand() *command {
	var file string
	var local bool
	var workers int
	var cpuprofile string
	var timings bool
	var only string
	return &command{
		name: "run", summary: "run a sweep's points in this process, without Temporal, run.concurrency at once (debugging, benchmarks, parity)",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&file, "f", "", "sweep spec (YAML)")
			fs.BoolVar(&local, "local", false, "run in-process (required: the only mode of run)")
			fs.IntVar(&workers, "workers", 0, "clients trained at once (0: one per core)")
			fs.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
			fs.BoolVar(&timings, "timings", false, "print where the time went: each step's calls and time, the blob store's reads and writes, the peak memory")
			fs.StringVar(&only, "only", "", "run only the points whose label or ID matches this regular expression (RE2), e.g. 'algorithm=fedavg .*seed=[01]$'; the rest of the sweep stays pending")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if file == "" || !local || len(args) > 0 {
				return fmt.Errorf("run needs -f SPEC.yaml --local: %w", errUsage)
			}
			sw, data, err := loadSpec(file, nil)
			if err != nil {
				return err
			}
			keep, err := pointFilter(only, sw.Points)
			if err != nil {
				return err
			}
			if cpuprofile != "" {
				f, err := os.Create(cpuprofile)
				if err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			st, err := store.Open(ctx, g.blob)
			if err != nil {
				return err
			}
			defer st.Close()
			eng := engine.New(st, &engine.Options{DataDir: g.dataDir, Workers: workers, Version: g.build(), Kernels: g.kernels})
			var lines []pointLine
			index := map[string]int{}
			rounds := 0
			for _, p := range sw.Points {
				if keep != nil && !keep[p.ID] {
					continue
				}
				index[p.ID] = len(lines)
				lines = append(lines, pointLine{Label: p.Label, ID: p.ID, Status: steps.StatusPending, Rounds: p.Config.Rounds})
				rounds += p.Config.Rounds
			}
			var filter func(steps.PointInfo) bool
			if keep != nil {
				filter = func(p steps.PointInfo) bool { return keep[p.ID] }
			}
			r := newRenderer(g.out)
			start := time.Now()
			var mu sync.Mutex // points run at once (run.concurrency) report from their goroutines
			_, err = eng.RunPoints(ctx, steps.PlanSweepInput{File: file, Spec: data}, filter, func(p engine.Progress) {
				mu.Lock()
				defer mu.Unlock()
				l := &lines[index[p.Point.ID]]
				if p.Status == steps.StatusFailed {
					l.Status = p.Status // its bar keeps the rounds it ran
				} else {
					l.Round, l.Rounds, l.TestAcc, l.HasAcc, l.Status = p.Round, p.Rounds, p.TestAcc, true, p.Status
				}
				r.draw("run "+sw.Name, lines, "", p.Done)
			})
			r.draw("run "+sw.Name, lines, "", true)
			if err != nil {
				return err
			}
			tr, wall := st.Traffic(), time.Since(start)
			fmt.Fprintf(g.out, "\nran %d points in %s; blob store: %.1f MB written, %.1f MB read (%.2f MB and %.2f MB per round)\n\n",
				len(lines), wall.Round(time.Millisecond), mb(tr.Written), mb(tr.Read), mb(tr.Written)/float64(rounds), mb(tr.Read)/float64(rounds))
			if timings {
				printTimings(g.out, eng.StepTimes(), tr, rounds, wall)
				fmt.Fprintln(g.out)
			}
			return printResults(ctx, g, sw.Name, false, nil)
		},
	}
}

// pointFilter compiles run's --only: the IDs of the points whose label or ID
// matches expr, or nil for every point when expr is empty. An expression
// that does not compile, or matches no point, is a usage error.
func pointFilter(expr string, points []sweep.Point) (map[string]bool, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--only %q is not a regular expression (RE2 syntax): %v: %w", expr, err, errUsage)
	}
	keep := map[string]bool{}
	for _, p := range points {
		if re.MatchString(p.Label) || re.MatchString(p.ID) {
			keep[p.ID] = true
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("--only %q matches none of the sweep's %d points (`starter validate -f SPEC` lists their labels and IDs): %w", expr, len(points), errUsage)
	}
	return keep, nil
}

func validateCommand() *command {
	var file string
	return &command{
		name: "validate", summary: "check a sweep spec and list its points, without running anything",
		flags: func(fs *flag.FlagSet) { fs.StringVar(&file, "f", "", "sweep spec (YAML)") },
		run: func(ctx context.Context, g *globals, args []string) error {
			if file == "" || len(args) > 0 {
				return fmt.Errorf("validate needs -f SPEC.yaml: %w", errUsage)
			}
			sw, _, err := loadSpec(file, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.out, "%s: sweep %s, %d point(s)\n", file, sw.Name, len(sw.Points))
			for _, p := range sw.Points {
				fmt.Fprintf(g.out, "  %s  %s\n", p.ID, p.Label)
			}
			return nil
		},
	}
}

func mb(bytes int64) float64 { return float64(bytes) / 1e6 }
