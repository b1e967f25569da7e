package trainer

import (
	"os"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/trainer/internal/packed"
)

// TestNumerics checks the build suffix against what computes this
// process's products and sums: empty only for the packed products with the
// vector kernels, "+blas-…" under FLSWEEP_GEMM=blas (make test runs the
// trainer's tests so once), "+portable" without vector kernels, "+im2col"
// under FLSWEEP_CONV=im2col, "+wino2" under FLSWEEP_WINO43=0 and "+wino45off"
// under FLSWEEP_WINO45=0 (make test runs some tests so each). The
// suffix goes into task-queue names, so it has no spaces or '@'.
func TestNumerics(t *testing.T) {
	n := Numerics()
	blas := os.Getenv("FLSWEEP_GEMM") == "blas" || !packed.Available
	if got := strings.Contains(n, "+blas-"); got != blas {
		t.Errorf("Numerics() = %q with products %q: +blas- present %v, want %v", n, Core(), got, blas)
	}
	if got, want := strings.Contains(n, "+portable"), vec.name == ""; got != want {
		t.Errorf("Numerics() = %q with elementwise kernels %q: +portable present %v, want %v", n, Kernels(), got, want)
	}
	if got, want := strings.Contains(n, "+im2col"), os.Getenv("FLSWEEP_CONV") == "im2col"; got != want {
		t.Errorf("Numerics() = %q with FLSWEEP_CONV=%q: +im2col present %v, want %v", n, os.Getenv("FLSWEEP_CONV"), got, want)
	}
	wino2 := os.Getenv("FLSWEEP_WINO43") == "0" && os.Getenv("FLSWEEP_CONV") != "im2col"
	if got := strings.Contains(n, "+wino2"); got != wino2 {
		t.Errorf("Numerics() = %q with FLSWEEP_WINO43=%q: +wino2 present %v, want %v", n, os.Getenv("FLSWEEP_WINO43"), got, wino2)
	}
	wino45off := os.Getenv("FLSWEEP_WINO45") == "0" && os.Getenv("FLSWEEP_CONV") != "im2col"
	if got := strings.Contains(n, "+wino45off"); got != wino45off {
		t.Errorf("Numerics() = %q with FLSWEEP_WINO45=%q: +wino45off present %v, want %v", n, os.Getenv("FLSWEEP_WINO45"), got, wino45off)
	}
	if strings.ContainsAny(n, " @") {
		t.Errorf("Numerics() = %q holds a space or '@'", n)
	}
	t.Logf("Numerics() = %q (products %s, elementwise %s)", n, Core(), Kernels())
}
