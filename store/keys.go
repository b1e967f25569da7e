package store

import (
	"fmt"
	"regexp"
)

// Keys builds the blob keys of one sweep (docs/architecture.md, "State"). Every key is built
// from validated identifiers only; nothing user-supplied reaches a key
// unchecked.
//
//	sweeps/<sweep>/spec.json
//	sweeps/<sweep>/plan-<500>-<000003>.json                 points 1500..1999 of the plan, in pages of 500
//	sweeps/<sweep>/plan-<500>-index.json                     written last: every page is there
//	sweeps/<sweep>/<point>/config.json
//	sweeps/<sweep>/<point>/rounds/<000042>/global.bin        model after round 42
//	sweeps/<sweep>/<point>/rounds/<000042>/state.bin         server state after round 42
//	sweeps/<sweep>/<point>/rounds/<000042>/server.bin        the server memory, in points begun before server/
//	sweeps/<sweep>/<point>/server/<owner>/<name>/<000042>.bin  one vector of the algorithm or server optimiser, written in round 42
//	sweeps/<sweep>/<point>/rounds/<000042>/updates/<000017>.bin  transient client update
//	sweeps/<sweep>/<point>/rounds/<000042>/queries/<1>/<000017>.bin  transient vector answer of query 1
//	sweeps/<sweep>/<point>/rounds/<000042>/broadcast.bin     transient vector the round's clients train with
//	sweeps/<sweep>/<point>/rounds/<000042>/eval.json         transient evaluation
//	sweeps/<sweep>/<point>/rounds/<000042>/COMMITTED.json    written last: round 42 is done
//	sweeps/<sweep>/<point>/clients/<000017>/<000042>.bin     client 17's state, written in round 42
//	sweeps/<sweep>/<point>/metrics/<table>/r000042.parquet   per-round part file
//	sweeps/<sweep>/<point>/metrics/<table>/all.parquet       compacted when the point ends
//	sweeps/<sweep>/<point>/DONE.json                         written last: the point is done
//
// (The plan's pages are files beside spec.json: every directory of a sweep
// is a point.)
type Keys struct {
	sweep string
}

var (
	sweepRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	// A point ID is p + 32 hex digits (sweep.PointIDHex), or p + 10 from
	// builds before 128-bit IDs: their stored sweeps are still read.
	pointRE = regexp.MustCompile(`^p(?:[0-9a-f]{32}|[0-9a-f]{10})$`)
	// A server-memory section is "<owner>/<name>", the name one or more
	// "/"-separated parts (FedFV's "algorithm/g/17").
	sectionRE = regexp.MustCompile(`^[a-z_]+(?:/[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}){1,4}$`)
)

// SweepKeys returns the keys of the named sweep.
func SweepKeys(sweep string) (Keys, error) {
	if !sweepRE.MatchString(sweep) {
		return Keys{}, fmt.Errorf("store: sweep name %q is not a valid name: %w", sweep, ErrInvalid)
	}
	return Keys{sweep: sweep}, nil
}

// Prefix is the prefix of every key of the sweep.
func (k Keys) Prefix() string { return "sweeps/" + k.sweep + "/" }

// Spec is the key of the sweep's spec.
func (k Keys) Spec() string { return k.Prefix() + "spec.json" }

// MaxPageSize bounds a plan's page size (a key's digits, and the page's size).
const MaxPageSize = 1_000_000

// PlanIndex is the key of the summary written after every page of the
// plan in pages of size points.
func (k Keys) PlanIndex(size int) (string, error) {
	if size < 1 || size > MaxPageSize {
		return "", fmt.Errorf("store: plan page size %d is not between 1 and %d: %w", size, MaxPageSize, ErrInvalid)
	}
	return fmt.Sprintf("%splan-%d-index.json", k.Prefix(), size), nil
}

// PlanPage is the key of page i of the plan in pages of size points.
func (k Keys) PlanPage(size, i int) (string, error) {
	if size < 1 || size > MaxPageSize {
		return "", fmt.Errorf("store: plan page size %d is not between 1 and %d: %w", size, MaxPageSize, ErrInvalid)
	}
	if i < 0 || i > 999_999 {
		return "", fmt.Errorf("store: plan page %d is not between 0 and 999999: %w", i, ErrInvalid)
	}
	return fmt.Sprintf("%splan-%d-%06d.json", k.Prefix(), size, i), nil
}

// Point returns the keys of one point.
func (k Keys) Point(point string) (PointKeys, error) {
	if !pointRE.MatchString(point) {
		return PointKeys{}, fmt.Errorf("store: point id %q is not valid: %w", point, ErrInvalid)
	}
	return PointKeys{prefix: k.Prefix() + point + "/"}, nil
}

// PointKeys builds the keys of one point.
type PointKeys struct {
	prefix string
}

// Prefix is the prefix of every key of the point.
func (p PointKeys) Prefix() string { return p.prefix }

// Config is the key of the point's resolved configuration.
func (p PointKeys) Config() string { return p.prefix + "config.json" }

// Done is the key of the marker written when the point has finished.
func (p PointKeys) Done() string { return p.prefix + "DONE.json" }

// Rounds is the prefix of all round directories.
func (p PointKeys) Rounds() string { return p.prefix + "rounds/" }

// Round is the directory of round r.
func (p PointKeys) Round(r int) string { return fmt.Sprintf("%s%06d/", p.Rounds(), r) }

// Global is the global model after round r (round 0: the initial model).
func (p PointKeys) Global(r int) string { return p.Round(r) + "global.bin" }

// State is the server state after round r.
func (p PointKeys) State(r int) string { return p.Round(r) + "state.bin" }

// ServerMemory holds the algorithm's server vectors after round r that its
// clients are not sent (FedFV's history of updates, FedDyn's h), apart from
// State, so that only the steps that use them read them.
func (p PointKeys) ServerMemory(r int) string { return p.Round(r) + "server.bin" }

// ServerVectors is the prefix of the algorithm's and server optimiser's
// vectors.
func (p PointKeys) ServerVectors() string { return p.prefix + "server/" }

// ServerVector is the state vector section ("<owner>/<name>", e.g.
// FedFV's "algorithm/g/17", SCAFFOLD's "algorithm/c") as written in round
// r: each vector the algorithm or the server optimiser keeps is written in
// the round it changes, so a round writes only what changed.
func (p PointKeys) ServerVector(section string, r int) (string, error) {
	if !sectionRE.MatchString(section) {
		return "", fmt.Errorf("store: server memory section %q is not <owner>/<name> of letters, digits and . _ -: %w", section, ErrInvalid)
	}
	return fmt.Sprintf("%s%s/%06d.bin", p.ServerVectors(), section, r), nil
}

// Updates is the prefix of round r's client updates.
func (p PointKeys) Updates(r int) string { return p.Round(r) + "updates/" }

// Update is client c's update in round r.
func (p PointKeys) Update(r, c int) string { return fmt.Sprintf("%s%06d.bin", p.Updates(r), c) }

// Queries is the prefix of round r's vector answers.
func (p PointKeys) Queries(r int) string { return p.Round(r) + "queries/" }

// Answer is client c's vector answer to query q of round r.
func (p PointKeys) Answer(r, q, c int) string {
	return fmt.Sprintf("%s%d/%06d.bin", p.Queries(r), q, c)
}

// Broadcast is round r's broadcast vector.
func (p PointKeys) Broadcast(r int) string { return p.Round(r) + "broadcast.bin" }

// Clients is the prefix of every client's state.
func (p PointKeys) Clients() string { return p.prefix + "clients/" }

// ClientStates is the prefix of client c's state versions.
func (p PointKeys) ClientStates(c int) string { return fmt.Sprintf("%s%06d/", p.Clients(), c) }

// ClientState is client c's state written in round r (its version r).
func (p PointKeys) ClientState(c, r int) string {
	return fmt.Sprintf("%s%06d.bin", p.ClientStates(c), r)
}

// Memory is the prefix of the sampler's per-client memory.
func (p PointKeys) Memory() string { return p.prefix + "memory/" }

// ClientMemory is what the sampler remembered about client c in round r.
func (p PointKeys) ClientMemory(c, r int) string {
	return fmt.Sprintf("%s%06d/%06d.bin", p.Memory(), c, r)
}

// Eval is round r's transient evaluation result.
func (p PointKeys) Eval(r int) string { return p.Round(r) + "eval.json" }

// Committed is round r's commit manifest, written last.
func (p PointKeys) Committed(r int) string { return p.Round(r) + "COMMITTED.json" }

// Table is the prefix of a metrics table's files.
func (p PointKeys) Table(t Table) string { return p.prefix + "metrics/" + string(t) + "/" }

// Part is round r's part file of table t.
func (p PointKeys) Part(t Table, r int) string { return fmt.Sprintf("%sr%06d.parquet", p.Table(t), r) }

// Compacted is table t's compacted file.
func (p PointKeys) Compacted(t Table) string { return p.Table(t) + "all.parquet" }
