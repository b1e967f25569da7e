// Package aggregate implements server aggregation rules: how the deltas of a
// round's clients become the next global model.
package aggregate

import "github.com/flsweep/flsweep/fl"

// Register adds this package's rules to r under their spec names.
func Register(r *fl.Registry) {
	r.AddRule("fedavg", newWeightedDelta)
}
