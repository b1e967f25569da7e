package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Table names a Parquet metrics table. The schemas are the row types below;
// README.md documents every column.
type Table string

const (
	TableRounds     Table = "rounds"
	TableClients    Table = "clients"
	TablePartitions Table = "partitions"
	TablePoints     Table = "points"
	TableAttacks    Table = "attacks"
)

// RoundRow is one row per point × round.
type RoundRow struct {
	Sweep        string   `parquet:"sweep"`
	Point        string   `parquet:"point"`
	Seed         int64    `parquet:"seed"`
	Round        int32    `parquet:"round"`
	Clients      int32    `parquet:"clients"`             // distinct clients trained
	Draws        int32    `parquet:"draws"`               // sampler draws (> clients when sampling with replacement)
	WeightSum    float64  `parquet:"weight_sum"`          // Σ ω_k(S_t)
	BatchLoss    *float64 `parquet:"batch_loss,optional"` // mean over trained clients of their mean minibatch loss
	TrainSamples int64    `parquet:"train_samples"`       // samples processed by all clients
	Queried      int32    `parquet:"queried"`             // answers to queries (pow-d's candidates)
	// QuerySamples counts the samples clients passed forward to answer the
	// round's queries (a loss, or the loss before a gradient), and
	// QueryGradSamples those they also passed backward for a gradient:
	// client work beyond training.
	QuerySamples     int64 `parquet:"query_samples"`
	QueryGradSamples int64 `parquet:"query_grad_samples"`
	RoundTrips       int32 `parquet:"round_trips"` // client fan-outs: queries, broadcast, training
	DownFloats       int64 `parquet:"down_floats"` // values sent to clients: θ^t, server vectors, broadcast
	UpFloats         int64 `parquet:"up_floats"`   // values clients uploaded: updates, extra vectors, answers
	// AggEntropy is H(p) = −Σ p_i log p_i (nats) of the weights the
	// algorithm's server gave the round's updates, when it reports them
	// (FedEBA's softmax; log n for uniform weights); FairAngle is FedEBA+'s
	// φ_t in degrees (the angle between the selected clients' losses at θ^t
	// and the all-ones vector) and Aligned whether the round ran gradient
	// alignment. Null for algorithms that do not decide them.
	AggEntropy *float64 `parquet:"agg_entropy,optional"`
	FairAngle  *float64 `parquet:"fair_angle,optional"`
	Aligned    *bool    `parquet:"aligned,optional"`
	// The refine phase (FNR-FL): Refined counts the clients whose refined
	// model replaced their upload, RefineSamples the samples it passed
	// through models (scoring every trained model on the public set, and
	// the refinement's epochs), RefinePenalty its regulariser summed over
	// its steps, and PublicLeak marks a round whose "public" data was the
	// test split. Null (false) without a refine phase.
	Refined       *int32   `parquet:"refined,optional"`
	RefineSamples *int64   `parquet:"refine_samples,optional"`
	RefinePenalty *float64 `parquet:"refine_penalty,optional"`
	PublicLeak    bool     `parquet:"public_leak"`
	Evaluated     bool     `parquet:"evaluated"`
	TestLoss      *float64 `parquet:"test_loss,optional"` // global model on the whole test split
	TestAcc       *float64 `parquet:"test_acc,optional"`
	// GlobalTrainLoss is Σ_k p_k L_k(θ), L_k the mean loss of the global
	// model on client k's full training set (Fraboni et al.'s metric).
	GlobalTrainLoss *float64 `parquet:"global_train_loss,optional"`
	// The client-accuracy columns are FedEBA+'s fairness metrics (Wang et
	// al., arXiv 2301.12407, §3.4; package fairness) over the local test
	// accuracies, as fractions, of every client with a local test set. The
	// worst/best p% are the ⌈p·m/100⌉ (at least 1) lowest/highest of m.
	ClientAccMean    *float64 `parquet:"client_acc_mean,optional"`     // mean of the accuracies
	ClientAccVar     *float64 `parquet:"client_acc_var,optional"`      // their population variance
	ClientAccWorst   *float64 `parquet:"client_acc_worst5,optional"`   // mean of the worst 5% of clients
	ClientAccBest    *float64 `parquet:"client_acc_best5,optional"`    // mean of the best 5% of clients
	ClientAccVarPct2 *float64 `parquet:"client_acc_var_pct2,optional"` // 10⁴·client_acc_var: in %², the paper's Var
	ClientAccStd     *float64 `parquet:"client_acc_std,optional"`      // population standard deviation
	ClientAccWorst10 *float64 `parquet:"client_acc_worst10,optional"`  // mean of the worst 10% of clients
	ClientAccBest10  *float64 `parquet:"client_acc_best10,optional"`   // mean of the best 10% of clients
	ClientAccCV      *float64 `parquet:"client_acc_cv,optional"`       // std/mean (C_v)
	ClientAccAngle   *float64 `parquet:"client_acc_angle,optional"`    // degrees between the accuracies and all-ones
	ClientAccKL      *float64 `parquet:"client_acc_kl,optional"`       // KL(â‖uniform), â the normalised accuracies
	ModelSHA256      string   `parquet:"model_sha256"`                 // the global model after the round
	CodeVersion      string   `parquet:"code_version"`                 // the build that computed the round
}

// ClientRow is one row per point × round × client, for clients trained in
// the round and, on evaluation rounds, for every client.
type ClientRow struct {
	Sweep    string  `parquet:"sweep"`
	Point    string  `parquet:"point"`
	Seed     int64   `parquet:"seed"`
	Round    int32   `parquet:"round"`
	Client   int32   `parquet:"client"`
	Selected bool    `parquet:"selected"`
	Draws    int32   `parquet:"draws"`
	Weight   float64 `parquet:"weight"` // ω_k(S_t); 0 when not selected
	// AggWeight is the weight the algorithm's server gave the client's
	// update (FedEBA's p_i, TERM's tilted weight, AFL's λ̃_i, FedMGDA+'s λ_i); null for
	// algorithms that aggregate by ω_k.
	AggWeight    *float64 `parquet:"agg_weight,optional"`
	BatchLoss    *float64 `parquet:"batch_loss,optional"` // mean minibatch loss during local training
	TrainSamples *int32   `parquet:"train_samples,optional"`
	Steps        *int32   `parquet:"steps,optional"` // τ_k
	// TrainLossBefore is F_k(θ^t), the received global model's loss on the
	// client's full training set before training; TrainLossAfter is
	// F_k(θ_k), the local model's after training.
	TrainLossBefore *float64  `parquet:"train_loss_before,optional"`
	TrainLossAfter  *float64  `parquet:"train_loss_after,optional"`
	BiasDelta       []float64 `parquet:"bias_delta,list"`          // Δb, the output-bias update; empty unless trained
	QueryLoss       *float64  `parquet:"query_loss,optional"`      // F_k(θ^t) answered to a query this round
	TestN           *int32    `parquet:"test_n,optional"`          // evaluation rounds: the local test set
	TestLoss        *float64  `parquet:"test_loss,optional"`       //
	TestAcc         *float64  `parquet:"test_acc,optional"`        //
	EvalTrainLoss   *float64  `parquet:"eval_train_loss,optional"` // evaluation rounds: L_k(θ), the full training set
	// EntropyEst is the sampler's estimate of the client's label entropy
	// when it selected it (HiCS-FL's Ĥ_k; the true entropy for its oracle),
	// and Cluster the client's cluster then; null for other samplers.
	EntropyEst *float64 `parquet:"entropy_est,optional"`
	Cluster    *int32   `parquet:"cluster,optional"`
	// PublicAcc is the client's local model's accuracy on the server's
	// public set in the refine phase (FNR-FL's A_i), and Refined whether
	// the phase refined it; null without a refine phase.
	PublicAcc *float64 `parquet:"public_acc,optional"`
	Refined   *bool    `parquet:"refined,optional"`
	// Findings are the inspectors' findings about the client's update, as
	// a JSON object by inspector name; empty without inspectors.
	Findings string `parquet:"findings"`
}

// AttackRow is one row per point × attacked round × attacked client ×
// attack method (sweep.AttackConfig): a label-recovery attack on the
// client's update before aggregation, scored against the label counts of
// the samples the client processed.
type AttackRow struct {
	Sweep     string `parquet:"sweep"`
	Point     string `parquet:"point"`
	Seed      int64  `parquet:"seed"`
	Round     int32  `parquet:"round"`
	Client    int32  `parquet:"client"`
	Method    string `parquet:"method"`    // attack name (rlu, llg+, ...)
	Algorithm string `parquet:"algorithm"` // the FL algorithm the update came from
	// Modelled is false when the algorithm's local objective is outside
	// the attacks' model (MOON, FedEBA+, PropFair): they read the update
	// as FedAvg's. Heuristic marks an optimiser outside the method (Adam).
	Modelled    bool    `parquet:"modelled"`
	Heuristic   bool    `parquet:"heuristic"`
	Model       string  `parquet:"model"`     // the net's key (architecture and shape)
	Optimizer   string  `parquet:"optimizer"` // sgd | adam | adamw
	Momentum    float64 `parquet:"momentum"`
	Nesterov    bool    `parquet:"nesterov"`
	LocalSteps  int32   `parquet:"local_steps"` // m
	BatchSize   int32   `parquet:"batch_size"`  // |B|
	Samples     int32   `parquet:"samples"`     // processed samples, the histograms' total
	AuxPerClass int32   `parquet:"aux_per_class"`
	// TrueCounts are the label counts of the samples the client processed;
	// Counts the recovered ones (empty when the method did not apply).
	TrueCounts []int32  `parquet:"true_counts,list"`
	Counts     []int32  `parquet:"counts,list"`
	CAcc       *float64 `parquet:"cacc,optional"` // class-level accuracy; null when not applicable
	IAcc       *float64 `parquet:"iacc,optional"` // instance-level accuracy
	// NotApplicable says why the method could not run (iDLG on a batch of
	// more than one sample); empty when it ran.
	NotApplicable string `parquet:"not_applicable"`
	// TestAcc is the global test accuracy after the round, as in rounds
	// (null when the round did not evaluate).
	TestAcc *float64 `parquet:"test_acc,optional"`
	// Probe marks an attack on a client the round did not select, on a
	// probe update trained for the attack and dropped (attack.clients: all).
	Probe bool `parquet:"probe"`
}

// PartitionRow is one row per point × client.
type PartitionRow struct {
	Sweep           string  `parquet:"sweep"`
	Point           string  `parquet:"point"`
	Seed            int64   `parquet:"seed"`
	Client          int32   `parquet:"client"`
	Train           int32   `parquet:"train"`
	Test            int32   `parquet:"test"`
	Importance      float64 `parquet:"importance"` // p_k
	LabelCounts     []int32 `parquet:"label_counts,list"`
	TestLabelCounts []int32 `parquet:"test_label_counts,list"`
	Entropy         float64 `parquet:"entropy"` // of the train label distribution, nats
	// Group is the client's group (HiCS-FL's α-group); null for schemes
	// without groups.
	Group *int32 `parquet:"group,optional"`
	// NoiseSigma is the standard deviation σ_k of the client's feature
	// noise; null without partition.noise.
	NoiseSigma *float64 `parquet:"noise_sigma,optional"`
}

// PointRow is one row per point: its configuration, flattened, and status.
type PointRow struct {
	Sweep            string   `parquet:"sweep"`
	Point            string   `parquet:"point"`
	Index            int32    `parquet:"index"`
	Label            string   `parquet:"label"`
	Seed             int64    `parquet:"seed"`
	Dataset          string   `parquet:"dataset"`
	DataDigest       string   `parquet:"data_digest"`
	Partition        string   `parquet:"partition"`
	Alpha            *float64 `parquet:"alpha,optional"`
	NumClients       int32    `parquet:"num_clients"`
	Model            string   `parquet:"model"`
	NumParams        int64    `parquet:"num_params"`
	Optimizer        string   `parquet:"optimizer"`
	LR               float64  `parquet:"lr"`
	BatchSize        int32    `parquet:"batch_size"`
	LocalSteps       int32    `parquet:"local_steps"`
	LocalEpochs      int32    `parquet:"local_epochs"`
	Rounds           int32    `parquet:"rounds"`
	ClientsPerRound  int32    `parquet:"clients_per_round"`
	Importance       string   `parquet:"importance"`
	Sampler          string   `parquet:"sampler"`
	Aggregator       string   `parquet:"aggregator"`
	Algorithm        string   `parquet:"algorithm"`
	Methods          string   `parquet:"methods_json"` // every method's resolved options, defaults applied
	Config           string   `parquet:"config_json"`  // the full resolved configuration
	Status           string   `parquet:"status"`       // running, done, diverged
	RoundsDone       int32    `parquet:"rounds_done"`
	FinalTestAcc     *float64 `parquet:"final_test_acc,optional"`
	FinalTestLoss    *float64 `parquet:"final_test_loss,optional"`
	FinalModelSHA256 string   `parquet:"final_model_sha256"`
	CodeVersion      string   `parquet:"code_version"` // the build that last prepared or finished the point
	// MethodRevisions are the revisions of the point's methods
	// (methods.Revisions, as JSON: {"algorithm/feddc":2, ...}); empty in
	// points written before they were recorded.
	MethodRevisions string `parquet:"method_revisions"`
	// The sampler's closed-form characteristics for the point's importances
	// (Fraboni et al. 2022, App. A; sampling.ClosedForm): Σ = Σ_k Var[ω_k],
	// α (clustered: the effective α of eq. 22), VarSum = Var[Σ_k ω_k],
	// γ = Σ + α Σ_k p_k², and E[N], the expected number of distinct clients
	// per round. Null for samplers without closed forms (pow-d, random).
	SamplingSigma           *float64 `parquet:"sampling_sigma,optional"`
	SamplingAlpha           *float64 `parquet:"sampling_alpha,optional"`
	SamplingVarSum          *float64 `parquet:"sampling_var_sum,optional"`
	SamplingGamma           *float64 `parquet:"sampling_gamma,optional"`
	SamplingExpectedClients *float64 `parquet:"sampling_expected_clients,optional"`
}

// WriteRows writes rows as one Parquet file at key, replacing any earlier file.
func WriteRows[T any](ctx context.Context, s *Store, key string, rows []T) error {
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Zstd)); err != nil {
		return fmt.Errorf("store: encode %s: %w", key, err)
	}
	return s.Put(ctx, key, buf.Bytes())
}

// ReadRows reads the Parquet file at key.
func ReadRows[T any](ctx context.Context, s *Store, key string) ([]T, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	rows, err := parquet.Read[T](bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("store: %s: %v: %w", key, err, ErrCorrupt)
	}
	return rows, nil
}

// ReadTable reads all rows of a point's table: the compacted file and any
// part files, part rows replacing compacted rows of the same round (a part
// file is only newer than the compacted file when a crash interrupted a
// compaction). less orders the result.
func ReadTable[T any](ctx context.Context, s *Store, pk PointKeys, t Table, round func(T) int32, less func(a, b T) int) ([]T, error) {
	keys, err := s.List(ctx, pk.Table(t))
	if err != nil {
		return nil, err
	}
	var compacted []T
	parts := map[int32][]T{}
	for _, k := range keys {
		if !strings.HasSuffix(k, ".parquet") {
			continue
		}
		rows, err := ReadRows[T](ctx, s, k)
		if err != nil {
			return nil, err
		}
		if k == pk.Compacted(t) {
			compacted = rows
			continue
		}
		for _, r := range rows {
			parts[round(r)] = append(parts[round(r)], r)
		}
	}
	var out []T
	for _, r := range compacted {
		if _, replaced := parts[round(r)]; !replaced {
			out = append(out, r)
		}
	}
	for _, rows := range parts {
		out = append(out, rows...)
	}
	slices.SortStableFunc(out, less)
	return out, nil
}

// Compact merges a point's part files of table t into one compacted file and
// then deletes the parts. It is idempotent: a crash at any step leaves the
// rows readable through ReadTable, and running it again completes it.
func Compact[T any](ctx context.Context, s *Store, pk PointKeys, t Table, round func(T) int32, less func(a, b T) int) error {
	rows, err := ReadTable(ctx, s, pk, t, round, less)
	if err != nil {
		return err
	}
	keys, err := s.List(ctx, pk.Table(t))
	if err != nil {
		return err
	}
	var parts []string
	for _, k := range keys {
		if k != pk.Compacted(t) {
			parts = append(parts, k)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if err := WriteRows(ctx, s, pk.Compacted(t), rows); err != nil {
		return err
	}
	var errs []error
	for _, k := range parts {
		errs = append(errs, s.Delete(ctx, k))
	}
	return errors.Join(errs...)
}
