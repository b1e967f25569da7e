package sweep

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Limits on what a spec may ask for. A spec comes from a user, travels as
// a workflow input and is expanded by a worker: these bounds keep a hostile
// or mistaken spec from exhausting memory, exceeding Temporal's payload cap or
// the widths of blob keys and Parquet columns. Each is far above what a
// real sweep needs.
const (
	// MaxSpecBytes bounds a spec file: 1 MiB, half of Temporal's 2 MiB
	// payload cap (the spec travels in the sweep workflow's input).
	MaxSpecBytes = 1 << 20
	// MaxDepth bounds the nesting of a spec's YAML (a point's deepest
	// field is 4 levels down: sampler options' lists).
	MaxDepth = 32
	// MaxNodes bounds a spec's YAML values with aliases expanded, so that
	// an alias bomb ("billion laughs") is refused before it is decoded.
	MaxNodes = 100_000
	// MaxPoints bounds a sweep's points (grid product times seeds),
	// computed before anything is expanded.
	MaxPoints = 100_000
	// MaxRounds bounds rounds: round numbers are 6 digits in blob keys
	// (store.PointKeys.Round, %06d) and workflow IDs (…/r000042).
	MaxRounds = 999_999
	// MaxClients bounds partition.clients: client indices are 6 digits in
	// blob keys (store.PointKeys.Update, %06d) and int32 in Parquet.
	MaxClients = 999_999
	// MaxHidden bounds a hidden layer's width and MaxLayers their number:
	// a model's parameters live in memory on every worker.
	MaxHidden = 65_536
	MaxLayers = 32
	// MaxDescription bounds the description, which becomes the sweep
	// workflow's details in the Temporal UI (the server caps those).
	MaxDescription = 10_000
)

// checkSize refuses a spec longer than MaxSpecBytes.
func checkSize(file string, data []byte) error {
	if len(data) > MaxSpecBytes {
		return fmt.Errorf("%s: the spec is larger than the limit of %d bytes (1 MiB); use a grid instead of listing points, or split the sweep: %w",
			file, MaxSpecBytes, ErrInvalid)
	}
	return nil
}

// checkTree refuses a YAML document nested deeper than MaxDepth or with
// more than MaxNodes values once its aliases are expanded. It walks the
// parsed tree without expanding anything: an alias counts the size of
// what it names, computed once per anchor.
func checkTree(file string, root *yaml.Node) error {
	type shape struct{ size, height int }
	shapes := map[*yaml.Node]shape{}
	var walk func(n *yaml.Node, line int) (shape, error)
	walk = func(n *yaml.Node, line int) (shape, error) {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return shape{1, 1}, nil
			}
			line, n = n.Line, n.Alias
		} else {
			line = n.Line
		}
		if s, ok := shapes[n]; ok {
			return s, nil
		}
		shapes[n] = shape{1, MaxDepth + 1} // a node that contains itself is too deep
		s := shape{size: 1, height: 1}
		for _, c := range n.Content {
			cs, err := walk(c, line)
			if err != nil {
				return shape{}, err
			}
			s.size += cs.size
			s.height = max(s.height, cs.height+1)
			if s.height > MaxDepth {
				return shape{}, fmt.Errorf("%s:%d: the spec is nested more than %d levels deep; a point's fields are at most 4 levels deep: %w",
					file, line, MaxDepth, ErrInvalid)
			}
			if s.size > MaxNodes {
				return shape{}, fmt.Errorf("%s:%d: the spec expands to more than %d values (through YAML aliases or merges); write the values out, without nested aliases: %w",
					file, line, MaxNodes, ErrInvalid)
			}
		}
		shapes[n] = s
		return s, nil
	}
	_, err := walk(root, 0)
	return err
}

// checkPointCount refuses a grid whose product with the seeds exceeds
// MaxPoints, computed from the axis lengths before anything is expanded.
func checkPointCount(file string, grid []Axis, seeds int) error {
	n := max(seeds, 1)
	for _, ax := range grid {
		if len(ax.Values) > MaxPoints/n {
			return fmt.Errorf("%s: grid (%s) times %d seed(s) makes more than %d points; split the sweep or shorten the grid's lists: %w",
				file, axesSummary(grid), seeds, MaxPoints, ErrInvalid)
		}
		n *= len(ax.Values)
	}
	return nil
}

func axesSummary(grid []Axis) string {
	s := ""
	for i, ax := range grid {
		if i > 0 {
			s += " x "
		}
		s += fmt.Sprintf("%s: %d values", ax.Path, len(ax.Values))
	}
	return s
}

// validateLimits checks a point's sizes against the limits above.
func (c Config) validateLimits() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(a, ErrInvalid)...))
	}
	if c.Rounds > MaxRounds {
		bad("rounds = %d exceeds %d (round numbers are 6 digits in blob keys and workflow IDs); run fewer rounds", c.Rounds, MaxRounds)
	}
	if c.Partition.Clients > MaxClients {
		bad("partition.clients = %d exceeds %d (client indices are 6 digits in blob keys); use fewer clients", c.Partition.Clients, MaxClients)
	}
	if len(c.Model.Hidden) > MaxLayers {
		bad("model.hidden has %d layers; use at most %d", len(c.Model.Hidden), MaxLayers)
	}
	for i, h := range c.Model.Hidden {
		if h > MaxHidden {
			bad("model.hidden[%d] = %d exceeds %d; use narrower layers", i, h, MaxHidden)
		}
	}
	return errs
}
