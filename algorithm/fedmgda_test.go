package algorithm_test

import (
	"math"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/qp"
)

func newFedMGDA(t *testing.T, eps float64) algorithm.Algorithm {
	t.Helper()
	return newFedMGDAOffset(t, eps, 1e-8)
}

func newFedMGDAOffset(t *testing.T, eps, offset float64) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.NewFedMGDAPlus(fl.Options{"epsilon": eps, "norm_offset": offset})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// mgdaServer is a FedMGDA+ round over clients with n_k training samples.
func mgdaServer(global []float32, n []int, etaG float64) algorithm.Server {
	clients := make([]int, len(n))
	for i := range clients {
		clients[i] = 2 * i
	}
	r := lossServer(global, uniformSel(clients...), nil, nil, etaG, 0.1)
	for i := range n {
		r.Clients[i].NumExamples = n[i]
	}
	return r
}

// mgdaRound runs FedMGDA+'s server and returns θ⁺ and λ*.
func mgdaRound(t *testing.T, a algorithm.Algorithm, r algorithm.Server, deltas [][]float32) ([]float32, []float64) {
	t.Helper()
	agg, err := a.Begin(r)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range r.Selection.Clients {
		if err := agg.Add(k, deltas[i], fl.State{}); err != nil {
			t.Fatal(err)
		}
	}
	dst := make([]float32, len(r.Global))
	s, err := agg.Finish(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Empty() {
		t.Errorf("server state = %v; want none", s)
	}
	return dst, agg.(algorithm.Reporting).Report().Weights
}

// TestFedMGDAOpposite: two clients with opposite updates of different
// lengths and λ0 = (0.75, 0.25) (n = 30, 10). Without the norm offset the
// normalised updates are ±(1, 0), so ‖Σλd‖ is least at λ = (½, ½):
//
//	ε = 0.3: (½, ½) is within reach, Σλd = 0 and θ stays;
//	ε = 0.1: the box stops at (0.65, 0.35): θ⁺ = θ + η_g·(0.65 − 0.35)·(1, 0);
//	ε = 0:   λ* = λ0: θ⁺ = θ + η_g·(0.75 − 0.25)·(1, 0).
func TestFedMGDAOpposite(t *testing.T) {
	tests := []struct {
		giveEps float64
		want    []float64 // λ*
		step    float64   // θ⁺_0 − θ_0 at η_g = 0.5
	}{
		{0.3, []float64{0.5, 0.5}, 0},
		{0.1, []float64{0.65, 0.35}, 0.5 * 0.3},
		{0, []float64{0.75, 0.25}, 0.5 * 0.5},
	}
	deltas := [][]float32{{0.3, 0}, {-0.1, 0}}
	for _, tt := range tests {
		got, lambda := mgdaRound(t, newFedMGDAOffset(t, tt.giveEps, 0), mgdaServer([]float32{1, 1}, []int{30, 10}, 0.5), deltas)
		for i := range lambda {
			if math.Abs(lambda[i]-tt.want[i]) > 1e-12 {
				t.Errorf("ε = %v: λ* = %v; want %v", tt.giveEps, lambda, tt.want)
				break
			}
		}
		if math.Abs(float64(got[0])-1-tt.step) > 1e-6 || got[1] != 1 {
			t.Errorf("ε = %v: θ⁺ = %v; want (%v, 1)", tt.giveEps, got, 1+tt.step)
		}
	}
}

// TestFedMGDAStep checks the server against its definition on random
// updates: λ* solves the QP on the Gram matrix of the normalised updates
// (computed here independently) and θ⁺ = θ − η_g Σ λ*_k d_k. With ε = 0
// the step is −η_g Σ λ0_k d_k.
func TestFedMGDAStep(t *testing.T) {
	global := vec(71, 10, 1)
	deltas := [][]float32{vec(72, 10, 0.1), vec(73, 10, 0.3), vec(74, 10, 0.05), vec(75, 10, 0.2)}
	n := []int{10, 20, 30, 40}
	d := make([][]float64, len(deltas)) // d_k = −Δ_k/(‖Δ_k‖ + 1e−8)
	for k, dk := range deltas {
		norm := 0.0
		for _, v := range dk {
			norm += float64(v) * float64(v)
		}
		norm = math.Sqrt(norm) + 1e-8
		d[k] = make([]float64, len(dk))
		for j, v := range dk {
			d[k][j] = -float64(v) / norm
		}
	}
	g := make([][]float64, len(d))
	for k := range g {
		g[k] = make([]float64, len(d))
		for j := range g {
			for p := range d[k] {
				g[k][j] += d[k][p] * d[j][p]
			}
		}
	}
	lambda0 := []float64{0.1, 0.2, 0.3, 0.4}
	for _, eps := range []float64{0, 0.03, 0.1, 1} {
		got, lambda := mgdaRound(t, newFedMGDA(t, eps), mgdaServer(global, n, 0.7), deltas)
		lo, hi := fedmgdaBox(lambda0, eps)
		want, err := qp.SimplexBox(g, nil, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(objective(g, lambda)-objective(g, want)) > 1e-12 {
			t.Errorf("ε = %v: λ* = %v (objective %v); the QP gives %v (objective %v)", eps, lambda, objective(g, lambda), want, objective(g, want))
		}
		if eps == 0 {
			for k := range lambda {
				if math.Abs(lambda[k]-lambda0[k]) > 1e-15 {
					t.Errorf("ε = 0: λ* = %v; want λ0 = %v", lambda, lambda0)
					break
				}
			}
		}
		wantTheta := make([]float64, len(global))
		for j, v := range global {
			wantTheta[j] = float64(v)
			for k := range d {
				wantTheta[j] -= 0.7 * lambda[k] * d[k][j]
			}
		}
		closeTo(t, "θ⁺", got, wantTheta, 1e-6)
	}
}

// TestFedMGDAZeroUpdate: a client that did not move (Δ = 0) has d = 0,
// the min-norm combination puts all the weight it may on it, and nothing
// becomes NaN.
func TestFedMGDAZeroUpdate(t *testing.T) {
	got, lambda := mgdaRound(t, newFedMGDA(t, 1), mgdaServer([]float32{1, 1}, []int{10, 10}, 1), [][]float32{{0.2, 0.1}, {0, 0}})
	if lambda[0] > 1e-12 || math.Abs(lambda[1]-1) > 1e-12 {
		t.Errorf("λ* = %v; want (0, 1)", lambda)
	}
	if got[0] != 1 || got[1] != 1 {
		t.Errorf("θ⁺ = %v; want θ = (1, 1)", got)
	}
}

// TestFedMGDAServerRejects: the server needs n_k > 0 and the deltas in the
// selection's order; it does not ask the engine for losses.
func TestFedMGDAServerRejects(t *testing.T) {
	a := newFedMGDA(t, 0.03)
	if _, ok := a.(algorithm.LossUser); ok {
		t.Errorf("fedmgda+ is a LossUser; it needs no losses")
	}
	_, err := a.Begin(mgdaServer([]float32{0}, []int{10, 0}, 1))
	wantInvalid(t, "n_k = 0", err, "client 2")
	agg, err := a.Begin(mgdaServer([]float32{0}, []int{10, 10}, 1))
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "out of order", agg.Add(2, []float32{1}, fl.State{}), "out of order")
}

// fedmgdaBox returns FedMGDA+'s bounds max(0, λ0 − ε) ≤ λ ≤ min(1, λ0 + ε).
func fedmgdaBox(lambda0 []float64, eps float64) (lo, hi []float64) {
	lo, hi = make([]float64, len(lambda0)), make([]float64, len(lambda0))
	for i, v := range lambda0 {
		lo[i], hi[i] = math.Max(0, v-eps), math.Min(1, v+eps)
	}
	return lo, hi
}

// objective returns λᵀGλ.
func objective(g [][]float64, x []float64) float64 {
	v := 0.0
	for i := range x {
		for j := range x {
			v += x[i] * g[i][j] * x[j]
		}
	}
	return v
}
