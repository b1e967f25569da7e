package algorithm_test

import (
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestFedProxZeroMuIsFedAvg checks the claim of fedavg.go: FedProx with
// μ = 0 uploads bit for bit what FedAvg uploads (weights, delta, training
// result), and FedAvg's upload is plain local SGD from θ^t with
// Δ = θ_k − θ^t.
func TestFedProxZeroMuIsFedAvg(t *testing.T) {
	f := newFixture(t, sgd())
	avg, err := algorithm.NewFedAvg(nil)
	if err != nil {
		t.Fatal(err)
	}
	prox, err := algorithm.NewFedProx(fl.Options{"mu": 0.0})
	if err != nil {
		t.Fatal(err)
	}
	a, p := f.train(avg, fl.State{}, fl.State{}), f.train(prox, fl.State{}, fl.State{})
	sameBits(t, "FedProx(μ = 0) weights", p.Weights, a.Weights)
	sameBits(t, "FedProx(μ = 0) delta", p.Delta, a.Delta)
	if !reflect.DeepEqual(p.Train, a.Train) {
		t.Errorf("FedProx(μ = 0) Train = %+v; want FedAvg's %+v", p.Train, a.Train)
	}
	ref, res := f.reference(trainer.Objective{})
	sameBits(t, "FedAvg weights", a.Weights, ref)
	sameBits(t, "FedAvg delta", a.Delta, algorithm.Delta(ref, f.global))
	if !reflect.DeepEqual(a.Train, res) {
		t.Errorf("FedAvg Train = %+v; want the trainer's %+v", a.Train, res)
	}
	if !a.State.Empty() || len(a.Vectors.Vectors) != 0 || a.Scalars != nil {
		t.Errorf("FedAvg uploaded state %v, vectors %v, scalars %v; want none", a.State, a.Vectors, a.Scalars)
	}
}

// TestFedProxTrainsProximal checks that FedProx with μ > 0 trains with the
// trainer's Proximal(μ) objective, and that it differs from FedAvg (so the
// test above compares two runs that could differ).
func TestFedProxTrainsProximal(t *testing.T) {
	f := newFixture(t, sgd())
	const mu = 0.5 // large enough to move the weights visibly in 5 steps
	prox, err := algorithm.NewFedProx(fl.Options{"mu": mu})
	if err != nil {
		t.Fatal(err)
	}
	// FedProx's pull is −η·μ·(w − θ^t) per step and w − θ^t = 0 at the first
	// step; the effect shows from step 2 on.
	up := f.train(prox, fl.State{}, fl.State{})
	ref, _ := f.reference(trainer.Proximal(mu))
	sameBits(t, "FedProx(μ = 0.5) weights", up.Weights, ref)
	plain, _ := f.reference(trainer.Objective{})
	if equalBits(up.Weights, plain) {
		t.Error("FedProx(μ = 0.5) trained exactly like FedAvg; the proximal term did nothing")
	}
}

// TestFairBaselinesTrainAsFedAvg: q-FFL, TERM, AFL and FedMGDA+ differ from
// FedAvg only on the server; their clients upload what FedAvg's do, bit for
// bit.
func TestFairBaselinesTrainAsFedAvg(t *testing.T) {
	f := newFixture(t, sgd())
	want := f.train(algorithm.FedAvg{}, fl.State{}, fl.State{})
	for _, name := range []string{"qffl", "term", "afl", "fedmgda+"} {
		a, err := factories[name](nil)
		if err != nil {
			t.Fatal(err)
		}
		got := f.train(a, fl.State{}, fl.State{})
		sameBits(t, name+" weights", got.Weights, want.Weights)
		sameBits(t, name+" delta", got.Delta, want.Delta)
		if !reflect.DeepEqual(got.Train, want.Train) || !got.State.Empty() || len(got.Vectors.Vectors) != 0 || got.Scalars != nil {
			t.Errorf("%s upload = %+v; want FedAvg's %+v", name, got, want)
		}
	}
}
