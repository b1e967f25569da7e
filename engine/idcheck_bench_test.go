package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/steps"
)

// benchmarkPlanAgain measures PlanSweep of an n-point sweep that is already
// in a real file bucket: the re-plan of every resume, which now reads each
// point's stored config.json and compares it with the planned one before
// writing anything.
func benchmarkPlanAgain(b *testing.B, n int) {
	lrs := make([]string, n)
	for i := range lrs {
		lrs[i] = fmt.Sprintf("%g", float64(i+1)/float64(10*n))
	}
	in := steps.PlanSweepInput{File: "b.yaml", Spec: []byte(strings.Replace(spec, "grid:\n  sampler: [uniform, md]\n",
		"grid:\n  train.lr: ["+strings.Join(lrs, ", ")+"]\n", 1))}
	e, _, _ := fileEngine(b)
	if _, err := e.PlanSweep(b.Context(), in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.PlanSweep(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanAgain100(b *testing.B)  { benchmarkPlanAgain(b, 100) }
func BenchmarkPlanAgain1000(b *testing.B) { benchmarkPlanAgain(b, 1000) }
