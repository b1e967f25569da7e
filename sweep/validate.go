package sweep

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/trainer"
)

// Datasets are the dataset names a spec may use.
var Datasets = []string{"fmnist", "mnist", "mnist-subset", "cifar10", "synthetic", "fedprox-synthetic"}

var queueRE = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,200}$`)

// Validate checks every value of the sweep against what the methods accept,
// before anything starts. Each error names the field, the point when the value
// came from the grid, and the fix; all distinct errors are reported.
func (s *Sweep) Validate(reg *methods.Registry) error {
	var errs []error
	seen := map[string]bool{}
	add := func(err error) {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	if err := ValidName(s.Name); err != nil {
		add(err)
	}
	if len(s.Description) > MaxDescription {
		add(fmt.Errorf("description is %d bytes; keep it under %d (it becomes the workflow's details in the Temporal UI) and put longer notes in a YAML comment: %w", len(s.Description), MaxDescription, ErrInvalid))
	}
	if s.Run.Concurrency < 1 {
		add(fmt.Errorf("run.concurrency = %d; run at least 1 point at a time: %w", s.Run.Concurrency, ErrInvalid))
	}
	if s.Run.ContinueAsNewEvery < 1 {
		add(fmt.Errorf("run.continue_as_new_every = %d; it must be at least 1 round: %w", s.Run.ContinueAsNewEvery, ErrInvalid))
	}
	if s.Run.ClientsPerActivity < 1 {
		add(fmt.Errorf("run.clients_per_activity = %d; train at least 1 client per activity: %w", s.Run.ClientsPerActivity, ErrInvalid))
	}
	if s.Run.TrainQueue != "" && !queueRE.MatchString(s.Run.TrainQueue) {
		add(fmt.Errorf("run.train_queue = %q: use letters, digits and . _ @ -: %w", s.Run.TrainQueue, ErrInvalid))
	}
	for _, p := range s.Points {
		if err := p.Config.Validate(reg); err != nil {
			if len(s.Points) > 1 {
				err = fmt.Errorf("point %s: %w", p.Label, err)
			}
			add(err)
		}
	}
	return errors.Join(errs...)
}

// Validate checks one point's configuration.
func (c Config) Validate(reg *methods.Registry) error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(a, ErrInvalid)...))
	}
	errs = append(errs, c.validateData()...)
	errs = append(errs, c.validateNorm()...)
	errs = append(errs, c.validatePartition()...)
	errs = append(errs, c.validateAttack()...)
	errs = append(errs, c.validateLimits()...)
	p := c.Partition
	if err := c.TrainerSpec().Validate(); err != nil {
		errs = append(errs, prefix("model", err))
	}
	if err := c.Hyper().Validate(); err != nil {
		errs = append(errs, prefix("train", err))
	}
	tc := c.Train
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"train.lr", tc.LR}, {"train.momentum", tc.Momentum}, {"train.weight_decay", tc.WeightDecay},
		{"train.beta1", tc.Beta1}, {"train.beta2", tc.Beta2}, {"train.eps", tc.Eps},
		{"train.lr_gamma", tc.LRGamma}, {"train.lr_min", tc.LRMin}, {"train.lr_decay", tc.LRDecay},
	} {
		if err := checkFinite(f.name, f.v); err != nil {
			errs = append(errs, err)
		}
	}
	if !(tc.LRDecay >= 0 && tc.LRDecay <= 1) {
		bad("train.lr_decay = %v; the per-round factor must be in (0, 1], or 0 for none (FedEBA+ uses 0.999)", tc.LRDecay)
	}
	if c.Rounds < 1 {
		bad("rounds = %d; run at least 1 round", c.Rounds)
	}
	if c.ClientsPerRound < 1 {
		bad("clients_per_round = %d; it must be at least 1", c.ClientsPerRound)
	} else if p.Clients >= 1 && c.ClientsPerRound > p.Clients {
		bad("clients_per_round = %d exceeds partition.clients = %d; lower clients_per_round or raise partition.clients", c.ClientsPerRound, p.Clients)
	}
	if c.Importance != fl.ImportanceSize && c.Importance != fl.ImportanceUniform {
		bad("importance = %q is unknown; use %s (p_k = n_k/M) or %s (p_k = 1/n)", c.Importance, fl.ImportanceSize, fl.ImportanceUniform)
	}
	if c.EvalEvery < 1 {
		bad("eval_every = %d; evaluate at least every 1 round", c.EvalEvery)
	}
	if c.Streams != "" && c.Streams != StreamsCommon {
		bad("streams = %q is unknown; use %s (sampling and minibatches shared by the points of a seed) or %s (keyed by the point, as sweeps planned before the option)", c.Streams, StreamsCommon, StreamsPoint)
	}
	if c.CheckpointEvery < 1 {
		bad("checkpoint_every = %d; keep at least every 1st round's model", c.CheckpointEvery)
	}
	if reg != nil {
		if _, err := reg.Sampler(c.Sampler.Name, max(c.ClientsPerRound, 1), c.Sampler.Options); err != nil {
			errs = append(errs, err)
		}
		if _, err := reg.Rule(c.Aggregator.Name, c.Aggregator.Options); err != nil {
			errs = append(errs, err)
		}
		if alg, err := reg.Algorithm(c.Algorithm.Name, c.Algorithm.Options); err != nil {
			errs = append(errs, err)
		} else if err := alg.Check(c.TrainerSpec(), c.Hyper()); err != nil {
			errs = append(errs, err)
		} else if r, ok := alg.(algorithm.Refiner); ok && r.PublicFrom() == algorithm.PublicTrain && c.Partition.PublicPerClass == 0 {
			bad("algorithm %s refines on the server's public set, but partition.public_per_class = 0; reserve one, e.g. partition.public_per_class: 100", c.AlgorithmName())
		}
		if _, err := reg.ServerOptimizer(c.ServerOptimizer.Name, c.ServerOptimizer.Options); err != nil {
			errs = append(errs, err)
		} else if c.ServerOptimizer.Name != "" {
			if lr, ok := c.Aggregator.Options["server_lr"]; ok && lr != 1.0 && lr != int64(1) {
				bad("aggregator.server_lr = %v with server_optimizer %s: the optimiser's lr is the server's step size; remove aggregator.server_lr (or set it to 1)", lr, c.ServerOptimizer.Name)
			}
		}
		for i, m := range c.Inspect {
			if _, err := reg.Inspector(m.Name, m.Options); err != nil {
				errs = append(errs, fmt.Errorf("inspect[%d]: %w", i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// TrainerSpec returns the model architecture for the trainer.
func (c Config) TrainerSpec() trainer.Spec {
	return trainer.Spec{Arch: c.Model.Arch, Hidden: c.Model.Hidden, Activation: c.Model.Activation}
}

// Hyper returns the local-training hyperparameters for the trainer, with
// the first round's learning rate; HyperAt gives round t's.
func (c Config) Hyper() trainer.Hyper {
	t := c.Train
	return trainer.Hyper{
		Optimizer: t.Optimizer, LR: t.LR, Momentum: t.Momentum, WeightDecay: t.WeightDecay,
		BatchSize: t.BatchSize, LocalSteps: t.LocalSteps, LocalEpochs: t.LocalEpochs,
		Nesterov: t.Nesterov, Beta1: t.Beta1, Beta2: t.Beta2, Eps: t.Eps,
		Schedule: t.LRSchedule, StepSize: t.LRStep, Gamma: t.LRGamma, MinLR: t.LRMin,
	}
}

// RoundLR is the local learning rate of round t ≥ 1: lr·lr_decay^(t−1),
// or lr when lr_decay is 0. This is where the round enters the learning
// rate; a schedule within the round (lr_schedule) starts from it.
func (c Config) RoundLR(t int) float64 {
	if c.Train.LRDecay == 0 || t <= 1 {
		return c.Train.LR
	}
	return c.Train.LR * math.Pow(c.Train.LRDecay, float64(t-1))
}

// HyperAt returns Hyper with round t's learning rate (RoundLR).
func (c Config) HyperAt(t int) trainer.Hyper {
	h := c.Hyper()
	h.LR = c.RoundLR(t)
	return h
}

// prefix turns a trainer error about its Spec or Hyper into one about the
// spec block the user wrote (model, train), keeping both sentinels.
func prefix(block string, err error) error {
	msg := strings.TrimSuffix(err.Error(), ": "+trainer.ErrInvalid.Error())
	// The trainer's schedule fields have other names in a spec.
	msg = strings.NewReplacer("hyper.schedule", "train.lr_schedule", "hyper.step_size", "train.lr_step",
		"hyper.gamma", "train.lr_gamma", "hyper.min_lr", "train.lr_min").Replace(msg)
	for _, p := range []string{"spec.", "hyper."} {
		msg = strings.ReplaceAll(msg, p, block+".")
	}
	if !strings.HasPrefix(msg, block+".") {
		msg = block + ": " + msg
	}
	return &blockError{msg: msg + ": " + ErrInvalid.Error(), errs: []error{ErrInvalid, err}}
}

// blockError has prefix's message and both sentinels in its chain.
type blockError struct {
	msg  string
	errs []error
}

func (e *blockError) Error() string   { return e.msg }
func (e *blockError) Unwrap() []error { return e.errs }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
