package attackbench

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
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

// TestTruth checks that an attack's truth is the label histogram the
// client's local training reported (trainer.TrainResult.LabelCounts): the
// test replays the attacked round's training of every client by calling
// the trainer with the client's stream, and compares.
func TestTruth(t *testing.T) {
	c := tiny()
	c.Seeds, c.Steps, c.Batch, c.TrainRounds, c.Methods = 1, 4, 16, 1, []string{"rlu"}
	c = c.Defaults()
	rep := run(t, c)
	ds, err := data.GetSpec(t.Context(), dataset.Spec{Name: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	net, err := trainer.NewNet(c.spec(), ds.Shape, ds.Classes)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorld(c, 1, ds, net, tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.round(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	for k, rec := range rep.Attacks {
		p := append([]float32(nil), w.global...)
		key := fl.Key{Seed: 1, Point: c.point(), Round: 2, Client: k, Purpose: fl.PurposeTrain}
		res, err := tr.TrainObjective(t.Context(), net, p, w.examples(k), w.hp, trainer.Objective{}, fl.Stream(key), nil)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Client != k || !reflect.DeepEqual(rec.Truth, res.LabelCounts) {
			t.Errorf("client %d: truth %v; want the trainer's LabelCounts %v", rec.Client, rec.Truth, res.LabelCounts)
		}
		total := 0
		for _, n := range rec.Truth {
			total += n
		}
		if total != c.Steps*c.Batch {
			t.Errorf("client %d: truth %v sums to %d; want m·|B| = %d", k, rec.Truth, total, c.Steps*c.Batch)
		}
	}
}

// TestAux checks the auxiliary set: AuxPerClass distinct samples of every
// class, from the test split, none of them equal to a sample any client
// trains on.
func TestAux(t *testing.T) {
	c := tiny().Defaults()
	ds, err := data.GetSpec(t.Context(), dataset.Spec{Name: "synthetic"})
	if err != nil {
		t.Fatal(err)
	}
	net, err := trainer.NewNet(c.spec(), ds.Shape, ds.Classes)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorld(c, 1, ds, net, tr)
	if err != nil {
		t.Fatal(err)
	}
	aux, err := w.aux(1)
	if err != nil {
		t.Fatal(err)
	}
	if &aux.X[0] != &ds.Test.X[0] || &aux.Y[0] != &ds.Test.Y[0] {
		t.Fatal("the auxiliary set does not index the test split")
	}
	counts, err := attack.LabelCounts(aux, ds.Classes)
	if err != nil {
		t.Fatal(err)
	}
	for j, n := range counts {
		if n != c.AuxPerClass {
			t.Errorf("class %d has %d auxiliary samples; want %d", j, n, c.AuxPerClass)
		}
	}
	dim := ds.Dim()
	rowHash := func(x []float32, i int) uint64 {
		h := fnv.New64a()
		for _, v := range x[i*dim : (i+1)*dim] {
			b := math.Float32bits(v)
			h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)})
		}
		return h.Sum64()
	}
	trained := map[uint64]bool{}
	for k := range w.part {
		for _, i := range w.part[k] {
			trained[rowHash(ds.Train.X, i)] = true
		}
	}
	seen := map[int]bool{}
	for _, i := range aux.Idx {
		if seen[i] {
			t.Errorf("test sample %d drawn twice", i)
		}
		seen[i] = true
		if trained[rowHash(ds.Test.X, i)] {
			t.Errorf("auxiliary sample %d (test split) equals a client's training sample", i)
		}
	}
	c.AuxPerClass = 51 // the synthetic test split has 50 per class
	w.c = c
	if _, err := w.aux(1); !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "--aux-per-class") {
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
