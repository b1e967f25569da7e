//go:build !amd64

package packed

// Available is false off amd64: the micro-kernel is AVX-512 assembly.
var Available = false

func kern14x32(k int, a, b, c *float32, ldc int) {
	panic("packed: no gemm micro-kernel on this architecture")
}
