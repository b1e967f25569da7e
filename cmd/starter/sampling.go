package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/sampling"
)

func samplingCommand() *command {
	var o statsOptions
	return &command{name: "sampling", summary: "client-sampling schemes: their statistics, closed forms beside Monte Carlo", subs: []*command{
		{
			name: "stats", summary: "a scheme's Σ, α, VarSum, γ and E[distinct clients] (Fraboni et al. 2022, App. A): closed forms and Monte-Carlo estimates, with Σp², 1/(n−m+1) and Corollary 1's verdict",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&o.scheme, "scheme", "", "sampler: uniform, md, binomial, poisson, clustered or random")
				fs.IntVar(&o.n, "n", 0, "clients (0: from --sizes or the --p file)")
				fs.IntVar(&o.m, "m", 0, "clients_per_round")
				fs.StringVar(&o.p, "p", "equal", "importances: equal (p_k = 1/n); ratio (p_k = n_k/M for the sizes of --sizes, default Zipf sizes "+
					"n_k ∝ 1/(k+1), partition.PowerLawSizes(1000·n, n, 1, 10)); or a FILE with one positive importance per line (# comments and blank lines "+
					"skipped), normalised to sum 1")
				fs.StringVar(&o.sizes, "sizes", "", "client sizes for --p ratio, comma-separated (e.g. 50,50,100,200)")
				fs.IntVar(&o.draws, "draws", 100000, "Monte-Carlo rounds")
				fs.Uint64Var(&o.seed, "seed", 1, "seed of the Monte-Carlo stream")
				fs.BoolVar(&o.json, "json", false, "print JSON: sigma, alpha, var_sum, gamma, expected_clients (the closed form, or the Monte-Carlo "+
					"estimate without one), each also as <key>_mc and <key>_closed (null without a closed form); sp2, threshold, corollary1, ...")
			},
			run: func(ctx context.Context, g *globals, args []string) error {
				if len(args) > 0 {
					return fmt.Errorf("sampling stats takes flags only, got %q: %w", args, errUsage)
				}
				rep, err := samplingStats(o)
				if err != nil {
					return err
				}
				if o.json {
					enc := json.NewEncoder(g.out)
					enc.SetIndent("", "  ")
					return enc.Encode(rep)
				}
				printStats(g.out, rep)
				return nil
			},
		},
	}}
}

type statsOptions struct {
	scheme, p, sizes string
	n, m, draws      int
	seed             uint64
	json             bool
}

// statsReport is what `sampling stats` prints. Plain keys hold the closed
// form when the scheme has one, else the Monte-Carlo estimate.
type statsReport struct {
	Scheme string `json:"scheme"`
	N      int    `json:"n"`
	M      int    `json:"m"`
	P      string `json:"p"`      // how p was given
	PNote  string `json:"p_note"` // e.g. that a file's values were normalised
	Draws  int    `json:"draws"`
	Seed   uint64 `json:"seed"`
	stat
	MC     stat  `json:"-"`
	Closed *stat `json:"-"`
	// AlphaEffective: the scheme breaks Assumption 1 (clustered); α and γ are
	// the effective values of eq. 22.
	AlphaEffective bool    `json:"alpha_effective"`
	Sp2            float64 `json:"sp2"`
	Threshold      float64 `json:"threshold"`  // 1/(n − m + 1)
	Corollary1     string  `json:"corollary1"` // "uniform" or "md": the scheme with the better guarantees
}

type stat struct {
	Sigma           float64 `json:"sigma"`
	Alpha           float64 `json:"alpha"`
	VarSum          float64 `json:"var_sum"`
	Gamma           float64 `json:"gamma"`
	ExpectedClients float64 `json:"expected_clients"`
}

func statOf(c sampling.Characteristics) stat {
	return stat{Sigma: c.Sigma, Alpha: c.Alpha, VarSum: c.VarSum, Gamma: c.Gamma, ExpectedClients: c.MeanN}
}

// MarshalJSON adds <key>_mc and <key>_closed to the plain keys.
func (r statsReport) MarshalJSON() ([]byte, error) {
	type plain statsReport
	b, err := json.Marshal(plain(r))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	put := func(suffix string, s *stat) {
		vals := map[string]any{"sigma": nil, "alpha": nil, "var_sum": nil, "gamma": nil, "expected_clients": nil}
		if s != nil {
			vals = map[string]any{"sigma": s.Sigma, "alpha": s.Alpha, "var_sum": s.VarSum, "gamma": s.Gamma, "expected_clients": s.ExpectedClients}
		}
		for k, v := range vals {
			m[k+suffix] = v
		}
	}
	put("_mc", &r.MC)
	put("_closed", r.Closed)
	return json.Marshal(m)
}

// samplingStats computes the report for o.
func samplingStats(o statsOptions) (statsReport, error) {
	rep := statsReport{Scheme: o.scheme, M: o.m, Draws: o.draws, Seed: o.seed, P: o.p}
	if o.scheme == "" {
		return rep, fmt.Errorf("--scheme is required (uniform, md, binomial, poisson, clustered or random): %w", errUsage)
	}
	if o.draws < 2 {
		return rep, fmt.Errorf("--draws = %d; use at least 2 Monte-Carlo rounds (100000 gives about 1%% on Σ): %w", o.draws, errUsage)
	}
	p, note, err := importances(o)
	if err != nil {
		return rep, err
	}
	rep.N, rep.PNote = len(p), note
	pl, err := methods.Builtin().Sampler(o.scheme, o.m, nil)
	if err != nil {
		return rep, err
	}
	s, ok := fl.Unplanned(pl)
	if !ok {
		return rep, fmt.Errorf("--scheme %s asks its clients before selecting (it needs a model's losses), so it has no statistics of its own; use uniform, md, binomial, poisson, clustered or random: %w", o.scheme, errUsage)
	}
	pop := fl.Population{Sizes: make([]int, len(p)), P: p}
	for k := range pop.Sizes {
		pop.Sizes[k] = 1
	}
	if cf, ok := s.(sampling.ClosedForm); ok {
		c, err := cf.Closed(p)
		if err != nil {
			return rep, err
		}
		st := statOf(c)
		rep.Closed, rep.AlphaEffective = &st, c.Effective
	}
	mc, err := sampling.Characterize(s, pop, o.draws, rand.New(rand.NewPCG(o.seed, 0x5a3)))
	if err != nil {
		return rep, err
	}
	rep.MC = statOf(mc)
	rep.stat = rep.MC
	if rep.Closed != nil {
		rep.stat = *rep.Closed
	}
	var better bool
	rep.Sp2, rep.Threshold, better = sampling.Corollary1(p, o.m)
	rep.Corollary1 = "md"
	if better {
		rep.Corollary1 = "uniform"
	}
	return rep, nil
}

// importances returns p for o.p, and a note on how it was formed.
func importances(o statsOptions) ([]float64, string, error) {
	switch o.p {
	case "equal":
		if o.sizes != "" {
			return nil, "", fmt.Errorf("--sizes is set but --p equal ignores sizes; use --p ratio: %w", errUsage)
		}
		if o.n < 1 {
			return nil, "", fmt.Errorf("--n = %d; give the number of clients (at least 1): %w", o.n, errUsage)
		}
		p := make([]float64, o.n)
		for k := range p {
			p[k] = 1 / float64(o.n)
		}
		return p, "p_k = 1/n", nil
	case "ratio":
		sizes, note, err := statsSizes(o)
		if err != nil {
			return nil, "", err
		}
		pop, err := fl.NewPopulation(sizes, fl.ImportanceSize)
		if err != nil {
			return nil, "", fmt.Errorf("--sizes: %w", err)
		}
		return pop.P, note, nil
	}
	if o.sizes != "" {
		return nil, "", fmt.Errorf("--sizes is set but --p %s reads importances from a file; drop --sizes or use --p ratio: %w", o.p, errUsage)
	}
	return importanceFile(o.p, o.n)
}

// statsSizes returns --sizes, or the default Zipf profile.
func statsSizes(o statsOptions) ([]int, string, error) {
	if o.sizes == "" {
		if o.n < 1 {
			return nil, "", fmt.Errorf("--n = %d; give the number of clients (at least 1) or --sizes: %w", o.n, errUsage)
		}
		s, err := partition.PowerLawSizes(1000*o.n, o.n, 1, 10)
		if err != nil {
			return nil, "", err
		}
		return s, "p_k = n_k/M, Zipf sizes n_k ∝ 1/(k+1) (partition.PowerLawSizes(1000·n, n, 1, 10))", nil
	}
	var sizes []int
	for i, f := range strings.Split(o.sizes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, "", fmt.Errorf("--sizes entry %d = %q; every size must be a positive integer: %w", i+1, f, errUsage)
		}
		sizes = append(sizes, v)
	}
	if o.n != 0 && o.n != len(sizes) {
		return nil, "", fmt.Errorf("--n = %d but --sizes lists %d clients; drop --n or make them agree: %w", o.n, len(sizes), errUsage)
	}
	return sizes, "p_k = n_k/M for --sizes", nil
}

// importanceFile reads one importance per line. Every value must be a
// positive finite number; the values are normalised to sum 1 (the note says
// so when they did not already).
func importanceFile(path string, n int) ([]float64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("--p %s: not equal, ratio or a readable file: %v: %w", path, err, errUsage)
	}
	defer f.Close()
	var p []float64
	total := 0.0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, "", fmt.Errorf("%s:%d: %q is not a positive finite importance; write one number > 0 per line: %w", path, line, t, fl.ErrInvalid)
		}
		p = append(p, v)
		total += v
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("--p %s: %w", path, err)
	}
	if len(p) == 0 {
		return nil, "", fmt.Errorf("%s holds no importance; write one number > 0 per line: %w", path, fl.ErrInvalid)
	}
	if n != 0 && n != len(p) {
		return nil, "", fmt.Errorf("--n = %d but %s holds %d importances; drop --n or make them agree: %w", n, path, len(p), errUsage)
	}
	note := "from " + path
	if math.Abs(total-1) > 1e-12 {
		note = fmt.Sprintf("from %s, normalised (the values summed to %.6g)", path, total)
	}
	for k := range p {
		p[k] /= total
	}
	return p, note, nil
}

func printStats(w io.Writer, r statsReport) {
	fmt.Fprintf(w, "%s sampling, n = %d, m = %d; p: %s\n", r.Scheme, r.N, r.M, r.PNote)
	fmt.Fprintf(w, "Monte Carlo: %d rounds, seed %d\n\n", r.Draws, r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tclosed form\tMonte Carlo\t")
	alpha := "α (eq. 22)"
	if r.AlphaEffective {
		alpha = "α (effective, eq. 22: Assumption 1 fails)"
	}
	rows := []struct {
		name   string
		mc     float64
		closed func(s stat) float64
	}{
		{"Σ = Σ_k Var[ω_k]", r.MC.Sigma, func(s stat) float64 { return s.Sigma }},
		{alpha, r.MC.Alpha, func(s stat) float64 { return s.Alpha }},
		{"VarSum = Var[Σ_k ω_k]", r.MC.VarSum, func(s stat) float64 { return s.VarSum }},
		{"γ = Σ + α·Σp²", r.MC.Gamma, func(s stat) float64 { return s.Gamma }},
		{"E[distinct clients]", r.MC.ExpectedClients, func(s stat) float64 { return s.ExpectedClients }},
	}
	for _, row := range rows {
		c := "—"
		if r.Closed != nil {
			c = fmt.Sprintf("%.6f", row.closed(*r.Closed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%.6f\t\n", row.name, c, row.mc)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nΣp² = %.6f, 1/(n−m+1) = %.6f: Corollary 1 says %s has the better guarantees (Uniform iff Σp² ≤ 1/(n−m+1))\n",
		r.Sp2, r.Threshold, map[string]string{"uniform": "Uniform", "md": "MD"}[r.Corollary1])
	if r.Closed == nil {
		fmt.Fprintf(w, "%s has no closed forms (it is not unbiased in the sense of Definition 1 unless p_k = 1/n)\n", r.Scheme)
	}
}
