package main

import (
	"flag"
	"slices"
	"testing"
)

// TestInterleave: flags anywhere among the arguments; "--" ends them, and
// a word with blanks (SQL opening with a "--" comment) is an argument.
func TestInterleave(t *testing.T) {
	sql := "-- the mean\nSELECT 1"
	for _, tt := range []struct {
		args []string
		pos  []string
	}{
		{[]string{"--sweep", "a", sql}, []string{sql}},
		{[]string{sql, "--sweep", "a"}, []string{sql}},
		{[]string{"--sweep", "a", "--", "--not-a-flag"}, []string{"--not-a-flag"}},
		{[]string{"x", "--all", "y"}, []string{"x", "y"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		sweep := fs.String("sweep", "", "")
		all := fs.Bool("all", false, "")
		if err := fs.Parse(interleave(fs, tt.args)); err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !slices.Equal(fs.Args(), tt.pos) {
			t.Errorf("%q: arguments %q; want %q", tt.args, fs.Args(), tt.pos)
		}
		if *sweep != "a" && !*all {
			t.Errorf("%q: the flags were not parsed", tt.args)
		}
	}
}
