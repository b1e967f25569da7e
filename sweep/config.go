package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
)

// Config is everything that defines one sweep point: the experiment, fully
// resolved (defaults applied, grid values substituted, one seed). Its
// canonical JSON is the point's identity. New fields must be added with
// `omitempty` and a zero value that means "the old behaviour", so that the IDs
// of stored points do not change.
type Config struct {
	Dataset         DatasetConfig   `json:"dataset" yaml:"dataset"`
	Partition       PartitionConfig `json:"partition" yaml:"partition"`
	Model           ModelConfig     `json:"model" yaml:"model"`
	Train           TrainConfig     `json:"train" yaml:"train"`
	Rounds          int             `json:"rounds" yaml:"rounds"`
	ClientsPerRound int             `json:"clients_per_round" yaml:"clients_per_round"`
	Importance      string          `json:"importance" yaml:"importance"`
	Sampler         Method          `json:"sampler" yaml:"sampler"`
	Aggregator      Method          `json:"aggregator" yaml:"aggregator"`
	EvalEvery       int             `json:"eval_every" yaml:"eval_every"`
	CheckpointEvery int             `json:"checkpoint_every" yaml:"checkpoint_every"`
	Seed            uint64          `json:"seed" yaml:"seed"`
	// Algorithm is the FL algorithm (package algorithm): what clients do with
	// the global model and how the server combines their uploads. Zero means
	// fedavg; finish turns an explicit plain fedavg into zero, so both
	// spellings are one point.
	Algorithm Method `json:"algorithm,omitzero" yaml:"algorithm"`
	// ServerOptimizer is the server's optimiser across rounds (FedAvgM,
	// FedAdam, FedYogi, FedAdagrad: package aggregate), which takes the
	// algorithm's step as its pseudo-gradient. Zero: none, the algorithm's
	// step as it is.
	ServerOptimizer Method `json:"server_optimizer,omitzero" yaml:"server_optimizer"`
	// Inspect lists the inspectors that look at every update before
	// aggregation (the inspect phase; label-recovery attacks).
	Inspect []Method      `json:"inspect,omitempty" yaml:"inspect"`
	Metrics MetricsConfig `json:"metrics,omitzero" yaml:"metrics"`
	// Attack runs label-recovery attacks in the inspect phase (the
	// attacks table).
	Attack AttackConfig `json:"attack,omitzero" yaml:"attack"`
	// Streams says which random streams the point shares with the other
	// points of its seed (docs/architecture.md, "Determinism"): StreamsCommon
	// (the default of new sweeps, "common random numbers") also shares the
	// client sampling and every client's minibatch order, so methods of one
	// sweep see the same draws; "" (spelled `point` in a spec) keys them by
	// the point, as every sweep planned before the option did. The initial
	// model and the partition are shared either way.
	Streams string `json:"streams,omitempty" yaml:"streams"`
}

// Stream keyings of Config.Streams.
const (
	StreamsCommon = "common" // sampling and training streams keyed by (seed, round, client)
	StreamsPoint  = "point"  // keyed by the point too: stored as ""
)

// MetricsConfig chooses extra measurements. They never change the models a
// point computes, only what its rows record. nil means the default.
type MetricsConfig struct {
	// GlobalTrainLoss measures, at every evaluation, Σ_k p_k L_k(θ) over
	// every client's full training set (rounds.global_train_loss, and each
	// client's L_k in clients.eval_train_loss): the quantity Fraboni et
	// al.'s figures plot (specs/sampling-theory.md §4.11). Default true.
	GlobalTrainLoss *bool `json:"global_train_loss,omitempty" yaml:"global_train_loss"`
	// ClientLosses measures, on every trained client's full training set,
	// the loss of the global model before local training and of the local
	// model after it (clients.train_loss_before, train_loss_after). Methods
	// that need them (FedEBA's weights) measure them anyway. Default true.
	ClientLosses *bool `json:"client_losses,omitempty" yaml:"client_losses"`
}

// WantGlobalTrainLoss and WantClientLosses apply the defaults.
func (m MetricsConfig) WantGlobalTrainLoss() bool {
	return m.GlobalTrainLoss == nil || *m.GlobalTrainLoss
}
func (m MetricsConfig) WantClientLosses() bool { return m.ClientLosses == nil || *m.ClientLosses }

// DatasetConfig names the data.
type DatasetConfig struct {
	Name string `json:"name" yaml:"name"` // fmnist | mnist | mnist-subset | cifar10 | synthetic | fedprox-synthetic
	// Root is a directory or blob URL holding the data files (IDX, CIFAR-10
	// batches). Empty means the worker's data directory (flag --data-dir)
	// joined with Name. Root is where the data is, not what it is, so it is
	// not part of the point's identity (Canonical leaves it out); the data's
	// digest is recorded with the point instead.
	Root string `json:"root,omitempty" yaml:"root"`
	// The generator options of fedprox-synthetic, FedProx's Synthetic(α, β)
	// (dataset.FedProxOptions); zero for the other datasets.
	Alpha    float64 `json:"alpha,omitempty" yaml:"alpha"`         // α: spread of the clients' models
	Beta     float64 `json:"beta,omitempty" yaml:"beta"`           // β: spread of the clients' inputs
	Users    int     `json:"users,omitempty" yaml:"users"`         // clients generated (default 30)
	IID      bool    `json:"iid,omitempty" yaml:"iid"`             // FedProx's synthetic_iid
	DataSeed uint64  `json:"data_seed,omitempty" yaml:"data_seed"` // selects the generated data
	// Samples gives every generated client that many samples (ours, for
	// cross-device sizes); 0 keeps FedProx's int(lognormal(4, 2)) + 50.
	Samples int `json:"samples,omitempty" yaml:"samples"`
	// Input normalisation of an image dataset (fmnist, mnist, mnist-subset, cifar10):
	// unit (also "": pixels in [0, 1]), half ((x − 0.5)/0.5) or meanstd
	// ((x − mean_c)/std_c), with the per-channel numbers used. A spec may
	// give mean and std with meanstd; the point's config holds them resolved
	// (sweep/normalize.go).
	Normalize string    `json:"normalize,omitempty" yaml:"normalize"`
	Mean      []float64 `json:"mean,omitempty" yaml:"mean"`
	Std       []float64 `json:"std,omitempty" yaml:"std"`
}

// PartitionConfig says how the training data is split into clients.
// Every scheme is a partitioner of package partition; sweep/partition.go
// lists the schemes, their NIID-Bench aliases and presets, and which fields
// each one uses.
type PartitionConfig struct {
	Scheme          string    `json:"scheme" yaml:"scheme"` // iid | dirichlet | shards | k-labels | quantity | mixed | hics | unbalanced | natural
	Clients         int       `json:"clients" yaml:"clients"`
	Alpha           float64   `json:"alpha,omitempty" yaml:"alpha"`                         // Dirichlet concentration: dirichlet, quantity, mixed; unbalanced label mixes
	MinSize         int       `json:"min_size,omitempty" yaml:"min_size"`                   // minimum client size: dirichlet, quantity, hics, unbalanced
	ShardsPerClient int       `json:"shards_per_client,omitempty" yaml:"shards_per_client"` // shards
	LabelsPerClient int       `json:"labels_per_client,omitempty" yaml:"labels_per_client"` // k-labels: NIID-Bench's #C = k
	Alphas          []float64 `json:"alphas,omitempty" yaml:"alphas"`                       // hics: one concentration per group
	Sizes           []int     `json:"sizes,omitempty" yaml:"sizes"`                         // unbalanced: explicit client sizes
	SizeExponent    float64   `json:"size_exponent,omitempty" yaml:"size_exponent"`         // unbalanced: power-law sizes
	SizeAlpha       float64   `json:"size_alpha,omitempty" yaml:"size_alpha"`               // unbalanced: Dirichlet sizes
	Noise           float64   `json:"noise,omitempty" yaml:"noise"`                         // feature noise σ (any scheme): client k gets σ·k/(n-1)
	Test            string    `json:"test" yaml:"test"`                                     // split | holdout | cosplit (hics) | natural (natural)
	TestFraction    float64   `json:"test_fraction" yaml:"test_fraction"`
	// PublicPerClass reserves a public set for the server before the split:
	// this many training samples of every class, drawn first (stratified),
	// held by no client (FNR-FL's D_public). 0: none.
	PublicPerClass int `json:"public_per_class,omitempty" yaml:"public_per_class"`
}

// ModelConfig names the architecture: logreg, mlp, cnn-hics,
// cnn-hics-3conv, cnn-hics-cifar, cnn-fedeba-cifar, lenet or resnet18 (see
// package trainer).
type ModelConfig struct {
	Arch       string `json:"arch" yaml:"arch"`
	Hidden     []int  `json:"hidden,omitempty" yaml:"hidden"`
	Activation string `json:"activation,omitempty" yaml:"activation"` // mlp, lenet: relu (default), tanh, sigmoid
}

// TrainConfig is local training. The fields after LocalEpochs were added
// later: each is omitted from the canonical JSON at its zero value, which
// means the old behaviour (PyTorch's defaults, a constant learning rate), so
// existing points keep their IDs.
type TrainConfig struct {
	Optimizer   string  `json:"optimizer" yaml:"optimizer"` // sgd | adam | adamw
	LR          float64 `json:"lr" yaml:"lr"`
	Momentum    float64 `json:"momentum,omitempty" yaml:"momentum"`
	WeightDecay float64 `json:"weight_decay,omitempty" yaml:"weight_decay"`
	BatchSize   int     `json:"batch_size" yaml:"batch_size"`
	LocalSteps  int     `json:"local_steps,omitempty" yaml:"local_steps"`
	LocalEpochs int     `json:"local_epochs,omitempty" yaml:"local_epochs"`
	Nesterov    bool    `json:"nesterov,omitempty" yaml:"nesterov"` // sgd with momentum
	Beta1       float64 `json:"beta1,omitempty" yaml:"beta1"`       // adam: 0 means 0.9
	Beta2       float64 `json:"beta2,omitempty" yaml:"beta2"`       // adam: 0 means 0.999
	Eps         float64 `json:"eps,omitempty" yaml:"eps"`           // adam: 0 means 1e-8
	// LRSchedule is the schedule within a round's local steps: constant
	// (also ""), step (lr·lr_gamma every lr_step steps) or cosine (down to
	// lr_min over the round's steps).
	LRSchedule string  `json:"lr_schedule,omitempty" yaml:"lr_schedule"`
	LRStep     int     `json:"lr_step,omitempty" yaml:"lr_step"`
	LRGamma    float64 `json:"lr_gamma,omitempty" yaml:"lr_gamma"`
	LRMin      float64 `json:"lr_min,omitempty" yaml:"lr_min"`
	// LRDecay multiplies the learning rate once per round: round t trains
	// with lr·lr_decay^(t−1) (easyFL's learning_rate_decay, FedEBA+'s
	// d = 0.999). 0 means no decay.
	LRDecay float64 `json:"lr_decay,omitempty" yaml:"lr_decay"`
}

// AlgorithmName returns the point's algorithm, methods.DefaultAlgorithm when unset.
func (c Config) AlgorithmName() string {
	if c.Algorithm.Name == "" {
		return methods.DefaultAlgorithm
	}
	return c.Algorithm.Name
}

// Method is a sampler, aggregator, algorithm or inspector: a registry name
// plus its own options.
// In YAML it is either a bare name ("uniform") or a map with a "name" key and
// the options beside it ({name: fedavg, server_lr: 1.0}).
type Method struct {
	Name    string
	Options fl.Options
}

// MarshalJSON writes {"name": ..., options...} with sorted keys.
func (m Method) MarshalJSON() ([]byte, error) {
	o := map[string]any{}
	for k, v := range m.Options {
		o[k] = v
	}
	o["name"] = m.Name
	return json.Marshal(o)
}

// UnmarshalJSON accepts a bare name or an object with a "name" key.
func (m *Method) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*m = Method{Name: name}
		return nil
	}
	var o map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("want a name or a map with a name key: %v", err)
	}
	n, ok := o["name"].(string)
	if !ok {
		return fmt.Errorf("a method map needs a string \"name\" key")
	}
	delete(o, "name")
	*m = Method{Name: n}
	if len(o) > 0 {
		m.Options = fl.Options{}
		for _, k := range sortedMapKeys(o) {
			m.Options[k] = normalizeNumber(o[k])
		}
	}
	return nil
}

// normalizeNumber turns json.Number into int64 or float64 so options compare
// and re-encode canonically.
func normalizeNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumber(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumber(e)
		}
	}
	return v
}

func sortedMapKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Defaults returns the configuration a spec starts from; fields the spec
// omits keep these values. Mutually exclusive fields (local_steps and
// local_epochs) are defaulted after decoding instead.
func Defaults() Config {
	return Config{
		Dataset:         DatasetConfig{Name: "fmnist"},
		Partition:       PartitionConfig{Scheme: "iid", Clients: 100, Test: "split", TestFraction: 0.2},
		Model:           ModelConfig{Arch: "mlp"},
		Train:           TrainConfig{Optimizer: "sgd", LR: 0.05, BatchSize: 50},
		Rounds:          30,
		ClientsPerRound: 10,
		Importance:      fl.ImportanceSize,
		Sampler:         Method{Name: "uniform"},
		Aggregator:      Method{Name: "fedavg"},
		EvalEvery:       1,
		CheckpointEvery: 10,
		Streams:         StreamsCommon,
	}
}

// finish applies the defaults that depend on what the spec set.
func (c *Config) finish() {
	if c.Train.LocalSteps == 0 && c.Train.LocalEpochs == 0 {
		c.Train.LocalSteps = 10
	}
	if c.Algorithm.Name == methods.DefaultAlgorithm && len(c.Algorithm.Options) == 0 {
		c.Algorithm = Method{}
	}
	c.finishPartition()
	c.finishNorm()
	c.Attack.finish()
	if c.Streams == StreamsPoint {
		c.Streams = ""
	}
}

// CommonStreams reports whether the point shares its sampling and training
// streams with the other points of its seed.
func (c Config) CommonStreams() bool { return c.Streams == StreamsCommon }

// Canonical returns the canonical JSON encoding of c: struct fields in
// declaration order, map keys sorted, floats in shortest form.
// Dataset.Root is left out: it says where the data is, not what it is.
func (c Config) Canonical() []byte {
	c.Dataset.Root = ""
	b, err := json.Marshal(c)
	if err != nil {
		panic("sweep: canonical encoding: " + err.Error()) // only plain data inside
	}
	return b
}
