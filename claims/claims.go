// Package claims is the scorecard of the papers' headline claims. Each
// experiments/<paper>/claims.yaml lists a paper's claims: the claim in a
// sentence, the table or figure it comes from, the paper's number, the SQL
// that computes ours over the experiment's sweeps, and what counts as
// reproduced. Evaluate runs every claim's SQL over the sweeps a bucket holds
// and gives it a verdict; `starter claims` prints them and `starter report`
// shows those that read the reported sweep.
//
// # The file
//
//	name: HiCS-FL                        # the paper, as the tables name it
//	citation: Chen & Vikalo, NeurIPS 2024  # optional
//	setup: |                             # optional SQL run before every claim's, on its connection
//	  CREATE OR REPLACE TEMP MACRO speedup(s, m) AS TABLE ...
//	claims:
//	  - id: speedup-setting-2            # unique in the file: a-z, 0-9, '.', '+', '-'
//	    claim: HiCS-FL reaches the target accuracy 2.5× faster than random sampling.
//	    source: Table 2, FMNIST, setting (2)
//	    kind: ratio                      # direction, tolerance or ratio (below)
//	    paper: 2.48                      # the paper's number (optional for direction)
//	    paper_text: 60 vs 149 rounds to 75%   # optional, shown beside it
//	    unit: ×                          # optional, shown after numbers
//	    tolerance: 0.3                   # ratio: relative; tolerance: absolute
//	    direction: positive              # direction: required; tolerance: optional
//	    reference: 0                     # tolerance with a direction: its side of this (default 0)
//	    sweeps: [hicsfl-baselines, hicsfl-variants]   # the sweeps the SQL reads
//	    sql: |
//	      SELECT ... AS value, ... AS lo, ... AS hi, ... AS n
//	    note: optional; how ours departs from the paper
//
// Every field is checked as the file is parsed: an unknown field, a missing
// one, one the kind does not take, or a value out of range is an error
// naming the file, the line and the claim, wrapping fl.ErrInvalid.
//
// # The SQL
//
// A claim's SQL runs on one connection of package results' DuckDB over
// those of its sweeps the bucket holds (the views rounds, clients,
// partitions, points, attacks and paired; the macros t975 and ci95_half),
// after the file's setup, so a prefix such as `SET VARIABLE target = 0.8;`
// works. Its last statement returns one row with the column value and
// optionally lo and hi (both or neither: a 95% interval around value) and
// n (how many seeds or pairs value averages), and no other column. Before
// any claim runs, every claim's SQL (and setup) is run on the views of no
// sweep (results.Schema), so a claim that does not parse or bind is an
// error even when its sweeps are absent. An error of a claim's SQL, more
// than one row, a non-finite value or an interval that does not hold value
// is an error naming the file and the claim: Evaluate returns it and
// `starter claims` exits non-zero. It is never a "not run".
//
// # Verdicts
//
// A claim is not run when none of its sweeps is in the bucket (or none has
// written a table yet), or when its SQL returns no row or a NULL value (the
// sweeps lack the points it reads); the result says which. Otherwise its
// kind decides, from ours (value, and the interval [lo, hi] when given):
//
//   - direction: the paper says ours, a signed quantity such as method −
//     baseline, is positive (or negative). Reproduced when the interval lies
//     strictly on that side of 0 (lo > 0; hi < 0). Direction only when value
//     is strictly on that side but the interval reaches 0, or there is no
//     interval. Not reproduced otherwise.
//   - tolerance: the paper gives a number. Reproduced when |value − paper| ≤
//     tolerance. The interval is shown, not used: one that reaches into the
//     band does not make a distant estimate reproduced. Otherwise, when the
//     claim also states a direction, direction only when value is strictly
//     on that side of reference (default 0); not reproduced otherwise.
//   - ratio: the paper gives a ratio (a speed-up of 2.5, a variance ratio of
//     0.7). Reproduced when |value/paper − 1| ≤ tolerance and the interval,
//     when given, lies strictly on the paper's side of 1. Direction only when
//     value is strictly on the paper's side of 1 (including a value within
//     tolerance whose interval reaches 1). Not reproduced otherwise.
//
// "Direction only" is weak evidence: it says the sign agrees, not that
// these seeds separate it from noise; the interval says how far.
package claims

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sweep"
)

// FileName is the name of a claims file in an experiment's directory.
const FileName = "claims.yaml"

// Kind is what a claim asserts, and so how it is judged.
type Kind string

// The kinds of claim.
const (
	Direction Kind = "direction" // ours has the paper's sign
	Tolerance Kind = "tolerance" // ours is within an absolute tolerance of the paper's number
	Ratio     Kind = "ratio"     // ours is within a relative tolerance of the paper's ratio
)

// Side is the sign a claim expects.
type Side string

// The sides.
const (
	Positive Side = "positive"
	Negative Side = "negative"
)

// File is one paper's claims.
type File struct {
	Path     string `json:"file"`
	Name     string `json:"paper"`
	Citation string `json:"citation,omitempty"`
	// Setup is SQL run before every claim's, on its connection.
	Setup  string  `json:"setup,omitempty"`
	Claims []Claim `json:"claims"`
}

// Claim is one headline claim of a paper (the package doc gives each
// field's meaning).
type Claim struct {
	ID        string   `yaml:"id" json:"id"`
	Claim     string   `yaml:"claim" json:"claim"`
	Source    string   `yaml:"source" json:"source"`
	Kind      Kind     `yaml:"kind" json:"kind"`
	Paper     *float64 `yaml:"paper" json:"paper,omitempty"`
	PaperText string   `yaml:"paper_text" json:"paper_text,omitempty"`
	Unit      string   `yaml:"unit" json:"unit,omitempty"`
	Tolerance *float64 `yaml:"tolerance" json:"tolerance,omitempty"`
	Direction Side     `yaml:"direction" json:"direction,omitempty"`
	Reference *float64 `yaml:"reference" json:"reference,omitempty"`
	Sweeps    []string `yaml:"sweeps" json:"sweeps"`
	SQL       string   `yaml:"sql" json:"sql"`
	Note      string   `yaml:"note" json:"note,omitempty"`
	// Line is the claim's line in its file.
	Line int `yaml:"-" json:"line"`
}

// Reads says whether the claim's SQL reads sweep name.
func (c Claim) Reads(name string) bool { return slices.Contains(c.Sweeps, name) }

// Reading returns the file with only the claims that read sweep name, or
// nil when none does.
func (f *File) Reading(name string) *File {
	g := *f
	g.Claims = nil
	for _, c := range f.Claims {
		if c.Reads(name) {
			g.Claims = append(g.Claims, c)
		}
	}
	if len(g.Claims) == 0 {
		return nil
	}
	return &g
}

// Load reads and parses the claims file at path.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Find returns the claims files the paths name, sorted: a file itself; a
// directory's claims.yaml and those of its subdirectories (so
// `experiments` finds experiments/*/claims.yaml). A directory with none is
// an error.
func Find(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		for _, g := range []string{filepath.Join(p, FileName), filepath.Join(p, "*", FileName)} {
			m, err := filepath.Glob(g)
			if err != nil {
				return nil, err
			}
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s holds no %s, nor do its subdirectories: %w", p, FileName, fl.ErrInvalid)
		}
		files = append(files, found...)
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// LoadAll finds and loads the claims files the paths name (Find).
func LoadAll(paths []string) ([]*File, error) {
	names, err := Find(paths)
	if err != nil {
		return nil, err
	}
	var fs []*File
	for _, n := range names {
		f, err := Load(n)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return fs, nil
}

var (
	fileFields  = []string{"name", "citation", "setup", "claims"}
	claimFields = yamlFields(reflect.TypeOf(Claim{}))
	idRE        = regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]*$`)
)

func yamlFields(t reflect.Type) []string {
	var fs []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "-" {
			fs = append(fs, tag)
		}
	}
	return fs
}

// Parse parses a claims file; path names it in errors.
func Parse(path string, data []byte) (*File, error) {
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s: %w", path, line, fmt.Sprintf(format, args...), fl.ErrInvalid)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, fl.ErrInvalid)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, bad(1, "a claims file is a map with the fields %s", strings.Join(fileFields, ", "))
	}
	root := doc.Content[0]
	if err := checkKeys(root, fileFields, func(line int, key string) error {
		return bad(line, "%q is not a field of a claims file; its fields: %s", key, strings.Join(fileFields, ", "))
	}); err != nil {
		return nil, err
	}
	var raw struct {
		Name     string      `yaml:"name"`
		Citation string      `yaml:"citation"`
		Setup    string      `yaml:"setup"`
		Claims   []yaml.Node `yaml:"claims"`
	}
	if err := root.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, fl.ErrInvalid)
	}
	if strings.TrimSpace(raw.Name) == "" {
		return nil, bad(root.Line, "name is missing: give the paper's short name, e.g. name: HiCS-FL")
	}
	if len(raw.Claims) == 0 {
		return nil, bad(root.Line, "claims is missing or empty: list the paper's headline claims")
	}
	f := &File{Path: path, Name: raw.Name, Citation: raw.Citation, Setup: raw.Setup}
	seen := map[string]int{}
	for i := range raw.Claims {
		n := &raw.Claims[i]
		name := fmt.Sprintf("claim %d", i+1)
		if id := field(n, "id"); id != "" {
			name = fmt.Sprintf("claim %q", id)
		}
		if n.Kind != yaml.MappingNode {
			return nil, bad(n.Line, "%s: a claim is a map with the fields %s", name, strings.Join(claimFields, ", "))
		}
		if err := checkKeys(n, claimFields, func(line int, key string) error {
			return bad(line, "%s: %q is not a field of a claim; its fields: %s", name, key, strings.Join(claimFields, ", "))
		}); err != nil {
			return nil, err
		}
		var c Claim
		if err := n.Decode(&c); err != nil {
			return nil, bad(n.Line, "%s: %s", name, yamlError(err))
		}
		c.Line = n.Line
		if err := c.validate(); err != nil {
			return nil, bad(n.Line, "%s: %v", name, err)
		}
		if l, ok := seen[c.ID]; ok {
			return nil, bad(n.Line, "%s: the id is used already at line %d; ids are unique in a file", name, l)
		}
		seen[c.ID] = n.Line
		f.Claims = append(f.Claims, c)
	}
	return f, nil
}

// yamlError is err on one line: a *yaml.TypeError's messages joined.
func yamlError(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return err.Error()
}

// field returns the scalar value of key in a mapping node, or "".
func field(n *yaml.Node, key string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// checkKeys calls unknown for the first key of mapping n not in known.
func checkKeys(n *yaml.Node, known []string, unknown func(line int, key string) error) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !slices.Contains(known, k.Value) {
			return unknown(k.Line, k.Value)
		}
	}
	return nil
}

// validate checks a claim's fields against its kind.
func (c Claim) validate() error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if !idRE.MatchString(c.ID) {
		bad("id = %q: give an id of a-z, 0-9, '.', '+' and '-', starting with a letter or digit, e.g. speedup-setting-2", c.ID)
	}
	for _, f := range []struct{ name, v string }{{"claim", c.Claim}, {"source", c.Source}, {"sql", c.SQL}} {
		if strings.TrimSpace(f.v) == "" {
			bad("%s is missing", f.name)
		}
	}
	if len(c.Sweeps) == 0 {
		bad("sweeps is missing: list the sweeps the SQL reads")
	}
	for _, s := range c.Sweeps {
		if err := sweep.ValidName(s); err != nil {
			bad("sweeps: %s", strings.TrimSuffix(err.Error(), ": "+fl.ErrInvalid.Error()))
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"paper", c.Paper}, {"tolerance", c.Tolerance}, {"reference", c.Reference}} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			bad("%s = %v: give a finite number", f.name, *f.v)
		}
	}
	if c.Direction != "" && c.Direction != Positive && c.Direction != Negative {
		bad("direction = %q: give positive or negative", c.Direction)
	}
	if c.Tolerance != nil && *c.Tolerance <= 0 {
		bad("tolerance = %v: give a positive tolerance", *c.Tolerance)
	}
	switch c.Kind {
	case Direction:
		if c.Direction == "" {
			bad("kind direction needs direction: positive or negative (the sign of ours the paper claims)")
		}
		if c.Tolerance != nil || c.Reference != nil {
			bad("kind direction takes no tolerance or reference (a tolerance claim does)")
		}
	case Tolerance:
		if c.Paper == nil || c.Tolerance == nil {
			bad("kind tolerance needs paper (the paper's number) and tolerance (the largest |ours − paper| that reproduces it)")
		}
		if c.Reference != nil && c.Direction == "" {
			bad("reference is the point direction is judged against: give direction too, or remove reference")
		}
	case Ratio:
		if c.Paper == nil || c.Tolerance == nil {
			bad("kind ratio needs paper (the paper's ratio) and tolerance (the largest |ours/paper − 1| that reproduces it)")
		} else if *c.Paper <= 0 || *c.Paper == 1 {
			bad("paper = %v: a ratio claim's ratio is positive and not 1 (its side of 1 is its direction); for a level use kind tolerance", *c.Paper)
		}
		if c.Direction != "" || c.Reference != nil {
			bad("kind ratio takes no direction or reference: its direction is the paper's side of 1")
		}
	default:
		bad("kind = %q: give direction, tolerance or ratio", c.Kind)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
