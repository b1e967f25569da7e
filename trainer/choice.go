package trainer

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/flsweep/flsweep/internal/conv"
	kgemm "github.com/flsweep/flsweep/internal/gemm"
	"github.com/flsweep/flsweep/internal/wino"
)

// KernelChoice chooses the kernels a Trainer computes with, where more
// than one computes the same arithmetic with different rounding. The zero
// value is the default: the fastest set, which gives the same bits on
// every CPU with AVX2 or AVX-512. Each field turns one default off, to
// compute the numerics of an earlier build or to time a kernel against
// another; Numerics names the bits a choice gives. The CLI maps
// environment variables onto it (KernelChoiceFromEnv).
type KernelChoice struct {
	// BLAS computes the float32 products by the build's BLAS (gonum, or
	// OpenBLAS in the openblas build) instead of the packed product
	// (package packed), which is faster than OpenBLAS's kernels
	// (BenchmarkSgemm), needs no cgo, and gives the same bits with
	// either instruction set. The BLAS's rounding depends on its
	// kernels. On a CPU without AVX2 the products take the BLAS anyway.
	// FLSWEEP_GEMM=blas.
	BLAS bool
	// Im2col computes every convolution as im2col and one product,
	// rather than the 3×3 and 5×5 stride-1 ones with enough input
	// channels by Winograd (package conv, winograd.go): the numerics of
	// builds before Winograd. FLSWEEP_CONV=im2col.
	Im2col bool
	// NoF43 keeps F(2×2, 3×3) for every 3×3 Winograd convolution rather
	// than F(4×4, 3×3) where their outputs are wide enough (package
	// conv, winograd43.go): the numerics before F(4×4, 3×3).
	// FLSWEEP_WINO43=0.
	NoF43 bool
	// NoF45 keeps F(2×2, 5×5) for every 5×5 Winograd convolution rather
	// than F(4×4, 5×5) (package conv, winograd45.go). FLSWEEP_WINO45=0.
	NoF45 bool
	// NoChannelLane turns off the channel-lane Winograd and im2col paths
	// (package conv, winograd_cl.go and im2col_cl.go; AVX-512 with the
	// packed product only). They give the bits of the tile-lane paths, so
	// this changes the speed only. FLSWEEP_WINO_CL=0.
	NoChannelLane bool
}

// KernelChoiceFromEnv reads a KernelChoice from the environment variables
// its fields name: FLSWEEP_GEMM (packed or blas), FLSWEEP_CONV (winograd
// or im2col), FLSWEEP_WINO43, FLSWEEP_WINO45 and FLSWEEP_WINO_CL (1 or 0);
// unset or empty means the default. Any other value is an error naming
// the variable and the values it takes.
func KernelChoiceFromEnv() (KernelChoice, error) {
	var k KernelChoice
	var errs []string
	pick := func(name string, dst *bool, def, off string) {
		switch v := os.Getenv(name); v {
		case "", def:
		case off:
			*dst = true
		default:
			errs = append(errs, fmt.Sprintf("%s=%q: want %s (the default) or %s", name, v, def, off))
		}
	}
	pick("FLSWEEP_GEMM", &k.BLAS, "packed", "blas")
	pick("FLSWEEP_CONV", &k.Im2col, "winograd", "im2col")
	pick("FLSWEEP_WINO43", &k.NoF43, "1", "0")
	pick("FLSWEEP_WINO45", &k.NoF45, "1", "0")
	pick("FLSWEEP_WINO_CL", &k.NoChannelLane, "1", "0")
	if errs != nil {
		return KernelChoice{}, fmt.Errorf("kernel choice: %s", strings.Join(errs, "; "))
	}
	return k, nil
}

// kernels is a KernelChoice resolved against this CPU and build: what the
// graph's ops read, the convolutions' part as package conv takes it.
type kernels struct {
	packed bool // float32 products by package packed, else the build's BLAS
	conv.Kernels
}

func (k KernelChoice) resolve() kernels {
	p := kgemm.Packed(k.BLAS)
	return kernels{
		packed: p,
		Kernels: conv.Kernels{
			Winograd: !k.Im2col,
			F43:      !k.NoF43,
			F45:      !k.NoF45,
			// The channel-lane paths need AVX-512 (package wino) and the
			// packed product, whose order along k is what makes their bits
			// those of the tile-lane paths.
			CL: wino.Available && p && !k.NoChannelLane,
		},
	}
}

// Numerics names what, besides the build (conf.Version), decides the bits
// a model trains to on this machine under choice k, as a version suffix:
// "" for the packed products with the vector kernels, which give the same
// bits on every CPU with AVX2 or AVX-512 (the default); else
// "+blas-<kernels>" when the build's BLAS computes the products (k.BLAS,
// or a CPU without AVX2: its rounding depends on its kernels),
// "+portable" when the elementwise sums run in the portable loops' order
// (a build without GOEXPERIMENT=simd, or a CPU without AVX2), "+im2col"
// when every convolution runs as im2col (k.Im2col), "+wino2" when the 3×3
// Winograd ones all take F(2×2, 3×3) (k.NoF43) and "+wino45off" when the
// 5×5 ones take F(2×2, 5×5) (k.NoF45). Workers and in-process runs record
// conf.Version + Numerics as their build, so a point's rounds, and the
// workers a sweep's tasks are routed to, agree on it.
func (k KernelChoice) Numerics() string {
	r := k.resolve()
	var s string
	if !r.packed {
		s += "+blas-" + strings.ToLower(strings.ReplaceAll(kgemm.BLASCore(), " ", ""))
	}
	if vec.Name == "" {
		s += "+portable"
	}
	if !r.Winograd {
		s += "+im2col"
	} else {
		if !r.F43 {
			s += "+wino2"
		}
		if !r.F45 {
			s += "+wino45off"
		}
	}
	return s
}

// Core names the kernels that compute the float32 products under choice
// k: the packed product's ("packed AVX-512", "packed AVX2"), or the
// BLAS's (gemm.BLASCore).
func (k KernelChoice) Core() string { return kgemm.Core(k.BLAS) }

// BLAS names the float32 BLAS of this build: "gonum" (pure Go, the
// default) or "openblas" (build tag openblas).
const BLAS = kgemm.BLAS

// SGEMM is the trainer's float32 product under choice kc, C = A·op(B) for
// row-major A (m×k), op(B) (k×n; B is n×k when transB) and C (m×n),
// exported for the benchmark that measures the machine's SGEMM rate
// (cmd/starter bench).
func SGEMM(kc KernelChoice, transB bool, m, n, k int, a, b, c []float32) {
	ldb := n
	if transB {
		ldb = k
	}
	buf := gemmBuffers.Get().(*kgemm.Buffers)
	defer gemmBuffers.Put(buf)
	kgemm.Sgemm(buf, !kc.resolve().packed, false, transB, m, n, k, 1, a, k, b, ldb, 0, c, n)
}

var gemmBuffers = sync.Pool{New: func() any { return new(kgemm.Buffers) }}
