package engine

import (
	"strings"
	"testing"
)

// diverseSpec runs DivFL and FedCor (a short warm-up and a small GP) on the
// synthetic dataset: 4 points, 6 rounds, 10 clients, 3 per round. FedCor's
// random rounds are 1, 2 and 5; it asks every client's loss in rounds 1, 2,
// 3, 5 and 6, and fits its GP in rounds 3 and 6.
const diverseSpec = `
name: diverse
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 4}
rounds: 6
clients_per_round: 3
eval_every: 2
checkpoint_every: 3
seeds: [3, 4]
grid:
  sampler:
    - divfl
    - {name: fedcor, warmup: 2, interval: 3, dimension: 3, warmup_epochs: 30, epochs: 10}
`

// TestDiverseSamplers: DivFL and FedCor run through the engine, crashed and
// resumed (in training, aggregation, commit and a query) they give the
// straight run's models and rows, and the rounds table counts the client
// work their queries cost: DivFL's gradient of every client every round
// (n_k samples forward and backward, θ down, 1 + |θ| values up per client),
// FedCor's losses of every client in the rounds that ask (n_k samples
// forward, θ down, one value up).
func TestDiverseSamplers(t *testing.T) {
	_, plan, want := runSpec(t, diverseSpec, nil)
	crashAndResume(t, diverseSpec, want, nil)
	total := map[string]int64{} // training samples of every client, by point
	for _, p := range want.Partitions {
		total[p.Point] += int64(p.Train)
	}
	params := map[string]int64{}
	for _, p := range want.Points {
		params[p.Point] = p.NumParams
	}
	fedcorAsks := map[int32]bool{1: true, 2: true, 3: true, 5: true, 6: true}
	var divfl, fedcor int
	for _, r := range want.Rounds {
		if r.Round == 0 { // the initial model's evaluation
			continue
		}
		label := ""
		for _, p := range plan.Points {
			if p.ID == r.Point {
				label = p.Label
			}
		}
		n, P := int64(10), params[r.Point]
		train := int64(r.Clients) * P // each trained client uploads its update
		switch {
		case strings.Contains(label, "divfl"):
			divfl++
			if r.Queried != 10 || r.QuerySamples != total[r.Point] || r.QueryGradSamples != total[r.Point] || r.UpFloats != n*(1+P)+train {
				t.Errorf("divfl round %d: queried %d, query_samples %d, query_grad_samples %d, up_floats %d; want 10, %d, %d, %d",
					r.Round, r.Queried, r.QuerySamples, r.QueryGradSamples, r.UpFloats, total[r.Point], total[r.Point], n*(1+P)+train)
			}
		case strings.Contains(label, "fedcor"):
			fedcor++
			var q, samples, up int64 = 0, 0, train
			if fedcorAsks[r.Round] {
				q, samples, up = n, total[r.Point], n+train
			}
			if int64(r.Queried) != q || r.QuerySamples != samples || r.QueryGradSamples != 0 || r.UpFloats != up {
				t.Errorf("fedcor round %d: queried %d, query_samples %d, query_grad_samples %d, up_floats %d; want %d, %d, 0, %d",
					r.Round, r.Queried, r.QuerySamples, r.QueryGradSamples, r.UpFloats, q, samples, up)
			}
		default:
			t.Errorf("round of point %q", label)
		}
		if r.Clients != 3 {
			t.Errorf("%s round %d trained %d clients; want 3", label, r.Round, r.Clients)
		}
	}
	if divfl != 12 || fedcor != 12 {
		t.Errorf("%d divfl and %d fedcor rounds; want 12 each", divfl, fedcor)
	}
}
