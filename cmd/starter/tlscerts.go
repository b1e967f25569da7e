package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/flsweep/flsweep/conf/tlscert"
)

// tlsCertsCommand writes a private CA with a server and a client certificate,
// for a TLS-enabled Temporal frontend on a lab's own network (the production
// stack's STACK_TLS uses it).
func tlsCertsCommand() *command {
	var dir, hosts string
	var days int
	return &command{
		name: "tls-certs", summary: "write a private CA, a server certificate and a client certificate (PEM) for a TLS/mTLS Temporal frontend",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&dir, "dir", "", "directory to write ca.pem, server.pem, client.pem and their keys into")
			fs.StringVar(&hosts, "hosts", "localhost,127.0.0.1", "comma-separated DNS names and IP addresses of the server certificate")
			fs.IntVar(&days, "days", 365, "validity in days")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if dir == "" || len(args) > 0 {
				return fmt.Errorf("tls-certs needs --dir DIR: %w", errUsage)
			}
			if days < 1 {
				return fmt.Errorf("--days = %d: want at least 1: %w", days, errUsage)
			}
			var hs []string
			for _, h := range strings.Split(hosts, ",") {
				if h = strings.TrimSpace(h); h != "" {
					hs = append(hs, h)
				}
			}
			if len(hs) == 0 {
				return fmt.Errorf("--hosts is empty: name the server's hosts, e.g. localhost,127.0.0.1: %w", errUsage)
			}
			f, err := tlscert.Generate(dir, hs, time.Duration(days)*24*time.Hour)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.out, "CA %s (key %s)\nserver %s (key %s) for %s\nclient %s (key %s)\n",
				f.CA, f.CAKey, f.Server, f.ServerKey, strings.Join(hs, ", "), f.Client, f.ClientKey)
			return nil
		},
	}
}
