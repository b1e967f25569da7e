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
// R > 0 its Fig. 1). The schemes run through package algorithm itself, with
// a plain FedAvg rule θ + Σ p_k Δ_k (p_k = n_k/n), so SCAFFOLD's control
// variates, FedDyn's gradient state and FedDC's drifts are the real ones;
// what the attack knows of a client's local objective and its local update
// comes from algorithm.Exposed, and the truth it is scored against is the
// label histogram the trainer reports for the samples it processed
// (trainer.TrainResult.LabelCounts).
//
// Every draw comes from a keyed stream (fl.Stream): the partition and the
// initial model from (seed, "", 0, server, partition|init), shared by all
// settings of a seed as in the engine; local training from (seed, point,
// round, client, train), point naming the setting (Config.point); the
// auxiliary set from (seed, point, attacked round, server, attack) and each
// method's draws from (seed, point/method, attacked round, client, attack).
// Equal Configs give equal Reports.
//
// The package is plain Go; `starter attack bench` is its command.
package attackbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/trainer"
)

// Env is what Run needs besides the Config.
type Env struct {
	Trainer *trainer.Trainer // required
	// Data loads the dataset; nil loads it without a cache.
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
	methods := make([]attack.Attack, len(c.Methods))
	for i, name := range c.Methods {
		methods[i], _ = attack.New(name) // Validate checked the names
	}
	ds, err := loadData(ctx, c, env.Data)
	if err != nil {
		return nil, err
	}
	net, err := trainer.NewNet(c.spec(), ds.Shape, ds.Classes)
	if err != nil {
		return nil, fmt.Errorf("--model %s on %s: %w", c.Model, c.Dataset, err)
	}
	if err := c.algorithm().Check(c.spec(), c.hyper()); err != nil {
		return nil, fmt.Errorf("--optimizer %s: %w", c.Optimizer, err)
	}
	rep := &Report{}
	acc := 0.0
	for s := 1; s <= c.Seeds; s++ {
		w, err := newWorld(c, uint64(s), ds, net, env.Trainer)
		if err != nil {
			return nil, err
		}
		for t := 1; t <= c.TrainRounds; t++ {
			if err := w.round(ctx, t); err != nil {
				return nil, fmt.Errorf("seed %d round %d: %w", s, t, err)
			}
			if env.Progress != nil && (t%10 == 0 || t == c.TrainRounds) {
				fmt.Fprintf(env.Progress, "attack bench: seed %d/%d: trained round %d/%d\n", s, c.Seeds, t, c.TrainRounds)
			}
		}
		a, err := w.accuracy(ctx)
		if err != nil {
			return nil, err
		}
		acc += a
		recs, err := w.attackRound(ctx, c.TrainRounds+1, methods)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", s, err)
		}
		rep.Attacks = append(rep.Attacks, recs...)
		if env.Progress != nil {
			fmt.Fprintf(env.Progress, "attack bench: seed %d/%d: attacked %d clients with %d methods (test accuracy of θ^t %.3f)\n", s, c.Seeds, c.Clients, len(methods), a)
		}
	}
	rep.Results = summarise(c.Methods, rep.Attacks, acc/float64(c.Seeds))
	return rep, nil
}

// loadData loads c's dataset, normalised as the official code does.
func loadData(ctx context.Context, c Config, cache *dataset.Cache) (*dataset.Dataset, error) {
	s := dataset.Spec{Name: c.Dataset, Norm: c.norm()}
	if c.Dataset != "synthetic" {
		s.Root = filepath.Join(c.DataDir, c.Dataset)
	}
	var ds *dataset.Dataset
	var err error
	if cache != nil {
		ds, err = cache.GetSpec(ctx, s)
	} else {
		ds, err = dataset.LoadSpec(ctx, s)
	}
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
