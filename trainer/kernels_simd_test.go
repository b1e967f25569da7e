//go:build goexperiment.simd && amd64

package trainer

import (
	"simd/archsimd"
	"testing"
)

// TestVecInUse checks that a GOEXPERIMENT=simd build on an AVX-512 CPU runs
// the vector kernels.
func TestVecInUse(t *testing.T) {
	if archsimd.X86.AVX512() && vec.name != "AVX-512" {
		t.Errorf("AVX-512 CPU, GOEXPERIMENT=simd build: kernels are %q", Kernels())
	}
	t.Logf("elementwise kernels: %s", Kernels())
}
