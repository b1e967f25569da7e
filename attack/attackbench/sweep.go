package attackbench

import (
	"encoding/json"

	"github.com/flsweep/flsweep/sweep"
)

// sweepName is the name of the sweep a benchmark runs, in a bucket of its
// own.
const sweepName = "attackbench"

// sweepSpec returns the sweep that runs c (after Defaults), one point per
// seed 1..c.Seeds: K clients of a Dirichlet(α) label skew, all of them
// training in every round (clients_per_round = K), the scheme's local
// training and FL algorithm, aggregated by FedAvg's rule θ + Σ p_k Δ_k
// (p_k = n_k/n, importance: size, server_lr 1), for R training rounds and
// the attacked round R + 1, whose every update the attack block attacks.
// θ^t, the attacked model, is evaluated on the whole test split (eval_every
// R, or every round when R ≤ 1). The point's streams are the engine's
// (docs/architecture.md, "Determinism"): the partition and the initial
// model by (seed, server); training, under common random numbers, by
// (seed, round, client), so every setting of a seed trains on the same
// minibatch draws.
func (c Config) sweepSpec() ([]byte, error) {
	ds := map[string]any{"name": c.Dataset}
	if n := c.norm(); n.Mode != "" {
		ds["normalize"] = n.Mode
	}
	model := map[string]any{"arch": c.Model}
	if c.Hidden != nil {
		model["hidden"] = c.Hidden
	}
	if c.Activation != "" {
		model["activation"] = c.Activation
	}
	train := map[string]any{"optimizer": "sgd", "lr": c.LR, "batch_size": c.Batch, "local_steps": c.Steps}
	alg := map[string]any{"name": "fedavg"}
	switch c.Optimizer {
	case SchemeMomentum:
		train["momentum"] = c.Gamma
	case SchemeNesterov:
		train["momentum"], train["nesterov"] = c.Gamma, true
	case SchemeAdam:
		train["optimizer"] = "adam"
	case SchemeFedProx:
		alg = map[string]any{"name": "fedprox", "mu": c.Mu}
	case SchemeScaffold:
		alg = map[string]any{"name": "scaffold"}
	case SchemeFedDyn:
		alg = map[string]any{"name": "feddyn", "alpha": c.Mu}
	case SchemeFedDC:
		alg = map[string]any{"name": "feddc", "lambda": c.Mu}
	}
	seeds := make([]int, c.Seeds)
	for i := range seeds {
		seeds[i] = i + 1
	}
	doc := map[string]any{
		"name":              sweepName,
		"description":       "starter attack bench (package attackbench)",
		"dataset":           ds,
		"partition":         map[string]any{"scheme": sweep.SchemeDirichlet, "clients": c.Clients, "alpha": c.Alpha},
		"model":             model,
		"train":             train,
		"algorithm":         alg,
		"rounds":            c.TrainRounds + 1,
		"clients_per_round": c.Clients,
		"importance":        "size",
		"sampler":           "uniform",
		"aggregator":        map[string]any{"name": "fedavg", "server_lr": 1.0},
		"eval_every":        max(1, c.TrainRounds),
		"checkpoint_every":  c.TrainRounds + 1,
		"attack":            map[string]any{"methods": c.Methods, "rounds": []int{c.TrainRounds + 1}, "aux_per_class": c.AuxPerClass},
		"metrics":           map[string]any{"global_train_loss": false, "client_losses": false},
		"streams":           sweep.StreamsCommon,
		"seeds":             seeds,
		"run":               map[string]any{"concurrency": 2},
	}
	return json.Marshal(doc)
}
