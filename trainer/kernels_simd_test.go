//go:build goexperiment.simd && amd64

package trainer

import (
	"simd/archsimd"
	"testing"
)

// TestVecInUse checks that a GOEXPERIMENT=simd build runs the widest
// vector kernels the CPU has.
func TestVecInUse(t *testing.T) {
	if archsimd.X86.AVX512() && vec.name != "AVX-512" {
		t.Errorf("AVX-512 CPU, GOEXPERIMENT=simd build: kernels are %q", Kernels())
	}
	if !archsimd.X86.AVX512() && archsimd.X86.AVX2() && vec.name != "AVX2" {
		t.Errorf("AVX2 CPU, GOEXPERIMENT=simd build: kernels are %q", Kernels())
	}
	t.Logf("elementwise kernels: %s", Kernels())
}
