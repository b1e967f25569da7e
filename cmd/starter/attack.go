package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/attack/attackbench"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/trainer"
)

// attackCommand groups the label-recovery attack commands.
func attackCommand() *command {
	return &command{name: "attack", summary: "label-recovery attacks on client updates", subs: []*command{attackBenchCommand()}}
}

// attackBenchCommand is `starter attack bench`: package attackbench on
// one setting, printed as a table or as JSON.
func attackBenchCommand() *command {
	var (
		c                 attackbench.Config
		hidden, methods   string
		asJSON            bool
		defaultMethodList = strings.Join(attackbench.DefaultMethods, ",")
	)
	return &command{
		name: "bench",
		summary: "benchmark label recovery (RLU, Chen & Vikalo ICML 2024, and its baselines) on a federation: " +
			"K clients with a Dirichlet label skew train R rounds with a scheme, then the server attacks every client's " +
			"update with an auxiliary set from the test split; prints mean and std of cAcc and iAcc per method over seeds × clients",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&c.Dataset, "dataset", "fmnist", "dataset: fmnist, mnist, mnist-subset or cifar10 (under --data-dir)")
			fs.StringVar(&c.Model, "model", trainer.ArchMLP, "model: mlp, lenet, cnn-hics, ... (trainer's zoo)")
			fs.StringVar(&hidden, "hidden", "", "mlp hidden widths, comma-separated (default 300,300, the official code's MNIST DNN)")
			fs.StringVar(&c.Activation, "activation", trainer.ActReLU, "activation of mlp and lenet: relu, tanh or sigmoid")
			fs.IntVar(&c.Batch, "batch", 64, "|B|, samples per local step")
			fs.IntVar(&c.Steps, "steps", 1, "m, local SGD steps per round (each on a fresh batch)")
			fs.StringVar(&c.Optimizer, "optimizer", attackbench.SchemeSGD, "local scheme: "+strings.Join(attackbench.Schemes, ", ")+" (adam's rows are heuristic)")
			fs.Float64Var(&c.LR, "lr", 0.01, "η, the local learning rate")
			fs.Float64Var(&c.Gamma, "gamma", 0, "momentum γ of momentum and nesterov (default 0.9)")
			fs.Float64Var(&c.Mu, "mu", 0, "the scheme's coefficient: fedprox μ (default 0.5), feddyn α and feddc λ (default 0.01)")
			fs.Float64Var(&c.Alpha, "alpha", 0.5, "Dirichlet concentration of the clients' label skew (smaller is more skewed)")
			fs.IntVar(&c.Clients, "clients", 10, "clients, all trained in every round")
			fs.IntVar(&c.AuxPerClass, "aux-per-class", 100, "the server's labelled samples per class, drawn from the test split")
			fs.IntVar(&c.TrainRounds, "train-rounds", 0, "FL rounds with the scheme before the attacked round (0: an untrained model)")
			fs.IntVar(&c.Seeds, "seeds", 3, "seeds 1..s; each its own partition, initial model and draws")
			fs.StringVar(&methods, "methods", defaultMethodList, "comma-separated methods: "+strings.Join(attack.Names(), ","))
			fs.BoolVar(&asJSON, "json", false, `print {"results":[{"method","cacc","iacc","cacc_std","iacc_std",...}]}`)
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("attack bench takes flags only, not %q: %w", args, errUsage)
			}
			var err error
			if c.Hidden, err = parseWidths(hidden); err != nil {
				return err
			}
			c.Methods = strings.Split(methods, ",")
			c.DataDir = g.dataDir
			// Only --gamma, --mu and --hidden take their defaults from
			// Defaults; the other flags have theirs, so an explicit
			// --batch 0 is an error, not the default.
			d := c.Defaults()
			c.Gamma, c.Mu, c.Hidden = d.Gamma, d.Mu, d.Hidden
			if err := c.Validate(); err != nil {
				return fmt.Errorf("%w: %w", err, errUsage)
			}
			rep, err := attackbench.Run(ctx, c, attackbench.Env{Trainer: trainer.New(&trainer.Options{Kernels: g.kernels}), Data: dataset.NewCache(), Progress: os.Stderr})
			switch {
			case errors.Is(err, dataset.ErrNotFound):
				return fmt.Errorf("%w (or pass --data-dir with the directory holding %s/)", err, c.Dataset)
			case err != nil:
				return err
			}
			if asJSON {
				enc := json.NewEncoder(g.out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printAttackBench(g, c, rep)
			return nil
		},
	}
}

// parseWidths parses --hidden; "" is nil (the default).
func parseWidths(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("--hidden %q: want comma-separated widths ≥ 1 such as 300,300: %w", s, errUsage)
		}
		out = append(out, v)
	}
	return out, nil
}

// printAttackBench prints the setting and one row per method.
func printAttackBench(g *globals, c attackbench.Config, rep *attackbench.Report) {
	model := c.Model
	if c.Hidden != nil {
		model = fmt.Sprintf("%s %v", c.Model, c.Hidden)
	}
	scheme := c.Optimizer
	switch {
	case c.Gamma != 0:
		scheme = fmt.Sprintf("%s γ %g", c.Optimizer, c.Gamma)
	case c.Mu != 0:
		scheme = fmt.Sprintf("%s μ %g", c.Optimizer, c.Mu)
	}
	fmt.Fprintf(g.out, "%s, %s (%s), |B| %d, m %d, %s, η %g, α %g, %d clients, aux %d/class, %d training rounds, %d seeds",
		c.Dataset, model, c.Activation, c.Batch, c.Steps, scheme, c.LR, c.Alpha, c.Clients, c.AuxPerClass, c.TrainRounds, c.Seeds)
	if len(rep.Results) > 0 {
		fmt.Fprintf(g.out, "; test accuracy of the attacked model %.3f", rep.Results[0].GlobalAcc)
	}
	fmt.Fprint(g.out, "\n\n")
	tw := tabwriter.NewWriter(g.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "method\tn\tcAcc\t± std\tiAcc\t± std\tnote")
	for _, r := range rep.Results {
		note := ""
		if r.Heuristic {
			note = "heuristic: the scheme is outside the method's model"
		}
		if r.NotApplicable > 0 {
			note = strings.TrimPrefix(note+fmt.Sprintf("; %d attacks not applicable", r.NotApplicable), "; ")
		}
		if r.N == 0 {
			fmt.Fprintf(tw, "%s\t0\t–\t\t–\t\t%s\n", r.Method, note)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%s\n", r.Method, r.N, *r.CAcc, *r.CAccStd, *r.IAcc, *r.IAccStd, note)
	}
	tw.Flush()
}
