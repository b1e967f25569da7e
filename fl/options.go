package fl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Options are a method's settings as written in the sweep spec (everything in
// its YAML block except "name"). A factory decodes them into its own struct
// with Decode, which rejects unknown fields.
type Options map[string]any

// Decode decodes o into dst (a pointer to a struct with json tags), rejecting
// fields dst does not have. what names the spec block for error messages.
func (o Options) Decode(what string, dst any) error {
	if len(o) == 0 {
		return nil
	}
	b, err := json.Marshal(map[string]any(o))
	if err != nil {
		return fmt.Errorf("%s: %v: %w", what, err, ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("%s: %v; check the field names and types: %w", what, err, ErrInvalid)
	}
	return nil
}

// SamplerFactory builds a sampler that draws m clients per round.
type SamplerFactory func(m int, opts Options) (Sampler, error)

// RuleFactory builds an aggregation rule.
type RuleFactory func(opts Options) (Rule, error)

// Registry maps the method names of a sweep spec to constructors. Build it in
// main (or a test) and inject it; there is no global registry.
type Registry struct {
	samplers map[string]SamplerFactory
	rules    map[string]RuleFactory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{samplers: map[string]SamplerFactory{}, rules: map[string]RuleFactory{}}
}

// AddSampler registers a sampler; registering a name twice is a programming
// error and panics.
func (r *Registry) AddSampler(name string, f SamplerFactory) {
	if _, dup := r.samplers[name]; dup {
		panic("fl: sampler " + name + " registered twice")
	}
	r.samplers[name] = f
}

// AddRule registers an aggregation rule; registering a name twice panics.
func (r *Registry) AddRule(name string, f RuleFactory) {
	if _, dup := r.rules[name]; dup {
		panic("fl: aggregator " + name + " registered twice")
	}
	r.rules[name] = f
}

// Sampler builds the named sampler.
func (r *Registry) Sampler(name string, m int, opts Options) (Sampler, error) {
	f, ok := r.samplers[name]
	if !ok {
		return nil, fmt.Errorf("sampler.name = %q is unknown; use one of %s: %w", name, known(r.samplers), ErrInvalid)
	}
	return f(m, opts)
}

// Rule builds the named aggregation rule.
func (r *Registry) Rule(name string, opts Options) (Rule, error) {
	f, ok := r.rules[name]
	if !ok {
		return nil, fmt.Errorf("aggregator.name = %q is unknown; use one of %s: %w", name, known(r.rules), ErrInvalid)
	}
	return f(opts)
}

// Samplers and Rules list the registered names, sorted.
func (r *Registry) Samplers() []string { return sortedKeys(r.samplers) }
func (r *Registry) Rules() []string    { return sortedKeys(r.rules) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func known[V any](m map[string]V) string {
	return strings.Join(sortedKeys(m), ", ")
}
