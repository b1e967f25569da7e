package methods

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A Change is a change to a method that altered the results of
// configurations that had run before it: a fix, or a new default. A new
// option that leaves the existing configurations' results alone is not
// one, nor is a change of the trainer's kernels (the build records those:
// points.code_version). Each change raises its method's revision by one.
type Change struct {
	Method string // "<block>/<name>", e.g. "algorithm/feddc"
	Commit string // the commit that made it
	What   string
}

// Changes is every change that raised a method's revision, oldest first.
// Add one in the commit that changes a method's results: points record the
// revisions they were computed at (points.method_revisions), and `starter
// claims` flags a claim that reads a point computed at an older revision
// than today's, so an archived result is not taken for what the method
// computes now.
var Changes = []Change{
	{"algorithm/feddc", "491b906", "the correction taken against the mean local update without the drifts (it diverged: the server added the drift twice)"},
	{"algorithm/scaffold", "491b906", "lr_sum: momentum (ours) the default; under momentum c_i⁺ divides by the displacement through momentum, not K·η"},
}

// Revision returns the revision of the method name of a spec block
// ("sampler", "aggregator", "algorithm", "server_optimizer", "inspect"):
// 1, plus one for each of its Changes.
func Revision(block, name string) int {
	r := 1
	for _, c := range Changes {
		if c.Method == block+"/"+name {
			r++
		}
	}
	return r
}

// Revisions is the methods a point runs, "<block>/<name>", with the
// revision of each: what points.method_revisions records, as JSON.
type Revisions map[string]int

// RevisionsOf returns the revisions of the named methods, each given as
// its block and name.
func RevisionsOf(blockNames ...[2]string) Revisions {
	rv := Revisions{}
	for _, bn := range blockNames {
		if bn[1] != "" {
			rv[bn[0]+"/"+bn[1]] = Revision(bn[0], bn[1])
		}
	}
	return rv
}

// JSON returns rv as a JSON object with sorted keys.
func (rv Revisions) JSON() string {
	b, _ := json.Marshal(map[string]int(rv)) // a map of ints always marshals, keys sorted
	return string(b)
}

// Stale lists the methods of a recorded revisions column (JSON, as
// Revisions.JSON wrote it) that were computed at an older revision than
// today's, as "algorithm/feddc r1 < r2". An empty column (a point computed
// before points recorded revisions) gives nothing: its revisions are
// unknown.
func Stale(recorded string) ([]string, error) {
	if strings.TrimSpace(recorded) == "" {
		return nil, nil
	}
	var rv Revisions
	if err := json.Unmarshal([]byte(recorded), &rv); err != nil {
		return nil, fmt.Errorf("method_revisions %q: %w", recorded, err)
	}
	var out []string
	for m, r := range rv {
		block, name, _ := strings.Cut(m, "/")
		if now := Revision(block, name); r < now {
			out = append(out, fmt.Sprintf("%s r%d < r%d", m, r, now))
		}
	}
	slices.Sort(out)
	return out, nil
}
