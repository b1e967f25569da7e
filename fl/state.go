package fl

import (
	"encoding/json"
	"fmt"
	"slices"
)

// State is a method's memory between rounds: named float32 vectors (SCAFFOLD's
// control variates, MOON's previous local model, FedDyn's h) and small JSON
// metadata (a sampler's cluster assignment). The engine stores it in blob
// storage, checksummed like a model; it never travels through Temporal
// (docs/architecture.md, "State"). The zero State is empty.
type State struct {
	Vectors map[string][]float32
	Meta    json.RawMessage
}

// Empty reports whether s holds nothing.
func (s State) Empty() bool { return len(s.Vectors) == 0 && len(s.Meta) == 0 }

// Names returns the names of s's vectors, sorted (the order they are stored in).
func (s State) Names() []string {
	names := make([]string, 0, len(s.Vectors))
	for k := range s.Vectors {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Vector returns the named vector, checking its length when n >= 0. A
// missing vector or a wrong length means the state was written by another
// method or for another model: an ErrInvalid naming the vector.
func (s State) Vector(name string, n int) ([]float32, error) {
	v, ok := s.Vectors[name]
	if !ok {
		return nil, fmt.Errorf("state has no vector %q (it holds %v; was it written by another method?): %w", name, s.Names(), ErrInvalid)
	}
	if n >= 0 && len(v) != n {
		return nil, fmt.Errorf("state vector %q has %d values; want %d (was it written for another model?): %w", name, len(v), n, ErrInvalid)
	}
	return v, nil
}

// Set stores v under name, creating the map if needed.
func (s *State) Set(name string, v []float32) {
	if s.Vectors == nil {
		s.Vectors = map[string][]float32{}
	}
	s.Vectors[name] = v
}

// SetMeta stores v, JSON-encoded, as s's metadata.
func (s *State) SetMeta(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state: encode metadata: %w", err)
	}
	s.Meta = b
	return nil
}

// DecodeMeta decodes s's metadata into dst; empty metadata leaves dst as is.
func (s State) DecodeMeta(dst any) error {
	if len(s.Meta) == 0 {
		return nil
	}
	if err := json.Unmarshal(s.Meta, dst); err != nil {
		return fmt.Errorf("state metadata: %v (was it written by another method?): %w", err, ErrInvalid)
	}
	return nil
}
