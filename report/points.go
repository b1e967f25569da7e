package report

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// PointStatus is one point of the sweep and how far it got, as
// `starter sweep results` finds it: DONE.json, else the last committed
// round, else pending.
type PointStatus struct {
	Index  int
	ID     string
	Label  string
	Method string // Label without the seed
	Seed   int64
	Status string // done, diverged, incomplete (rounds committed, no DONE.json) or pending
	Rounds int    // rounds done (committed)
	Of     int    // rounds the point runs
}

// Finished reports whether the point ended (done or diverged).
func (p PointStatus) Finished() bool {
	return p.Status == steps.StatusDone || p.Status == steps.StatusDiverged
}

// Method is a group of points that differ only in their seed: the points'
// label with the seed removed. Setting is the part of the label that is
// not the method axis (the grid values the method is compared under, e.g.
// the partition), Short the method axis's value: the legend entry within
// the setting.
type Method struct {
	Name    string
	Setting string
	Short   string
	Points  []string // point IDs, in point order
}

// Display is the setting's name on the page.
func displaySetting(s string) string {
	if s == "" {
		return "all points"
	}
	return s
}

var seedRE = regexp.MustCompile(`(^|\s)seed=\S+`)

// StripSeed removes the seed from a point's label: the label of its
// method. "partition.alpha=0.1 seed=1" becomes "partition.alpha=0.1"; a
// label that is only a seed becomes "".
func StripSeed(label string) string {
	return strings.TrimSpace(seedRE.ReplaceAllString(label, ""))
}

// methodAxes are the grid paths that name methods: the first grid axis
// with one of these paths (or a path under one) is the method axis.
var methodAxes = []string{"algorithm", "sampler", "aggregator", "server_optimizer"}

// splitLabel splits a label without its seed into its axes' "path=value"
// tokens, given the grid's paths in order (the label is their values
// joined by spaces, sweep.Sweep's expansion). Without paths, tokens are
// split at spaces.
func splitLabel(label string, paths []string) []string {
	if label == "" {
		return nil
	}
	if len(paths) == 0 {
		return strings.Fields(label)
	}
	var toks []string
	rest := label
	for i := range paths {
		end := len(rest)
		if i+1 < len(paths) {
			if j := strings.Index(rest, " "+paths[i+1]+"="); j >= 0 {
				end = j
			}
		}
		toks = append(toks, strings.TrimSpace(rest[:end]))
		rest = strings.TrimPrefix(rest[end:], " ")
	}
	return toks
}

// methodAxis returns the index of the method axis among the tokens: the
// first token whose path is a method path, else the last token.
func methodAxis(toks []string) int {
	for i, t := range toks {
		path, _, _ := strings.Cut(t, "=")
		for _, m := range methodAxes {
			if path == m || strings.HasPrefix(path, m+".") {
				return i
			}
		}
	}
	return len(toks) - 1
}

// groupMethods groups points by their label without the seed, in point
// order, and splits each label into setting and method.
func groupMethods(points []PointStatus, paths []string) []Method {
	var ms []Method
	at := map[string]int{}
	for _, p := range points {
		i, ok := at[p.Method]
		if !ok {
			toks := splitLabel(p.Method, paths)
			m := Method{Name: p.Method, Short: p.Method}
			if len(toks) > 0 {
				a := methodAxis(toks)
				m.Short = toks[a]
				m.Setting = strings.Join(append(append([]string{}, toks[:a]...), toks[a+1:]...), " ")
			}
			if m.Short == "" {
				m.Short = "all seeds"
			}
			i = len(ms)
			at[p.Method] = i
			ms = append(ms, m)
		}
		ms[i].Points = append(ms[i].Points, p.ID)
	}
	return ms
}

// isFedAvg reports whether a method axis token names FedAvg
// ("algorithm=fedavg", "algorithm=fedavg(...)").
func isFedAvg(short string) bool {
	_, v, ok := strings.Cut(short, "=")
	if !ok {
		v = short
	}
	return v == "fedavg" || strings.HasPrefix(v, "fedavg(")
}

// pointStatuses lists the sweep's points from its stored spec
// (sweeps/NAME/spec.json) with their status, and the grid's axis paths.
// found is false when the bucket has no spec for the sweep (a sweep whose
// tables were written without `starter sweep start`, e.g. by
// `starter partition show`); the caller then lists the points table.
func pointStatuses(ctx context.Context, st *store.Store, name string) (ps []PointStatus, paths []string, found bool, err error) {
	sk, err := store.SweepKeys(name)
	if err != nil {
		return nil, nil, false, err
	}
	var ss engine.StoredSweep
	switch err := st.GetJSON(ctx, sk.Spec(), &ss); {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, false, nil
	case err != nil:
		return nil, nil, false, err
	case ss.Sweep == nil:
		return nil, nil, false, fmt.Errorf("%s holds no sweep; is it a spec.json of this version of flsweep?", sk.Spec())
	}
	for _, a := range ss.Sweep.Grid {
		paths = append(paths, a.Path)
	}
	for _, p := range ss.Sweep.Points {
		s, err := pointStatus(ctx, st, sk, p)
		if err != nil {
			return nil, nil, false, err
		}
		ps = append(ps, s)
	}
	return ps, paths, true, nil
}

func pointStatus(ctx context.Context, st *store.Store, sk store.Keys, p sweep.Point) (PointStatus, error) {
	s := PointStatus{Index: p.Index, ID: p.ID, Label: p.Label, Method: StripSeed(p.Label), Seed: int64(p.Config.Seed),
		Status: steps.StatusPending, Of: p.Config.Rounds}
	pk, err := sk.Point(p.ID)
	if err != nil {
		return s, err
	}
	var done steps.PointResult
	switch err := st.GetJSON(ctx, pk.Done(), &done); {
	case err == nil:
		s.Status, s.Rounds = done.Status, done.RoundsDone
	case errors.Is(err, store.ErrNotFound):
		last, c, err := st.LastCommitted(ctx, pk)
		if err != nil {
			return s, err
		}
		if c != nil {
			s.Status, s.Rounds = "incomplete", last
		}
	default:
		return s, err
	}
	return s, nil
}
