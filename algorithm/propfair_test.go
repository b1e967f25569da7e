package algorithm_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestPropFairIsFedAvgAtFiveTimesLR checks the gotcha of propfair.go: with
// M = thres = 0.2 (the defaults) and plain SGD, every minibatch has
// ℓ > 0 = M − thres, so every step takes the linear branch ℓ/M, and
// PropFair's local training is FedAvg's at 5× the learning rate, to float
// rounding (η·(5g) against (5η)·g), for one step and for the fixture's 5.
func TestPropFairIsFedAvgAtFiveTimesLR(t *testing.T) {
	a, err := algorithm.NewPropFair(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, steps := range []int{1, 5} {
		hp := sgd()
		hp.LocalSteps = steps
		f := newFixture(t, hp)
		up := f.train(a, fl.State{}, fl.State{})
		hp.LR *= 5
		f5 := newFixture(t, hp)
		want, _ := f5.reference(trainer.Objective{})
		for j := range want {
			if d := math.Abs(float64(up.Weights[j]) - float64(want[j])); d > 1e-6*(1+math.Abs(float64(want[j]))) {
				t.Fatalf("%d steps: weight %d = %v; want FedAvg's at lr 0.5, %v", steps, j, up.Weights[j], want[j])
			}
		}
		sameBits(t, "PropFair delta", up.Delta, algorithm.Delta(up.Weights, f.global))
		if plain, _ := f.reference(trainer.Objective{}); equalBits(up.Weights, plain) {
			t.Errorf("%d steps: PropFair trained like FedAvg at lr 0.1; the test is vacuous", steps)
		}
	}
}

// TestPropFairTrainsTransformedLoss checks that the options reach the
// trainer: M = 5 (the log branch, the fixture's losses are near 1) and
// M = 1 with and without huber (the linear branch, slope 1/thres = 5
// against 1/M = 1) train bit for bit with trainer.PropFairLoss.
func TestPropFairTrainsTransformedLoss(t *testing.T) {
	f := newFixture(t, sgd())
	var got [][]float32
	for _, tt := range []struct {
		opts fl.Options
		want trainer.PropFairLoss
	}{
		{fl.Options{"m": 5}, trainer.PropFairLoss{M: 5, Thres: 0.2}},
		{fl.Options{"m": 1}, trainer.PropFairLoss{M: 1, Thres: 0.2}},
		{fl.Options{"m": 1, "huber": true}, trainer.PropFairLoss{M: 1, Thres: 0.2, Huber: true}},
	} {
		a, err := algorithm.NewPropFair(tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		up := f.train(a, fl.State{}, fl.State{})
		ref, res := f.reference(trainer.Objective{PropFair: &tt.want})
		sameBits(t, "PropFair weights", up.Weights, ref)
		if !reflect.DeepEqual(up.Train, res) {
			t.Errorf("%v: Train = %+v; want the trainer's %+v", tt.opts, up.Train, res)
		}
		got = append(got, up.Weights)
	}
	if equalBits(got[1], got[2]) {
		t.Error("huber trained like the default on the linear branch; the options did not reach the trainer")
	}
}
