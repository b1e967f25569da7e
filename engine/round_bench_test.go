package engine

import (
	"context"
	"fmt"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// BenchmarkRoundClients measures one round (plan, train, aggregate, commit;
// no evaluation) of a point on Fashion-MNIST with 10 clients a round, at
// populations of 100, 1,000 and 10,000 clients, on a file bucket: the
// per-round cost beyond what selection needs should not grow with the
// population. It needs the fetched data ($FLSWEEP_DATA_DIR/fmnist, or the
// main checkout's .data/datasets) and skips without it.
func BenchmarkRoundClients(b *testing.B) {
	dir := fmnistDir(b)
	for _, n := range []int{100, 1000, 10000} {
		for _, sampler := range []string{"uniform", "md"} {
			b.Run(fmt.Sprintf("clients=%d/sampler=%s", n, sampler), func(b *testing.B) { benchmarkRound(b, dir, n, sampler) })
		}
	}
}

func benchmarkRound(b *testing.B, dataDir string, n int, sampler string) {
	ctx := context.Background()
	bucketDir := b.TempDir()
	bkt, err := fileblob.OpenBucket(bucketDir, &fileblob.Options{NoTempDir: true})
	if err != nil {
		b.Fatal(err)
	}
	defer bkt.Close()
	e := New(store.New(bkt), &Options{DataDir: dataDir, Workers: 2})
	spec := fmt.Sprintf(`
name: bench
dataset: {name: fmnist}
partition: {scheme: iid, clients: %d}
model: {arch: logreg}
train: {lr: 0.05, batch_size: 4, local_steps: 1}
rounds: 100000
clients_per_round: 10
eval_every: 100000
metrics: {client_losses: false, global_train_loss: false}
sampler: %s
`, n, sampler)
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "bench.yaml", Spec: []byte(spec)})
	if err != nil {
		b.Fatal(err)
	}
	ref := steps.PointRef{Sweep: plan.Name, Point: plan.Points[0].ID}
	prep, err := e.PreparePoint(ctx, ref)
	if err != nil {
		b.Fatal(err)
	}
	round := func(r int) {
		if _, err := e.RunRound(ctx, steps.RoundInput{
			RoundRef: steps.RoundRef{PointRef: ref, Round: r, DataDigest: prep.DataDigest},
			Phases:   prep.Phases,
		}); err != nil {
			b.Fatal(err)
		}
	}
	round(1) // warm: the worker's caches (data, partition, methods) are built once per point
	b.ResetTimer()
	for i := range b.N {
		round(i + 2)
	}
}
