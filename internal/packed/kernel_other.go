//go:build !amd64

package packed

// kernelSets is empty off amd64: the kernels are x86 assembly.
var kernelSets []*kernels

const haveAVX2 = false

func transposeStrip(dst *float32, ldd int, src *float32, lds int, blocks int) {
	panic("packed: no AVX2")
}
