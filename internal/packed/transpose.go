package packed

// Transpose writes the r×c row-major matrix src (rows ld apart) into dst as
// its c×r transpose (rows r apart): in 8×8 blocks of AVX2 shuffles where
// the CPU has AVX2 (transposeStrip), the edges and other CPUs in Go. It
// only moves values, so every CPU gives the same result.
func Transpose(dst, src []float32, r, c, ld int) {
	if r == 0 || c == 0 {
		return
	}
	_, _ = src[(r-1)*ld+c-1], dst[(c-1)*r+r-1]
	r8, c8 := 0, 0
	if haveAVX2 {
		r8, c8 = r-r%8, c-c%8
	}
	if c8 > 0 {
		for i := 0; i < r8; i += 8 {
			transposeStrip(&dst[i], r, &src[i*ld], ld, c8/8)
		}
	}
	for i := 0; i < r; i++ {
		j0 := c8
		if i >= r8 {
			j0 = 0
		}
		for j, v := range src[i*ld+j0 : i*ld+c] {
			dst[(j0+j)*r+i] = v
		}
	}
}
