package partition

import (
	"fmt"
	"math/rand/v2"
)

// Shards gives each client shardsPerClient label-sorted shards: the
// pathological non-IID split of McMahan et al. (AISTATS 2017, §3) that
// FedEBA+ uses (specs/fedeba.md §3.2; easyFL's label_skew_shard):
//
//	order = indices stably sorted by label (ties by index)
//	cut order into S = clients·shardsPerClient contiguous shards
//	draw shardsPerClient distinct shards per client, without replacement
//
// On Fashion-MNIST (6,000 samples per class) 100 clients × 2 shards give 200
// single-label shards of 300 samples, so each client holds 600 samples from
// at most 2 classes.
//
// Remainder rule: when S does not divide N = len(labels), shard sizes follow
// np.array_split, so shards 0..N%S-1 (in label order) hold one sample more
// than the others. The partition stays complete and client sizes differ by at
// most shardsPerClient. easyFL instead uses floor(floor(N/clients)/
// shardsPerClient) samples per shard and drops the remainder (the tail of
// the last labels); both rules agree whenever S divides N.
//
// Shards returns an error wrapping ErrInvalid unless clients >= 1,
// shardsPerClient >= 1 and S <= N. It panics if r is nil.
func Shards(labels []uint8, clients, shardsPerClient int, r *rand.Rand) ([][]int, error) {
	mustRand(r)
	n := len(labels)
	if err := checkClients(clients, n); err != nil {
		return nil, err
	}
	if shardsPerClient < 1 {
		return nil, fmt.Errorf("partition: shards_per_client = %d; use at least 1: %w", shardsPerClient, ErrInvalid)
	}
	if shardsPerClient > n/clients {
		return nil, fmt.Errorf("partition: clients × shards_per_client = %d × %d exceeds the %d samples (one per shard at least); lower shards_per_client or clients: %w",
			clients, shardsPerClient, n, ErrInvalid)
	}
	order, _ := byClass(labels, 256)
	shards := clients * shardsPerClient
	q, m := n/shards, n%shards
	shardStart := func(s int) int { return s*q + min(s, m) }

	perm := r.Perm(shards)
	owner := make([]int32, n)
	sizes := make([]int, clients)
	for pos, s := range perm {
		k := pos / shardsPerClient
		lo, hi := shardStart(s), shardStart(s+1)
		for _, i := range order[lo:hi] {
			owner[i] = int32(k)
		}
		sizes[k] += hi - lo
	}
	return gather(owner, sizes), nil
}
