package attackbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sweep"
	"github.com/flsweep/flsweep/trainer"
)

// tr and data are shared by the tests: a Trainer keeps its compiled
// graphs, the cache its datasets.
var (
	tr   = trainer.New(nil)
	data = dataset.NewCache()
)

// tiny is a fast setting on the synthetic data (1×8×8, 2,000 training and
// 500 test samples, 50 per class): an MLP 64-32-10, 5 clients, 20
// auxiliary samples per class.
func tiny() Config {
	return Config{Dataset: "synthetic", Model: trainer.ArchMLP, Hidden: []int{32}, Clients: 5, AuxPerClass: 20, Seeds: 2}
}

func run(t *testing.T, c Config) *Report {
	t.Helper()
	rep, err := Run(t.Context(), c, Env{Trainer: tr, Data: data})
	if err != nil {
		t.Fatalf("Run(%+v): %v", c, err)
	}
	return rep
}

func row(t *testing.T, rep *Report, method string) Row {
	t.Helper()
	r, ok := rep.Row(method)
	if !ok {
		t.Fatalf("no row for %s in %+v", method, rep.Results)
	}
	if r.N == 0 {
		t.Fatalf("%s: no attack applied: %+v", method, r)
	}
	return r
}

// fmnistDir returns $FLSWEEP_DATA_DIR if it holds Fashion-MNIST, or skips.
func fmnistDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FLSWEEP_DATA_DIR")
	if _, err := os.Stat(filepath.Join(dir, "fmnist", "MANIFEST.json")); dir == "" || err != nil {
		t.Skipf("no Fashion-MNIST under %q: set FLSWEEP_DATA_DIR to a directory holding fmnist/MANIFEST.json (`make test` fetches it)", dir)
	}
	return dir
}

// TestRLUUntrainedMLP checks specs/rlu.md §7, acceptance check 10: on an
// untrained ReLU MLP with one local step of |B| = 64, η = 0.01, α = 0.5 and
// 100 auxiliary samples per class, RLU's iAcc ≥ 0.98 and cAcc ≥ 0.97
// (the paper's analogue, Table 2: 1.000 and 1.000). On Fashion-MNIST
// with the paper's MLP when the data is there, and on the synthetic data
// always.
func TestRLUUntrainedMLP(t *testing.T) {
	t.Run("synthetic", func(t *testing.T) {
		c := tiny()
		c.Clients, c.AuxPerClass = 10, 40
		r := row(t, run(t, c), "rlu")
		if *r.IAcc < 0.98 || *r.CAcc < 0.97 {
			t.Errorf("RLU iAcc %.3f, cAcc %.3f; want ≥ 0.98 and ≥ 0.97", *r.IAcc, *r.CAcc)
		}
	})
	t.Run("fmnist", func(t *testing.T) {
		c := Config{Dataset: "fmnist", DataDir: fmnistDir(t), Model: trainer.ArchMLP, Seeds: 2, Methods: []string{"rlu"}}
		rep := run(t, c)
		r := row(t, rep, "rlu")
		if r.N != 20 {
			t.Errorf("%d attacks; want 2 seeds × 10 clients", r.N)
		}
		if *r.IAcc < 0.98 || *r.CAcc < 0.97 {
			t.Errorf("RLU iAcc %.3f, cAcc %.3f; want ≥ 0.98 and ≥ 0.97", *r.IAcc, *r.CAcc)
		}
		if r.GlobalAcc > 0.3 {
			t.Errorf("the untrained model's test accuracy is %.3f; want about 0.1", r.GlobalAcc)
		}
	})
}

// TestDeterministic runs a setting twice, with training rounds, a scheme
// with server and client state, and a method that draws: the reports
// are equal, every attack included.
func TestDeterministic(t *testing.T) {
	c := tiny()
	c.Optimizer, c.Steps, c.TrainRounds = SchemeScaffold, 3, 2
	c.Methods = []string{"rlu", "rlu-posterior", "llg+"}
	a, b := run(t, c), run(t, c)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a.Results, b.Results)
	}
	if len(a.Attacks) != c.Seeds*c.Clients*len(c.Methods) {
		t.Errorf("%d attacks; want seeds × clients × methods = %d", len(a.Attacks), c.Seeds*c.Clients*len(c.Methods))
	}
	if reflect.DeepEqual(a.Attacks[0].Truth, a.Attacks[len(a.Attacks)-1].Truth) {
		t.Errorf("seed 1's first client and seed 2's last have the same truth %v; the seeds are not independent", a.Attacks[0].Truth)
	}
}

// TestTruth checks that every attack's truth is a label histogram of the
// m·|B| samples the client processed, and that the clients' histograms
// differ (each is its own client's training).
func TestTruth(t *testing.T) {
	c := tiny()
	c.Seeds, c.Steps, c.Batch, c.TrainRounds, c.Methods = 1, 4, 16, 1, []string{"rlu"}
	rep := run(t, c)
	if len(rep.Attacks) != c.Clients {
		t.Fatalf("%d attacks; want one per client (%d)", len(rep.Attacks), c.Clients)
	}
	distinct := map[string]bool{}
	for k, rec := range rep.Attacks {
		total := 0
		for _, n := range rec.Truth {
			total += n
		}
		if rec.Client != k || total != c.Steps*c.Batch {
			t.Errorf("attack %d: client %d, truth %v sums to %d; want client %d and m·|B| = %d", k, rec.Client, rec.Truth, total, k, c.Steps*c.Batch)
		}
		distinct[fmt.Sprint(rec.Truth)] = true
	}
	if len(distinct) < 2 {
		t.Errorf("every client has the truth %v: the clients' label skews are not in it", rep.Attacks[0].Truth)
	}
}

// TestSweepSpec checks the sweep a setting runs: one point per seed; all
// K clients every round, weighted by size and aggregated by FedAvg's rule
// with server_lr 1; R + 1 rounds with the attack at R + 1 and an evaluation
// at R; and each scheme's optimiser or algorithm with its coefficient.
func TestSweepSpec(t *testing.T) {
	type want struct {
		alg  string
		opts map[string]any
		opt  string
		mom  float64
		nest bool
	}
	for _, tt := range []struct {
		scheme string
		mu     float64
		want   want
	}{
		{SchemeSGD, 0, want{opt: "sgd"}},
		{SchemeMomentum, 0, want{opt: "sgd", mom: 0.9}},
		{SchemeNesterov, 0, want{opt: "sgd", mom: 0.9, nest: true}},
		{SchemeAdam, 0, want{opt: "adam"}},
		{SchemeFedProx, 5, want{alg: "fedprox", opts: map[string]any{"mu": 5.0}, opt: "sgd"}},
		{SchemeScaffold, 0, want{alg: "scaffold", opt: "sgd"}},
		{SchemeFedDyn, 0, want{alg: "feddyn", opts: map[string]any{"alpha": 0.01}, opt: "sgd"}},
		{SchemeFedDC, 0.1, want{alg: "feddc", opts: map[string]any{"lambda": 0.1}, opt: "sgd"}},
	} {
		t.Run(tt.scheme, func(t *testing.T) {
			c := Config{Dataset: "fmnist", DataDir: "/data", Optimizer: tt.scheme, Mu: tt.mu, Steps: 10, TrainRounds: 20, Seeds: 3}.Defaults()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			b, err := c.sweepSpec()
			if err != nil {
				t.Fatal(err)
			}
			s, err := sweep.Parse("bench", b)
			if err != nil {
				t.Fatalf("the bench's sweep does not parse: %v\n%s", err, b)
			}
			if len(s.Points) != 3 {
				t.Fatalf("%d points; want one per seed", len(s.Points))
			}
			for i, p := range s.Points {
				g := p.Config
				if g.Seed != uint64(i+1) || g.Rounds != 21 || g.ClientsPerRound != 10 || g.Partition.Clients != 10 ||
					g.Partition.Scheme != sweep.SchemeDirichlet || g.Partition.Alpha != 0.5 || g.Importance != "size" ||
					g.Aggregator.Name != "fedavg" || g.EvalEvery != 20 || !slices.Equal(g.Attack.Rounds, []int{21}) ||
					g.Attack.AuxPerClass != 100 || !slices.Equal(g.Attack.Methods, DefaultMethods) || g.Dataset.Normalize != "half" ||
					!slices.Equal(g.Model.Hidden, []int{300, 300}) || g.Train.LocalSteps != 10 || g.Train.BatchSize != 64 || g.Train.LR != 0.01 {
					t.Errorf("point %d: %s", i, g.Canonical())
				}
				if g.Algorithm.Name != tt.want.alg || (tt.want.opts != nil && fmt.Sprint(g.Algorithm.Options) != fmt.Sprint(tt.want.opts)) {
					t.Errorf("point %d: algorithm %s %v; want %s %v", i, g.Algorithm.Name, g.Algorithm.Options, tt.want.alg, tt.want.opts)
				}
				if g.Train.Optimizer != tt.want.opt || g.Train.Momentum != tt.want.mom || g.Train.Nesterov != tt.want.nest {
					t.Errorf("point %d: train %+v; want %s, momentum %g, nesterov %v", i, g.Train, tt.want.opt, tt.want.mom, tt.want.nest)
				}
			}
		})
	}
}

// TestAux checks that an auxiliary set larger than a class of the test
// split is refused, naming the flag.
func TestAux(t *testing.T) {
	c := tiny()
	c.AuxPerClass = 51 // the synthetic test split has 50 per class
	if _, err := Run(t.Context(), c, Env{Trainer: tr, Data: data}); !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "--aux-per-class") {
		t.Errorf("aux with 51 per class: error %v; want fl.ErrInvalid naming --aux-per-class", err)
	}
}

// TestSchemes runs every scheme through package algorithm after two
// training rounds: RLU, corrected for the scheme, recovers most labels;
// Adam's rows are flagged heuristic (every method reads its update as
// SGD's) and the others are not.
func TestSchemes(t *testing.T) {
	for _, s := range Schemes {
		t.Run(s, func(t *testing.T) {
			c := tiny()
			c.Seeds, c.Optimizer, c.Steps, c.TrainRounds, c.Methods = 1, s, 5, 2, []string{"rlu", "zlg+"}
			rep := run(t, c)
			r := row(t, rep, "rlu")
			if r.Heuristic != (s == SchemeAdam) {
				t.Errorf("heuristic = %v; want %v", r.Heuristic, s == SchemeAdam)
			}
			if z := row(t, rep, "zlg+"); z.Heuristic != (s == SchemeAdam) {
				t.Errorf("zlg+ heuristic = %v; want %v", z.Heuristic, s == SchemeAdam)
			}
			if s != SchemeAdam && *r.IAcc < 0.8 {
				t.Errorf("RLU iAcc %.3f; want ≥ 0.8", *r.IAcc)
			}
		})
	}
}

// TestIDLGNotApplicable checks that a method that cannot run on a batch
// is counted, not scored.
func TestIDLGNotApplicable(t *testing.T) {
	c := tiny()
	c.Seeds, c.Methods = 1, []string{"idlg"}
	r, _ := run(t, c).Row("idlg")
	if r.N != 0 || r.NotApplicable != c.Clients || r.IAcc != nil {
		t.Errorf("idlg row %+v; want no scores and %d not applicable", r, c.Clients)
	}
}

// TestValidate checks that every bad setting is fl.ErrInvalid and names
// its flag.
func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		give     func(c *Config)
		wantFlag string
	}{
		{"dataset", func(c *Config) { c.Dataset = "svhn" }, "--dataset"},
		{"data dir", func(c *Config) { c.Dataset, c.DataDir = "fmnist", "" }, "--data-dir"},
		{"batch", func(c *Config) { c.Batch = -1 }, "--batch"},
		{"steps", func(c *Config) { c.Steps = -2 }, "--steps"},
		{"optimizer", func(c *Config) { c.Optimizer = "rmsprop" }, "--optimizer"},
		{"lr", func(c *Config) { c.LR = math.Inf(1) }, "--lr"},
		{"gamma range", func(c *Config) { c.Optimizer, c.Gamma = SchemeMomentum, 1 }, "--gamma"},
		{"gamma with sgd", func(c *Config) { c.Gamma = 0.5 }, "--gamma"},
		{"mu with sgd", func(c *Config) { c.Mu = 0.5 }, "--mu"},
		{"alpha", func(c *Config) { c.Alpha = -1 }, "--alpha"},
		{"clients", func(c *Config) { c.Clients = -1 }, "--clients"},
		{"aux", func(c *Config) { c.AuxPerClass = -5 }, "--aux-per-class"},
		{"rounds", func(c *Config) { c.TrainRounds = -1 }, "--train-rounds"},
		{"seeds", func(c *Config) { c.Seeds = -1 }, "--seeds"},
		{"methods", func(c *Config) { c.Methods = []string{"rlu", "dlg"} }, "--methods"},
		{"methods twice", func(c *Config) { c.Methods = []string{"rlu", "rlu"} }, "--methods"},
		{"model", func(c *Config) { c.Model = "vgg16" }, "--model"},
		{"activation", func(c *Config) { c.Model, c.Activation = "cnn-hics", trainer.ActTanh }, "--activation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tiny()
			tt.give(&c)
			err := c.Defaults().Validate()
			if !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), tt.wantFlag) {
				t.Errorf("Validate() = %v; want fl.ErrInvalid naming %s", err, tt.wantFlag)
			}
		})
	}
	if err := tiny().Defaults().Validate(); err != nil {
		t.Errorf("Validate(tiny) = %v; want nil", err)
	}
	if _, err := Run(context.Background(), Config{Dataset: "cifar10", DataDir: t.TempDir()}, Env{Trainer: tr}); !errors.Is(err, dataset.ErrNotFound) || !strings.Contains(err.Error(), "--dataset cifar10") {
		t.Errorf("cifar10 without its files: error %v; want dataset.ErrNotFound naming --dataset", err)
	}
}
