// Package conformance checks that every registered method learns: each
// algorithm under plain SGD, SGD with momentum and Adam, and each sampler,
// on a small federation of real data (Fashion-MNIST, an MLP), IID and
// Dirichlet(0.1), beside FedAvg in the same cell. Known-value, resume and
// determinism tests prove a method exact; they cannot tell a method that is
// exactly wrong (a correction that diverges under momentum, a server that
// adds its drift twice) from one that trains. This package can.
//
// A cell passes when none of its seeds diverged and its mean final test
// accuracy is at least FedAvg's in the same cell (same optimiser, partition
// and seeds, and so, with common random numbers, the same clients and
// minibatches) minus the scale's margin; a sampler's, at least the uniform
// sampler's with FedAvg under the same partial participation, or, with
// three seeds or more, short of it by less than the margin within the
// paired 95% interval: samplers draw different clients, so common random
// numbers cannot pair their runs, and on Dirichlet(0.1) with 5 of 50
// clients a round the last round's accuracy varies by 0.05–0.07 from seed
// to seed, more than the margin. A cell an algorithm refuses (its
// Check: FedNova and the gradient corrections under Adam) is listed as
// refused with the reason. A cell the method's paper itself makes fail is
// an expected failure, listed with its reason and the passage; one that
// then passes is reported too, so the list stays true.
//
// Run executes the matrix in process through package engine, the same code
// `starter run --local` runs; Short is the scale `make test` runs, Full the
// one `make conformance` runs and the README's table shows.
package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// Kinds of rows.
const (
	KindAlgorithm = "algorithm"
	KindSampler   = "sampler"
)

// Row is one method of the matrix, as a spec block.
type Row struct {
	Name   string // as the table shows it, e.g. "feddc (official code)"
	Kind   string // KindAlgorithm or KindSampler
	Method string // its registry name
	Block  string // its spec block in YAML flow style, e.g. "{name: feddc, drift_mean: all}"
	// Optimizer and OptimizerBlock are the server optimiser the row runs
	// its algorithm with (its registry name and spec block), "" for none.
	Optimizer, OptimizerBlock string
	// Fair marks a method whose server weighs the clients by their losses
	// or conflicts to serve the worst-off (the fairness methods): it trades
	// mean accuracy for the worst clients' by design, so it passes with
	// either within the margin of FedAvg's.
	Fair bool
	// Public reserves the server's public set (partition.public_per_class:
	// 50) for a method that refines on it (FNR-FL).
	Public bool
	// Expect lists the cells the method as written is known to fail, with
	// why (the passage, or the measured mechanism). Keys are a column
	// ("momentum/dir0.1"), an optimiser ("momentum"), a partition
	// ("/dir0.1") or "" (every column), each optionally after a scale's
	// name and a colon ("full:/dir0.1": that scale only); the most specific
	// wins.
	Expect map[string]string
}

// Expected returns why the row is expected to fail in col at scale, or "".
func (r Row) Expected(scale string, col Column) string {
	for _, k := range []string{col.String(), col.Optimizer, "/" + col.Partition, ""} {
		for _, key := range []string{scale + ":" + k, k} {
			if why, ok := r.Expect[key]; ok {
				return why
			}
		}
	}
	return ""
}

// The optimisers and partitions of the columns.
const (
	OptSGD      = "sgd"      // plain SGD
	OptMomentum = "momentum" // SGD with heavy-ball momentum 0.9
	OptAdam     = "adam"

	PartIID       = "iid"
	PartDirichlet = "dir0.1" // Dirichlet(0.1) label skew
)

// Column is one optimiser on one partition.
type Column struct {
	Optimizer string
	Partition string
}

func (c Column) String() string { return c.Optimizer + "/" + c.Partition }

// Scale is the size of a run of the matrix.
type Scale struct {
	Name   string
	Rounds int
	Seeds  []uint64
	Hidden []int // the MLP's hidden layers
	// Algorithms train Clients clients, PerRound a round; samplers choose
	// SamplerPerRound of SamplerClients.
	Clients, PerRound               int
	SamplerClients, SamplerPerRound int
	LocalSteps, BatchSize           int
	// Margin is how far below FedAvg's mean final accuracy a cell's mean may
	// fall; Floor is what FedAvg itself must reach in every cell, or the
	// problem is too small to tell learning from noise.
	Margin, Floor float64
	// Optimizers are the columns' optimisers, Samplers the optimiser of the
	// sampler rows.
	Optimizers []string
	Partitions []string
}

// Short is the scale `make test` runs: a few minutes on two cores.
func Short() Scale {
	return Scale{
		Name: "short", Rounds: 20, Seeds: []uint64{1, 2}, Hidden: []int{100},
		Clients: 10, PerRound: 10, SamplerClients: 20, SamplerPerRound: 5,
		LocalSteps: 10, BatchSize: 50, Margin: 0.05, Floor: 0.55,
		Optimizers: []string{OptSGD, OptMomentum, OptAdam},
		Partitions: []string{PartIID, PartDirichlet},
	}
}

// Full is the scale of `make conformance` and the README's table.
func Full() Scale {
	s := Short()
	s.Name, s.Rounds, s.Seeds, s.Hidden = "full", 50, []uint64{1, 2, 3}, []int{200, 200}
	s.Clients, s.PerRound, s.SamplerClients, s.SamplerPerRound = 20, 10, 50, 5
	s.Margin = 0.03
	return s
}

// hyper returns the train block of an optimiser: the settings a user would
// pick for it on this problem.
func (s Scale) hyper(opt string) string {
	base := fmt.Sprintf("batch_size: %d, local_steps: %d", s.BatchSize, s.LocalSteps)
	switch opt {
	case OptMomentum:
		return "{optimizer: sgd, lr: 0.01, momentum: 0.9, " + base + "}"
	case OptAdam:
		return "{optimizer: adam, lr: 0.001, " + base + "}"
	}
	return "{optimizer: sgd, lr: 0.05, " + base + "}"
}

// partition returns the partition block of a column.
func partition(p string, clients int, public bool) string {
	b := fmt.Sprintf("{scheme: iid, clients: %d", clients)
	if p == PartDirichlet {
		b = fmt.Sprintf("{scheme: dirichlet, clients: %d, alpha: 0.1", clients)
	}
	if public {
		b += ", public_per_class: 50"
	}
	return b + "}"
}

// spec returns the sweep spec of the cells of rows in one column: every row
// a point of the grid, times the seeds.
func (s Scale) spec(name, kind string, col Column, rows []Row, public bool) string {
	clients, per := s.Clients, s.PerRound
	if kind == KindSampler {
		clients, per = s.SamplerClients, s.SamplerPerRound
	}
	hidden := make([]string, len(s.Hidden))
	for i, h := range s.Hidden {
		hidden[i] = fmt.Sprint(h)
	}
	seeds := make([]string, len(s.Seeds))
	for i, v := range s.Seeds {
		seeds[i] = fmt.Sprint(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "dataset: {name: fmnist}\n")
	fmt.Fprintf(&b, "partition: %s\n", partition(col.Partition, clients, public))
	fmt.Fprintf(&b, "model: {arch: mlp, hidden: [%s]}\n", strings.Join(hidden, ", "))
	fmt.Fprintf(&b, "train: %s\n", s.hyper(col.Optimizer))
	fmt.Fprintf(&b, "rounds: %d\nclients_per_round: %d\n", s.Rounds, per)
	fmt.Fprintf(&b, "eval_every: %d\ncheckpoint_every: %d\n", s.Rounds, s.Rounds)
	fmt.Fprintf(&b, "metrics: {global_train_loss: false, client_losses: false}\n")
	fmt.Fprintf(&b, "seeds: [%s]\n", strings.Join(seeds, ", "))
	for _, r := range rows[:1] {
		if r.OptimizerBlock != "" {
			fmt.Fprintf(&b, "server_optimizer: %s\n", r.OptimizerBlock)
		}
	}
	fmt.Fprintf(&b, "run: {concurrency: %d}\ngrid:\n  %s:\n", len(s.Seeds), kind)
	for _, r := range rows {
		fmt.Fprintf(&b, "    - %s\n", r.Block)
	}
	return b.String()
}

// Verdicts of a cell.
const (
	Pass           = "pass"
	Fail           = "FAIL"
	Refused        = "refused"
	ExpectedFail   = "expected failure"
	UnexpectedPass = "UNEXPECTED PASS"
)

// Result is one cell.
type Result struct {
	Row    Row
	Column Column
	// Refusal is the method's reason for refusing the column's optimiser.
	Refusal string
	// Acc is the final test accuracy per seed, NaN where the seed diverged;
	// Base is the baseline's in the same column: FedAvg's for an algorithm,
	// the uniform sampler's (with FedAvg) for a sampler.
	Acc, Base []float64
	// Worst and BaseWorst are the mean local test accuracy of the worst 10%
	// of clients at the last round (rounds.client_acc_worst10), per seed:
	// what a fairness row may trade mean accuracy for.
	Worst, BaseWorst []float64
	Status           []string
	Verdict          string
	Why              string // what failed, or the expected failure's reason
}

// Mean returns the mean of v (NaN if any is NaN).
func Mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// judge sets r's verdict from its accuracies against FedAvg's.
func (s Scale) judge(r *Result) {
	expect := r.Row.Expected(s.Name, r.Column)
	var bad string
	switch {
	case r.Refusal != "":
		r.Verdict, r.Why = Refused, r.Refusal
		return
	case slices.ContainsFunc(r.Acc, math.IsNaN):
		bad = fmt.Sprintf("diverged (seeds: %v)", r.Status)
	case Mean(r.Acc) < Mean(r.Base)-s.Margin && (!r.Row.Fair || !(Mean(r.Worst) >= Mean(r.BaseWorst)-s.Margin)):
		base := "FedAvg's"
		if r.Row.Kind == KindSampler {
			base = "the uniform sampler's"
			if lo, hi, ok := pairedInterval(r.Acc, r.Base); ok && hi >= -s.Margin {
				r.Why = fmt.Sprintf("mean accuracy %.3f < %s %.3f − %.2f, within noise: the paired difference's 95%% interval [%+.3f, %+.3f] reaches −%.2f", Mean(r.Acc), base, Mean(r.Base), s.Margin, lo, hi, s.Margin)
				break
			}
		}
		bad = fmt.Sprintf("mean accuracy %.3f < %s %.3f − %.2f", Mean(r.Acc), base, Mean(r.Base), s.Margin)
		if r.Row.Kind == KindSampler {
			if lo, hi, ok := pairedInterval(r.Acc, r.Base); ok {
				bad += fmt.Sprintf(", the paired difference's 95%% interval [%+.3f, %+.3f] below −%.2f", lo, hi, s.Margin)
			}
		}
		if r.Row.Fair {
			bad += fmt.Sprintf(", and the worst 10%% of clients' %.3f < %s %.3f − %.2f", Mean(r.Worst), base, Mean(r.BaseWorst), s.Margin)
		}
	}
	switch {
	case bad != "" && expect != "":
		r.Verdict, r.Why = ExpectedFail, bad+"; expected: "+expect
	case bad != "":
		r.Verdict, r.Why = Fail, bad
	case expect != "":
		r.Verdict, r.Why = UnexpectedPass, "expected to fail: "+expect
	default:
		r.Verdict = Pass
	}
}

// pairedInterval returns the 95% Student-t interval of the mean of the
// per-seed differences acc − base (seed i of both: the same partition and
// initial model), and false with fewer than three seeds, where the interval
// (t = 12.7 at two) says nothing.
func pairedInterval(acc, base []float64) (lo, hi float64, ok bool) {
	n := len(acc)
	if n < 3 || len(base) != n {
		return 0, 0, false
	}
	d := make([]float64, n)
	for i := range acc {
		d[i] = acc[i] - base[i]
	}
	m := Mean(d)
	ss := 0.0
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	h := results.T975(n-1) * math.Sqrt(ss/float64(n-1)/float64(n))
	return m - h, m + h, true
}

// Run runs rows (Rows() for the whole matrix) at scale s on e, every column
// of s, and returns one result per cell, rows outermost. Each cell is its
// own sweep (named after the scale, row and column), so a bucket that keeps
// them lets an interrupted run resume and a new row run alone. Algorithm
// rows are judged against FedAvg (row "fedavg") in the same column, sampler
// rows (which run with FedAvg, plain SGD and partial participation) against
// the uniform sampler; both baselines run whether rows holds them or not.
// progress, if not nil, is called as points advance.
func Run(ctx context.Context, e *engine.Engine, s Scale, rows []Row, progress func(engine.Progress)) ([]Result, error) {
	bases := map[string]Row{
		KindAlgorithm: {Name: "fedavg", Kind: KindAlgorithm, Method: "fedavg", Block: "fedavg"},
		KindSampler:   {Name: "uniform", Kind: KindSampler, Method: "uniform", Block: "uniform"},
	}
	type job struct {
		row Row
		col Column
	}
	var jobs []job
	for _, col := range s.Columns() {
		for _, kind := range []string{KindAlgorithm, KindSampler} {
			if kind == KindSampler && col.Optimizer != OptSGD {
				continue
			}
			if !slices.ContainsFunc(rows, func(r Row) bool { return r.Kind == kind }) {
				continue
			}
			jobs = append(jobs, job{bases[kind], col})
			for _, r := range rows {
				if r.Kind == kind && r.Name != bases[kind].Name {
					jobs = append(jobs, job{r, col})
				}
			}
		}
	}
	want := make([]bool, len(jobs))
	for _, r := range rows {
		for i, j := range jobs {
			if j.row.Kind == r.Kind && j.row.Name == r.Name {
				want[i] = true
			}
		}
	}
	res := make([]Result, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2) // two cells at once, each its seeds at once
	for i, j := range jobs {
		g.Go(func() error {
			r, err := s.runCell(gctx, e, j.row, j.col, progress)
			res[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	base, baseWorst := map[string][]float64{}, map[string][]float64{}
	for _, r := range res {
		if b := bases[r.Row.Kind]; r.Row.Name == b.Name {
			base[r.Row.Kind+"\x00"+r.Column.String()] = r.Acc
			baseWorst[r.Row.Kind+"\x00"+r.Column.String()] = r.Worst
		}
	}
	var out []Result
	for i := range jobs {
		if !want[i] {
			continue
		}
		r := res[i]
		r.Base = base[r.Row.Kind+"\x00"+r.Column.String()]
		r.BaseWorst = baseWorst[r.Row.Kind+"\x00"+r.Column.String()]
		s.judge(&r)
		out = append(out, r)
	}
	order := map[string]int{}
	for i, r := range rows {
		order[r.Kind+"\x00"+r.Name] = i
	}
	slices.SortStableFunc(out, func(a, b Result) int {
		return order[a.Row.Kind+"\x00"+a.Row.Name] - order[b.Row.Kind+"\x00"+b.Row.Name]
	})
	return out, nil
}

// Columns lists s's columns.
func (s Scale) Columns() []Column {
	var cols []Column
	for _, o := range s.Optimizers {
		for _, p := range s.Partitions {
			cols = append(cols, Column{o, p})
		}
	}
	return cols
}

var nameRE = regexp.MustCompile(`[^a-z0-9.]+`)

// SweepName names a cell's sweep: conformance-<scale>-<row>-<column>.
func (s Scale) SweepName(r Row, col Column) string {
	slug := strings.ReplaceAll(strings.ToLower(r.Name), "+", "plus") // fedeba+ is not fedeba
	slug = strings.Trim(nameRE.ReplaceAllString(slug, "-"), "-")
	name := fmt.Sprintf("cf-%s-%s-%s-%s-%s", s.Name, r.Kind[:1], slug, col.Optimizer, col.Partition)
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(name))
		name = name[:54] + "-" + hex.EncodeToString(sum[:4])
	}
	return name
}

// runCell runs one row in one column, every seed, unless the row refuses
// the column's optimiser.
func (s Scale) runCell(ctx context.Context, e *engine.Engine, r Row, col Column, progress func(engine.Progress)) (Result, error) {
	res := Result{Row: r, Column: col}
	name := s.SweepName(r, col)
	spec := s.spec(name, r.Kind, col, []Row{r}, r.Public)
	sw, err := sweep.Parse(name+".yaml", []byte(spec))
	if err != nil {
		return res, fmt.Errorf("conformance: row %s: %w", r.Name, err)
	}
	if err := sw.Points[0].Config.Validate(e.Reg); err != nil {
		if !engine.IsBadInput(err) {
			return res, err
		}
		res.Refusal = err.Error()
		return res, nil
	}
	done, err := e.RunSweep(ctx, steps.PlanSweepInput{File: name + ".yaml", Spec: []byte(spec)}, progress)
	if err != nil {
		return res, fmt.Errorf("conformance: %s: %w", name, err)
	}
	byID := map[string]steps.PointResult{}
	for _, d := range done {
		byID[d.Point] = d
	}
	for _, p := range sw.Points { // the seeds, in order
		d, ok := byID[p.ID]
		if !ok {
			return res, fmt.Errorf("conformance: %s: point %s (%s) has no result", name, p.ID, p.Label)
		}
		acc := d.TestAcc
		if d.Status != steps.StatusDone {
			acc = math.NaN()
		}
		worst, err := lastWorst(ctx, e, name, p.ID)
		if err != nil {
			return res, fmt.Errorf("conformance: %s: point %s: %w", name, p.Label, err)
		}
		res.Acc = append(res.Acc, acc)
		res.Worst = append(res.Worst, worst)
		res.Status = append(res.Status, d.Status)
	}
	return res, nil
}

// lastWorst returns a point's client_acc_worst10 at its last evaluated
// round (NaN when it has none).
func lastWorst(ctx context.Context, e *engine.Engine, sweepName, point string) (float64, error) {
	sk, err := store.SweepKeys(sweepName)
	if err != nil {
		return 0, err
	}
	pk, err := sk.Point(point)
	if err != nil {
		return 0, err
	}
	rows, err := store.ReadTable(ctx, e.Store, pk, store.TableRounds,
		func(r store.RoundRow) int32 { return r.Round }, func(a, b store.RoundRow) int { return int(a.Round - b.Round) })
	if err != nil {
		return 0, err
	}
	worst := math.NaN()
	for _, r := range rows {
		if r.Evaluated && r.ClientAccWorst10 != nil {
			worst = *r.ClientAccWorst10
		}
	}
	return worst, nil
}

// Markdown renders results as a table: one line per row, one column per
// column of the matrix, each cell "mean accuracy (the baseline's)" and a mark
// (✓ pass, ✗ fail, ⊘ refused, ✗ₑ expected failure, ! unexpected pass),
// followed by the reasons of every cell that is not a pass.
func Markdown(s Scale, results []Result) string {
	var cols []Column
	seen := map[Column]bool{}
	var rows []Row
	cell := map[string]map[Column]Result{}
	for _, r := range results {
		if !seen[r.Column] {
			seen[r.Column] = true
			cols = append(cols, r.Column)
		}
		key := r.Row.Kind + "\x00" + r.Row.Name
		if cell[key] == nil {
			cell[key] = map[Column]Result{}
			rows = append(rows, r.Row)
		}
		cell[key][r.Column] = r
	}
	var b strings.Builder
	b.WriteString("| method |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	var notes []string
	for _, row := range rows {
		name := row.Name
		if row.Kind == KindSampler {
			name = "sampler " + name
		}
		fmt.Fprintf(&b, "| %s |", name)
		for _, c := range cols {
			r, ok := cell[row.Kind+"\x00"+row.Name][c]
			if !ok {
				b.WriteString(" |")
				continue
			}
			mark := map[string]string{Pass: "✓", Fail: "✗", Refused: "⊘", ExpectedFail: "✗ₑ", UnexpectedPass: "!"}[r.Verdict]
			if r.Verdict == Refused {
				fmt.Fprintf(&b, " ⊘ |")
			} else {
				fmt.Fprintf(&b, " %s (%s) %s |", acc(Mean(r.Acc)), acc(Mean(r.Base)), mark)
			}
			if r.Verdict != Pass || r.Why != "" {
				notes = append(notes, fmt.Sprintf("- %s, %s: %s: %s", name, c, r.Verdict, r.Why))
			}
		}
		b.WriteString("\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

func acc(v float64) string {
	if math.IsNaN(v) {
		return "div."
	}
	return fmt.Sprintf("%.3f", v)
}

// Select returns the rows whose method or name is in names.
func Select(rows []Row, names []string) []Row {
	var out []Row
	for _, r := range rows {
		if slices.Contains(names, r.Method) || slices.Contains(names, r.Name) || (r.Optimizer != "" && slices.Contains(names, r.Optimizer)) {
			out = append(out, r)
		}
	}
	return out
}

// Failures returns the cells whose verdict is Fail or UnexpectedPass.
func Failures(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.Verdict == Fail || r.Verdict == UnexpectedPass {
			out = append(out, r)
		}
	}
	return out
}

// Missing returns the algorithms, samplers and server optimisers of reg
// that no row covers.
func Missing(reg *methods.Registry, rows []Row) []string {
	have := map[string]bool{}
	for _, r := range rows {
		have[r.Kind+"\x00"+r.Method] = true
		have["optimizer\x00"+r.Optimizer] = true
	}
	var out []string
	for _, n := range reg.Algorithms() {
		if !have[KindAlgorithm+"\x00"+n] {
			out = append(out, "algorithm "+n)
		}
	}
	for _, n := range reg.Samplers() {
		if !have[KindSampler+"\x00"+n] {
			out = append(out, "sampler "+n)
		}
	}
	for _, n := range reg.ServerOptimizers() {
		if !have["optimizer\x00"+n] {
			out = append(out, "server_optimizer "+n)
		}
	}
	return out
}
