// Package aggregate implements server aggregation rules: how the deltas of a
// round's clients become the next global model.
package aggregate
