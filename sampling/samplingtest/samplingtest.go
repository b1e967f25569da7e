// Package samplingtest checks an fl.Sampler against the sampler contract, in
// the shape of testing/fstest.TestFS: one call, every violation reported in a
// single error.
package samplingtest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// Options tune Check.
type Options struct {
	// WithReplacement allows Draws > 1 (the same client drawn several times).
	WithReplacement bool
	// Rounds is the number of Monte-Carlo rounds for the unbiasedness check;
	// 0 means 20,000.
	Rounds int
	// SE is the tolerance of the unbiasedness check in standard errors of the
	// empirical mean: |mean_k − p_k| <= SE·sqrt(Var_k/R) + 1e-12 for every k.
	// 0 means 5 (a false alarm per client has probability below 6e-7).
	SE float64
	// Seed seeds the stream of the Monte-Carlo check.
	Seed uint64
}

// Check verifies that s:
//   - returns distinct client IDs in [0, n), in ascending order;
//   - returns finite, non-negative weights and positive draw counts, one per client;
//   - draws at most one of each client unless WithReplacement;
//   - is pure: equal arguments (including the stream state) give equal selections;
//   - is unbiased: over Rounds seeded rounds, E[ω_k] matches p_k within SE standard errors.
func Check(s fl.Sampler, pop fl.Population, o Options) error {
	if o.Rounds == 0 {
		o.Rounds = 20000
	}
	if o.SE == 0 {
		o.SE = 5
	}
	var errs []error
	n := pop.N()
	for t := 0; t < 20; t++ {
		a, err := s.Sample(t, pop, rand.New(rand.NewPCG(o.Seed, uint64(t))))
		if err != nil {
			return fmt.Errorf("Sample(round %d): %v", t, err)
		}
		b, _ := s.Sample(t, pop, rand.New(rand.NewPCG(o.Seed, uint64(t))))
		if !reflect.DeepEqual(a, b) {
			errs = append(errs, fmt.Errorf("round %d: equal arguments gave %v and %v", t, a, b))
		}
		if len(a.Weights) != len(a.Clients) || len(a.Draws) != len(a.Clients) {
			errs = append(errs, fmt.Errorf("round %d: %d clients, %d weights, %d draws", t, len(a.Clients), len(a.Weights), len(a.Draws)))
			continue
		}
		for i, k := range a.Clients {
			if k < 0 || k >= n {
				errs = append(errs, fmt.Errorf("round %d: client %d out of [0, %d)", t, k, n))
			}
			if i > 0 && k <= a.Clients[i-1] {
				errs = append(errs, fmt.Errorf("round %d: clients not strictly ascending: %v", t, a.Clients))
			}
			if w := a.Weights[i]; math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
				errs = append(errs, fmt.Errorf("round %d: client %d weight %v", t, k, w))
			}
			if d := a.Draws[i]; d < 1 || (d > 1 && !o.WithReplacement) {
				errs = append(errs, fmt.Errorf("round %d: client %d drawn %d times", t, k, d))
			}
		}
	}
	c, err := sampling.Characterize(s, pop, o.Rounds, rand.New(rand.NewPCG(o.Seed, 1<<40)))
	if err != nil {
		return err
	}
	for k := range pop.P {
		tol := o.SE*math.Sqrt(c.Var[k]/float64(o.Rounds)) + 1e-12
		if d := math.Abs(c.Mean[k] - pop.P[k]); d > tol {
			errs = append(errs, fmt.Errorf("biased: E[ω_%d] ≈ %.6g, want p_%d = %.6g (|diff| %.3g > %.3g)", k, c.Mean[k], k, pop.P[k], d, tol))
		}
	}
	return errors.Join(errs...)
}
