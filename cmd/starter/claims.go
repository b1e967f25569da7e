package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flsweep/flsweep/claims"
)

// defaultClaimsDir is where `starter claims` and `starter report` look for
// claims files by default: experiments/*/claims.yaml.
const defaultClaimsDir = "experiments"

// claimsCommand is `starter claims`: the papers' headline claims with the
// paper's value, ours from the bucket's sweeps and a verdict.
func claimsCommand() *command {
	var format string
	var check bool
	return &command{
		name: "claims", args: "[FILE|DIR ...]",
		summary: "print the papers' headline claims (default: every " + defaultClaimsDir + "/*/" + claims.FileName + ") with the paper's value, " +
			"ours from the sweeps of the bucket with its 95% interval, and a verdict: reproduced, direction only, not reproduced or not run. " +
			"A claim whose SQL fails is an error (exit status 1)",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&format, "format", "table", "output: table (aligned), markdown (the README's table) or json (one result per line)")
			fs.BoolVar(&check, "check", false, "only check that every claim's SQL runs on the tables' schemas (no bucket read)")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			write, ok := claimsWriters[format]
			if !ok {
				return fmt.Errorf("--format %q: want table, markdown or json: %w", format, errUsage)
			}
			if len(args) == 0 {
				args = []string{defaultClaimsDir}
			}
			files, err := claims.LoadAll(args)
			if err != nil {
				return err
			}
			if check {
				if err := claims.Check(ctx, files); err != nil {
					return err
				}
				n := 0
				for _, f := range files {
					n += len(f.Claims)
				}
				fmt.Fprintf(g.out, "%d claims in %d files: every SQL runs on the tables' schemas\n", n, len(files))
				return nil
			}
			rs, err := claims.Evaluate(ctx, g.blob, files)
			if rs == nil {
				return err
			}
			if werr := write(g.out, rs); werr != nil {
				return werr
			}
			return err
		},
	}
}

// claimsWriters print results in each --format.
var claimsWriters = map[string]func(io.Writer, []claims.Result) error{
	"table":    writeClaimsTable,
	"markdown": writeClaimsMarkdown,
	"json":     writeClaimsJSON,
}

// writeClaimsTable prints one aligned line per claim; the reason for a
// claim that did not run (or failed) ends its line.
func writeClaimsTable(w io.Writer, rs []claims.Result) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PAPER\tCLAIM\tSOURCE\tPAPER'S VALUE\tREPRODUCED IF\tOURS\tVERDICT\tWHY")
	for _, r := range rs {
		c := r.Claim
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Paper, c.ID, c.Source, c.PaperValue(), c.Criterion(), r.OursText(), r.Verdict, reason(r))
	}
	return tw.Flush()
}

// reason is why a claim did not run, or its error; else which of its
// sweeps were missing.
func reason(r claims.Result) string {
	var why []string
	if r.Reason != "" {
		why = append(why, r.Reason)
	} else if len(r.Missing) > 0 {
		why = append(why, "without "+strings.Join(r.Missing, ", "))
	}
	if s := r.Remarks(); s != "" {
		why = append(why, s)
	}
	return strings.Join(why, "; ")
}

// writeClaimsMarkdown prints the README's table: per paper, one row per
// claim.
func writeClaimsMarkdown(w io.Writer, rs []claims.Result) error {
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	var b strings.Builder
	b.WriteString("| paper | claim | source | paper's value | reproduced if | ours | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		c := r.Claim
		verdict := string(r.Verdict)
		if r.Verdict == claims.Failed || (r.Verdict == claims.NotRun && len(r.Read) > 0) {
			verdict += ": " + r.Reason
		}
		if s := r.Remarks(); s != "" {
			verdict += " (" + s + ")"
		}
		fmt.Fprintf(&b, "| %s | %s (`%s`) | %s | %s | %s | %s | %s |\n", cell(r.Paper), cell(c.Claim), c.ID, cell(c.Source),
			cell(c.PaperValue()), cell(c.Criterion()), cell(r.OursText()), cell(verdict))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeClaimsJSON prints one JSON object (a claims.Result) per line.
func writeClaimsJSON(w io.Writer, rs []claims.Result) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// reportClaims loads the claims files under dir that read sweep name and
// evaluates them, for `starter report`. An empty dir means none; so does
// the default dir (explicit false) when it does not exist or holds no
// claims file. A claims file that does not parse, or a claim whose SQL
// fails, is an error.
func reportClaims(ctx context.Context, blob, dir, name string, explicit bool) ([]claims.Result, error) {
	if dir == "" {
		return nil, nil
	}
	if !explicit {
		if _, err := claims.Find([]string{dir}); err != nil {
			return nil, nil
		}
	}
	files, err := claims.LoadAll([]string{dir})
	if err != nil {
		return nil, fmt.Errorf("--claims: %w", err)
	}
	var reading []*claims.File
	for _, f := range files {
		if g := f.Reading(name); g != nil {
			reading = append(reading, g)
		}
	}
	if len(reading) == 0 {
		return nil, nil
	}
	rs, err := claims.Evaluate(ctx, blob, reading)
	if err != nil {
		return nil, fmt.Errorf("the claims that read sweep %s: %w (fix the claim, or give --claims '' to leave the claims out)", name, err)
	}
	return rs, nil
}
