package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// runStats runs `starter sampling stats args... --json` and decodes its JSON.
func runStats(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	err := execute(context.Background(), root(), append([]string{"sampling", "stats", "--json"}, args...), &out, &errOut)
	if err != nil {
		t.Fatalf("sampling stats %v: %v\n%s", args, err, errOut.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, out.String())
	}
	return m
}

var statKeys = []string{"sigma", "alpha", "var_sum", "gamma", "expected_clients"}

// TestSamplingStats runs the command on the acceptance configurations of
// specs/sampling-theory.md §9 (n = 10, m = 5; P2 p_i = i/55 from a file of
// unnormalised values i, P1 equal) and checks its JSON: the closed forms are
// the package's (and the spec's known values), the Monte-Carlo estimates over
// 20,000 rounds are within 3% + 0.006 of them (α̂ of an α = 0 scheme has an SE
// near 0.0012 here; the others are below 1%), the
// plain keys equal the closed forms, and Sp2, the threshold and Corollary 1's
// verdict are right.
func TestSamplingStats(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p2.txt")
	if err := os.WriteFile(file, []byte("# p_i = i/55, unnormalised\n1\n2\n3\n4\n5\n\n6\n7\n8\n9\n10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p2 := make([]float64, 10)
	for i := range p2 {
		p2[i] = float64(i+1) / 55
	}
	p1 := make([]float64, 10)
	for i := range p1 {
		p1[i] = 0.1
	}
	tests := []struct {
		scheme, p string
		give      []float64
		cf        sampling.ClosedForm
		wantSigma float64 // §9 B
		wantCor   string
	}{
		{"uniform", file, p2, sampling.Uniform{M: 5}, 0.127273, "uniform"},
		{"poisson", file, p2, sampling.Poisson{M: 5}, 0.072727, "uniform"},
		{"clustered", file, p2, sampling.Clustered{M: 5}, 0.094545, "uniform"},
		{"md", "equal", p1, sampling.MD{M: 5}, 0.18, "uniform"},
		{"binomial", "equal", p1, sampling.Binomial{M: 5}, 0.1, "uniform"},
	}
	for _, tt := range tests {
		t.Run(tt.scheme, func(t *testing.T) {
			got := runStats(t, "--scheme", tt.scheme, "--n", "10", "--m", "5", "--p", tt.p, "--draws", "20000", "--seed", "3")
			want, err := tt.cf.Closed(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			wants := map[string]float64{"sigma": want.Sigma, "alpha": want.Alpha, "var_sum": want.VarSum, "gamma": want.Gamma, "expected_clients": want.MeanN}
			for _, k := range statKeys {
				c, ok1 := got[k+"_closed"].(float64)
				mc, ok2 := got[k+"_mc"].(float64)
				plain, ok3 := got[k].(float64)
				if !ok1 || !ok2 || !ok3 {
					t.Fatalf("%s, %s_mc, %s_closed = %v, %v, %v; want numbers", k, k, k, got[k], got[k+"_mc"], got[k+"_closed"])
				}
				if math.Abs(c-wants[k]) > 1e-12 || plain != c {
					t.Errorf("%s_closed = %v, %s = %v; want %v", k, c, k, plain, wants[k])
				}
				if math.Abs(mc-c) > 0.03*math.Abs(c)+0.006 {
					t.Errorf("%s_mc = %v; want within 3%% + 0.006 of %v", k, mc, c)
				}
			}
			if s := got["sigma"].(float64); math.Abs(s-tt.wantSigma) > 5e-6 {
				t.Errorf("sigma = %v; want %v (specs/sampling-theory.md §9 B)", s, tt.wantSigma)
			}
			sp2 := sampling.SumSquares(tt.give)
			if math.Abs(got["sp2"].(float64)-sp2) > 1e-12 || math.Abs(got["threshold"].(float64)-1.0/6) > 1e-12 || got["corollary1"] != tt.wantCor {
				t.Errorf("sp2, threshold, corollary1 = %v, %v, %v; want %v, 1/6, %s", got["sp2"], got["threshold"], got["corollary1"], sp2, tt.wantCor)
			}
			if eff := got["alpha_effective"].(bool); eff != (tt.scheme == "clustered") {
				t.Errorf("alpha_effective = %v for %s", eff, tt.scheme)
			}
		})
	}
	// Without closed forms the _closed keys are null and the plain keys
	// are the Monte-Carlo estimates.
	got := runStats(t, "--scheme", "random", "--m", "5", "--p", "ratio", "--sizes", "50,50,50,50,100,100,200,400,800,1600", "--draws", "2000")
	for _, k := range statKeys {
		if got[k+"_closed"] != nil || got[k] != got[k+"_mc"] {
			t.Errorf("random: %s = %v, %s_mc = %v, %s_closed = %v; want the estimate and null", k, got[k], k, got[k+"_mc"], k, got[k+"_closed"])
		}
	}
	// §6's unbalanced profile: Sp2 = 0.297 > 1/6, so MD has the better guarantees.
	if math.Abs(got["sp2"].(float64)-0.2966) > 5e-4 || got["corollary1"] != "md" {
		t.Errorf("unbalanced profile: sp2 = %v, corollary1 = %v; want 0.2966 and md", got["sp2"], got["corollary1"])
	}
}

// TestSamplingStatsBadInput: bad importances, budgets and schemes are
// refused with a message naming the fix.
func TestSamplingStatsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("0.5\n-0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative importance", []string{"--scheme", "md", "--m", "1", "--p", bad}, "bad.txt:2"},
		{"missing file", []string{"--scheme", "md", "--m", "1", "--p", filepath.Join(dir, "none")}, "not equal, ratio or a readable file"},
		{"poisson budget", []string{"--scheme", "poisson", "--m", "2", "--p", "ratio", "--sizes", "1,1,4"}, "lower clients_per_round"},
		{"pow-d", []string{"--scheme", "pow-d", "--n", "10", "--m", "2"}, "asks its clients"},
		{"unknown scheme", []string{"--scheme", "fancy", "--n", "10", "--m", "2"}, "unknown"},
		{"m above n", []string{"--scheme", "uniform", "--n", "3", "--m", "4"}, "clients_per_round = 4"},
		{"sizes and n disagree", []string{"--scheme", "md", "--n", "3", "--m", "1", "--p", "ratio", "--sizes", "1,2"}, "--sizes lists 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := execute(context.Background(), root(), append([]string{"sampling", "stats"}, tt.args...), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v; want one containing %q", err, tt.want)
			}
			if err != nil && !errors.Is(err, fl.ErrInvalid) && !errors.Is(err, errUsage) {
				t.Errorf("error %v is neither bad input nor usage", err)
			}
		})
	}
}
