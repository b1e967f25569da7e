// Package partition splits a labelled dataset among federated-learning
// clients, the way the papers this project reproduces did: NIID-Bench's IID
// and label-Dirichlet generators (Li, Diao, Chen, He, ICDE 2022; used by
// FNR-FL, arXiv:2312.06951, specs/fnrfl.md §2), McMahan's label-sorted
// shards (used by FedEBA+, specs/fedeba.md §3.2), per-client local test
// splits (FedEBA+'s 80/20 holdout; HiCS-FL's test sets drawn with the
// client's label proportions, specs/hicsfl.md §3.3), and the per-client
// statistics recorded in the partitions table.
//
// Every partitioner is a pure function of the form
//
//	(labels, options, r *rand.Rand) -> ([][]int, error)
//
// and returns one index list per client, numbered 0..n-1. Indices point into
// the dataset split the labels came from.
//
// # Determinism
//
// Output depends only on the arguments. All randomness comes from the
// *rand.Rand argument (math/rand/v2), which is required: a nil one panics
// with "partition: nil rand". No function reads the clock or a global
// generator, and none modifies its arguments. Each client's index list is
// sorted ascending, so two partitions compare with slices.Equal.
//
// # Errors
//
// Exported functions validate their arguments and return an error wrapping
// [ErrInvalid] that names the field and the fix. A request that cannot be
// met, such as a Dirichlet minimum client size that no draw reaches within
// the allowed redraws, is also [ErrInvalid]: retrying with the same input
// gives the same answer. Callers should test with errors.Is, not read the
// message.
//
// # Testing
//
// Package partitiontest checks any partitioner against the shared contract
// (in range, sorted, disjoint, complete, deterministic for a seed); every
// partitioner's test runs it.
package partition
