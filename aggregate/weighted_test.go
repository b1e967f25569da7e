package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
)

func apply(t *testing.T, r fl.Rule, global []float32, sel fl.Selection, deltas [][]float32) []float32 {
	t.Helper()
	agg, err := r.Begin(global, sel, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range sel.Clients {
		if err := agg.Add(k, deltas[i]); err != nil {
			t.Fatal(err)
		}
	}
	dst := make([]float32, len(global))
	if err := agg.Finish(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestWeightedDeltaKnownValues: two- and three-client toys traced by hand.
func TestWeightedDeltaKnownValues(t *testing.T) {
	tests := []struct {
		name       string
		giveRule   WeightedDelta
		giveGlobal []float32
		giveW      []float64
		giveDeltas [][]float32
		want       []float32
	}{
		{
			// FedAvg with n_k/n = 3/5 and 2/5: θ + 0.6·[1,2] + 0.4·[−1,4] = [1,2] + [0.2, 2.8].
			name: "fedavg two clients", giveRule: WeightedDelta{EtaG: 1},
			giveGlobal: []float32{1, 2}, giveW: []float64{0.6, 0.4},
			giveDeltas: [][]float32{{1, 2}, {-1, 4}}, want: []float32{1.2, 4.8},
		},
		{
			// Uniform sampling with Σω = 1.5 is NOT renormalised: 0 + 1·(0.5·2 + 1·2) = 3.
			name: "weights not renormalised", giveRule: WeightedDelta{EtaG: 1},
			giveGlobal: []float32{0}, giveW: []float64{0.5, 1},
			giveDeltas: [][]float32{{2}, {2}}, want: []float32{3},
		},
		{
			// Normalize: ω/Σω = 1/3, 2/3 → 0 + (2/3 + 4/3) = 2.
			name: "normalize", giveRule: WeightedDelta{EtaG: 1, Normalize: true},
			giveGlobal: []float32{0}, giveW: []float64{0.5, 1},
			giveDeltas: [][]float32{{2}, {2}}, want: []float32{2},
		},
		{
			// η_g = 0.5 halves the step: 10 + 0.5·(1·(−4)) = 8.
			name: "server lr", giveRule: WeightedDelta{EtaG: 0.5},
			giveGlobal: []float32{10}, giveW: []float64{1},
			giveDeltas: [][]float32{{-4}}, want: []float32{8},
		},
		{
			// Zero weights change nothing.
			name: "zero weights", giveRule: WeightedDelta{EtaG: 1},
			giveGlobal: []float32{1, -1}, giveW: []float64{0, 0, 0},
			giveDeltas: [][]float32{{5, 5}, {6, 6}, {7, 7}}, want: []float32{1, -1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := fl.Selection{Weights: tt.giveW}
			for i := range tt.giveW {
				sel.Clients = append(sel.Clients, 10+i)
				sel.Draws = append(sel.Draws, 1)
			}
			got := apply(t, tt.giveRule, tt.giveGlobal, sel, tt.giveDeltas)
			for j := range got {
				if math.Abs(float64(got[j]-tt.want[j])) > 1e-6 {
					t.Errorf("Apply = %v; want %v", got, tt.want)
					break
				}
			}
		})
	}
}

// TestIdenticalUpdates: when every client returns the same delta and Σω = 1,
// the new model is θ + η_g Δ whatever the weights.
func TestIdenticalUpdates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	global := make([]float32, 50)
	delta := make([]float32, 50)
	for j := range global {
		global[j] = r.Float32()
		delta[j] = r.Float32() - 0.5
	}
	w := []float64{0.1, 0.2, 0.3, 0.4}
	sel := fl.Selection{Clients: []int{0, 1, 2, 3}, Weights: w, Draws: []int{1, 1, 1, 1}}
	got := apply(t, WeightedDelta{EtaG: 1}, global, sel, [][]float32{delta, delta, delta, delta})
	for j := range got {
		if want := global[j] + delta[j]; math.Abs(float64(got[j]-want)) > 1e-6 {
			t.Fatalf("param %d = %v; want θ+Δ = %v", j, got[j], want)
		}
	}
}

// TestPermutationInvariance: relabelling clients (keeping each weight with
// its delta) changes nothing beyond float rounding of the float64 sum.
func TestPermutationInvariance(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim, k = 20, 5
	global := make([]float32, dim)
	deltas := make([][]float32, k)
	w := make([]float64, k)
	for i := range deltas {
		deltas[i] = make([]float32, dim)
		for j := range deltas[i] {
			deltas[i][j] = r.Float32()
		}
		w[i] = r.Float64()
	}
	sel := fl.Selection{Clients: []int{0, 1, 2, 3, 4}, Weights: w, Draws: []int{1, 1, 1, 1, 1}}
	a := apply(t, WeightedDelta{EtaG: 1}, global, sel, deltas)
	perm := []int{3, 0, 4, 1, 2}
	pw := make([]float64, k)
	pd := make([][]float32, k)
	for i, p := range perm {
		pw[i], pd[i] = w[p], deltas[p]
	}
	b := apply(t, WeightedDelta{EtaG: 1}, global, fl.Selection{Clients: sel.Clients, Weights: pw, Draws: sel.Draws}, pd)
	for j := range a {
		if math.Abs(float64(a[j]-b[j])) > 1e-6 {
			t.Fatalf("permuted result differs at %d: %v vs %v", j, a[j], b[j])
		}
	}
}

func TestBadInput(t *testing.T) {
	sel := fl.Selection{Clients: []int{1, 2}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	agg, _ := WeightedDelta{EtaG: 1}.Begin([]float32{0, 0}, sel, nil)
	if err := agg.Add(2, []float32{1, 1}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("out-of-order Add error = %v; want ErrInvalid", err)
	}
	if err := agg.Add(1, []float32{1}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("short delta error = %v; want ErrInvalid", err)
	}
	agg, _ = WeightedDelta{EtaG: 1}.Begin([]float32{0}, fl.Selection{Clients: []int{0}, Weights: []float64{1}, Draws: []int{1}}, nil)
	_ = agg.Add(0, []float32{float32(math.Inf(1))})
	if err := agg.Finish(make([]float32, 1)); !errors.Is(err, fl.ErrDiverged) {
		t.Errorf("Inf delta: Finish error = %v; want ErrDiverged", err)
	}
	for _, o := range []fl.Options{{"server_lr": -1.0}, {"server_lr": 0.0}, {"serverlr": 1.0}} {
		if _, err := NewWeightedDelta(o); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("NewWeightedDelta(%v) error = %v; want ErrInvalid", o, err)
		}
	}
}
