// Package partition splits a labelled dataset among federated-learning
// clients, the way the papers this project reproduces did:
//
//   - NIID-Bench's generators (Li, Diao, Chen, He, ICDE 2022; used by
//     FNR-FL, arXiv:2312.06951, specs/fnrfl.md §2): IID ("homo"), label
//     Dirichlet ("noniid-labeldir", Dirichlet), k labels per client
//     ("noniid-#label", KLabels), Dirichlet quantities ("iid-diff-quantity",
//     Quantity), mixed label and quantity skew ("mixed", Mixed) and
//     noise-based feature skew (Noise);
//   - HiCS-FL's α-groups with their test co-split (Groups, specs/hicsfl.md
//     §3.3);
//   - McMahan's label-sorted shards (Shards, used by FedEBA+,
//     specs/fedeba.md §3.2);
//   - Fraboni et al.'s unbalanced clients with Dirichlet label mixes
//     (Unbalanced, FraboniCIFARSizes, PowerLawSizes, DirichletSizes;
//     specs/sampling-theory.md §5);
//   - per-client local test sets (FedEBA+'s 80/20 HoldOut; FromTestSet,
//     drawn from the test split with the client's label proportions);
//
// and the per-client statistics recorded in the partitions table (Stats).
//
// Where a paper is silent and its reference code decides, a partitioner
// follows the code and its doc comment says so; where the code hangs, drops
// data or crashes, the doc says what happens here instead.
//
// Every partitioner is a pure function of the form
//
//	(labels, options, r *rand.Rand) -> ([][]int, error)
//
// (Groups returns a Partition, with groups and test sets) and returns one
// index list per client, numbered 0..n-1. Indices point into
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
