package algorithm_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

func newSCAFFOLD(t *testing.T, correction string) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.NewSCAFFOLD(fl.Options{"correction": correction})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSCAFFOLDClient checks a client's round against Karimireddy et al.
// 2020, Algorithm 1 (option II), with nonzero c (sent by the server) and
// c_i (the client's state):
//
//   - it trains exactly like the trainer with c − c_i as Objective.Linear
//     (correction "gradient", line 10) or as Objective.AfterStep
//     (correction "after_step", NIID-Bench);
//   - it keeps c_i⁺ = c_i − c + (x − y)/LRSum (line 12), computed in
//     float64 and stored as float32, and uploads Δc = c_i⁺ − c_i from the
//     unrounded c_i⁺ (line 13) and Δy = y − x.
func TestSCAFFOLDClient(t *testing.T) {
	tests := []struct {
		name       string
		correction string
		obj        func(corr []float32) trainer.Objective
	}{
		{"gradient", algorithm.CorrectGradient, func(v []float32) trainer.Objective { return trainer.Objective{Linear: v} }},
		{"after_step", algorithm.CorrectAfterStep, func(v []float32) trainer.Objective { return trainer.Objective{AfterStep: v} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sgd())
			n := len(f.global)
			// σ = 0.05: a correction of the size of the gradients.
			c, ci := vec(11, n, 0.05), vec(12, n, 0.05)
			corr := make([]float32, n)
			for j := range corr {
				corr[j] = c[j] - ci[j]
			}
			up := f.train(newSCAFFOLD(t, tt.correction), state("c", c), state("c_i", ci))
			y, res := f.reference(tt.obj(corr))
			sameBits(t, "y", up.Weights, y)
			sameBits(t, "Δy", up.Delta, algorithm.Delta(y, f.global))
			if !reflect.DeepEqual(up.Train, res) {
				t.Errorf("Train = %+v; want %+v", up.Train, res)
			}
			// LRSum = K·η = 5·0.1 summed in float64 (sgd()).
			if res.LRSum < 0.5-1e-15 || res.LRSum > 0.5+1e-15 {
				t.Errorf("LRSum = %v; want 0.5", res.LRSum)
			}
			ciNew := vector(t, up.State, "c_i", n)
			dc := vector(t, up.Vectors, "delta_c", n)
			for j := range n {
				v := float64(ci[j]) - float64(c[j]) + (float64(f.global[j])-float64(y[j]))/res.LRSum
				if want := float32(v); ciNew[j] != want {
					t.Errorf("c_i⁺[%d] = %v; want c_i − c + (x − y)/LRSum = %v", j, ciNew[j], want)
					break
				}
				if want := float32(v - float64(ci[j])); dc[j] != want {
					t.Errorf("Δc[%d] = %v; want c_i⁺ − c_i = %v", j, dc[j], want)
					break
				}
			}
			if len(up.State.Vectors) != 1 || len(up.Vectors.Vectors) != 1 {
				t.Errorf("state %v, vectors %v; want only c_i and delta_c", up.State.Names(), up.Vectors.Names())
			}
		})
	}
}

// TestSCAFFOLDFirstRound checks that a client without state starts from
// c_i = 0: it trains with the correction c alone and keeps
// c_i⁺ = −c + (x − y)/LRSum.
func TestSCAFFOLDFirstRound(t *testing.T) {
	f := newFixture(t, sgd())
	n := len(f.global)
	c := vec(13, n, 0.05)
	up := f.train(newSCAFFOLD(t, algorithm.CorrectGradient), state("c", c), fl.State{})
	y, res := f.reference(trainer.Objective{Linear: c})
	sameBits(t, "y", up.Weights, y)
	ciNew, dc := vector(t, up.State, "c_i", n), vector(t, up.Vectors, "delta_c", n)
	for j := range n {
		v := -float64(c[j]) + (float64(f.global[j])-float64(y[j]))/res.LRSum
		if ciNew[j] != float32(v) || dc[j] != float32(v) {
			t.Errorf("c_i⁺[%d], Δc[%d] = %v, %v; want both %v", j, j, ciNew[j], dc[j], float32(v))
			break
		}
	}
}

// TestSCAFFOLDZeroCorrection checks that c = c_i (a correction of exactly
// 0) trains exactly like the trainer with a zero Objective.Linear.
func TestSCAFFOLDZeroCorrection(t *testing.T) {
	f := newFixture(t, sgd())
	n := len(f.global)
	c := vec(14, n, 0.05)
	up := f.train(newSCAFFOLD(t, algorithm.CorrectGradient), state("c", c), state("c_i", slices.Clone(c)))
	y, _ := f.reference(trainer.Objective{Linear: make([]float32, n)})
	sameBits(t, "y", up.Weights, y)
}

// TestSCAFFOLDServer traces one round of the server by hand: N = 4
// clients, a 2-parameter model, clients 1 and 3 selected with ω = (1/4,
// 3/4), the rule θ + Σ ω Δy (η_g = 1). Every number is a dyadic fraction,
// so every float32 and float64 operation below is exact.
//
//	θ = (1, 2),  c = (0.5, −0.25)
//	Δy_1 = (0.5, −1),   Δc_1 = (1, 2)
//	Δy_3 = (0.25, 0.5), Δc_3 = (−0.5, 0.5)
//	θ⁺ = θ + ¼Δy_1 + ¾Δy_3 = (1 + 0.125 + 0.1875, 2 − 0.25 + 0.375) = (1.3125, 2.125)
//	c⁺ = c + (Δc_1 + Δc_3)/N = (0.5 + 0.5/4, −0.25 + 2.5/4) = (0.625, 0.375)
func TestSCAFFOLDServer(t *testing.T) {
	a := newSCAFFOLD(t, algorithm.CorrectGradient)
	if got := a.Sends(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("Sends() = %v; want [c]", got)
	}
	s0, err := a.Init(2)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "initial c", vector(t, s0, "c", 2), []float32{0, 0})

	sel := fl.Selection{Clients: []int{1, 3}, Weights: []float64{0.25, 0.75}, Draws: []int{1, 1}}
	r := algorithm.Server{
		Round: 5, Global: []float32{1, 2}, State: state("c", []float32{0.5, -0.25}),
		Selection: sel, Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 4,
	}
	deltas := [][]float32{{0.5, -1}, {0.25, 0.5}}
	ups := []fl.State{state("delta_c", []float32{1, 2}), state("delta_c", []float32{-0.5, 0.5})}
	got, s := serve(t, a, r, deltas, ups)
	sameBits(t, "θ⁺", got, []float32{1.3125, 2.125})
	sameBits(t, "c⁺", vector(t, s, "c", 2), []float32{0.625, 0.375})
}

// TestSCAFFOLDServerNeedsDeltaC checks that an upload without Δc (a client
// trained by another algorithm) is refused.
func TestSCAFFOLDServerNeedsDeltaC(t *testing.T) {
	a := newSCAFFOLD(t, algorithm.CorrectGradient)
	sel := fl.Selection{Clients: []int{0}, Weights: []float64{1}, Draws: []int{1}}
	r := algorithm.Server{Global: []float32{1, 2}, State: state("c", []float32{0, 0}), Selection: sel, Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 2}
	agg, err := a.Begin(r)
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "Add without delta_c", agg.Add(0, []float32{1, 1}, fl.State{}), "delta_c")
}
