package conv

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/internal/mem"
)

// TestConvHalves checks stride 2's im2col and col2im through half-planes
// (Im2colChunk and Col2imChunk when Geom.halves) against the strided
// loops of im2col and col2im, bit for bit, float32 and float64: padding 0
// to 2, even and odd planes, kernels 2, 3 and 5, chunks from sample 0 and
// past it.
func TestConvHalves(t *testing.T) {
	testConvHalves[float32](t)
	testConvHalves[float64](t)
}

func testConvHalves[T float](t *testing.T) {
	for _, c := range []struct{ cin, h, w, k, p int }{
		{3, 8, 7, 3, 1}, {2, 32, 32, 3, 1}, {2, 9, 10, 3, 0}, {1, 11, 11, 5, 2}, {2, 6, 9, 2, 0}, {2, 7, 8, 3, 2}, {1, 17, 16, 3, 1},
	} {
		ho, wo := (c.h+2*c.p-c.k)/2+1, (c.w+2*c.p-c.k)/2+1
		g := NewGeom(c.cin, 2, c.k, 2, c.p, c.h, c.w, ho, wo, Kernels{})
		if !g.halves() {
			t.Fatalf("%+v: no half-planes", c)
		}
		const batch, n0 = 5, 2
		r := rand.New(rand.NewPCG(3, uint64(c.h)))
		x := make([]T, batch*g.InSize())
		for i := range x {
			x[i] = T(r.NormFloat64())
		}
		cols := (batch - n0) * g.HW()
		ld := cols + 3
		want, got := make([]T, g.KDim()*ld), make([]T, g.KDim()*ld)
		im2col(g, x, n0, batch, want, ld)
		Im2colChunk(g, &mem.Workspace[T]{}, x, n0, batch, got, ld)
		for row := range g.KDim() {
			if !slices.Equal(got[row*ld:][:cols], want[row*ld:][:cols]) {
				t.Fatalf("%+v: im2col row %d differs through half-planes", c, row)
			}
		}
		col := make([]T, g.KDim()*ld)
		for i := range col {
			col[i] = T(r.NormFloat64())
		}
		dxWant, dxGot := make([]T, batch*g.InSize()), make([]T, batch*g.InSize())
		col2im(g, col, ld, dxWant, n0, batch)
		Col2imChunk(g, &mem.Workspace[T]{}, col, ld, dxGot, n0, batch)
		for i := range dxWant {
			if math.Float64bits(float64(dxGot[i])) != math.Float64bits(float64(dxWant[i])) {
				t.Fatalf("%+v: col2im dx[%d] = %v through half-planes, want %v", c, i, dxGot[i], dxWant[i])
			}
		}
	}
}
