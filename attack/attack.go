package attack

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// ErrNotApplicable marks an attack that cannot run on an input by its
// construction, not by a bug: iDLG on more than one sample, ZLG on
// embeddings that sum to 0, an update from a learning-rate schedule. A
// caller running several methods records it and goes on.
var ErrNotApplicable = errors.New("attack not applicable")

// Result is a recovered label histogram.
type Result struct {
	Method string
	// Counts[j] is the recovered number of samples of class j among the
	// Input.Local.Total() samples the client processed: non-negative
	// integers summing to that total.
	Counts []int
	// Proportions is the method's estimate before rounding (Σ = 1), for the
	// methods that have one (RLU's z*), or nil.
	Proportions []float64
	// Heuristic is set when the update comes from an optimiser outside the
	// method's model (Adam, AdamW): the counts are a best guess by a rule of
	// ours, not the method.
	Heuristic bool
}

// Attack is one label-recovery method. Recover reads only in (which holds
// nothing of the client's data) and runs forward and backward passes of
// the server's auxiliary data through tr. r is the stream of the methods
// that draw (RLU's posterior search); the others ignore it, and it may be
// nil for them. Equal arguments and an equal r state give equal Results.
//
// Errors: invalid input wraps fl.ErrInvalid; a method that does not apply
// wraps ErrNotApplicable; cancellation returns ctx.Err() wrapped.
type Attack interface {
	Name() string
	Recover(ctx context.Context, tr *trainer.Trainer, in Input, r *rand.Rand) (Result, error)
}

var (
	_ Attack = RLU{}
	_ Attack = IDLG{}
	_ Attack = LLG{}
	_ Attack = ZLG{}
	_ Attack = ILRG{}
)

// The attacks by name: RLU and its variants (ablations of Chen & Vikalo's
// design and the official code's closed form), and the baselines.
var builtin = []Attack{
	RLU{},
	RLU{ClosedForm: true},
	RLU{Posterior: &Posterior{}},
	RLU{StartOnly: true},
	RLU{Scale: ScaleSteps},
	RLU{Scale: ScaleNone},
	RLU{Transposed: true},
	IDLG{},
	LLG{},
	LLG{Dummy: DummyZero},
	LLG{Dummy: DummyOne},
	ZLG{},
	ILRG{},
}

// Names returns the names New accepts: rlu, rlu-closed-form,
// rlu-posterior, rlu-start, rlu-naive, rlu-unscaled, rlu-transposed, idlg,
// llg+, llg*-zero, llg*-one, zlg+, ilrg.
func Names() []string {
	var names []string
	for _, a := range builtin {
		names = append(names, a.Name())
	}
	return names
}

// New returns the attack of a name, with its defaults. An unknown name is
// fl.ErrInvalid and lists the known ones.
func New(name string) (Attack, error) {
	for _, a := range builtin {
		if a.Name() == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("attack %q is unknown; use one of %s: %w", name, strings.Join(Names(), ", "), fl.ErrInvalid)
}

// histogram checks a finished Result's counts: n classes, non-negative,
// summing to total. A failure is a bug in the method.
func histogram(counts []int, n, total int) []int {
	s := 0
	for _, c := range counts {
		if c < 0 {
			panic(fmt.Sprintf("attack: negative count in %v", counts))
		}
		s += c
	}
	if len(counts) != n || s != total {
		panic(fmt.Sprintf("attack: counts %v for %d classes sum to %d; want %d", counts, n, s, total))
	}
	return slices.Clone(counts)
}
