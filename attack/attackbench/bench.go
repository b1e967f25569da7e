// Package attackbench benchmarks the label-recovery attacks of package
// attack the way Chen & Vikalo evaluate RLU ("Recovering Labels from Local
// Updates in Federated Learning", ICML 2024, arXiv:2405.00955, §4 and
// App. B; specs/rlu.md §4): K clients (10) hold a Dirichlet(α) label skew of
// a dataset's training split, all of them train in every round, and an
// honest-but-curious server attacks every client's update of one round
// with an auxiliary set drawn class-balanced from the test split, which no
// client trains on.
//
// Before the attacked round the federation may train for R rounds with the
// chosen scheme (R = 0 attacks the untrained model, the paper's Tables 2–4;
// R > 0 its Fig. 1). A benchmark is a sweep (sweepSpec: one point per
// seed) that package engine runs in this process on an in-memory bucket,
// with the engine's attack block: the rounds, the algorithms' states
// (SCAFFOLD's control variates, FedDyn's gradient state, FedDC's drifts),
// what the attack is told of a client's objective (algorithm.Expose) and
// the truth it is scored against (the label histogram the trainer reports
// for the samples it processed, trainer.TrainResult.LabelCounts) are the
// engine's, as in any sweep with an attack block. The Report reads the
// point's attacks and rounds tables.
//
// Every draw comes from the engine's keyed streams (docs/architecture.md,
// "Determinism"; the sweep has common random numbers): equal Configs give
// equal Reports, and settings of one seed share the partition, the initial
// model, the auxiliary set and the clients' minibatch draws.
//
// The package is plain Go; `starter attack bench` is its command.
package attackbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sync"

	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// Env is what Run needs besides the Config.
type Env struct {
	Trainer *trainer.Trainer // required
	// Data loads the dataset and keeps it for later runs; nil means a
	// cache of this run only.
	Data *dataset.Cache
	// Progress, if not nil, receives a line per seed's milestones.
	Progress io.Writer
}

// Report is a benchmark's outcome: one Row per method, in Config.Methods
// order, and every attack that went into them.
type Report struct {
	Results []Row `json:"results"`
	// Attacks lists every (seed, client, method) attack, seed by seed,
	// client by client, in method order.
	Attacks []Record `json:"-"`
}

// Row summarises a method over all (seed, client) attacks that applied.
type Row struct {
	Method string `json:"method"`
	// The means and sample standard deviations (n − 1) of cAcc and iAcc;
	// null when no attack applied.
	CAcc    *float64 `json:"cacc"`
	IAcc    *float64 `json:"iacc"`
	CAccStd *float64 `json:"cacc_std"`
	IAccStd *float64 `json:"iacc_std"`
	// N counts the attacks scored; NotApplicable those that returned
	// attack.ErrNotApplicable (iDLG on a batch of more than one sample).
	N             int `json:"n"`
	NotApplicable int `json:"not_applicable"`
	// Heuristic is set when the scheme is outside the method's model
	// (Adam): its counts are a guess by a rule of ours (attack.Result).
	Heuristic bool `json:"heuristic"`
	// GlobalAcc is the mean over seeds of the attacked model θ^t's accuracy
	// on the whole test split (0.1 or so for an untrained model).
	GlobalAcc float64 `json:"global_acc"`
}

// Record is one attack: method on client's update of seed's attacked
// round.
type Record struct {
	Seed   uint64
	Client int
	Method string
	// Truth is the histogram of the labels the client processed, as its
	// local training counted them (trainer.TrainResult.LabelCounts).
	Truth []int
	// Counts is the recovered histogram; nil when NotApplicable.
	Counts        []int
	Score         attack.Score
	Heuristic     bool
	NotApplicable bool
}

// Run benchmarks c's methods on c's setting for seeds 1..c.Seeds (after
// c.Defaults()). Invalid settings are fl.ErrInvalid; a missing dataset is
// dataset.ErrNotFound with the way to get it.
func Run(ctx context.Context, c Config, env Env) (*Report, error) {
	c = c.Defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if env.Trainer == nil {
		return nil, errors.New("attackbench: env.trainer is nil")
	}
	if env.Data == nil {
		env.Data = dataset.NewCache()
	}
	ds, err := loadData(ctx, c, env.Data)
	if err != nil {
		return nil, err
	}
	if err := checkAux(ds, c.AuxPerClass); err != nil {
		return nil, err
	}
	spec, err := c.sweepSpec()
	if err != nil {
		return nil, err
	}
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	e := engine.New(store.New(bucket), &engine.Options{DataDir: c.DataDir})
	e.Trainer, e.Data = env.Trainer, env.Data
	in := steps.PlanSweepInput{File: "attack bench", Spec: spec}
	plan, err := e.PlanSweep(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("attack bench: %w", err)
	}
	if _, err := e.RunSweep(ctx, in, progressTo(env.Progress, c)); err != nil {
		return nil, fmt.Errorf("attack bench: %w", err)
	}
	rep := &Report{}
	acc := 0.0
	for _, p := range plan.Points {
		recs, a, err := readPoint(ctx, e.Store, p, c)
		if err != nil {
			return nil, fmt.Errorf("attack bench: seed %d: %w", p.Seed, err)
		}
		rep.Attacks = append(rep.Attacks, recs...)
		acc += a
		if env.Progress != nil {
			fmt.Fprintf(env.Progress, "attack bench: seed %d/%d: attacked %d clients with %d methods (test accuracy of θ^t %.3f)\n", p.Seed, c.Seeds, c.Clients, len(c.Methods), a)
		}
	}
	rep.Results = summarise(c.Methods, rep.Attacks, acc/float64(c.Seeds))
	return rep, nil
}

// progressTo returns the engine's progress callback for a benchmark: a
// line to w at every tenth training round of a seed and at its last, or
// nil when w is nil.
func progressTo(w io.Writer, c Config) func(engine.Progress) {
	if w == nil {
		return nil
	}
	var mu sync.Mutex
	return func(p engine.Progress) {
		t := p.Round
		if p.Done || t < 1 || t > c.TrainRounds || (t%10 != 0 && t != c.TrainRounds) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "attack bench: seed %d/%d: trained round %d/%d\n", p.Point.Seed, c.Seeds, t, c.TrainRounds)
	}
}

// readPoint returns the attacks of point p (one seed), ordered by client
// and then as c.Methods lists the methods, and the test accuracy of the
// attacked model θ^t (the rounds row of round c.TrainRounds).
func readPoint(ctx context.Context, st *store.Store, p steps.PointInfo, c Config) ([]Record, float64, error) {
	sk, err := store.SweepKeys(sweepName)
	if err != nil {
		return nil, 0, err
	}
	pk, err := sk.Point(p.ID)
	if err != nil {
		return nil, 0, err
	}
	rounds, err := store.ReadTable(ctx, st, pk, store.TableRounds,
		func(r store.RoundRow) int32 { return r.Round }, func(a, b store.RoundRow) int { return cmp.Compare(a.Round, b.Round) })
	if err != nil {
		return nil, 0, err
	}
	i := slices.IndexFunc(rounds, func(r store.RoundRow) bool { return int(r.Round) == c.TrainRounds })
	if i < 0 || rounds[i].TestAcc == nil {
		return nil, 0, fmt.Errorf("round %d has no test accuracy", c.TrainRounds)
	}
	rows, err := store.ReadTable(ctx, st, pk, store.TableAttacks,
		func(r store.AttackRow) int32 { return r.Round }, func(a, b store.AttackRow) int {
			return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(slices.Index(c.Methods, a.Method), slices.Index(c.Methods, b.Method)))
		})
	if err != nil {
		return nil, 0, err
	}
	if want := c.Clients * len(c.Methods); len(rows) != want {
		return nil, 0, fmt.Errorf("%d attacks recorded; want clients × methods = %d", len(rows), want)
	}
	recs := make([]Record, len(rows))
	for j, r := range rows {
		if !r.Modelled {
			return nil, 0, fmt.Errorf("client %d: the scheme trains with a term the attacks do not model (algorithm.Expose)", r.Client)
		}
		rec := Record{Seed: p.Seed, Client: int(r.Client), Method: r.Method, Truth: ints(r.TrueCounts),
			Heuristic: r.Heuristic, NotApplicable: r.NotApplicable != ""}
		if !rec.NotApplicable {
			if r.CAcc == nil || r.IAcc == nil {
				return nil, 0, fmt.Errorf("client %d: %s: no scores recorded", r.Client, r.Method)
			}
			rec.Counts = ints(r.Counts)
			rec.Score = attack.Score{CAcc: *r.CAcc, IAcc: *r.IAcc}
		}
		recs[j] = rec
	}
	return recs, *rounds[i].TestAcc, nil
}

func ints(v []int32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// checkAux reports an auxiliary set larger than a class of the test
// split, naming the flag (the engine would name the sweep's field).
func checkAux(ds *dataset.Dataset, per int) error {
	counts := make([]int, ds.Classes)
	for _, y := range ds.Test.Y {
		counts[y]++
	}
	for j, n := range counts {
		if n < per {
			return fmt.Errorf("--aux-per-class = %d exceeds the %d test samples of class %d of %s; lower it: %w", per, n, j, ds.Name, fl.ErrInvalid)
		}
	}
	return nil
}

// loadData loads c's dataset, normalised as the official code does.
func loadData(ctx context.Context, c Config, cache *dataset.Cache) (*dataset.Dataset, error) {
	s := dataset.Spec{Name: c.Dataset, Norm: c.norm()}
	if c.Dataset != "synthetic" {
		s.Root = filepath.Join(c.DataDir, c.Dataset)
	}
	ds, err := cache.GetSpec(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("--dataset %s (--data-dir %s): %w", c.Dataset, c.DataDir, err)
	}
	return ds, nil
}

// summarise returns one Row per method.
func summarise(methods []string, recs []Record, globalAcc float64) []Row {
	rows := make([]Row, len(methods))
	for i, m := range methods {
		r := Row{Method: m, GlobalAcc: globalAcc}
		var cacc, iacc []float64
		for _, rec := range recs {
			if rec.Method != m {
				continue
			}
			r.Heuristic = r.Heuristic || rec.Heuristic
			if rec.NotApplicable {
				r.NotApplicable++
				continue
			}
			cacc = append(cacc, rec.Score.CAcc)
			iacc = append(iacc, rec.Score.IAcc)
		}
		r.N = len(cacc)
		if r.N > 0 {
			r.CAcc, r.CAccStd = meanStd(cacc)
			r.IAcc, r.IAccStd = meanStd(iacc)
		}
		rows[i] = r
	}
	return rows
}

// meanStd returns the mean of v and its sample standard deviation
//
//	sqrt(Σ (v_i − mean)² / (n − 1))
//
// (0 for one value). v must not be empty.
func meanStd(v []float64) (mean, std *float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	if len(v) > 1 {
		for _, x := range v {
			s += (x - m) * (x - m)
		}
		s = math.Sqrt(s / float64(len(v)-1))
	}
	return &m, &s
}

// Row returns the row of method, or false.
func (r *Report) Row(method string) (Row, bool) {
	i := slices.IndexFunc(r.Results, func(x Row) bool { return x.Method == method })
	if i < 0 {
		return Row{}, false
	}
	return r.Results[i], true
}
