package attack_test

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestInputHoldsOnlyServerKnowledge keeps the attack's input free of the
// client's data (the threat model of Chen & Vikalo, §3.1): Input's
// fields are exactly the server's knowledge, its only trainer.Examples is
// the auxiliary set, and nowhere in it (nested structs included) is an
// integer slice or array that could carry label counts, a field named like
// one, or a map, interface or function that could smuggle either. A new
// field fails this test until it is reviewed and added here.
func TestInputHoldsOnlyServerKnowledge(t *testing.T) {
	typ := reflect.TypeOf(attack.Input{})
	var top []string
	for f := range typ.Fields() {
		top = append(top, f.Name)
	}
	if want := []string{"Net", "Global", "Delta", "Local", "Scheme", "Aux"}; !slices.Equal(top, want) {
		t.Errorf("attack.Input has fields %v; want %v (review what a new field lets the attack see)", top, want)
	}
	examples := reflect.TypeOf(trainer.Examples{})
	net := reflect.TypeOf((*trainer.Net)(nil))
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for f := range typ.Fields() {
			p := path + "." + f.Name
			name := strings.ToLower(f.Name)
			for _, bad := range []string{"count", "label", "truth", "hist", "target", "client"} {
				if strings.Contains(name, bad) {
					t.Errorf("%s: a field named like the client's labels", p)
				}
			}
			ft := f.Type
			switch {
			case ft == examples:
				if p != "Input.Aux" {
					t.Errorf("%s is a trainer.Examples; only Input.Aux (the server's auxiliary set) may be", p)
				}
				continue
			case ft == net:
				continue
			}
			switch ft.Kind() {
			case reflect.Struct:
				walk(p, ft)
			case reflect.Slice, reflect.Array:
				switch ft.Elem().Kind() {
				case reflect.Float32, reflect.Float64:
				default:
					t.Errorf("%s is a %v; only float vectors (models, updates, scheme terms) belong in the input", p, ft)
				}
			case reflect.Pointer, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
				t.Errorf("%s is a %v, which could carry anything", p, ft)
			}
		}
	}
	walk("Input", typ)
}

// TestInputRejects: malformed inputs are fl.ErrInvalid and name the field.
func TestInputRejects(t *testing.T) {
	w := newWorld(t, "")
	global := w.init(t, 3)
	hp := sgd(0.01, 64, 1)
	good := attack.Input{Net: w.net, Global: global, Delta: make([]float32, len(global)), Local: local(t, hp, 64), Aux: w.aux(2)}
	missing := w.aux(2)
	missing.Idx = missing.Idx[:len(missing.Idx)-2] // no sample of class 9
	tests := []struct {
		name   string
		give   func(in *attack.Input)
		wantIn string
	}{
		{"nil net", func(in *attack.Input) { in.Net = nil }, "net"},
		{"short delta", func(in *attack.Input) { in.Delta = in.Delta[1:] }, "delta"},
		{"NaN global", func(in *attack.Input) { in.Global = slices.Clone(in.Global); in.Global[0] = float32(math.NaN()) }, "global"},
		{"zero lr", func(in *attack.Input) { in.Local.LR = 0 }, "lr"},
		{"no steps", func(in *attack.Input) { in.Local.Steps = 0 }, "steps"},
		{"momentum 1", func(in *attack.Input) { in.Local.Momentum = 1 }, "momentum"},
		{"nesterov alone", func(in *attack.Input) { in.Local.Nesterov = true }, "nesterov"},
		{"optimizer", func(in *attack.Input) { in.Local.Optimizer = "lbfgs" }, "optimizer"},
		{"anchor without prox", func(in *attack.Input) { in.Scheme.Anchor = in.Global }, "anchor"},
		{"short linear", func(in *attack.Input) { in.Scheme.Linear = []float32{1} }, "linear"},
		{"aux dim", func(in *attack.Input) { in.Aux.Dim = 3 }, "aux"},
		{"aux missing a class", func(in *attack.Input) { in.Aux = missing }, "class 9"},
	}
	for _, tt := range tests {
		in := good
		tt.give(&in)
		_, err := attack.RLU{}.Recover(t.Context(), w.tr, in, nil)
		if !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), tt.wantIn) {
			t.Errorf("%s: error = %v; want fl.ErrInvalid naming %q", tt.name, err, tt.wantIn)
		}
	}
	if _, err := (attack.RLU{}).Recover(t.Context(), w.tr, good, nil); err != nil {
		t.Errorf("the valid input: %v", err)
	}
	if _, err := (attack.RLU{Posterior: &attack.Posterior{}}).Recover(t.Context(), w.tr, good, nil); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("posterior search without a stream: error = %v; want fl.ErrInvalid", err)
	}
}

// TestFromHyper: trainer's two schedules become the attack's m, |B| and
// T_k; a schedule of η within the round is not modelled.
func TestFromHyper(t *testing.T) {
	tests := []struct {
		name  string
		giveH trainer.Hyper
		giveN int
		want  attack.Local
	}{
		{"steps", sgd(0.01, 64, 10), 500, attack.Local{Optimizer: "sgd", LR: 0.01, Steps: 10, Batch: 64}},
		{"steps, small client", sgd(0.01, 64, 10), 50, attack.Local{Optimizer: "sgd", LR: 0.01, Steps: 10, Batch: 50}},
		{"epochs", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4, BatchSize: 32, LocalEpochs: 2}, 100,
			attack.Local{Optimizer: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-4, Steps: 8, Batch: 32, Samples: 200}},
	}
	for _, tt := range tests {
		got, err := attack.FromHyper(tt.giveH, tt.giveN)
		if err != nil || got != tt.want {
			t.Errorf("%s: FromHyper = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	if l := (attack.Local{Steps: 10, Batch: 64}); l.Total() != 640 {
		t.Errorf("Total() = %d; want m·|B| = 640", l.Total())
	}
	hp := sgd(0.1, 32, 5)
	hp.Schedule, hp.MinLR = trainer.ScheduleCosine, 0.01
	if _, err := attack.FromHyper(hp, 100); !errors.Is(err, attack.ErrNotApplicable) {
		t.Errorf("cosine schedule: error = %v; want ErrNotApplicable", err)
	}
	if _, err := attack.FromHyper(trainer.Hyper{}, 100); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("zero Hyper: error = %v; want fl.ErrInvalid", err)
	}
}

// TestNew: every name New accepts builds an attack of that name; an
// unknown one is fl.ErrInvalid and lists the known ones.
func TestNew(t *testing.T) {
	names := attack.Names()
	want := []string{"rlu", "rlu-closed-form", "rlu-posterior", "rlu-start", "rlu-naive", "rlu-unscaled", "rlu-transposed", "idlg", "llg+", "llg*-zero", "llg*-one", "zlg+", "ilrg"}
	if !slices.Equal(names, want) {
		t.Errorf("Names() = %v; want %v", names, want)
	}
	for _, name := range names {
		a, err := attack.New(name)
		if err != nil || a.Name() != name {
			t.Errorf("New(%q) = %v, %v", name, a, err)
		}
	}
	if _, err := attack.New("gradinversion"); !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "llg+") {
		t.Errorf("New(unknown) error = %v; want fl.ErrInvalid listing the names", err)
	}
}
