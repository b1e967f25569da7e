//go:build openblas

package gemm

// This file makes OpenBLAS, through gonum's cgo binding
// gonum.org/v1/netlib/blas/netlib, the float32 BLAS of the build. Build with
//
//	CGO_LDFLAGS=-lopenblas go build -tags openblas ...
//
// with Debian's libopenblas-dev installed (make openblas).
//
// OpenBLAS runs single-threaded: openblas_set_num_threads(1) before the
// first product. Each product is then computed by the calling goroutine's
// thread with a kernel and blocking chosen from the CPU and the matrix
// sizes alone, so results are bit-identical across runs and between
// sequential and concurrent clients; the cores are used by training clients
// in parallel instead (engine.Engine trains a round's clients concurrently).
// The same sample can come out differently in the last bits in batches of
// different sizes, since the kernel depends on the sizes (the pure-Go build's
// does not); a run's batches are fixed by its data, so runs still repeat.
// A multi-threaded OpenBLAS would also be deterministic for fixed sizes,
// but concurrent calls from several clients would oversubscribe the cores.
// A different BLAS (or CPU kernel family) computes different, equally
// deterministic, numbers: the Makefile adds "+openblas" to the build's
// version, which every committed round records.

// Kernel choice. Debian's OpenBLAS is built with DYNAMIC_ARCH: at load time
// it picks its kernels from the CPU's family and model numbers. Models newer
// than the library fall back to the SSE3 "Prescott" kernels: Debian
// bookworm's 0.3.21 does so on Sapphire/Emerald Rapids Xeons, where that
// costs a factor of 4-5 (measured on the 2-core development machine, one
// thread, 512³ SGEMM: Prescott 32 GFLOP/s, Haswell 65, SkylakeX 140). So
// before the first product, if the library chose an SSE-only kernel family
// on a CPU with AVX2 and FMA, or anything but an AVX-512 family on a CPU
// with the AVX-512 subsets SkylakeX's kernels use, the library is
// re-initialised with OPENBLAS_CORETYPE set to the family the CPU supports
// (OpenBLAS's own mechanism for overriding the detection). A user's own
// OPENBLAS_CORETYPE is always left alone. BLASCore names the family in
// use; cmd/starter bench prints it.

/*
#cgo LDFLAGS: -lopenblas
#include <stdlib.h>
void openblas_set_num_threads(int);
char *openblas_get_corename(void);
// Present in DYNAMIC_ARCH builds only; weak, so that other builds link.
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));

static int openblas_is_dynamic(void) { return gotoblas_dynamic_init != 0 && gotoblas_dynamic_quit != 0; }

// openblas_switch_core re-runs the DYNAMIC_ARCH detection with
// OPENBLAS_CORETYPE=name. No product may be running.
static void openblas_switch_core(const char *name) {
	setenv("OPENBLAS_CORETYPE", name, 1);
	gotoblas_dynamic_quit();
	gotoblas_dynamic_init();
	unsetenv("OPENBLAS_CORETYPE");
}
*/
import "C"

import (
	"os"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
	"gonum.org/v1/netlib/blas/netlib"
)

// BLAS names the float32 BLAS of this build: "gonum" (pure Go, the
// default) or "openblas" (build tag openblas).
const BLAS = "openblas"

var (
	openBLAS  netlib.Implementation
	setupOnce sync.Once
)

// setup makes OpenBLAS single-threaded and corrects its kernel family (see
// the kernel choice above). It runs once, before the first product.
func setup() {
	C.openblas_set_num_threads(1)
	if _, set := os.LookupEnv("OPENBLAS_CORETYPE"); set || C.openblas_is_dynamic() == 0 {
		return
	}
	avx512, avx2 := cpuLevels()
	if want := betterCore(corename(), avx512, avx2); want != "" {
		name := C.CString(want)
		defer C.free(unsafe.Pointer(name))
		C.openblas_switch_core(name)
	}
}

func corename() string { return C.GoString(C.openblas_get_corename()) }

// cpuLevels reports whether the CPU has the AVX-512 subsets SkylakeX's
// kernels use (F, CD, BW, DQ, VL), and AVX2 with FMA.
func cpuLevels() (avx512, avx2 bool) {
	return cpu.X86.HasAVX512F && cpu.X86.HasAVX512CD && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL,
		cpu.X86.HasAVX2 && cpu.X86.HasFMA
}

// BLASCore names OpenBLAS's kernel family in use, e.g. "SkylakeX".
func BLASCore() string {
	setupOnce.Do(setup)
	return corename()
}

// betterCore returns the OpenBLAS kernel family to use instead of the
// detected one on a CPU with (avx512) the AVX-512 F, CD, BW, DQ and VL
// subsets, or (avx2) AVX2 and FMA, or "" to keep the detected one.
func betterCore(detected string, avx512, avx2 bool) string {
	switch d := strings.ToLower(detected); {
	case avx512 && d != "skylakex" && d != "cooperlake" && d != "sapphirerapids":
		return "SkylakeX"
	case avx2 && sseOnly[d]:
		return "Haswell"
	}
	return ""
}

// sseOnly lists OpenBLAS's x86-64 kernel families without AVX.
var sseOnly = map[string]bool{
	"prescott": true, "core2": true, "penryn": true, "dunnington": true, "nehalem": true,
	"atom": true, "nano": true, "opteron": true, "opteron(sse3)": true, "barcelona": true, "bobcat": true,
}

// blasSgemm is gemm for float32 on OpenBLAS, which handles every orientation
// at full speed.
func blasSgemm(_ *Buffers, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	setupOnce.Do(setup)
	openBLAS.Sgemm(trans(tA), trans(tB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
