package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// scaleSpec is a sweep of n points (seeds 0..n-1) of a workload that
// trains in milliseconds, as integration/testdata/scale.yaml.
func scaleSpec(name string, n int) []byte {
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i)
	}
	return fmt.Appendf(nil, `
name: %s
dataset: {name: synthetic}
partition: {scheme: iid, clients: 2}
model: {arch: logreg}
train: {lr: 0.1, batch_size: 8, local_steps: 1}
rounds: 1
clients_per_round: 1
seeds: [%s]
`, name, strings.Join(seeds, ", "))
}

// BenchmarkPlanSweep measures planning a sweep of 1,000, 10,000 and 20,000
// points on a file bucket (parse, validate, one config.json per point, the
// plan's pages of 500), the first time and again (the second finds the
// spec and the pages and writes nothing).
func BenchmarkPlanSweep(b *testing.B) {
	for _, n := range []int{1000, 10000, 20000} {
		for _, again := range []bool{false, true} {
			b.Run(fmt.Sprintf("points=%d/again=%v", n, again), func(b *testing.B) {
				ctx := context.Background()
				spec := scaleSpec("plan", n)
				for range b.N {
					b.StopTimer()
					bkt, err := fileblob.OpenBucket(b.TempDir(), &fileblob.Options{NoTempDir: true})
					if err != nil {
						b.Fatal(err)
					}
					e := New(store.New(bkt), &Options{Workers: 2})
					in := steps.PlanSweepInput{File: "scale.yaml", Spec: spec, PageSize: steps.DefaultPageSize}
					if again {
						if _, err := e.PlanSweep(ctx, in); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					out, err := e.PlanSweep(ctx, in)
					if err != nil {
						b.Fatal(err)
					}
					if out.Count != n {
						b.Fatalf("planned %d points; want %d", out.Count, n)
					}
					bkt.Close()
				}
			})
		}
	}
}
