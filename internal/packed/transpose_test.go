package packed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTranspose checks Transpose against the definition on shapes with and
// without whole 8×8 blocks, rows longer than their length (ld > c) and
// the edges of both.
func TestTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][3]int{{1, 1, 1}, {8, 8, 8}, {9, 17, 20}, {16, 8, 8}, {7, 40, 41}, {40, 7, 7}, {200, 784, 790}, {24, 64, 64}} {
		rows, cols, ld := s[0], s[1], s[2]
		src := randSlice(r, rows*ld)
		dst := make([]float32, cols*rows)
		Transpose(dst, src, rows, cols, ld)
		for i := range rows {
			for j := range cols {
				if got, want := dst[j*rows+i], src[i*ld+j]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v: dst[%d, %d] = %v, want src[%d, %d] = %v", s, j, i, got, i, j, want)
				}
			}
		}
	}
}
