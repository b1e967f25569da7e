// Package methods maps the method names of a sweep spec to constructors:
// samplers (sampler:), aggregation rules (aggregator:), FL algorithms
// (algorithm:), server optimisers (server_optimizer:) and inspectors
// (inspect:). Build a Registry in main or a test
// (Builtin has every built-in method) and inject it; there is no global
// registry and no init() registration.
//
// A method's value is its resolved configuration: its exported fields, as
// JSON, are the options it runs with, defaults applied. The engine records
// them with every point.
package methods

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// Factories build a method from its spec options (its YAML block without
// "name"); samplers also get clients_per_round. They decode the options
// strictly (fl.Options.Decode) and validate them.
type (
	SamplerFactory   func(m int, opts fl.Options) (fl.Planner, error)
	RuleFactory      func(opts fl.Options) (fl.Rule, error)
	AlgorithmFactory func(opts fl.Options) (algorithm.Algorithm, error)
	InspectorFactory func(opts fl.Options) (fl.Inspector, error)
	OptimizerFactory func(opts fl.Options) (fl.ServerOptimizer, error)
)

// Registry maps names to factories, one namespace per kind of method.
type Registry struct {
	samplers   kind[SamplerFactory]
	rules      kind[RuleFactory]
	algorithms kind[AlgorithmFactory]
	inspectors kind[InspectorFactory]
	optimizers kind[OptimizerFactory]
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{
		samplers:   kind[SamplerFactory]{block: "sampler", m: map[string]SamplerFactory{}},
		rules:      kind[RuleFactory]{block: "aggregator", m: map[string]RuleFactory{}},
		algorithms: kind[AlgorithmFactory]{block: "algorithm", m: map[string]AlgorithmFactory{}},
		inspectors: kind[InspectorFactory]{block: "inspect", m: map[string]InspectorFactory{}},
		optimizers: kind[OptimizerFactory]{block: "server_optimizer", m: map[string]OptimizerFactory{}},
	}
}

// DefaultAlgorithm is the algorithm of a spec without an algorithm block.
const DefaultAlgorithm = "fedavg"

// Builtin returns a registry with every built-in method.
func Builtin() *Registry {
	r := New()
	r.AddSampler("uniform", Simple(sampling.NewUniform))
	r.AddSampler("md", Simple(sampling.NewMD))
	r.AddSampler("pow-d", sampling.NewPowD)
	r.AddSampler("divfl", sampling.NewDivFL)
	r.AddSampler("fedcor", sampling.NewFedCor)
	r.AddSampler("binomial", Simple(sampling.NewBinomial))
	r.AddSampler("poisson", Simple(sampling.NewPoisson))
	r.AddSampler("clustered", Simple(sampling.NewClustered))
	r.AddSampler("random", Simple(sampling.NewRandom))
	r.AddSampler("hics", sampling.NewHiCS)
	r.AddSampler("clustered-similarity", sampling.NewClusteredSimilarity)
	r.AddRule("fedavg", aggregate.NewWeightedDelta)
	r.AddAlgorithm("fedavg", algorithm.NewFedAvg)
	r.AddAlgorithm("fedprox", algorithm.NewFedProx)
	r.AddAlgorithm("scaffold", algorithm.NewSCAFFOLD)
	r.AddAlgorithm("feddyn", algorithm.NewFedDyn)
	r.AddAlgorithm("moon", algorithm.NewMOON)
	r.AddAlgorithm("fednova", algorithm.NewFedNova)
	r.AddAlgorithm("feddc", algorithm.NewFedDC)
	r.AddAlgorithm("fedeba", algorithm.NewFedEBA)
	r.AddAlgorithm("fedeba+", algorithm.NewFedEBAPlus)
	r.AddAlgorithm("prac-fedeba+", algorithm.NewPracFedEBAPlus)
	r.AddAlgorithm("propfair", algorithm.NewPropFair)
	r.AddAlgorithm("fedfv", algorithm.NewFedFV)
	r.AddAlgorithm("qffl", algorithm.NewQFFL)
	r.AddAlgorithm("term", algorithm.NewTERM)
	r.AddAlgorithm("afl", algorithm.NewAFL)
	r.AddAlgorithm("fedmgda+", algorithm.NewFedMGDAPlus)
	r.AddAlgorithm("fnrfl", algorithm.NewFNRFL)
	r.AddInspector("noop", newNoop)
	r.AddServerOptimizer("sgd", aggregate.NewSGD)
	r.AddServerOptimizer("fedavgm", aggregate.NewFedAvgM)
	r.AddServerOptimizer("fedadagrad", aggregate.NewFedAdagrad)
	r.AddServerOptimizer("fedyogi", aggregate.NewFedYogi)
	r.AddServerOptimizer("fedadam", aggregate.NewFedAdam)
	return r
}

// Simple adapts the constructor of a sampler that never asks its clients
// anything (fl.Sampler) to a SamplerFactory.
func Simple(f func(m int, opts fl.Options) (fl.Sampler, error)) SamplerFactory {
	return func(m int, opts fl.Options) (fl.Planner, error) {
		s, err := f(m, opts)
		if err != nil {
			return nil, err
		}
		return fl.Planned(s), nil
	}
}

// AddSampler, AddRule, AddAlgorithm and AddInspector register a factory;
// registering a name twice is a programming error and panics.
func (r *Registry) AddSampler(name string, f SamplerFactory)     { r.samplers.add(name, f) }
func (r *Registry) AddRule(name string, f RuleFactory)           { r.rules.add(name, f) }
func (r *Registry) AddAlgorithm(name string, f AlgorithmFactory) { r.algorithms.add(name, f) }
func (r *Registry) AddInspector(name string, f InspectorFactory) { r.inspectors.add(name, f) }

// AddServerOptimizer registers a server optimiser's factory.
func (r *Registry) AddServerOptimizer(name string, f OptimizerFactory) { r.optimizers.add(name, f) }

// ServerOptimizer builds the named server optimiser; "" is none (nil): the
// algorithm's own step.
func (r *Registry) ServerOptimizer(name string, opts fl.Options) (fl.ServerOptimizer, error) {
	if name == "" {
		return nil, nil
	}
	f, err := r.optimizers.get(name)
	if err != nil {
		return nil, err
	}
	return f(opts)
}

// Sampler builds the named sampler for m clients per round.
func (r *Registry) Sampler(name string, m int, opts fl.Options) (fl.Planner, error) {
	f, err := r.samplers.get(name)
	if err != nil {
		return nil, err
	}
	return f(m, opts)
}

// Rule builds the named aggregation rule.
func (r *Registry) Rule(name string, opts fl.Options) (fl.Rule, error) {
	f, err := r.rules.get(name)
	if err != nil {
		return nil, err
	}
	return f(opts)
}

// Algorithm builds the named algorithm; "" is DefaultAlgorithm.
func (r *Registry) Algorithm(name string, opts fl.Options) (algorithm.Algorithm, error) {
	if name == "" {
		name = DefaultAlgorithm
	}
	f, err := r.algorithms.get(name)
	if err != nil {
		return nil, err
	}
	return f(opts)
}

// Inspector builds the named inspector.
func (r *Registry) Inspector(name string, opts fl.Options) (fl.Inspector, error) {
	f, err := r.inspectors.get(name)
	if err != nil {
		return nil, err
	}
	return f(opts)
}

// Samplers, Rules, Algorithms and Inspectors list the registered names, sorted.
func (r *Registry) Samplers() []string   { return r.samplers.names() }
func (r *Registry) Rules() []string      { return r.rules.names() }
func (r *Registry) Algorithms() []string { return r.algorithms.names() }
func (r *Registry) Inspectors() []string { return r.inspectors.names() }

// ServerOptimizers lists the registered server optimisers, sorted.
func (r *Registry) ServerOptimizers() []string { return r.optimizers.names() }

// Resolved returns a method's resolved options as JSON: its exported fields.
func Resolved(method any) (json.RawMessage, error) {
	b, err := json.Marshal(method)
	if err != nil {
		return nil, fmt.Errorf("methods: record the resolved options of %T: %w", method, err)
	}
	return b, nil
}

// kind is one namespace of names.
type kind[F any] struct {
	block string // the spec block, for messages
	m     map[string]F
}

func (k *kind[F]) add(name string, f F) {
	if _, dup := k.m[name]; dup {
		panic("methods: " + k.block + " " + name + " registered twice")
	}
	k.m[name] = f
}

func (k *kind[F]) get(name string) (F, error) {
	f, ok := k.m[name]
	if !ok {
		return f, fmt.Errorf("%s.name = %q is unknown; use one of %s: %w", k.block, name, strings.Join(k.names(), ", "), fl.ErrInvalid)
	}
	return f, nil
}

func (k *kind[F]) names() []string {
	ns := make([]string, 0, len(k.m))
	for n := range k.m {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// noop is the inspector that looks at every update and finds nothing: it
// proves the inspect phase (the label-recovery attacks plug in here).
type noop struct{}

func newNoop(opts fl.Options) (fl.Inspector, error) {
	if err := opts.Decode("inspect (noop)", &struct{}{}); err != nil {
		return nil, err
	}
	return noop{}, nil
}

func (noop) Inspect(fl.Inspection) (json.RawMessage, error) { return nil, nil }
