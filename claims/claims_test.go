package claims

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
)

const validClaim = `
  - id: a
    claim: A is faster than B.
    source: Table 2
    kind: ratio
    paper: 2.5
    tolerance: 0.3
    sweeps: [s]
    sql: SELECT 1 AS value`

// TestParse: a valid file; and every kind of bad input is an error naming
// the file, the line and the claim, wrapping fl.ErrInvalid.
func TestParse(t *testing.T) {
	fl0, err := Parse("x/claims.yaml", []byte("name: P\ncitation: C\nsetup: SELECT 1\nclaims:"+validClaim+`
  - id: b
    claim: B has lower variance.
    source: Fig. 1
    kind: direction
    direction: negative
    sweeps: [s, t]
    sql: SELECT -1 AS value
  - id: c.2+
    claim: C reaches 86.5%.
    source: Table 1
    kind: tolerance
    paper: 0.865
    tolerance: 0.02
    direction: positive
    reference: 0.1
    sweeps: [t]
    sql: SELECT 0.8 AS value
`))
	if err != nil {
		t.Fatal(err)
	}
	if fl0.Name != "P" || fl0.Citation != "C" || fl0.Setup != "SELECT 1" || len(fl0.Claims) != 3 {
		t.Fatalf("Parse = %+v; want name P, citation C, setup, 3 claims", fl0)
	}
	if c := fl0.Claims[1]; c.ID != "b" || c.Kind != Direction || c.Direction != Negative || c.Paper != nil || c.Line != 13 || !slices.Equal(c.Sweeps, []string{"s", "t"}) {
		t.Errorf("claim b = %+v; want a negative direction claim at line 13 over s, t", c)
	}
	if g := fl0.Reading("t"); g == nil || len(g.Claims) != 2 || g.Claims[0].ID != "b" || len(fl0.Claims) != 3 {
		t.Errorf("Reading(t) = %+v; want claims b and c, the file unchanged", g)
	}
	if fl0.Reading("u") != nil {
		t.Error("Reading(u) is not nil; no claim reads u")
	}

	tests := []struct {
		name, give string
		want       []string // substrings of the error
	}{
		{"not yaml", "name: [", []string{"x.yaml"}},
		{"empty", "", []string{"x.yaml:1", "a map"}},
		{"unknown top field", "name: P\nclaim:" + validClaim, []string{"x.yaml:2", `"claim" is not a field of a claims file`}},
		{"no name", "claims:" + validClaim, []string{"name is missing"}},
		{"no claims", "name: P\nclaims: []", []string{"claims is missing or empty"}},
		{"unknown claim field", "name: P\nclaims:" + validClaim + "\n    tolerence: 1", []string{"x.yaml:11", `claim "a"`, `"tolerence" is not a field of a claim`}},
		{"unnamed claim", "name: P\nclaims:\n  - kind: ratio\n    foo: 1", []string{"claim 1", `"foo"`}},
		{"wrong type", "name: P\nclaims:" + strings.Replace(validClaim, "paper: 2.5", "paper: many", 1), []string{`claim "a"`, "many"}},
		{"duplicate id", "name: P\nclaims:" + validClaim + validClaim, []string{"x.yaml:11", `claim "a"`, "used already at line 3"}},
		{"bad id", "name: P\nclaims:" + strings.Replace(validClaim, "id: a", "id: A B", 1), []string{`claim "A B"`, "id ="}},
		{"no sql", "name: P\nclaims:" + strings.Replace(validClaim, "sql: SELECT 1 AS value", "", 1), []string{"sql is missing"}},
		{"bad sweep", "name: P\nclaims:" + strings.Replace(validClaim, "[s]", "[s/../t]", 1), []string{"sweeps: name ="}},
		{"no sweeps", "name: P\nclaims:" + strings.Replace(validClaim, "sweeps: [s]", "", 1), []string{"sweeps is missing"}},
		{"bad kind", "name: P\nclaims:" + strings.Replace(validClaim, "kind: ratio", "kind: level", 1), []string{`kind = "level"`}},
		{"ratio of 1", "name: P\nclaims:" + strings.Replace(validClaim, "paper: 2.5", "paper: 1", 1), []string{"paper = 1", "kind tolerance"}},
		{"ratio without tolerance", "name: P\nclaims:" + strings.Replace(validClaim, "tolerance: 0.3", "", 1), []string{"kind ratio needs paper"}},
		{"ratio with direction", "name: P\nclaims:" + validClaim + "\n    direction: positive", []string{"kind ratio takes no direction"}},
		{"negative tolerance", "name: P\nclaims:" + strings.Replace(validClaim, "tolerance: 0.3", "tolerance: -1", 1), []string{"tolerance = -1"}},
		{"infinite paper", "name: P\nclaims:" + strings.Replace(validClaim, "paper: 2.5", "paper: .inf", 1), []string{"paper = +Inf"}},
		{"direction without side", "name: P\nclaims:" + strings.Replace(strings.Replace(validClaim, "kind: ratio", "kind: direction", 1), "tolerance: 0.3", "", 1),
			[]string{"kind direction needs direction"}},
		{"direction with tolerance", "name: P\nclaims:" + strings.Replace(validClaim, "kind: ratio", "kind: direction\n    direction: positive", 1),
			[]string{"kind direction takes no tolerance"}},
		{"bad side", "name: P\nclaims:" + strings.Replace(validClaim, "kind: ratio", "kind: direction\n    direction: up", 1), []string{`direction = "up"`}},
		{"tolerance without paper", "name: P\nclaims:" + strings.Replace(strings.Replace(validClaim, "kind: ratio", "kind: tolerance", 1), "paper: 2.5", "", 1),
			[]string{"kind tolerance needs paper"}},
		{"reference without direction", "name: P\nclaims:" + strings.Replace(validClaim, "kind: ratio", "kind: tolerance\n    reference: 1", 1),
			[]string{"reference is the point direction is judged against"}},
	}
	for _, tt := range tests {
		_, err := Parse("x.yaml", []byte(tt.give))
		if err == nil {
			t.Errorf("%s: Parse succeeded; want an error", tt.name)
			continue
		}
		if !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: %v does not wrap fl.ErrInvalid", tt.name, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.name, err, w)
			}
		}
	}
}

// TestFind: a file, a directory's own claims.yaml and its subdirectories';
// a directory with none is an error.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/claims.yaml", "b/claims.yaml", "b/other.yaml", "c/README.md", "claims.yaml"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Find([]string{dir, filepath.Join(dir, "b", "other.yaml"), filepath.Join(dir, "a")})
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, g := range got {
		r, _ := filepath.Rel(dir, g)
		rel = append(rel, filepath.ToSlash(r))
	}
	if want := []string{"a/claims.yaml", "b/claims.yaml", "b/other.yaml", "claims.yaml"}; !slices.Equal(rel, want) {
		t.Errorf("Find = %q; want %q", rel, want)
	}
	if _, err := Find([]string{filepath.Join(dir, "c")}); err == nil || !strings.Contains(err.Error(), "holds no claims.yaml") {
		t.Errorf("Find(c) = %v; want an error saying it holds no claims.yaml", err)
	}
}
