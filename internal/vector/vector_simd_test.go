//go:build goexperiment.simd && amd64

package vector

import (
	"simd/archsimd"
	"testing"
)

// TestVecInUse checks that a GOEXPERIMENT=simd build runs the widest
// vector kernels the CPU has.
func TestVecInUse(t *testing.T) {
	if archsimd.X86.AVX512() && Best().Name != "AVX-512" {
		t.Errorf("AVX-512 CPU, GOEXPERIMENT=simd build: kernels are %q", Best().Name)
	}
	if !archsimd.X86.AVX512() && archsimd.X86.AVX2() && Best().Name != "AVX2" {
		t.Errorf("AVX2 CPU, GOEXPERIMENT=simd build: kernels are %q", Best().Name)
	}
	t.Logf("elementwise kernels: %q", Best().Name)
}
