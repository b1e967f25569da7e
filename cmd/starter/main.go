// Command starter is the user's CLI: start, watch, resume and cancel sweeps
// on Temporal, run them in-process, fetch datasets, and print results.
//
//	starter sweep start -f SPEC.yaml [--wait]
//	starter sweep status NAME [--json | --watch]
//	starter sweep pause|unpause|stop NAME [--point ID]
//	starter sweep resume NAME [--wait]
//	starter sweep cancel NAME
//	starter sweep results NAME [--json]
//	starter sweep query NAME[,NAME...] [SQL] [--format table|csv|json]
//	starter query --sweep NAME [--sweep NAME ...]|--all [--format table|csv|json] [SQL]
//	starter report SWEEP [-o DIR] [--target ACC] [--claims DIR]
//	starter claims [FILE|DIR ...] [--format table|markdown|json] [--check]
//	starter run -f SPEC.yaml --local
//	starter validate -f SPEC.yaml
//	starter data fetch fmnist|mnist|mnist-subset [--dir D] [--from DIR]
//	starter sampling stats --scheme S --n N --m M --p equal|ratio|FILE [--json]
//	starter tls-certs --dir DIR [--hosts localhost,127.0.0.1]
//	starter attack bench --dataset D --model M --steps m --optimizer O ... [--json]
//
// Every command takes --help, and the global flags --address, --namespace,
// --queue, --blob and --data-dir, and the Temporal client's TLS and API-key
// flags --tls, --tls-client-cert-path, --tls-client-key-path,
// --tls-server-ca-cert-path, --tls-server-name,
// --tls-disable-host-verification, --api-key (or their environment
// variables, the names of Temporal's envconfig: TEMPORAL_TLS, ...).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/temporalclient"
	"github.com/flsweep/flsweep/trainer"
)

// command is a node of the command tree: a group with subcommands or a leaf
// that runs.
type command struct {
	name    string
	args    string // argument synopsis, e.g. "NAME"
	summary string
	flags   func(fs *flag.FlagSet)
	run     func(ctx context.Context, g *globals, args []string) error
	subs    []*command
}

// globals are the flags every leaf command accepts.
type globals struct {
	temporal                 temporalclient.Config // address, namespace, TLS, API key
	queue, blob, dataDir, ui string
	out                      io.Writer
	// kernels is the trainer's kernel choice, from the environment
	// (trainer.KernelChoiceFromEnv: FLSWEEP_GEMM, FLSWEEP_CONV, ...).
	kernels trainer.KernelChoice
}

func (g *globals) register(fs *flag.FlagSet) {
	g.temporal = temporalclient.FromEnv()
	g.temporal.Flags(fs)
	fs.StringVar(&g.queue, "queue", conf.Queue(), "task queue of the sweep workflows (env "+conf.EnvQueue+")")
	fs.StringVar(&g.blob, "blob", conf.BlobURL(), "blob bucket URL, or a local directory (env "+conf.EnvBlob+")")
	fs.StringVar(&g.dataDir, "data-dir", conf.DataDir(), "dataset directory (env "+conf.EnvDataDir+")")
	fs.StringVar(&g.ui, "ui", envOr("TEMPORAL_UI", "http://localhost:"+envOr("TEMPORAL_UI_PORT", "8233")), "Temporal UI base URL, for links (env TEMPORAL_UI; default http://localhost:$TEMPORAL_UI_PORT, the dev server's UI port, 8233 when unset)")
}

// errUsage marks an error in how a command was called (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := execute(ctx, root(), os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "starter:", strings.TrimSuffix(err.Error(), ": usage"))
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}

func root() *command {
	return &command{name: "starter", summary: "run federated-learning sweeps on Temporal", subs: []*command{
		sweepCommand(),
		sweepsQueryCommand(),
		runCommand(),
		validateCommand(),
		dataCommand(),
		partitionCommand(),
		benchCommand(),
		samplingCommand(),
		attackCommand(),
		reportCommand(),
		claimsCommand(),
		tlsCertsCommand(),
	}}
}

// execute dispatches args down the command tree.
func execute(ctx context.Context, c *command, args []string, out, errOut io.Writer) error {
	path := c.name
	for len(c.subs) > 0 {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			groupUsage(errOut, path, c)
			if len(args) == 0 {
				return fmt.Errorf("%s needs a command: %w", path, errUsage)
			}
			return flag.ErrHelp
		}
		var next *command
		for _, s := range c.subs {
			if s.name == args[0] {
				next = s
			}
		}
		if next == nil {
			groupUsage(errOut, path, c)
			return fmt.Errorf("%s: unknown command %q: %w", path, args[0], errUsage)
		}
		c, args, path = next, args[1:], path+" "+next.name
	}
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(errOut)
	g := &globals{out: out}
	g.register(fs)
	if c.flags != nil {
		c.flags(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(errOut, "usage: %s [flags] %s\n\n%s\n\nflags:\n", path, c.args, c.summary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	g.blob = bucketURL(g.blob)
	k, err := trainer.KernelChoiceFromEnv()
	if err != nil {
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	g.kernels = k
	return c.run(ctx, g, fs.Args())
}

// interleave moves flags that follow positional arguments to the front, so
// that "sweep status demo --json" works like "sweep status --json demo".
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		// A word with blanks in its name is no flag: SQL that opens with a
		// "--" comment, say.
		name, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") || a == "-" || strings.ContainsAny(name, " \t\n") {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name = strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	// "--" ends the flags, so that fs.Parse takes what follows as it is.
	return append(append(flags, "--"), pos...)
}

func groupUsage(w io.Writer, path string, c *command) {
	fmt.Fprintf(w, "usage: %s <command> [flags] [args]\n\n%s\n\ncommands:\n", path, c.summary)
	for _, s := range c.subs {
		fmt.Fprintf(w, "  %-10s %s\n", s.name, s.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", path)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// needArgs checks the number of positional arguments.
func needArgs(args []string, n int, synopsis string) error {
	if len(args) != n {
		return fmt.Errorf("want %s, got %d arguments: %w", synopsis, len(args), errUsage)
	}
	return nil
}

// build is the build this starter records for what it computes in-process
// and compares with a sweep's: conf.Version, suffixed with what decides the
// bits on this machine besides it under its kernel choice
// (KernelChoice.Numerics: "" on the default path), as the worker's.
func (g *globals) build() string { return conf.Version + g.kernels.Numerics() }
