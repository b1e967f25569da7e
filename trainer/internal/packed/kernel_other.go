//go:build !amd64

package packed

// Available is false off amd64: the micro-kernel is AVX-512 assembly.
var Available = false

func kern14x32(k int, a, b, c *float32, ldb, ldc int, add bool) {
	panic("packed: no gemm micro-kernel on this architecture")
}

func kernDot4x6(k16 int, tail uint16, alpha float32, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	panic("packed: no gemm micro-kernel on this architecture")
}
