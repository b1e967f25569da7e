// Package steps declares the steps of a sweep as data: the name of each
// activity and its input and output types. Workflows call activities by these
// names, and the engine implements them, so the workflow code depends on
// nothing heavier than this package (no blob storage, no Parquet, no
// gorgonia); archtest_test.go checks that.
//
// Every payload carries identifiers, seeds and small summaries only. Model
// weights never travel through Temporal (DESIGN.md §3).
package steps

import "github.com/flsweep/flsweep/fl"

// Activity names, registered by the worker and called by the workflows.
const (
	PlanSweep     = "PlanSweep"
	PreparePoint  = "PreparePoint"
	SelectClients = "SelectClients"
	TrainClient   = "TrainClient"
	TrainClients  = "TrainClients"
	Aggregate     = "Aggregate"
	Evaluate      = "Evaluate"
	CommitRound   = "CommitRound"
	FinishPoint   = "FinishPoint"
)

// PlanSweepInput carries the spec as the user wrote it; the activity parses
// and validates it again (the worker's registry is the authority).
type PlanSweepInput struct {
	File string `json:"file"`
	Spec []byte `json:"spec"`
}

// PointInfo describes one point of a planned sweep.
type PointInfo struct {
	Index      int    `json:"index"`
	ID         string `json:"id"`
	Label      string `json:"label"`
	Seed       uint64 `json:"seed"`
	Rounds     int    `json:"rounds"`
	Dataset    string `json:"dataset"`
	Model      string `json:"model"`
	Sampler    string `json:"sampler"`
	Aggregator string `json:"aggregator"`
}

// PlanSweepOutput lists the points in spec order.
type PlanSweepOutput struct {
	Name               string      `json:"name"`
	Hash               string      `json:"hash"`
	Points             []PointInfo `json:"points"`
	Concurrency        int         `json:"concurrency"`
	ContinueAsNewEvery int         `json:"continue_as_new_every"`
	TrainQueue         string      `json:"train_queue,omitempty"`
	KeepUpdates        bool        `json:"keep_updates,omitempty"`
	ClientsPerActivity int         `json:"clients_per_activity,omitempty"`
}

// PointRef names a point.
type PointRef struct {
	Sweep string `json:"sweep"`
	Point string `json:"point"`
}

// PrepareOutput is a point's state when its workflow (re)starts.
type PrepareOutput struct {
	Rounds        int     `json:"rounds"`
	EvalEvery     int     `json:"eval_every"`
	LastCommitted int     `json:"last_committed"` // 0 after a fresh start (round 0 is the initial model)
	Done          bool    `json:"done"`
	Status        string  `json:"status,omitempty"`
	TestAcc       float64 `json:"test_acc"` // at LastCommitted's latest evaluation
	NumParams     int     `json:"num_params"`
	DataDigest    string  `json:"data_digest"`
}

// RoundRef names one round of a point. DataDigest is the digest of the data
// the point started with; a worker holding other data refuses the step.
type RoundRef struct {
	PointRef
	Round      int    `json:"round"`
	DataDigest string `json:"data_digest"`
}

// ShouldEval reports whether round r of a point with the given rounds and
// eval_every is evaluated: every eval_every-th round and always the last.
func ShouldEval(r, evalEvery, rounds int) bool {
	return r == rounds || (evalEvery > 0 && r%evalEvery == 0)
}

// TrainClientInput asks one client to train in one round.
type TrainClientInput struct {
	RoundRef
	Client int `json:"client"`
}

// TrainClientOutput is the trained client's summary; its update is in blob
// storage at Key.
type TrainClientOutput struct {
	fl.ClientSummary
	Key string `json:"key"`
}

// TrainClientsInput asks several clients to train in one round, in one
// activity (run.clients_per_activity > 1): fewer activities per round, less
// orchestration overhead, less spread across workers.
type TrainClientsInput struct {
	RoundRef
	Clients []int `json:"clients"`
}

// Heartbeat is the progress a training activity reports.
type Heartbeat struct {
	Client int     `json:"client"`
	Step   int     `json:"step"`
	Steps  int     `json:"steps"`
	Loss   float64 `json:"loss"`
}

// AggregateInput asks for round Round's new global model.
type AggregateInput struct {
	RoundRef
	Selection fl.Selection       `json:"selection"`
	Clients   []fl.ClientSummary `json:"clients"` // in Selection.Clients order
}

// AggregateOutput identifies the new global model.
type AggregateOutput struct {
	ModelSHA256 string `json:"model_sha256"`
}

// EvalSummary is the evaluation of a global model; per-client results stay
// in blob storage.
type EvalSummary struct {
	TestLoss       float64 `json:"test_loss"`
	TestAcc        float64 `json:"test_acc"`
	ClientAccMean  float64 `json:"client_acc_mean"`
	ClientAccVar   float64 `json:"client_acc_var"`
	ClientAccWorst float64 `json:"client_acc_worst5"`
	ClientAccBest  float64 `json:"client_acc_best5"`
}

// CommitInput closes a round.
type CommitInput struct {
	RoundRef
	Selection   fl.Selection       `json:"selection"`
	Clients     []fl.ClientSummary `json:"clients"`
	Model       AggregateOutput    `json:"model"`
	Eval        *EvalSummary       `json:"eval,omitempty"`
	KeepUpdates bool               `json:"keep_updates,omitempty"`
}

// RoundSummary is what a point's workflow learns about a committed round.
type RoundSummary struct {
	Round       int          `json:"round"`
	Clients     int          `json:"clients"`
	TrainLoss   float64      `json:"train_loss"`
	ModelSHA256 string       `json:"model_sha256"`
	Eval        *EvalSummary `json:"eval,omitempty"`
}

// FinishInput closes a point.
type FinishInput struct {
	PointRef
	Status      string `json:"status"` // done or diverged
	KeepUpdates bool   `json:"keep_updates,omitempty"`
}

// PointResult is a finished point.
type PointResult struct {
	Point       string  `json:"point"`
	Status      string  `json:"status"`
	RoundsDone  int     `json:"rounds_done"`
	TestAcc     float64 `json:"test_acc"`
	TestLoss    float64 `json:"test_loss"`
	ModelSHA256 string  `json:"model_sha256"`
}

// Point statuses.
const (
	StatusPending  = "pending"
	StatusRunning  = "running"
	StatusDone     = "done"
	StatusDiverged = "diverged"
	StatusFailed   = "failed"
)

// Application error types that activities return and workflows match.
const (
	ErrTypeInvalid  = "InvalidArgument" // bad input: never retried
	ErrTypeDiverged = "Diverged"        // NaN/Inf: the point's outcome, never retried
)
