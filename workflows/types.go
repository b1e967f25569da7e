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
	"strings"
	"unicode"
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
// is the point's label (e.g. "partition.alpha=0.5 seed=2", which the
// point's workflow ID shows too: PointWorkflowID) and FLStatus its state:
// running, paused, stopping, then stopped, done or diverged (add it as a
// column of the UI's workflow list, whose own Status column says Running
// for the first three and Completed for the last three).
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
func Keyword(s string) string { return cut(s, MaxKeyword) }

// cut returns s cut to at most n bytes at a rune boundary, ending in "…"
// when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	n -= len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}

// Workflow IDs derive from the sweep's names, so that starting the same
// sweep twice finds the first one, and a point's from its label too, so
// that the Temporal UI's workflow list says what each point is without
// configuring its columns:
//
//	sweep/<sweep>                             SweepWorkflow (SweepID)
//	sweep/<sweep>/<label>/<point>             PointWorkflow (PointWorkflowID)
//	sweep/<sweep>/<label>/<point>/r000042     RoundWorkflow (RoundID)
//
// e.g. sweep/demo/partition.alpha=0.1 seed=1/pfe5d6c500a087ab63e5ebb3414cdaade.
// The point ID is always the last component of a point's workflow ID (the
// label holds no '/', see IDLabel) and keeps IDs unique: the same spec gives
// the same IDs. Sweeps started before labelled IDs keep theirs,
// sweep/<sweep>/<point> (UnlabelledPointWorkflowID), for life: the choice
// is made once per sweep workflow and carried across Continue-As-New
// (SweepState.LabelIDs).
func SweepID(sweep string) string { return "sweep/" + sweep }

// PointWorkflowID returns the workflow ID of point p of sweep:
// sweep/<sweep>/<IDLabel(p.Label)>/<p.ID>.
func PointWorkflowID(sweep string, p steps.PointInfo) string {
	return SweepID(sweep) + "/" + IDLabel(p.Label) + "/" + p.ID
}

// UnlabelledPointWorkflowID returns the workflow ID of point point of
// sweep in sweeps started before labelled IDs: sweep/<sweep>/<point>.
func UnlabelledPointWorkflowID(sweep, point string) string { return SweepID(sweep) + "/" + point }

// RoundID returns the workflow ID of round r of the point whose workflow
// ID is point: point + "/r" + the round in 6 digits (sweep.MaxRounds), so
// that rounds follow their point's ID scheme.
func RoundID(point string, r int) string { return fmt.Sprintf("%s/r%06d", point, r) }

// MaxIDLabel is the longest label part of a workflow ID, in bytes. With a
// sweep name of at most 63 bytes and a point ID of 33, a round's workflow
// ID stays within 212 bytes: the SQL persistence and visibility stores
// (PostgreSQL, MySQL) keep workflow IDs as VARCHAR(255).
const MaxIDLabel = 100

// IDLabel returns label as a point's workflow ID shows it: every '/' (the
// separator of the ID's components) and every character that does not
// print (control characters, line breaks, tabs; spaces stay) becomes '_',
// and the result is cut to at most MaxIDLabel bytes at a rune boundary,
// ending in "…" when cut. An empty label becomes "_", so that the point
// ID stays the ID's fourth component.
func IDLabel(label string) string {
	s := strings.Map(func(r rune) rune {
		if r == '/' || r == utf8.RuneError || !unicode.IsPrint(r) {
			return '_'
		}
		return r
	}, label)
	if s == "" {
		return "_"
	}
	return cut(s, MaxIDLabel)
}

// SweepInput starts a sweep. Spec is the YAML as the user wrote it.
type SweepInput struct {
	File string `json:"file"`
	Spec []byte `json:"spec"`
	// TrainQueue overrides the spec's run.train_queue when set.
	TrainQueue string `json:"train_queue,omitempty"`
	// PageSize is the number of points in a page of the plan, and so the
	// most points one run of the workflow starts before it continues as
	// new (0: steps.DefaultPageSize).
	PageSize int `json:"page_size,omitempty"`
	// State is the sweep's progress carried across Continue-As-New; nil
	// on the first run, which plans the sweep.
	State *SweepState `json:"state,omitempty"`
}

// SweepState is what a SweepWorkflow carries across Continue-As-New: a
// cursor into the plan, one status letter per point, the pause and stop
// state and the signals held for points not started yet. Its size grows by
// one byte per point (20 KB for 20,000 points), whatever the points.
type SweepState struct {
	Plan steps.PlanSweepOutput `json:"plan"` // the summary (Points only for a small sweep)
	// Next is the index of the next point to start: every point before it
	// has ended (the workflow drains its window before continuing).
	Next int `json:"next"`
	// Codes holds one status letter per point (see StatusCode).
	Codes string `json:"codes"`
	// Failed holds the failed points (at most MaxFailedKept, with their
	// errors); Listed every point's status and result when the sweep has at
	// most steps.MaxListed points.
	Failed   []PointStatus     `json:"failed,omitempty"`
	Listed   []PointStatus     `json:"listed,omitempty"`
	Paused   bool              `json:"paused,omitempty"`
	Stopping bool              `json:"stopping,omitempty"`
	Held     map[string]string `json:"held,omitempty"` // point ID → the last signal sent for it alone before it started
	Run      int               `json:"run"`            // 1 for the first run, +1 at each Continue-As-New
	// LabelIDs: the sweep's point workflows have labelled IDs
	// (PointWorkflowID); false for a sweep started before them
	// (UnlabelledPointWorkflowID), which keeps that scheme for life.
	LabelIDs bool `json:"label_ids,omitempty"`
}

// MaxFailedKept bounds the failed points (with errors) a sweep keeps.
const MaxFailedKept = 100

// StatusCode is a status's letter in SweepState.Codes and SweepStatus.Codes;
// StatusOfCode the reverse.
func StatusCode(status string) byte {
	switch status {
	case steps.StatusPending:
		return '.'
	case steps.StatusDone:
		return 'd'
	case steps.StatusDiverged:
		return 'v'
	case steps.StatusStopped:
		return 's'
	case steps.StatusFailed:
		return 'f'
	}
	return 'r' // running, paused, stopping: running, as the sweep sees it
}

// StatusOfCode returns the status of a letter of SweepStatus.Codes.
func StatusOfCode(c byte) string {
	switch c {
	case 'r':
		return steps.StatusRunning
	case 'd':
		return steps.StatusDone
	case 'v':
		return steps.StatusDiverged
	case 's':
		return steps.StatusStopped
	case 'f':
		return steps.StatusFailed
	}
	return steps.StatusPending
}

// StatusRequest is the argument of the status query: a page of the points
// that match Status (every point when empty), from Offset, at most Limit
// (0: DefaultStatusLimit; at most MaxStatusLimit). The zero request (and a
// query without argument) answers the first DefaultStatusLimit points.
type StatusRequest struct {
	Offset int      `json:"offset,omitempty"`
	Limit  int      `json:"limit,omitempty"`
	Status []string `json:"status,omitempty"`
}

// Status query page sizes.
const (
	DefaultStatusLimit = 100
	MaxStatusLimit     = 1000
)

// SweepStatus is the answer to the status query: the whole sweep's counts
// and state, and one page of its points.
type SweepStatus struct {
	Name  string `json:"name"`
	Hash  string `json:"hash"`
	Total int    `json:"total"`
	// Counts holds the number of points by status (pending, running, done,
	// diverged, stopped, failed), over the whole sweep.
	Counts map[string]int `json:"counts"`
	// Codes holds one status letter per point, in spec order (StatusOfCode).
	Codes string `json:"codes,omitempty"`
	// Points is the page asked for: the points matching the request's
	// statuses, from Offset; Matched counts them all. A point's PointInfo
	// is filled for the running and failed points, and for every point of
	// a sweep of at most steps.MaxListed points; otherwise it has only its
	// Index (the plan in blob storage, or the spec, holds the rest).
	Offset  int           `json:"offset"`
	Matched int           `json:"matched"`
	Points  []PointStatus `json:"points"`
	Done    bool          `json:"done"`
	// Paused: the sweep was paused (its running points pause after their
	// round; no new point starts). Stopping: it was stopped.
	Paused   bool `json:"paused,omitempty"`
	Stopping bool `json:"stopping,omitempty"`
	Run      int  `json:"run,omitempty"` // the workflow's run (1, then +1 at each Continue-As-New)
}

// PointStatus is one point's line in SweepStatus.
type PointStatus struct {
	steps.PointInfo
	WorkflowID string             `json:"workflow_id,omitempty"`
	Status     string             `json:"status"`
	Result     *steps.PointResult `json:"result,omitempty"`
	Error      string             `json:"error,omitempty"`
}

// SweepResult is a finished sweep: the counts by status, the failed points
// (at most MaxFailedKept), and every point for a sweep of at most
// steps.MaxListed points (or for one run before the plan was paged).
type SweepResult struct {
	Name   string         `json:"name"`
	Total  int            `json:"total,omitempty"`
	Counts map[string]int `json:"counts,omitempty"`
	Failed []PointStatus  `json:"failed,omitempty"`
	Points []PointStatus  `json:"points"`
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
	// Stopping carries a stop that came with a round's damage error
	// across the recovery's Continue-As-New: the next run recovers the
	// point's checkpoints, then ends it stopped.
	Stopping bool `json:"stopping,omitempty"`
	// Recoveries counts the starts after a round found a damaged file
	// (MaxRecoveries bounds them), carried across Continue-As-New.
	Recoveries int `json:"recoveries,omitempty"`
}

// MaxRecoveries is steps.MaxRecoveries: how often a point restarts from
// its last good checkpoint after a round found a damaged file.
const MaxRecoveries = steps.MaxRecoveries

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
