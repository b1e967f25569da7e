package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// tinyAttack are flags of a fast setting on the synthetic data.
var tinyAttack = []string{"--dataset", "synthetic", "--hidden", "16", "--clients", "4", "--aux-per-class", "10", "--seeds", "2"}

// TestAttackBenchJSON checks the JSON shape of `starter attack bench
// --json`: an object with one key, results, each result with the method
// and numbers cacc, iacc, cacc_std, iacc_std; null scores for a method that
// never applied (iDLG on batches), with its count of not applicable.
func TestAttackBenchJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	args := append([]string{"attack", "bench", "--json", "--methods", "rlu,idlg"}, tinyAttack...)
	if err := execute(context.Background(), root(), args, &out, &errOut); err != nil {
		t.Fatalf("attack bench: %v\n%s", err, errOut.String())
	}
	var m map[string][]map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, out.String())
	}
	if len(m) != 1 || len(m["results"]) != 2 {
		t.Fatalf("output %s; want {\"results\": [two methods]}", out.String())
	}
	for i, want := range []string{"rlu", "idlg"} {
		r := m["results"][i]
		if r["method"] != want {
			t.Errorf("results[%d].method = %v; want %s", i, r["method"], want)
		}
		for _, k := range []string{"cacc", "iacc", "cacc_std", "iacc_std"} {
			v, ok := r[k]
			if !ok {
				t.Errorf("results[%d] has no %s", i, k)
				continue
			}
			if _, num := v.(float64); num != (want == "rlu") {
				t.Errorf("results[%d].%s = %v; want a number for rlu and null for idlg", i, k, v)
			}
		}
	}
	if r := m["results"][0]; r["n"] != 8.0 || r["iacc"].(float64) < 0.9 {
		t.Errorf("rlu result %v; want n = 8 (2 seeds × 4 clients) and iacc ≥ 0.9", r)
	}
	if r := m["results"][1]; r["not_applicable"] != 8.0 {
		t.Errorf("idlg result %v; want not_applicable = 8", r)
	}
}

// TestAttackBenchTable checks the table of every scheme, with the
// defaults of --gamma and --mu: a header naming the setting and one line
// per method.
func TestAttackBenchTable(t *testing.T) {
	for _, o := range []string{"sgd", "momentum", "nesterov", "fedprox", "scaffold", "feddyn", "feddc", "adam"} {
		var out, errOut bytes.Buffer
		args := append([]string{"attack", "bench", "--methods", "rlu,zlg+", "--optimizer", o, "--steps", "2"}, tinyAttack...)
		if err := execute(context.Background(), root(), args, &out, &errOut); err != nil {
			t.Errorf("attack bench --optimizer %s: %v\n%s", o, err, errOut.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 5 || !strings.HasPrefix(lines[0], "synthetic, mlp [16]") || !strings.Contains(lines[0], ", "+o) ||
			!strings.HasPrefix(lines[3], "rlu ") || !strings.HasPrefix(lines[4], "zlg+ ") {
			t.Errorf("table:\n%s\nwant a header naming %s, a blank line, column names and rows rlu and zlg+", out.String(), o)
		}
	}
}

// TestAttackBenchFlags checks that bad flags are usage errors naming the
// flag and the fix.
func TestAttackBenchFlags(t *testing.T) {
	tests := []struct {
		give []string
		want string
	}{
		{[]string{"--dataset", "svhn"}, "--dataset"},
		{[]string{"--optimizer", "rmsprop"}, "--optimizer"},
		{[]string{"--activation", "gelu"}, "--activation"},
		{[]string{"--batch", "0"}, "--batch"},
		{[]string{"--steps", "-1"}, "--steps"},
		{[]string{"--alpha", "-0.5"}, "--alpha"},
		{[]string{"--aux-per-class", "-1"}, "--aux-per-class"},
		{[]string{"--train-rounds", "-3"}, "--train-rounds"},
		{[]string{"--seeds", "-1"}, "--seeds"},
		{[]string{"--methods", "rlu,nope"}, "--methods"},
		{[]string{"--hidden", "3x"}, "--hidden"},
		{[]string{"--mu", "0.5"}, "--mu"},
		{[]string{"--gamma", "0.5"}, "--gamma"},
		{[]string{"--batch", "many"}, "-batch"},
		{[]string{"extra"}, "flags only"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.give, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append(append([]string{"attack", "bench"}, tinyAttack...), tt.give...)
			err := execute(context.Background(), root(), args, &out, &errOut)
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("attack bench %v: error %v; want a usage error naming %s", tt.give, err, tt.want)
			}
		})
	}
	// The datasets a user can fetch are on the help line.
	var out, errOut bytes.Buffer
	_ = execute(context.Background(), root(), []string{"attack", "bench", "--help"}, &out, &errOut)
	if help := errOut.String(); !strings.Contains(help, "fmnist, mnist, mnist-subset or cifar10") {
		t.Errorf("help:\n%s\nwant the datasets listed", help)
	}
}
