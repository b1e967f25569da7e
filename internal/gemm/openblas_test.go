//go:build openblas

package gemm

import (
	"os"
	"strings"
	"testing"
)

func TestBetterCore(t *testing.T) {
	for _, c := range []struct {
		detected     string
		avx512, avx2 bool
		want         string
	}{
		{"Prescott", true, true, "SkylakeX"}, // Sapphire Rapids on OpenBLAS 0.3.21
		{"Haswell", true, true, "SkylakeX"},
		{"SkylakeX", true, true, ""},
		{"Cooperlake", true, true, ""},
		{"Prescott", false, true, "Haswell"},
		{"Nehalem", false, true, "Haswell"},
		{"Zen", false, true, ""}, // an AVX2 family: trust it
		{"Sandybridge", false, true, ""},
		{"Prescott", false, false, ""}, // the CPU has nothing better
	} {
		if got := betterCore(c.detected, c.avx512, c.avx2); got != c.want {
			t.Errorf("betterCore(%q, avx512=%v, avx2=%v) = %q, want %q", c.detected, c.avx512, c.avx2, got, c.want)
		}
	}
}

// TestCoreInUse checks that the process runs OpenBLAS kernels as wide as
// the CPU: on an AVX-512 CPU an AVX-512 family, whatever the library
// detected by itself. It asks OpenBLAS (BLASCore), not Core, which names
// the packed products when they, not OpenBLAS, serve the trainer.
func TestCoreInUse(t *testing.T) {
	if _, set := os.LookupEnv("OPENBLAS_CORETYPE"); set {
		t.Skip("OPENBLAS_CORETYPE is set: the user's choice stands")
	}
	name := BLASCore()
	core := strings.ToLower(name)
	t.Logf("OpenBLAS kernels: %s", name)
	avx512, avx2 := cpuLevels()
	if avx512 && core != "skylakex" && core != "cooperlake" && core != "sapphirerapids" {
		t.Errorf("OpenBLAS uses %s kernels on an AVX-512 CPU", name)
	}
	if avx2 && sseOnly[core] {
		t.Errorf("OpenBLAS uses SSE-only %s kernels on an AVX2 CPU", name)
	}
}
