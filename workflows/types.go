// Package workflows holds the Temporal workflows of a sweep: SweepWorkflow
// runs the points of a sweep, PointWorkflow the rounds of a point, and
// RoundWorkflow the steps of a round (docs/architecture.md, "Temporal"). Workflows only
// orchestrate: every computation and every read or write of data happens in
// activities (package activities), which call package engine.
//
// Workflows call activities by the names declared in package steps, so this
// package depends on nothing heavier than steps and the Temporal SDK
// (checked by archtest_test.go at the repository root).
package workflows

import (
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/flsweep/flsweep/steps"
)

// Workflow type names.
const (
	SweepWorkflowName = "SweepWorkflow"
	PointWorkflowName = "PointWorkflow"
	RoundWorkflowName = "RoundWorkflow"
)

// Query names.
const (
	StatusQuery   = "status"   // SweepWorkflow → SweepStatus
	ProgressQuery = "progress" // PointWorkflow → PointProgress
)

// Search attributes set on point workflows, so that a user can filter them
// in the Temporal UI (e.g. FLSweep="demo" AND FLAccuracy > 0.8). They must be
// registered on the server first (the starter and infra/dev do it).
var (
	SASweep     = temporal.NewSearchAttributeKeyKeyword("FLSweep")
	SAPoint     = temporal.NewSearchAttributeKeyKeyword("FLPoint")
	SADataset   = temporal.NewSearchAttributeKeyKeyword("FLDataset")
	SAAlgorithm = temporal.NewSearchAttributeKeyKeyword("FLAlgorithm")
	SASampler   = temporal.NewSearchAttributeKeyKeyword("FLSampler")
	SASeed      = temporal.NewSearchAttributeKeyInt64("FLSeed")
	SARound     = temporal.NewSearchAttributeKeyInt64("FLRound")
	SAAccuracy  = temporal.NewSearchAttributeKeyFloat64("FLAccuracy")
)

// SearchAttributes lists every attribute with its type, as the dev server's
// --search-attribute flag and the operator API want them.
var SearchAttributes = map[string]string{
	"FLSweep": "Keyword", "FLPoint": "Keyword", "FLDataset": "Keyword", "FLAlgorithm": "Keyword",
	"FLSampler": "Keyword", "FLSeed": "Int", "FLRound": "Int", "FLAccuracy": "Double",
}

// SweepID, PointID and RoundID derive workflow IDs from the sweep's names,
// so that starting the same sweep twice finds the first one.
func SweepID(sweep string) string        { return "sweep/" + sweep }
func PointID(sweep, point string) string { return SweepID(sweep) + "/" + point }
func RoundID(sweep, point string, r int) string {
	return fmt.Sprintf("%s/r%06d", PointID(sweep, point), r)
}

// SweepInput starts a sweep. Spec is the YAML as the user wrote it.
type SweepInput struct {
	File string `json:"file"`
	Spec []byte `json:"spec"`
	// TrainQueue overrides the spec's run.train_queue when set.
	TrainQueue string `json:"train_queue,omitempty"`
}

// SweepStatus is the answer to the status query.
type SweepStatus struct {
	Name   string        `json:"name"`
	Hash   string        `json:"hash"`
	Points []PointStatus `json:"points"`
	Done   bool          `json:"done"`
}

// PointStatus is one point's line in SweepStatus.
type PointStatus struct {
	steps.PointInfo
	WorkflowID string             `json:"workflow_id"`
	Status     string             `json:"status"`
	Result     *steps.PointResult `json:"result,omitempty"`
	Error      string             `json:"error,omitempty"`
}

// SweepResult is a finished sweep.
type SweepResult struct {
	Name   string        `json:"name"`
	Points []PointStatus `json:"points"`
}

// PointInput runs one point; it is also the state carried across
// Continue-As-New.
type PointInput struct {
	steps.PointRef
	Info               steps.PointInfo `json:"info"`
	TrainQueue         string          `json:"train_queue,omitempty"`
	ContinueAsNewEvery int             `json:"continue_as_new_every"`
	KeepUpdates        bool            `json:"keep_updates,omitempty"`
	ClientsPerActivity int             `json:"clients_per_activity,omitempty"`
}

// PointProgress is the answer to the progress query.
type PointProgress struct {
	Round   int     `json:"round"`
	Rounds  int     `json:"rounds"`
	TestAcc float64 `json:"test_acc"`
	Status  string  `json:"status"`
}

// RoundInput runs one round: the round protocol's input and the task queue
// of its worker steps.
type RoundInput struct {
	steps.RoundInput
	TrainQueue string `json:"train_queue,omitempty"`
}
