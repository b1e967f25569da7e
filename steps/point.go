package steps

// After a round: what a point does with the round's outcome. This is the
// one statement of it; the point workflow (workflows.PointWorkflow) and the
// in-process runner (engine.RunPoint) both decide through AfterRound, each
// classifying the round's error its own way (Temporal error types there,
// errkind here), and differ only in how they carry a recovery out: the
// workflow continues as new, the runner calls PreparePoint again.

// Outcome is what a point does after a round.
type Outcome int

const (
	// NextRound: the round committed; go on (or finish after the last).
	NextRound Outcome = iota
	// EndDiverged: the round blew up (NaN or Inf); the point ends with
	// status diverged, its committed rounds kept.
	EndDiverged
	// Recover: the round found a damaged file; start again from the last
	// checkpoint that verifies (PreparePoint) and recompute the rest.
	Recover
	// Fail: any other error, or damage past MaxRecoveries: the point fails
	// with the round's error.
	Fail
)

// MaxRecoveries bounds how often a point restarts from its last good
// checkpoint after a round found a damaged file; damage that recurs beyond
// it fails the point with the round's error.
const MaxRecoveries = 3

// AfterRound returns what a point does after a round that ended with err,
// which the caller classified as a divergence or as damage, when the point
// has recovered recoveries times since it started.
func AfterRound(err error, diverged, damaged bool, recoveries int) Outcome {
	switch {
	case err == nil:
		return NextRound
	case diverged:
		return EndDiverged
	case damaged && recoveries < MaxRecoveries:
		return Recover
	}
	return Fail
}
