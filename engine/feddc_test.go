package engine

import (
	"math"
	"testing"
)

// feddcSpec trains FedDC with every client every round, as the paper's
// full-participation runs do, long enough for a drift counted twice to
// show: the server adds the mean drift, so a correction against a global
// update that holds the drift pushes every client along it again, and the
// global update doubles every round (issue 39: 0.72, 1.67, 2.84, 5.3, 10.6,
// … on Fashion-MNIST).
const feddcSpec = `
name: feddc-stable
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.05, batch_size: 16, local_steps: 10}
rounds: 30
clients_per_round: 8
eval_every: 30
checkpoint_every: 1
seeds: [5]
grid:
  algorithm: [feddc, {name: feddc, drift_mean: all}, {name: feddc, correction: control_variate}]
`

// TestFedDCUpdatesStayBounded: the global model's step ‖θ^{t+1} − θ^t‖ of
// every FedDC variant stays within 4 times its largest step of the first
// ten rounds over the last ten rounds (the doubling would make it 2^20
// times larger), and the run ends without diverging.
func TestFedDCUpdatesStayBounded(t *testing.T) {
	e, plan, snap := runSpec(t, feddcSpec, nil)
	for _, p := range plan.Points {
		w := globals(t, e, plan.Name, p.ID, 30)
		step := func(r int) float64 { // ‖θ^{r+1} − θ^r‖, r ≥ 1
			s := 0.0
			for j := range w[r] {
				d := float64(w[r][j]) - float64(w[r-1][j])
				s += d * d
			}
			return math.Sqrt(s)
		}
		early, late := 0.0, 0.0
		for r := 1; r < 10; r++ {
			early = math.Max(early, step(r))
		}
		for r := 20; r < 30; r++ {
			late = math.Max(late, step(r))
		}
		if !(late <= 4*early) {
			t.Errorf("%s: largest step of rounds 21–30 %.3g, of rounds 2–10 %.3g: want at most 4 times", p.Label, late, early)
		}
	}
	for _, r := range snap.Results {
		if r.Status != "done" {
			t.Errorf("point %s: %s", r.Point, r.Status)
		}
	}
}
