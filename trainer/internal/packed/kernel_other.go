//go:build !amd64

package packed

// kernelSets is empty off amd64: the kernels are x86 assembly.
var kernelSets []*kernels
