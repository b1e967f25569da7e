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
	"unicode/utf8"

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

// Signal names. Each goes to a SweepWorkflow (the whole sweep, or one point
// with a Control payload) or to a PointWorkflow (no payload needed; one is
// ignored). They act between rounds: a round in flight always finishes.
//
//   - pause: no new round starts until unpause (a paused sweep also starts
//     no new point); the state survives Continue-As-New.
//   - unpause: rounds (and points) start again.
//   - stop: the point ends after its current round with status stopped, its
//     committed rounds and metrics kept; a stopped sweep stops every running
//     point and starts no other. `starter sweep resume` continues them later.
//
// Signals that reach a workflow in the same workflow task are applied in the
// order pause, unpause, stop (the SDK cannot tell their arrival order across
// channels): a pause and an unpause sent at once leave it running.
const (
	PauseSignal   = "pause"
	UnpauseSignal = "unpause"
	StopSignal    = "stop"
)

// Control is the payload of a signal to a SweepWorkflow. An empty Point
// (or no payload) applies the signal to the whole sweep; a point's ID
// applies it to that point only, also before the point has started.
type Control struct {
	Point string `json:"point,omitempty"`
}

// Search attributes set on point workflows, so that a user can filter them
// in the Temporal UI (e.g. FLSweep="demo" AND FLAccuracy > 0.8). They must be
// registered on the server first (the starter and infra/dev do it). FLLabel
// is the point's label (e.g. "partition.alpha=0.5 seed=2"; add it as a
// column of the UI's workflow list) and FLStatus its state: running, paused,
// stopping, then stopped, done or diverged.
var (
	SASweep     = temporal.NewSearchAttributeKeyKeyword("FLSweep")
	SAPoint     = temporal.NewSearchAttributeKeyKeyword("FLPoint")
	SADataset   = temporal.NewSearchAttributeKeyKeyword("FLDataset")
	SAAlgorithm = temporal.NewSearchAttributeKeyKeyword("FLAlgorithm")
	SASampler   = temporal.NewSearchAttributeKeyKeyword("FLSampler")
	SASeed      = temporal.NewSearchAttributeKeyInt64("FLSeed")
	SARound     = temporal.NewSearchAttributeKeyInt64("FLRound")
	SAAccuracy  = temporal.NewSearchAttributeKeyFloat64("FLAccuracy")
	SALabel     = temporal.NewSearchAttributeKeyKeyword("FLLabel")
	SAStatus    = temporal.NewSearchAttributeKeyKeyword("FLStatus")
)

// StatusStopping is a point's FLStatus between a stop signal and the end of
// its current round.
const StatusStopping = "stopping"

// SearchAttributes lists every attribute with its type, as the dev server's
// --search-attribute flag and the operator API want them.
var SearchAttributes = map[string]string{
	"FLSweep": "Keyword", "FLPoint": "Keyword", "FLDataset": "Keyword", "FLAlgorithm": "Keyword",
	"FLSampler": "Keyword", "FLSeed": "Int", "FLRound": "Int", "FLAccuracy": "Double",
	"FLLabel": "Keyword", "FLStatus": "Keyword",
}

// MaxKeyword is the longest Keyword value set, in bytes: the SQL visibility
// stores (MySQL, PostgreSQL) index keywords as VARCHAR(255).
const MaxKeyword = 255

// Keyword returns s cut to at most MaxKeyword bytes at a rune boundary,
// ending in "…" when cut, so that a long label never makes a start fail.
func Keyword(s string) string {
	if len(s) <= MaxKeyword {
		return s
	}
	const ellipsis = "…"
	n := MaxKeyword - len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
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
	// Paused: the sweep was paused (its running points pause after their
	// round; no new point starts). Stopping: it was stopped.
	Paused   bool `json:"paused,omitempty"`
	Stopping bool `json:"stopping,omitempty"`
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
	// Paused carries a pause across Continue-As-New (and starts a point
	// paused that was paused before it started).
	Paused bool `json:"paused,omitempty"`
	// Recoveries counts the starts after a round found a damaged file
	// (MaxRecoveries bounds them), carried across Continue-As-New.
	Recoveries int `json:"recoveries,omitempty"`
}

// MaxRecoveries bounds how often a point restarts from its last good
// checkpoint after a round found a damaged file; damage that recurs beyond
// it fails the point with the round's error.
const MaxRecoveries = 3

// PointProgress is the answer to the progress query. Status is running,
// paused (no new round starts; the one in flight, if any, finishes),
// stopping (the point ends after its current round), or the final status.
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
