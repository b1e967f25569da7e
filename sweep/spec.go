// Package sweep parses and validates sweep specs and expands them into points.
//
// A spec is YAML: the fields of a point (dataset, partition, model, train,
// rounds, clients_per_round, importance, sampler, aggregator, eval_every,
// checkpoint_every), plus name, description, seeds, grid and run. The grid maps
// dotted field paths to lists of values; the points are the cartesian product
// of the grid axes (in the order written, the first axis outermost) times the
// seeds (innermost). Every point gets an ID derived from its resolved
// configuration, so the same experiment has the same ID in every sweep and
// after every edit that leaves it unchanged.
package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flsweep/flsweep/fl"
)

// Sweep is a parsed spec.
type Sweep struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Seeds       []uint64  `json:"seeds"`
	Grid        []Axis    `json:"grid,omitempty"`
	Run         RunConfig `json:"run"`
	Points      []Point   `json:"points"`
}

// Axis is one grid dimension.
type Axis struct {
	Path   string `json:"path"`
	Values []any  `json:"values"`
}

// Point is one experiment of the sweep.
type Point struct {
	Index  int    `json:"index"`
	ID     string `json:"id"`    // "p" + 32 hex digits of SHA-256(Config.Canonical()): PointID
	Label  string `json:"label"` // the grid values and seed that make this point, e.g. "partition.alpha=0.1 seed=1"
	Config Config `json:"config"`
}

// RunConfig holds orchestration settings. They change how a sweep runs, not
// what it computes, so they are not part of any point's identity and may
// differ between a sweep's start and its resumption.
type RunConfig struct {
	// Concurrency is the number of points run at once (default 2).
	Concurrency int `json:"concurrency" yaml:"concurrency"`
	// ContinueAsNewEvery is the number of rounds after which a point's
	// workflow continues as new (default 100); the server may ask sooner.
	ContinueAsNewEvery int `json:"continue_as_new_every" yaml:"continue_as_new_every"`
	// TrainQueue is the task queue of training activities; empty means the
	// workflow worker's queue.
	TrainQueue string `json:"train_queue,omitempty" yaml:"train_queue"`
	// KeepUpdates keeps every round's client updates instead of deleting
	// them once the round is committed.
	KeepUpdates bool `json:"keep_updates,omitempty" yaml:"keep_updates"`
	// ClientsPerActivity trains this many clients in one activity (default
	// 1: one activity per client, spread over every worker). Larger chunks
	// cost less orchestration per round and suit few, large workers.
	ClientsPerActivity int `json:"clients_per_activity,omitempty" yaml:"clients_per_activity"`
}

// Hash identifies the sweep's set of points: SHA-256 over the name and the
// point IDs in order. Two specs with equal hashes compute the same results.
func (s *Sweep) Hash() string {
	h := sha256.New()
	h.Write([]byte(s.Name))
	for _, p := range s.Points {
		h.Write([]byte{0})
		h.Write([]byte(p.ID))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Point returns the point with the given ID.
func (s *Sweep) Point(id string) (Point, bool) {
	for _, p := range s.Points {
		if p.ID == id {
			return p, true
		}
	}
	return Point{}, false
}

// ErrInvalid is fl.ErrInvalid: a spec error is bad input.
var ErrInvalid = fl.ErrInvalid

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// ValidName reports whether s can be a sweep name: 1 to 63 characters of
// a-z, 0-9, '.', '_' and '-', starting with a letter or digit. Names become
// blob keys and workflow IDs, so nothing else is accepted.
func ValidName(s string) error {
	if !nameRE.MatchString(s) {
		return fmt.Errorf("name = %q: use 1-63 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit: %w", s, ErrInvalid)
	}
	return nil
}

// PointIDHex is the number of hex digits of a point ID: 128 bits of
// SHA-256, so that two different configurations sharing an ID is not a
// practical concern (and is still detected: expand and engine.PlanSweep
// compare full configurations).
const PointIDHex = 32

// LegacyPointIDHex is the number of hex digits of the point IDs of builds
// before 128-bit IDs (40 bits). Sweeps stored by those builds are still read
// (results, query, report), never planned or run again by this build.
const LegacyPointIDHex = 10

// idHex is PointIDHex; tests shorten it to force ID collisions.
var idHex = PointIDHex

// ShortenPointIDsForTest makes PointID use digits hex digits (then zeros) until the
// returned function restores PointIDHex, so that tests of other packages
// can produce real ID collisions (engine's collision against a stored
// point). Only tests call it; it is not safe for concurrent use.
func ShortenPointIDsForTest(digits int) (restore func()) {
	idHex = digits
	return func() { idHex = PointIDHex }
}

var (
	pointIDRE       = regexp.MustCompile(`^p[0-9a-f]{32}$`)
	legacyPointIDRE = regexp.MustCompile(`^p[0-9a-f]{10}$`)
)

// ValidPointID reports whether s has the form of a point ID: this build's
// (p + 32 hex digits) or an older build's (p + 10 hex digits), which stored
// sweeps may hold.
func ValidPointID(s string) error {
	if !pointIDRE.MatchString(s) && !legacyPointIDRE.MatchString(s) {
		return fmt.Errorf("point id %q is not of the form p + 32 hex digits (or p + 10 hex digits, from builds before 128-bit IDs): %w", s, ErrInvalid)
	}
	return nil
}

// LegacyPointID reports whether s is a point ID of a build before 128-bit
// IDs. Such a point's streams are keyed by its 10-digit ID, so this build
// cannot continue it: it would compute other results.
func LegacyPointID(s string) bool { return legacyPointIDRE.MatchString(s) }

// ErrOlderBuild returns the error for a sweep or point planned by a build
// before 128-bit point IDs: what happened and how to proceed. what names
// it, e.g. `sweep "demo"`.
func ErrOlderBuild(what, id string) error {
	return fmt.Errorf("%s was planned by an older flsweep build (before 128-bit point IDs; its point IDs look like %s, this build's are p + 32 hex digits), "+
		"and this build would compute different results for its points; its stored results can still be read (sweep results, query, report). "+
		"To continue it, resume it with the build that planned it; to run it with this build, start the spec under a new name (or delete its sweeps/<name>/ prefix from the bucket to start over): %w",
		what, id, ErrInvalid)
}

// top-level keys that are not point fields.
var sweepKeys = map[string]bool{"name": true, "description": true, "seeds": true, "grid": true, "run": true}

// Parse parses a spec. file names the source in error messages. It checks
// the structure (unknown fields, types, grid paths) and expands the points;
// Validate checks the values.
func Parse(file string, data []byte) (*Sweep, error) { return parse(file, data, false) }

// ParseLegacyStreams parses a spec as builds before the streams option did:
// a point whose spec does not set streams keys its sampling and training
// streams by the point (Config.Streams ""), so the points, their IDs and
// their results are those of a sweep planned then. PlanSweep uses it to
// re-plan such a stored sweep.
func ParseLegacyStreams(file string, data []byte) (*Sweep, error) { return parse(file, data, true) }

func parse(file string, data []byte, legacyStreams bool) (*Sweep, error) {
	if err := checkSize(file, data); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", file, err, ErrInvalid)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: the spec is empty; see examples/demo.yaml: %w", file, ErrInvalid)
	}
	if err := checkTree(file, &doc); err != nil {
		return nil, err
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the spec must be a map of fields: %w", file, root.Line, ErrInvalid)
	}
	s := &Sweep{}
	base := map[string]any{}
	var gridNode, runNode *yaml.Node
	keys := map[string]int{}
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if line, dup := keys[k.Value]; dup {
			return nil, fmt.Errorf("%s:%d: %q appears twice (first at line %d); merge the two blocks: %w", file, k.Line, k.Value, line, ErrInvalid)
		}
		keys[k.Value] = k.Line
		switch k.Value {
		case "name":
			s.Name = v.Value
		case "description":
			s.Description = v.Value
		case "seeds":
			if err := v.Decode(&s.Seeds); err != nil {
				return nil, fmt.Errorf("%s:%d: seeds: want a list of non-negative integers: %w", file, v.Line, ErrInvalid)
			}
		case "grid":
			gridNode = v
		case "run":
			runNode = v
		default:
			if err := checkFields(file, k.Value, v, fieldType(reflect.TypeOf(Config{}), k.Value), k); err != nil {
				return nil, err
			}
			var val any
			if err := v.Decode(&val); err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %v: %w", file, v.Line, k.Value, err, ErrInvalid)
			}
			base[k.Value] = val
		}
	}
	if err := ValidName(s.Name); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if _, set := base["streams"]; legacyStreams && !set {
		base["streams"] = StreamsPoint
	}
	if len(s.Seeds) == 0 {
		s.Seeds = []uint64{0}
	}
	s.Run = RunConfig{Concurrency: 2, ContinueAsNewEvery: 100, ClientsPerActivity: 1}
	if runNode != nil {
		if err := checkFields(file, "run", runNode, reflect.TypeOf(RunConfig{}), runNode); err != nil {
			return nil, err
		}
		if err := runNode.Decode(&s.Run); err != nil {
			return nil, fmt.Errorf("%s:%d: run: %v: %w", file, runNode.Line, err, ErrInvalid)
		}
	}
	if gridNode != nil {
		if gridNode.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: grid must map field paths to lists of values, e.g. partition.alpha: [0.1, 0.5]: %w", file, gridNode.Line, ErrInvalid)
		}
		for i := 0; i < len(gridNode.Content); i += 2 {
			k, v := gridNode.Content[i], gridNode.Content[i+1]
			if err := checkPath(k.Value); err != nil {
				return nil, fmt.Errorf("%s:%d: grid: %w", file, k.Line, err)
			}
			var vals []any
			if v.Kind != yaml.SequenceNode || v.Decode(&vals) != nil || len(vals) == 0 {
				return nil, fmt.Errorf("%s:%d: grid.%s must be a non-empty list of values: %w", file, v.Line, k.Value, ErrInvalid)
			}
			s.Grid = append(s.Grid, Axis{Path: k.Value, Values: vals})
		}
	}
	if err := checkPointCount(file, s.Grid, len(s.Seeds)); err != nil {
		return nil, err
	}
	if err := s.expand(file, base); err != nil {
		return nil, err
	}
	return s, nil
}

// expand builds the points: the cartesian product of the grid axes times the
// seeds.
func (s *Sweep) expand(file string, base map[string]any) error {
	combos := [][]any{{}}
	for _, ax := range s.Grid {
		var next [][]any
		for _, c := range combos {
			for _, v := range ax.Values {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	seen := map[string]int{}
	defaults, err := defaultsDoc()
	if err != nil {
		return err
	}
	for _, combo := range combos {
		for _, seed := range s.Seeds {
			doc := merge(deepCopy(defaults).(map[string]any), deepCopy(base).(map[string]any))
			var label []string
			for i, ax := range s.Grid {
				setPath(doc, ax.Path, deepCopy(combo[i]))
				label = append(label, ax.Path+"="+formatValue(combo[i]))
			}
			label = append(label, "seed="+strconv.FormatUint(seed, 10))
			doc["seed"] = seed
			cfg, err := decodeConfig(doc)
			if err != nil {
				return fmt.Errorf("%s: point %s: %w", file, strings.Join(label, " "), err)
			}
			id := PointID(cfg)
			if j, dup := seen[id]; dup {
				if !bytes.Equal(s.Points[j].Config.Canonical(), cfg.Canonical()) {
					return fmt.Errorf("%s: points %q and %q have different configurations but the same ID %s (a hash collision); "+
						"change either point (another seed or grid value) and report this spec: %w",
						file, s.Points[j].Label, strings.Join(label, " "), id, ErrInvalid)
				}
				return fmt.Errorf("%s: points %q and %q are the same experiment; remove the duplicate grid value: %w",
					file, s.Points[j].Label, strings.Join(label, " "), ErrInvalid)
			}
			seen[id] = len(s.Points)
			s.Points = append(s.Points, Point{Index: len(s.Points), ID: id, Label: strings.Join(label, " "), Config: cfg})
		}
	}
	return nil
}

// PointID derives a point's ID from its configuration: "p" followed by the
// first PointIDHex hex digits of SHA-256(c.Canonical()).
func PointID(c Config) string { return pointID(c, idHex) }

// pointID is PointID from the first digits hex digits of the hash, padded
// with zeros to PointIDHex digits (so a shortened ID still has the form of
// one): with digits < PointIDHex, only tests.
func pointID(c Config, digits int) string {
	sum := sha256.Sum256(c.Canonical())
	return "p" + hex.EncodeToString(sum[:])[:digits] + strings.Repeat("0", PointIDHex-digits)
}

// defaultsDoc returns Defaults() as a generic document, so that grid paths
// into fields the spec leaves out (aggregator.server_lr) land in a complete
// structure.
func defaultsDoc() (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(Defaults().Canonical(), &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// merge lays over onto base: maps merge key by key, anything else replaces.
func merge(base, over map[string]any) map[string]any {
	for k, v := range over {
		bm, ok1 := base[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			base[k] = merge(bm, om)
			continue
		}
		base[k] = v
	}
	return base
}

// checkNumbers rejects NaN and ±Inf anywhere in a document, naming the field.
func checkNumbers(path string, v any) error {
	switch x := v.(type) {
	case float64:
		return checkFinite(path, x)
	case map[string]any:
		for _, k := range sortedMapKeys(x) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if err := checkNumbers(p, x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkNumbers(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeConfig(doc map[string]any) (Config, error) {
	if err := checkNumbers("", doc); err != nil {
		return Config{}, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return Config{}, fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	cfg := Defaults()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Config{}, fmt.Errorf("%s: got a %s, want %s: %w", te.Field, te.Value, typeWords(te.Type), ErrInvalid)
		}
		return Config{}, fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	cfg.finish()
	return cfg, nil
}

// typeWords names a Go type the way a spec's author thinks of it.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer (a whole number within ±2^63)"
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		return "a non-negative integer"
	case reflect.Float64, reflect.Float32:
		return "a finite number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		elem := typeWords(t.Elem())
		elem = strings.TrimPrefix(strings.TrimPrefix(elem, "an "), "a ")
		return "a list, each " + elem
	case reflect.Struct, reflect.Map:
		return "a map of fields"
	}
	return "a " + t.String()
}

// checkFields reports the first key under node that t (a struct type) does
// not have, with its line, and the known keys. Method values are free-form
// and checked by the registry.
func checkFields(file, path string, node *yaml.Node, t reflect.Type, key *yaml.Node) error {
	if t == nil {
		known := knownKeys(reflect.TypeOf(Config{}))
		for k := range sweepKeys {
			known = append(known, k)
		}
		slices.Sort(known)
		return fmt.Errorf("%s:%d: %q is not a spec field; known fields: %s: %w", file, key.Line, path, strings.Join(known, ", "), ErrInvalid)
	}
	if t == reflect.TypeOf(Method{}) || t.Kind() != reflect.Struct || node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		ft := fieldType(t, k.Value)
		if ft == nil {
			return fmt.Errorf("%s:%d: %s.%s is not a known field; known: %s: %w", file, k.Line, path, k.Value, strings.Join(knownKeys(t), ", "), ErrInvalid)
		}
		if err := checkFields(file, path+"."+k.Value, v, ft, k); err != nil {
			return err
		}
	}
	return nil
}

// checkPath checks that a dotted grid path names a point field (or lies
// inside a method's free-form options).
func checkPath(path string) error {
	t := reflect.TypeOf(Config{})
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if t == reflect.TypeOf(Method{}) {
			return nil // sampler.temperature etc.: checked by the method
		}
		ft := fieldType(t, p)
		if ft == nil || (p == "seed" && i == 0) {
			return fmt.Errorf("%q is not a point field (use seeds: for seeds); known at this level: %s: %w", path, strings.Join(knownKeys(t), ", "), ErrInvalid)
		}
		t = ft
	}
	return nil
}

func fieldType(t reflect.Type, key string) reflect.Type {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag := strings.Split(f.Tag.Get("yaml"), ",")[0]; tag == key {
			return f.Type
		}
	}
	return nil
}

func knownKeys(t reflect.Type) []string {
	var ks []string
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "seed" {
			ks = append(ks, tag)
		}
	}
	return ks
}

func setPath(doc map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			if name, isName := m[p].(string); isName && name != "" {
				next["name"] = name // sampler: md  +  grid sampler.x → {name: md, x: ...}
			}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}

func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any:
		if n, ok := x["name"].(string); ok { // a method: name(option=value, ...)
			if len(x) == 1 {
				return n
			}
			var opts []string
			for _, k := range sortedMapKeys(x) {
				if k != "name" {
					opts = append(opts, k+"="+formatValue(x[k]))
				}
			}
			return n + "(" + strings.Join(opts, ",") + ")"
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// checkFinite rejects NaN and ±Inf, which YAML accepts (.nan, .inf).
func checkFinite(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s = %v; it must be a finite number: %w", field, v, ErrInvalid)
	}
	return nil
}
