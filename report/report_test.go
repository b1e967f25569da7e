package report

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/claims"
	"github.com/flsweep/flsweep/report/reporttest"
)

const (
	fedavg   = "algorithm=fedavg"
	fedprox  = "algorithm=fedprox(mu=0.1)"
	scaffold = "algorithm=scaffold"
	fedfv    = "algorithm=fedfv"
)

// fixture writes reporttest's sweep into a fresh bucket and builds its
// report with the given target.
func fixture(t *testing.T, target float64) *Report {
	t.Helper()
	ctx := context.Background()
	blob := "file://" + filepath.ToSlash(t.TempDir()) + "?create_dir=1&metadata=skip"
	if err := reporttest.Write(ctx, blob); err != nil {
		t.Fatal(err)
	}
	r, err := Build(ctx, blob, reporttest.Name, Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) < 1e-12 || (math.IsNaN(a) && math.IsNaN(b))
}

// TestPoints: the spec's eight points, their methods and status; the
// unfinished ones are scaffold seed 2 (rounds 0..4 committed) and both
// fedfv points (nothing written).
func TestPoints(t *testing.T) {
	r := fixture(t, 0)
	if !r.SpecFound || len(r.Points) != 8 {
		t.Fatalf("SpecFound %v, %d points; want the spec's 8", r.SpecFound, len(r.Points))
	}
	var names []string
	for _, m := range r.Methods {
		names = append(names, m.Name)
		if m.Setting != "" || m.Short != m.Name || len(m.Points) != 2 {
			t.Errorf("method %+v: want no setting, Short = Name, 2 points", m)
		}
	}
	if want := []string{fedavg, fedprox, scaffold, fedfv}; !slices.Equal(names, want) {
		t.Errorf("methods = %q; want %q", names, want)
	}
	type st struct {
		label, status string
		rounds        int
	}
	var got []st
	for _, p := range r.Unfinished() {
		got = append(got, st{p.Label, p.Status, p.Rounds})
	}
	want := []st{{"algorithm=scaffold seed=2", "incomplete", 4}, {"algorithm=fedfv seed=1", "pending", 0}, {"algorithm=fedfv seed=2", "pending", 0}}
	if !slices.Equal(got, want) {
		t.Errorf("unfinished = %v; want %v", got, want)
	}
}

// TestCurves: mean, min, max and sample std over seeds per evaluated
// round; global_train_loss only where recorded (fedavg); scaffold's round
// 6 has one seed.
func TestCurves(t *testing.T) {
	r := fixture(t, 0)
	tests := []struct {
		giveMetric, giveMethod string
		giveRound              int
		want                   CurvePoint
	}{
		// fedavg acc at round 2: 0.5 and 0.25.
		{MetricAcc, fedavg, 2, CurvePoint{Mean: .375, Min: .25, Max: .5, Std: math.Sqrt(2 * .125 * .125), N: 2}},
		{MetricAcc, fedavg, 6, CurvePoint{Mean: .8125, Min: .75, Max: .875, Std: math.Sqrt(2 * .0625 * .0625), N: 2}},
		{MetricAcc, scaffold, 6, CurvePoint{Mean: .875, Min: .875, Max: .875, Std: 0, N: 1}},
		{MetricLoss, fedprox, 6, CurvePoint{Mean: 1.125, Min: 1, Max: 1.25, Std: math.Sqrt(2 * .125 * .125), N: 2}},
		{MetricTrainLoss, fedavg, 2, CurvePoint{Mean: 1.25, Min: 1, Max: 1.5, Std: math.Sqrt(2 * .25 * .25), N: 2}},
	}
	for _, tt := range tests {
		var got *CurvePoint
		for i, c := range r.Curves[tt.giveMetric] {
			if c.Method == tt.giveMethod && c.Round == tt.giveRound {
				got = &r.Curves[tt.giveMetric][i]
			}
		}
		if got == nil {
			t.Errorf("%s of %s at round %d: missing", tt.giveMetric, tt.giveMethod, tt.giveRound)
			continue
		}
		w := tt.want
		if !near(got.Mean, w.Mean) || !near(got.Min, w.Min) || !near(got.Max, w.Max) || !near(got.Std, w.Std) || got.N != w.N {
			t.Errorf("%s of %s at round %d = %+v; want %+v", tt.giveMetric, tt.giveMethod, tt.giveRound, *got, w)
		}
	}
	if n := len(r.Curves[MetricAcc]); n != 12 {
		t.Errorf("%d accuracy points; want 4 rounds × 3 methods that ran", n)
	}
	for _, c := range r.Curves[MetricTrainLoss] {
		if c.Method != fedavg {
			t.Errorf("global_train_loss of %s: want only fedavg's (the others are null)", c.Method)
		}
	}
	if n := len(r.Curves[MetricTrainLoss]); n != 4 {
		t.Errorf("%d global_train_loss points; want fedavg's 4", n)
	}
}

// TestTargets: the rounds-to-target table. Final accuracies per seed:
// fedavg 0.875, 0.75; fedprox 0.75, 0.625 (best 0.75, 0.75); scaffold
// 0.875 (round 6), 0.875 (seed 2's last evaluated round, 4). The best
// final mean is scaffold's 0.875, so the default target is 0.7875: fedavg's
// mean accuracy (0.125, 0.375, 0.75, 0.8125) reaches it at round 6,
// scaffold's (0.125, 0.75, 0.875, 0.875) at round 4, fedprox's (0.125,
// 0.625, 0.75, 0.6875) never. With target 0.7 they reach it at 4, 4, 2.
func TestTargets(t *testing.T) {
	sd := math.Sqrt(2 * .0625 * .0625) // sample std of two values 0.125 apart
	nan := math.NaN()
	tests := []struct {
		giveTarget float64
		wantTarget float64
		want       []MethodSummary
	}{
		{0, .7875, []MethodSummary{
			{Method: fedavg, N: 2, FinalMean: .8125, FinalStd: sd, BestMean: .8125, BestStd: sd, LastRound: 6, RoundsToTarget: 6, SpeedUp: 1},
			{Method: fedprox, N: 2, FinalMean: .6875, FinalStd: sd, BestMean: .75, BestStd: 0, LastRound: 6, RoundsToTarget: -1, SpeedUp: nan},
			{Method: scaffold, N: 2, FinalMean: .875, FinalStd: 0, BestMean: .875, BestStd: 0, LastRound: 6, RoundsToTarget: 4, SpeedUp: 1.5},
		}},
		{.7, .7, []MethodSummary{
			{Method: fedavg, RoundsToTarget: 4, SpeedUp: 1},
			{Method: fedprox, RoundsToTarget: 4, SpeedUp: 1},
			{Method: scaffold, RoundsToTarget: 2, SpeedUp: 2},
		}},
	}
	for _, tt := range tests {
		r := fixture(t, tt.giveTarget)
		if !near(r.Target, tt.wantTarget) || r.TargetDefault != (tt.giveTarget == 0) || !near(r.BestFinal, .875) {
			t.Errorf("target %v: Target %v (default %v), BestFinal %v; want %v, best final 0.875", tt.giveTarget, r.Target, r.TargetDefault, r.BestFinal, tt.wantTarget)
		}
		if len(r.Summary) != len(tt.want) {
			t.Fatalf("target %v: %d summary lines; want %d (fedfv has no rounds)", tt.giveTarget, len(r.Summary), len(tt.want))
		}
		for i, w := range tt.want {
			g := r.Summary[i]
			if g.Method != w.Method || g.RoundsToTarget != w.RoundsToTarget || !near(g.SpeedUp, w.SpeedUp) || g.Baseline != fedavg {
				t.Errorf("target %v: %s reaches it at %d, speed-up %v over %q; want %s at %d, %v over fedavg",
					tt.giveTarget, g.Method, g.RoundsToTarget, g.SpeedUp, g.Baseline, w.Method, w.RoundsToTarget, w.SpeedUp)
			}
			if w.N == 0 {
				continue
			}
			if g.N != w.N || !near(g.FinalMean, w.FinalMean) || !near(g.FinalStd, w.FinalStd) || !near(g.BestMean, w.BestMean) ||
				!near(g.BestStd, w.BestStd) || g.LastRound != w.LastRound {
				t.Errorf("%s: n %d, final %v ± %v, best %v ± %v, last round %d; want n %d, final %v ± %v, best %v ± %v, last round %d",
					g.Method, g.N, g.FinalMean, g.FinalStd, g.BestMean, g.BestStd, g.LastRound, w.N, w.FinalMean, w.FinalStd, w.BestMean, w.BestStd, w.LastRound)
			}
		}
	}
}

// TestPaired: at target 0.7, fedprox − fedavg per seed is −0.125 in final
// accuracy on both seeds (0.75 − 0.875, 0.625 − 0.75): mean −0.125, sd 0,
// so the interval is [−0.125, −0.125], which does not cover 0; both reach
// 0.7 at round 4 on both seeds, a difference of 0 whose interval [0, 0]
// does. Scaffold's seed 2 stopped at round 4, fedavg's at 6: only seed 1
// pairs, one pair (0 in accuracy, 2 − 4 = −2 rounds), with no interval.
// The fixture records no client variances, so that metric has no line.
func TestPaired(t *testing.T) {
	r := fixture(t, .7)
	nan := math.NaN()
	want := []PairedDiff{
		{Method: fedprox, Baseline: fedavg, Metric: "final_acc", N: 2, Mean: -.125, Lo: -.125, Hi: -.125},
		{Method: fedprox, Baseline: fedavg, Metric: "rounds_to_target", N: 2, Mean: 0, Lo: 0, Hi: 0, CoversZero: true},
		{Method: scaffold, Baseline: fedavg, Metric: "final_acc", N: 1, Mean: 0, Lo: nan, Hi: nan, CoversZero: true},
		{Method: scaffold, Baseline: fedavg, Metric: "rounds_to_target", N: 1, Mean: -2, Lo: nan, Hi: nan, CoversZero: true},
	}
	if len(r.Paired) != len(want) {
		t.Fatalf("paired = %+v; want %+v", r.Paired, want)
	}
	for i, w := range want {
		g := r.Paired[i]
		if g.Method != w.Method || g.Baseline != w.Baseline || g.Metric != w.Metric || g.N != w.N || !near(g.Mean, w.Mean) ||
			!near(g.Lo, w.Lo) || !near(g.Hi, w.Hi) || g.CoversZero != w.CoversZero {
			t.Errorf("paired[%d] = %+v; want %+v", i, g, w)
		}
	}
}

// TestClientDist: client accuracies at each point's last evaluated round
// (earlier rounds give every client 0.25 and must not count), pooled over
// seeds, quartiles at p·(n−1) interpolated linearly.
func TestClientDist(t *testing.T) {
	r := fixture(t, 0)
	want := []ClientDist{
		// .375 .5 .625 .75 .875 .875 1 1: Q1 at 1.75, median at 3.5, Q3 at 5.25.
		{Method: fedavg, MinRound: 6, MaxRound: 6, N: 8, Min: .375, Q1: .59375, Median: .8125, Q3: .90625, Max: 1, Mean: .75},
		// .25 .25 .5 .5 .5 .5 .75 .75.
		{Method: fedprox, MinRound: 6, MaxRound: 6, N: 8, Min: .25, Q1: .4375, Median: .5, Q3: .5625, Max: .75, Mean: .5},
		// seed 1 at round 6: 1 1 1 1; seed 2 at round 4: .5 .5 .5 .5.
		{Method: scaffold, MinRound: 4, MaxRound: 6, N: 8, Min: .5, Q1: .5, Median: .75, Q3: 1, Max: 1, Mean: .75},
	}
	if len(r.Clients) != len(want) {
		t.Fatalf("%d client distributions; want %d", len(r.Clients), len(want))
	}
	for i, w := range want {
		g := r.Clients[i]
		if g.Method != w.Method || g.MinRound != w.MinRound || g.MaxRound != w.MaxRound || g.N != w.N || len(g.Values) != w.N ||
			!near(g.Min, w.Min) || !near(g.Q1, w.Q1) || !near(g.Median, w.Median) || !near(g.Q3, w.Q3) || !near(g.Max, w.Max) || !near(g.Mean, w.Mean) {
			g.Values = nil
			t.Errorf("clients of %s = %+v; want %+v", w.Method, g, w)
		}
	}
}

// TestComposition: groups {0, 1} and {2, 3}. fedavg seed 1 selects {0, 2}
// in odd rounds and {0, 1} in even ones, seed 2 {2, 3}: group 0 holds 1 of
// 4 selected clients in odd rounds and 2 of 4 in even ones (mean 0.375 over
// rounds 1..6). The others select {1, 3}: one half each.
func TestComposition(t *testing.T) {
	r := fixture(t, 0)
	if r.GroupKind != "group" {
		t.Fatalf("GroupKind = %q; want group", r.GroupKind)
	}
	tests := []struct {
		giveMethod           string
		giveRound, giveGroup int
		wantCount, wantTotal int
	}{
		{fedavg, 1, 0, 1, 4},
		{fedavg, 1, 1, 3, 4},
		{fedavg, 2, 0, 2, 4},
		{fedavg, 2, 1, 2, 4},
		{scaffold, 4, 0, 2, 4},
		{scaffold, 6, 1, 1, 2}, // seed 2 stopped at round 4
	}
	for _, tt := range tests {
		i := slices.IndexFunc(r.Composition, func(s Share) bool {
			return s.Method == tt.giveMethod && s.Round == tt.giveRound && s.Group == tt.giveGroup
		})
		if i < 0 {
			t.Errorf("share of group %d in %s round %d: missing", tt.giveGroup, tt.giveMethod, tt.giveRound)
			continue
		}
		g := r.Composition[i]
		if g.Count != tt.wantCount || g.Total != tt.wantTotal || !near(g.Share, float64(tt.wantCount)/float64(tt.wantTotal)) {
			t.Errorf("group %d in %s round %d: %d of %d (%v); want %d of %d", tt.giveGroup, tt.giveMethod, tt.giveRound, g.Count, g.Total, g.Share, tt.wantCount, tt.wantTotal)
		}
	}
	if n := len(r.Composition); n != 3*6*2 {
		t.Errorf("%d shares; want 3 methods × 6 rounds × 2 groups", n)
	}
	want := []ShareMean{{fedavg, 0, .375, .5}, {fedavg, 1, .625, .5}, {fedprox, 0, .5, .5}, {fedprox, 1, .5, .5}, {scaffold, 0, .5, .5}, {scaffold, 1, .5, .5}}
	if len(r.ShareMeans) != len(want) {
		t.Fatalf("share means = %+v; want %+v", r.ShareMeans, want)
	}
	for i, w := range want {
		if g := r.ShareMeans[i]; g.Method != w.Method || g.Group != w.Group || !near(g.Mean, w.Mean) || !near(g.Population, w.Population) {
			t.Errorf("share mean %d = %+v; want %+v", i, g, w)
		}
	}
}

// TestAttacks: mean cAcc and iAcc per method, attack and round over the
// scored attacks (llg+ could not run on one update of round 1).
func TestAttacks(t *testing.T) {
	r := fixture(t, 0)
	want := []AttackMean{
		{Method: fedavg, Attack: "llg+", Round: 1, CAcc: 2.0 / 3, IAcc: 1.25 / 3, N: 3, NotApplicable: 1},
		{Method: fedavg, Attack: "rlu", Round: 1, CAcc: .875, IAcc: .75, N: 4},
		{Method: fedavg, Attack: "rlu", Round: 5, CAcc: 1, IAcc: 1, N: 2},
	}
	if len(r.Attacks) != len(want) {
		t.Fatalf("attacks = %+v; want %+v", r.Attacks, want)
	}
	for i, w := range want {
		g := r.Attacks[i]
		if g.Method != w.Method || g.Attack != w.Attack || g.Round != w.Round || !near(g.CAcc, w.CAcc) || !near(g.IAcc, w.IAcc) ||
			g.N != w.N || g.NotApplicable != w.NotApplicable {
			t.Errorf("attack %d = %+v; want %+v", i, g, w)
		}
	}
}

// TestPartitions: one partition per seed, shared by the three methods that
// started.
func TestPartitions(t *testing.T) {
	r := fixture(t, 0)
	if len(r.Partitions) != 2 {
		t.Fatalf("%d distinct partitions; want 2 (one per seed)", len(r.Partitions))
	}
	for i, p := range r.Partitions {
		if p.Seed != int64(i+1) || len(p.Points) != 3 || !slices.Equal(p.Methods, []string{fedavg, fedprox, scaffold}) || p.Classes != 3 || len(p.Clients) != 4 {
			t.Errorf("partition %d: seed %d, points %v, methods %v, %d classes, %d clients; want seed %d, 3 points of 3 methods, 3 classes, 4 clients",
				i, p.Seed, p.Points, p.Methods, p.Classes, len(p.Clients), i+1)
		}
	}
	if c := r.Partitions[0].Clients[3]; c.Group != 1 || c.Train != 10 || !slices.Equal(c.LabelCounts, []int{5, 0, 5}) {
		t.Errorf("seed 1, client 3 = %+v; want group 1, 10 samples, counts [5 0 5]", c)
	}
}

// TestStripSeedAndSettings: the method is the label without its seed; the
// method axis is the first algorithm/sampler/aggregator axis, the rest of
// the label the setting; FedAvg is recognised with or without options.
func TestStripSeedAndSettings(t *testing.T) {
	tests := []struct {
		giveLabel   string
		givePaths   []string
		wantMethod  string
		wantShort   string
		wantSetting string
	}{
		{"partition.alpha=0.1 seed=1", []string{"partition.alpha"}, "partition.alpha=0.1", "partition.alpha=0.1", ""},
		{"seed=3", nil, "", "all seeds", ""},
		{`partition={"clients":10,"scheme":"iid"} algorithm=fedprox(mu=0.01) seed=0`, []string{"partition", "algorithm"},
			`partition={"clients":10,"scheme":"iid"} algorithm=fedprox(mu=0.01)`, "algorithm=fedprox(mu=0.01)", `partition={"clients":10,"scheme":"iid"}`},
		{"partition.scheme=hics-1 sampler=pow-d(d=50) seed=2", nil, "partition.scheme=hics-1 sampler=pow-d(d=50)", "sampler=pow-d(d=50)", "partition.scheme=hics-1"},
		{"dataset.name=a b algorithm=fedavg seed=1", []string{"dataset.name", "algorithm"}, "dataset.name=a b algorithm=fedavg", "algorithm=fedavg", "dataset.name=a b"},
	}
	for _, tt := range tests {
		ms := groupMethods([]PointStatus{{ID: "p", Label: tt.giveLabel, Method: StripSeed(tt.giveLabel)}}, tt.givePaths)
		if g := ms[0]; g.Name != tt.wantMethod || g.Short != tt.wantShort || g.Setting != tt.wantSetting {
			t.Errorf("groupMethods(%q, %q) = %q, %q, %q; want %q, %q, %q", tt.giveLabel, tt.givePaths, g.Name, g.Short, g.Setting, tt.wantMethod, tt.wantShort, tt.wantSetting)
		}
	}
	for _, s := range []string{"algorithm=fedavg", "fedavg", "algorithm=fedavg(x=1)"} {
		if !isFedAvg(s) {
			t.Errorf("isFedAvg(%q) = false; want true", s)
		}
	}
	if isFedAvg("algorithm=fedavgm") {
		t.Error(`isFedAvg("algorithm=fedavgm") = true; want false`)
	}
}

// TestWrite: the page and every figure it references are written; the
// page loads nothing from the network and needs no script. The
// directory is FLSWEEP_REPORT_DIR when set (to look at the page).
func TestWrite(t *testing.T) {
	r := fixture(t, 0)
	dir := t.TempDir()
	if d := os.Getenv("FLSWEEP_REPORT_DIR"); d != "" {
		dir = d
	}
	if err := Write(r, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %s", filepath.Join(dir, "index.html"))
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, bad := range []string{"http://", "https://", "<script", "//cdn"} {
		if strings.Contains(html, bad) {
			t.Errorf("index.html contains %q; want a self-contained page", bad)
		}
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+\.(?:png|svg))"`).FindAllStringSubmatch(html, -1)
	// Figures: accuracy, loss, global train loss (one setting each); the
	// box plot; composition of 3 methods; fedavg's attacks; 2 partitions.
	if n := len(refs) / 3; n != 3+1+3+1+2 {
		t.Errorf("%d figures referenced; want 10", n)
	}
	for _, m := range refs {
		if fi, err := os.Stat(filepath.Join(dir, m[1])); err != nil || fi.Size() < 1000 {
			t.Errorf("figure %s: %v; want a drawn file", m[1], err)
		}
	}
	for _, want := range []string{"algorithm=scaffold seed=2", "incomplete", "4/6", "pending", "0.787", "1.50×", "mean share of the selected", "<td>rlu</td>", "2 distinct partitions"} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}

// TestClaimsSection: the claims the caller evaluated are on the page, with
// the paper's value, ours and the verdict; without claims the page says so.
func TestClaimsSection(t *testing.T) {
	lo, hi, n := -0.2, -0.05, int64(2)
	paper := -19.03
	cs := []claims.Result{{
		File: "experiments/fedeba/claims.yaml", Paper: "FedEBA+",
		Claim: claims.Claim{ID: "var-below-fedavg", Claim: "FedEBA+ has a lower variance than FedAvg.", Source: "Table 1, FMNIST",
			Kind: claims.Direction, Direction: claims.Negative, Paper: &paper, Unit: "%²", Note: "Ours averages the last five evaluations."},
		Verdict: claims.Reproduced, Ours: &claims.Value{Value: -0.125, Lo: &lo, Hi: &hi, N: &n}, Read: []string{reporttest.Name},
	}, {
		File: "experiments/fedeba/claims.yaml", Paper: "FedEBA+",
		Claim:   claims.Claim{ID: "later", Claim: "Something of another sweep.", Source: "Fig. 2", Kind: claims.Direction, Direction: claims.Positive},
		Verdict: claims.NotRun, Reason: "its SQL found no data in fixture (no row, or a NULL value)",
	}}
	ctx := context.Background()
	blob := "file://" + filepath.ToSlash(t.TempDir()) + "?create_dir=1&metadata=skip"
	if err := reporttest.Write(ctx, blob); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		give []claims.Result
		want []string
	}{
		{cs, []string{"7. The papers' claims", "FedEBA&#43; has a lower variance than FedAvg. <code>var-below-fedavg</code><br><small>Ours averages the last five evaluations.</small>", "Table 1, FMNIST", "-19.03%²",
			"interval &lt; 0", "-0.125%² [-0.2, -0.05], n = 2", "<strong>reproduced</strong>",
			"<strong>not run</strong>: its SQL found no data in fixture"}},
		{nil, []string{"No claim of the papers reads this sweep"}},
	} {
		r, err := Build(ctx, blob, reporttest.Name, Options{Claims: tt.give})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Claims) != len(tt.give) {
			t.Errorf("Report.Claims = %+v; want Options.Claims", r.Claims)
		}
		dir := t.TempDir()
		if err := Write(r, dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("index.html lacks %q", w)
			}
		}
	}
}
