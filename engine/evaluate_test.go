package engine

import (
	"math"
	"testing"

	"github.com/flsweep/flsweep/fairness"
)

// fairSpec is the setup of FedEBA+ (Wang et al., arXiv 2301.12407) in
// small: label-sorted shards, 2 per client, and an 80/20 holdout of each
// client's data as its local test set; 20 clients, so the worst/best 5% is
// 1 client and 10% is 2.
const fairSpec = `
name: fair
dataset: {name: synthetic}
partition: {scheme: shards, clients: 20, shards_per_client: 2, test: holdout, test_fraction: 0.2}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 5
clients_per_round: 5
eval_every: 2
seeds: [3]
`

// TestFairnessColumns: on every evaluated round the rounds row's
// client-accuracy columns are package fairness applied to the round's
// clients-table test_acc values (every client with a test set, in client
// order), bit for bit, client_acc_var_pct2 is 10⁴ × client_acc_var, and on
// the other rounds they are null.
func TestFairnessColumns(t *testing.T) {
	_, _, s := runSpec(t, fairSpec, nil)
	accs := map[int32][]float64{} // by round; s.Clients is in client order within a round
	for _, c := range s.Clients {
		if c.TestAcc != nil {
			accs[c.Round] = append(accs[c.Round], *c.TestAcc)
		}
	}
	evaluated := 0
	for _, r := range s.Rounds {
		cols := []struct {
			name string
			got  *float64
			want func(fairness.Metrics) float64
		}{
			{"client_acc_mean", r.ClientAccMean, func(f fairness.Metrics) float64 { return f.Mean }},
			{"client_acc_var", r.ClientAccVar, func(f fairness.Metrics) float64 { return f.Var }},
			{"client_acc_worst5", r.ClientAccWorst, func(f fairness.Metrics) float64 { return f.Worst5 }},
			{"client_acc_best5", r.ClientAccBest, func(f fairness.Metrics) float64 { return f.Best5 }},
			{"client_acc_var_pct2", r.ClientAccVarPct2, func(f fairness.Metrics) float64 { return 1e4 * f.Var }},
			{"client_acc_std", r.ClientAccStd, func(f fairness.Metrics) float64 { return f.Std }},
			{"client_acc_worst10", r.ClientAccWorst10, func(f fairness.Metrics) float64 { return f.Worst10 }},
			{"client_acc_best10", r.ClientAccBest10, func(f fairness.Metrics) float64 { return f.Best10 }},
			{"client_acc_cv", r.ClientAccCV, func(f fairness.Metrics) float64 { return f.CV }},
			{"client_acc_angle", r.ClientAccAngle, func(f fairness.Metrics) float64 { return f.Angle }},
			{"client_acc_kl", r.ClientAccKL, func(f fairness.Metrics) float64 { return f.KL }},
		}
		if !r.Evaluated {
			for _, c := range cols {
				if c.got != nil {
					t.Errorf("round %d (not evaluated): %s = %v; want null", r.Round, c.name, *c.got)
				}
			}
			continue
		}
		evaluated++
		if n := len(accs[r.Round]); n != 20 {
			t.Fatalf("round %d: %d clients with a test accuracy; want all 20", r.Round, n)
		}
		f, err := fairness.Measure(accs[r.Round])
		if err != nil {
			t.Fatal(err)
		}
		if f.Var == 0 {
			t.Errorf("round %d: every client has accuracy %v; the test wants a spread", r.Round, f.Mean)
		}
		for _, c := range cols {
			if c.got == nil || *c.got != c.want(f) {
				t.Errorf("round %d: %s = %v; want %v from the clients table", r.Round, c.name, deref(c.got), c.want(f))
			}
		}
		if r.ClientAccVarPct2 != nil && r.ClientAccVar != nil && math.Abs(*r.ClientAccVarPct2-1e4**r.ClientAccVar) > 1e-12**r.ClientAccVarPct2 {
			t.Errorf("round %d: client_acc_var_pct2 = %v; want 10⁴ × client_acc_var = %v", r.Round, *r.ClientAccVarPct2, 1e4**r.ClientAccVar)
		}
		if r.ClientAccWorst10 != nil && (*r.ClientAccWorst10 < *r.ClientAccWorst || *r.ClientAccBest10 > *r.ClientAccBest) {
			t.Errorf("round %d: worst/best 10%% = %v/%v lie outside worst/best 5%% = %v/%v", r.Round, *r.ClientAccWorst10, *r.ClientAccBest10, *r.ClientAccWorst, *r.ClientAccBest)
		}
	}
	if want := 4; evaluated != want { // rounds 0, 2, 4 and the last, 5
		t.Errorf("%d evaluated rounds; want %d", evaluated, want)
	}
}

// deref returns *p, or nil for a nil p, for messages.
func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
