package algorithm_test

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/trainer"
)

// recordingLocal remembers the Objective the algorithm trained with.
type recordingLocal struct {
	*testLocal
	obj trainer.Objective
}

func (l *recordingLocal) Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error) {
	l.obj = obj
	return l.testLocal.Train(w, obj)
}

// TestObjectiveIsWhatTrains: for every registered algorithm (the table
// must name them all) and the variants whose objectives differ, the
// objective its client trained with is the one Objective states, and what
// Expose tells the attacks is that objective's modelled terms and the local
// update θ_k − θ^t its upload reveals, from the client's inputs before the
// round; the algorithms whose objective holds a term the attacks do not
// model say so.
func TestObjectiveIsWhatTrains(t *testing.T) {
	f := newFixture(t, sgd())
	n := len(f.global)
	c, ci := vec(50, n, 0.05), vec(51, n, 0.05)
	drift, last, g := vec(52, n, 0.05), vec(53, n, 0.05), vec(54, n, 0.05)
	grad, prev, bc := vec(55, n, 0.05), vec(56, n, 0.05), vec(57, n, 0.05)
	type input struct{ server, state fl.State }
	tests := []struct {
		name     string
		method   string     // registry name
		opts     fl.Options // its spec options
		in       input
		modelled bool // the attacks model every term of its objective
		// exact: Δ is the upload itself; otherwise it is recovered to
		// within float32 rounding.
		exact bool
	}{
		{"fedavg", "fedavg", nil, input{}, true, true},
		{"fedprox", "fedprox", fl.Options{"mu": 0.01}, input{}, true, true},
		{"fednova", "fednova", nil, input{}, true, true},
		{"scaffold", "scaffold", nil, input{state("c", c), state("c_i", ci)}, true, true},
		{"scaffold after_step", "scaffold", fl.Options{"correction": "after_step"}, input{state("c", c), state("c_i", ci)}, true, true},
		{"feddyn", "feddyn", fl.Options{"alpha": 0.01}, input{fl.State{}, state("grad", grad)}, true, true},
		{"feddc", "feddc", nil, input{state("mean_update", g), state("drift", drift, "last", last)}, true, false},
		{"feddc all", "feddc", fl.Options{"drift_mean": "all"}, input{state("mean_update", g), state("drift", drift, "last", last)}, true, true},
		{"feddc control_variate", "feddc", fl.Options{"drift_mean": "all", "correction": "control_variate", "size_scaled": true}, input{state("c", g), state("drift", drift, "c_i", last)}, true, true},
		{"moon", "moon", nil, input{fl.State{}, state("prev", prev)}, false, true},
		{"fedeba", "fedeba", nil, input{}, true, true},
		{"fedeba+ aligned", "fedeba+", nil, input{state(algorithm.BroadcastVector, bc), fl.State{}}, false, true},
		{"fedeba+ not aligned", "fedeba+", nil, input{}, true, true},
		{"prac-fedeba+", "prac-fedeba+", nil, input{}, true, true},
		{"propfair", "propfair", nil, input{}, false, true},
		{"fedfv", "fedfv", nil, input{}, true, true},
		{"qffl", "qffl", nil, input{}, true, true},
		{"term", "term", nil, input{}, true, true},
		{"afl", "afl", nil, input{}, true, true},
		{"fedmgda+", "fedmgda+", nil, input{}, true, true},
		{"fnrfl", "fnrfl", nil, input{}, true, true},
	}
	reg := methods.Builtin()
	var covered []string
	for _, tt := range tests {
		if !slices.Contains(covered, tt.method) {
			covered = append(covered, tt.method)
		}
	}
	slices.Sort(covered)
	if all := reg.Algorithms(); !slices.Equal(covered, all) {
		t.Fatalf("the table covers algorithms %v; add the missing ones of %v", covered, all)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := reg.Algorithm(tt.method, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingLocal{testLocal: f.local()}
			cl := f.client(tt.in.server, tt.in.state)
			cl.Local = rec
			up, err := algorithm.TrainClient(t.Context(), a, cl)
			if err != nil {
				t.Fatal(err)
			}
			stated, err := a.Objective(f.client(tt.in.server, tt.in.state))
			if err != nil {
				t.Fatal(err)
			}
			trained := rec.obj
			// FirstStep is an output the trainer fills: compare its size.
			if len(stated.FirstStep) != len(trained.FirstStep) {
				t.Errorf("first step of %d values stated; trained with %d", len(stated.FirstStep), len(trained.FirstStep))
			}
			stated.FirstStep, trained.FirstStep = nil, nil
			if !reflect.DeepEqual(stated, trained) {
				t.Errorf("Objective states %+v; the client trained with %+v", stated, trained)
			}
			got, ok, err := algorithm.Expose(a, f.client(tt.in.server, tt.in.state), up.Delta)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.modelled {
				t.Fatalf("Expose says modelled = %v; want %v", ok, tt.modelled)
			}
			if !ok {
				return
			}
			want := rec.obj
			if got.Objective.Prox != want.Prox {
				t.Errorf("prox = %v; want %v", got.Objective.Prox, want.Prox)
			}
			for _, v := range []struct {
				name      string
				got, want []float32
			}{{"anchor", got.Objective.Anchor, want.Anchor}, {"linear", got.Objective.Linear, want.Linear}, {"after_step", got.Objective.AfterStep, want.AfterStep}} {
				if (v.got == nil) != (v.want == nil) {
					t.Errorf("%s set = %v; want %v", v.name, v.got != nil, v.want != nil)
					continue
				}
				sameBits(t, v.name, v.got, v.want)
			}
			step := algorithm.Delta(up.Weights, f.global)
			if tt.exact {
				sameBits(t, "Δ", got.Delta, step)
				return
			}
			for j := range step {
				if d := math.Abs(float64(got.Delta[j] - step[j])); d > 1e-6*(1+math.Abs(float64(step[j]))) {
					t.Fatalf("Δ[%d] = %v; want %v", j, got.Delta[j], step[j])
				}
			}
		})
	}
}
