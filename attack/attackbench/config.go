package attackbench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/trainer"
)

// The local-training schemes of Config.Optimizer: the optimisers of Chen &
// Vikalo's Table 1 under FedAvg, and the FL algorithms whose local
// objectives Table 1 covers, each run through package algorithm.
const (
	SchemeSGD      = "sgd"      // FedAvg, plain SGD
	SchemeMomentum = "momentum" // FedAvg, SGD with heavy-ball momentum γ (PyTorch, dampening 0)
	SchemeNesterov = "nesterov" // FedAvg, SGD with Nesterov momentum γ
	SchemeFedProx  = "fedprox"  // FedProx, μ/2·‖θ − θ^t‖²
	SchemeScaffold = "scaffold" // SCAFFOLD, correction in the gradient
	SchemeFedDyn   = "feddyn"   // FedDyn, α
	SchemeFedDC    = "feddc"    // FedDC, λ, drift_mean "selected"
	SchemeAdam     = "adam"     // FedAvg, Adam: outside RLU's model (its rows are heuristic)
)

// Schemes lists the values Config.Optimizer accepts.
var Schemes = []string{SchemeSGD, SchemeMomentum, SchemeNesterov, SchemeFedProx, SchemeScaffold, SchemeFedDyn, SchemeFedDC, SchemeAdam}

// DefaultMethods are the methods of Chen & Vikalo's Tables 2–4: RLU and
// the baselines LLG+, ZLG+ and iLRG.
var DefaultMethods = []string{"rlu", "llg+", "zlg+", "ilrg"}

// Datasets lists the values Config.Dataset accepts: the image datasets of
// package dataset, and its synthetic one (1×8×8, for tests).
var Datasets = []string{"fmnist", "mnist", "mnist-subset", "cifar10", "synthetic"}

// Config is one benchmark setting. The zero values of the optional fields
// are the paper's settings (Chen & Vikalo, ICML 2024, §4.1 and App. B;
// specs/rlu.md §4); Defaults fills them in. Every field is a flag of
// `starter attack bench`, and Validate's errors name the flag.
type Config struct {
	Dataset string // --dataset: one of Datasets
	DataDir string // --data-dir: the directory holding <dataset>/ (not needed for synthetic)

	Model      string // --model: a trainer architecture (mlp, lenet, cnn-hics, ...)
	Hidden     []int  // --hidden: mlp hidden widths; nil means [300, 300], the official code's MNIST DNN
	Activation string // --activation: relu, tanh or sigmoid (mlp and lenet); "" means relu

	Batch     int     // --batch: |B|; 0 means 64
	Steps     int     // --steps: m local SGD steps, one fresh batch each; 0 means 1
	Optimizer string  // --optimizer: one of Schemes; "" means sgd
	LR        float64 // --lr: η; 0 means 0.01
	Gamma     float64 // --gamma: momentum and nesterov's γ; 0 means 0.9
	// Mu is the scheme's coefficient (--mu): FedProx's μ (0 means 0.5, the
	// paper's Table 4), FedDyn's α and FedDC's λ (0 means 0.01, package
	// algorithm's defaults). It must be 0 for the other schemes.
	Mu float64

	Alpha       float64 // --alpha: Dirichlet concentration of the label skew; 0 means 0.5
	Clients     int     // --clients: 0 means 10, all of them in every round
	AuxPerClass int     // --aux-per-class: the server's labelled samples per class, from the test split; 0 means 100
	TrainRounds int     // --train-rounds: FL rounds before the attacked round (0: an untrained model)
	Seeds       int     // --seeds: seeds 1..Seeds; 0 means 1
	Methods     []string
}

// Defaults returns c with its zero optional fields set to the documented
// defaults.
func (c Config) Defaults() Config {
	if c.Model == "" {
		c.Model = trainer.ArchMLP
	}
	if c.Model == trainer.ArchMLP && c.Hidden == nil {
		c.Hidden = []int{300, 300}
	}
	if c.Activation == "" && (c.Model == trainer.ArchMLP || c.Model == trainer.ArchLeNet) {
		c.Activation = trainer.ActReLU
	}
	if c.Batch == 0 {
		c.Batch = 64
	}
	if c.Steps == 0 {
		c.Steps = 1
	}
	if c.Optimizer == "" {
		c.Optimizer = SchemeSGD
	}
	if c.LR == 0 {
		c.LR = 0.01
	}
	if c.Gamma == 0 && (c.Optimizer == SchemeMomentum || c.Optimizer == SchemeNesterov) {
		c.Gamma = 0.9
	}
	if c.Mu == 0 {
		switch c.Optimizer {
		case SchemeFedProx:
			c.Mu = 0.5
		case SchemeFedDyn, SchemeFedDC:
			c.Mu = 0.01
		}
	}
	if c.Alpha == 0 {
		c.Alpha = 0.5
	}
	if c.Clients == 0 {
		c.Clients = 10
	}
	if c.AuxPerClass == 0 {
		c.AuxPerClass = 100
	}
	if c.Seeds == 0 {
		c.Seeds = 1
	}
	if c.Methods == nil {
		c.Methods = slices.Clone(DefaultMethods)
	}
	return c
}

// Validate reports a setting that cannot run. Call it after Defaults.
// Errors name the flag and the fix and wrap fl.ErrInvalid.
func (c Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf(format+": %w", append(a, fl.ErrInvalid)...)
	}
	switch {
	case !slices.Contains(Datasets, c.Dataset):
		return bad("--dataset %q is unknown; use one of %s", c.Dataset, strings.Join(Datasets, ", "))
	case c.Dataset != "synthetic" && c.DataDir == "":
		return bad("--data-dir is empty; point it (or FLSWEEP_DATA_DIR) at the directory holding %s/", c.Dataset)
	case c.Batch < 1:
		return bad("--batch = %d; use a batch size ≥ 1 (the paper: 64)", c.Batch)
	case c.Steps < 1:
		return bad("--steps = %d; use m ≥ 1 local steps (the paper: 1 or 10)", c.Steps)
	case !slices.Contains(Schemes, c.Optimizer):
		return bad("--optimizer %q is unknown; use one of %s", c.Optimizer, strings.Join(Schemes, ", "))
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return bad("--lr = %v; use a finite learning rate > 0 (the paper: 0.01)", c.LR)
	case !(c.Gamma >= 0 && c.Gamma < 1):
		return bad("--gamma = %v; use a momentum in [0, 1)", c.Gamma)
	case c.Gamma != 0 && c.Optimizer != SchemeMomentum && c.Optimizer != SchemeNesterov:
		return bad("--gamma is momentum's; drop it for --optimizer %s", c.Optimizer)
	case !(c.Mu >= 0) || math.IsInf(c.Mu, 0):
		return bad("--mu = %v; use a finite coefficient ≥ 0", c.Mu)
	case c.Mu != 0 && c.Optimizer != SchemeFedProx && c.Optimizer != SchemeFedDyn && c.Optimizer != SchemeFedDC:
		return bad("--mu is the coefficient of fedprox, feddyn and feddc; drop it for --optimizer %s", c.Optimizer)
	case math.IsNaN(c.Alpha) || math.IsInf(c.Alpha, 0) || c.Alpha < partition.MinAlpha:
		return bad("--alpha = %v; use a finite Dirichlet concentration > 0 (the paper: 0.5; smaller is more skewed)", c.Alpha)
	case c.Clients < 1:
		return bad("--clients = %d; use at least 1 client (the paper: 10)", c.Clients)
	case c.AuxPerClass < 1:
		return bad("--aux-per-class = %d; the server needs at least 1 labelled sample per class (the paper: 100)", c.AuxPerClass)
	case c.TrainRounds < 0:
		return bad("--train-rounds = %d; use 0 (an untrained model) or more rounds", c.TrainRounds)
	case c.Seeds < 1:
		return bad("--seeds = %d; use at least 1 seed", c.Seeds)
	case len(c.Methods) == 0:
		return bad("--methods is empty; name at least one of %s", strings.Join(attack.Names(), ","))
	}
	seen := map[string]bool{}
	for _, m := range c.Methods {
		if _, err := attack.New(m); err != nil {
			return bad("--methods: %q is unknown; use a comma-separated list of %s", m, strings.Join(attack.Names(), ","))
		}
		if seen[m] {
			return bad("--methods names %q twice; name each method once", m)
		}
		seen[m] = true
	}
	spec := c.spec()
	if err := spec.Validate(); err != nil {
		return bad("--model %s, --hidden %v, --activation %q: %v", c.Model, c.Hidden, c.Activation, err)
	}
	if err := c.hyper().Validate(); err != nil {
		return bad("local training: %v", err)
	}
	return nil
}

// spec returns the model's trainer.Spec.
func (c Config) spec() trainer.Spec {
	s := trainer.Spec{Arch: c.Model, Activation: c.Activation}
	if c.Model == trainer.ArchMLP {
		s.Hidden = c.Hidden
	}
	return s
}

// hyper returns the clients' local training: m steps of |B| samples, each
// batch a fresh uniform draw from the client's data (trainer's LocalSteps),
// with a constant η and a fresh optimiser every round.
func (c Config) hyper() trainer.Hyper {
	hp := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: c.LR, BatchSize: c.Batch, LocalSteps: c.Steps}
	switch c.Optimizer {
	case SchemeMomentum:
		hp.Momentum = c.Gamma
	case SchemeNesterov:
		hp.Momentum, hp.Nesterov = c.Gamma, true
	case SchemeAdam:
		hp.Optimizer = trainer.OptimizerAdam
	}
	return hp
}

// norm is the input normalisation: (x − 0.5)/0.5, the official code's
// (specs/rlu.md §4); none for the synthetic data.
func (c Config) norm() dataset.Norm {
	if c.Dataset == "synthetic" {
		return dataset.Norm{}
	}
	return dataset.Norm{Mode: dataset.NormHalf}
}
