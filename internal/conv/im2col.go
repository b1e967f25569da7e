package conv

import (
	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/wino"
)

// im2col writes the receptive fields of samples [n0, n1) of x ([B, cin, h,
// w]) into col ([cin·k·k, (n1−n0)·ho·wo], rows ld apart): row (c·k+u)·k+v
// holds x[n, c, i·s+u−p, j·s+v−p] (0 outside the image) at column
// (n−n0)·ho·wo + i·wo + j. Rows are written one after another, each across
// all the chunk's samples: the column matrix (megabytes) is then written
// sequentially, while the samples it reads stay in cache. (Sample by sample,
// every sample would touch each of the cin·k·k rows, pages apart.)
func im2col[T float](g Geom, x []T, n0, n1 int, col []T, ld int) {
	hw, in := g.HW(), g.InSize()
	for c := 0; c < g.Cin; c++ {
		for u := 0; u < g.K; u++ {
			for v := 0; v < g.K; v++ {
				row := col[((c*g.K+u)*g.K+v)*ld:]
				for n := n0; n < n1; n++ {
					plane := x[n*in+c*g.H*g.W:][:g.H*g.W]
					out := row[(n-n0)*hw:][:hw]
					if g.S == 1 {
						im2colRun(g, plane, out, u, v)
						continue
					}
					for i := 0; i < g.Ho; i++ {
						dst := out[i*g.Wo : (i+1)*g.Wo]
						y := i*g.S + u - g.P
						if y < 0 || y >= g.H {
							clear(dst)
							continue
						}
						src := plane[y*g.W : (y+1)*g.W]
						for j := range dst {
							if x := j*g.S + v - g.P; x >= 0 && x < g.W {
								dst[j] = src[x]
							} else {
								dst[j] = 0
							}
						}
					}
				}
			}
		}
	}
}

// padded is g on inputs already zero-padded by p on every side, with no
// padding of its own.
func (g Geom) padded() Geom {
	gp := g
	gp.H, gp.W, gp.P = g.H+2*g.P, g.W+2*g.P, 0
	return gp
}

// Im2colChunk is im2col for the chunk [n0, n1), writing col (rows ld
// apart). A padded stride-1 convolution (ResNet-18's, the HiCS CNNs')
// first copies the chunk's planes into ws.Pad with their zero borders, so
// that every row of every receptive field is one whole copy: the rows of
// im2colRun's padded path are a clear, a copy and a clear each, 31 floats
// long for ResNet-18's first stage.
func Im2colChunk[T mem.Float](g Geom, ws *mem.Workspace[T], x []T, n0, n1 int, col []T, ld int) {
	if g.halves() {
		xs := mem.Grow(&ws.Pad, (n1-n0)*g.Cin*g.halfPlane())
		splitHalves(g, x, n0, n1, xs)
		im2colHalves(g, xs, n1-n0, col, ld)
		return
	}
	if g.P == 0 || g.S != 1 {
		im2col(g, x, n0, n1, col, ld)
		return
	}
	xp := mem.Grow(&ws.Pad, (n1-n0)*g.padded().InSize())
	clear(xp)
	copyPadded(g, x, n0, n1, xp, true)
	im2col(g.padded(), xp, 0, n1-n0, col, ld)
}

// Col2imChunk is col2im for the chunk [n0, n1) of dx, which holds zeros
// there: a padded stride-1 convolution adds into zero-padded planes in
// ws.Pad and copies their insides to dx. Each entry of dx receives the
// same additions in the same order from zero either way.
func Col2imChunk[T mem.Float](g Geom, ws *mem.Workspace[T], col []T, ld int, dx []T, n0, n1 int) {
	if g.halves() {
		xs := mem.Grow(&ws.Pad, (n1-n0)*g.Cin*g.halfPlane())
		clear(xs)
		col2imHalves(g, col, ld, xs, n1-n0)
		mergeHalves(g, xs, dx, n0, n1)
		return
	}
	if g.P == 0 || g.S != 1 {
		col2im(g, col, ld, dx, n0, n1)
		return
	}
	dp := mem.Grow(&ws.Pad, (n1-n0)*g.padded().InSize())
	clear(dp)
	col2im(g.padded(), col, ld, dp, 0, n1-n0)
	copyPadded(g, dx, n0, n1, dp, false)
}

// halves reports whether g's im2col and col2im go through half-planes:
// stride 2 with a kernel wider than 1 (ResNet-18's 3×3 stride-2
// convolutions). Column 2j+v of a zero-padded row is column j+v/2 of its
// even (v even) or odd half, so every row of a receptive field is a
// contiguous run of a half-row, as in a stride-1 convolution; the
// strided gather, one float and two bounds checks at a time, took half
// of those convolutions' forward passes and col2im's adds half of their
// input gradients. (A 1×1 stride-2 convolution reads a quarter of its
// input, which splitting would read whole.)
func (g Geom) halves() bool { return g.S == 2 && g.K > 1 }

// halfRow is the length of a zero-padded row split into halves, even
// columns then odd, each (w+2p+1)/2 long; halfPlane that of a plane of
// h+2p such rows.
func (g Geom) halfRow() int   { return 2 * ((g.W + 2*g.P + 1) / 2) }
func (g Geom) halfPlane() int { return (g.H + 2*g.P) * g.halfRow() }

// splitHalves writes samples [n0, n1) of x, zero-padded, into xs as
// half-planes ([n1−n0, cin, h+2p, halfRow], halves: even columns, then odd).
func splitHalves[T float](g Geom, x []T, n0, n1 int, xs []T) {
	rows, hr, he := winoRowsFor[T](), g.halfRow(), g.halfRow()/2
	clear(xs)
	for n := n0; n < n1; n++ {
		for c := range g.Cin {
			plane := x[(n*g.Cin+c)*g.H*g.W:][:g.H*g.W]
			hp := xs[((n-n0)*g.Cin+c)*g.halfPlane():]
			for y := range g.H {
				row := hp[(y+g.P)*hr:][:hr]
				ev, od := padSplit(row[:he], row[he:], g.P)
				rows.split(ev, od, plane[y*g.W:][:g.W])
			}
		}
	}
}

// mergeHalves is splitHalves' adjoint for input gradients: it writes the
// insides of the half-planes xs into samples [n0, n1) of dx.
func mergeHalves[T float](g Geom, xs, dx []T, n0, n1 int) {
	rows, hr, he := winoRowsFor[T](), g.halfRow(), g.halfRow()/2
	for n := n0; n < n1; n++ {
		for c := range g.Cin {
			plane := dx[(n*g.Cin+c)*g.H*g.W:][:g.H*g.W]
			hp := xs[((n-n0)*g.Cin+c)*g.halfPlane():]
			for y := range g.H {
				row := hp[(y+g.P)*hr:][:hr]
				ev, od := padSplit(row[:he], row[he:], g.P)
				rows.merge(plane[y*g.W:][:g.W], ev, od)
			}
		}
	}
}

// halfRun returns where row i of the receptive fields' row (u, v) starts
// in a half-plane: padded row 2i+u, column v/2 of the even (v even) or
// odd half.
func (g Geom) halfRun(i, u, v int) int {
	return (2*i+u)*g.halfRow() + (v&1)*(g.halfRow()/2) + v/2
}

// im2colHalves is im2col for stride 2 from the half-planes of the chunk's
// n samples (splitHalves): the same columns, every row a copy.
func im2colHalves[T float](g Geom, xs []T, n int, col []T, ld int) {
	hw := g.HW()
	for c := range g.Cin {
		for u := range g.K {
			for v := range g.K {
				row := col[((c*g.K+u)*g.K+v)*ld:]
				for s := range n {
					hp, out := xs[(s*g.Cin+c)*g.halfPlane():], row[s*hw:][:hw]
					for i := range g.Ho {
						copyRow(out[i*g.Wo:(i+1)*g.Wo], hp[g.halfRun(i, u, v):])
					}
				}
			}
		}
	}
}

// col2imHalves is col2im for stride 2 into the half-planes xs (zeros) of
// the chunk's n samples: the same additions in the same order per entry,
// the padding's discarded by mergeHalves.
func col2imHalves[T float](g Geom, col []T, ld int, xs []T, n int) {
	rows, hw := winoRowsFor[T](), g.HW()
	for c := range g.Cin {
		for u := range g.K {
			for v := range g.K {
				row := col[((c*g.K+u)*g.K+v)*ld:]
				for s := range n {
					hp, src := xs[(s*g.Cin+c)*g.halfPlane():], row[s*hw:][:hw]
					for i := range g.Ho {
						rows.add(hp[g.halfRun(i, u, v):][:g.Wo], src[i*g.Wo:(i+1)*g.Wo])
					}
				}
			}
		}
	}
}

// copyPadded copies samples [n0, n1) of x into the insides of the chunk's
// zero-padded planes xp (g.padded()'s geometry) when in, else the insides
// back into x.
func copyPadded[T float](g Geom, x []T, n0, n1 int, xp []T, in bool) {
	gp := g.padded()
	for n := n0; n < n1; n++ {
		for c := range g.Cin {
			pl := x[n*g.InSize()+c*g.H*g.W:][:g.H*g.W]
			pp := xp[((n-n0)*g.Cin+c)*gp.H*gp.W:][:gp.H*gp.W]
			for y := range g.H {
				row, prow := pl[y*g.W:(y+1)*g.W], pp[(y+g.P)*gp.W+g.P:][:g.W]
				if in {
					copy(prow, row)
				} else {
					copy(row, prow)
				}
			}
		}
	}
}

// im2colRun fills one sample's part of the row (u, v) of a stride-1
// convolution: output column j reads input column j+v−p, one contiguous run
// per output row, zero-padded at its ends.
func im2colRun[T float](g Geom, plane, out []T, u, v int) {
	if g.P == 0 { // every output row reads a whole run (LeNet, the HiCS CNNs)
		if p32, ok := any(plane).([]float32); ok && RunKernels {
			o32 := any(out).([]float32)
			_, _ = o32[g.Ho*g.Wo-1], p32[(g.Ho-1+u)*g.W+v+g.Wo-1]
			wino.CopyRuns(&o32[0], &p32[u*g.W+v], uintptr(g.W*4), g.Ho, g.Wo)
			return
		}
		for i := 0; i < g.Ho; i++ {
			copyRow(out[i*g.Wo:(i+1)*g.Wo], plane[(i+u)*g.W+v:])
		}
		return
	}
	jlo, jhi := max(0, g.P-v), min(g.Wo, g.W+g.P-v)
	for i := 0; i < g.Ho; i++ {
		dst := out[i*g.Wo : (i+1)*g.Wo]
		y := i + u - g.P
		if y < 0 || y >= g.H || jlo >= jhi {
			clear(dst)
			continue
		}
		clear(dst[:jlo])
		copyRow(dst[jlo:jhi], plane[y*g.W+jlo+v-g.P:])
		clear(dst[jhi:])
	}
}

// RunKernels lets im2colRun and col2imRun copy and add a sample's runs of
// a row by wino.CopyRuns and wino.AddRuns (AVX-512) where the convolution
// has no padding of its own: LeNet's and the HiCS CNNs' rows of 8 to 24
// floats went one call and, for col2im, one scalar loop at a time (44% of
// a LeNet step). The same moves and additions, in the same order: the
// same bits. A variable, so that the tests and make bench-ab can turn it
// off.
var RunKernels = wino.Available

// copyRow copies src into dst (len(dst) elements). float32 rows of the
// models' common widths are copied as arrays, in registers: copy calls
// memmove for every row of 32 to 128 bytes (the HiCS CNN's and LeNet's
// second convolutions have rows of 8, LeNet's first of 24). Go 1.26
// compiles them to moves only with a concrete element type and through a
// local: a generic array, or one copied from slice to slice directly (they
// might overlap), goes to memmove as well.
func copyRow[T float](dst, src []T) {
	if d, ok := any(dst).([]float32); ok {
		copyRow32(d, any(src).([]float32))
		return
	}
	copy(dst, src[:len(dst)])
}

func copyRow32(dst, src []float32) {
	switch len(dst) {
	case 8:
		v := *(*[8]float32)(src)
		*(*[8]float32)(dst) = v
	case 16:
		v := *(*[16]float32)(src)
		*(*[16]float32)(dst) = v
	case 24:
		v := *(*[24]float32)(src)
		*(*[24]float32)(dst) = v
	case 32:
		v := *(*[32]float32)(src)
		*(*[32]float32)(dst) = v
	default:
		copy(dst, src[:len(dst)])
	}
}

// col2im adds col ([cin·k·k, (n1−n0)·ho·wo], rows ld apart) back into
// samples [n0, n1) of dx ([B, cin, h, w]); the adjoint of im2col, in the
// same order.
func col2im[T float](g Geom, col []T, ld int, dx []T, n0, n1 int) {
	hw, in := g.HW(), g.InSize()
	if d32, ok := any(dx).([]float32); ok && RunKernels && g.S == 1 && g.P == 0 && g.W <= 16 {
		// Planes up to 16 wide (LeNet's second convolution): each row of a
		// plane summed in a register over the (u, v), by wino.Col2imRows,
		// rather than runs added one float apart (AddRuns' loads then wait
		// on the previous run's stores).
		c32 := any(col).([]float32)
		_ = c32[(g.KDim()-1)*ld+(n1-n0)*hw-1]
		_ = d32[n1*in-1]
		for c := range g.Cin {
			for n := n0; n < n1; n++ {
				wino.Col2imRows(&d32[n*in+c*g.H*g.W], g.H, g.W, &c32[c*g.K*g.K*ld+(n-n0)*hw], uintptr(ld*4), g.K, g.Ho, g.Wo)
			}
		}
		return
	}
	for c := 0; c < g.Cin; c++ {
		for u := 0; u < g.K; u++ {
			for v := 0; v < g.K; v++ {
				row := col[((c*g.K+u)*g.K+v)*ld:]
				for n := n0; n < n1; n++ {
					plane := dx[n*in+c*g.H*g.W:][:g.H*g.W]
					src := row[(n-n0)*hw:][:hw]
					if g.S == 1 {
						col2imRun(g, src, plane, u, v)
						continue
					}
					for i := 0; i < g.Ho; i++ {
						y := i*g.S + u - g.P
						if y < 0 || y >= g.H {
							continue
						}
						dst := plane[y*g.W : (y+1)*g.W]
						for j, s := range src[i*g.Wo : (i+1)*g.Wo] {
							if x := j*g.S + v - g.P; x >= 0 && x < g.W {
								dst[x] += s
							}
						}
					}
				}
			}
		}
	}
}

// col2imRun is im2colRun's adjoint: it adds one sample's part of the row
// (u, v) into its dx plane.
func col2imRun[T float](g Geom, src, plane []T, u, v int) {
	if p32, ok := any(plane).([]float32); ok && RunKernels && g.P == 0 {
		s32 := any(src).([]float32)
		_, _ = s32[g.Ho*g.Wo-1], p32[(g.Ho-1+u)*g.W+v+g.Wo-1]
		wino.AddRuns(&p32[u*g.W+v], uintptr(g.W*4), &s32[0], g.Ho, g.Wo)
		return
	}
	jlo, jhi := max(0, g.P-v), min(g.Wo, g.W+g.P-v)
	if jlo >= jhi {
		return
	}
	for i := 0; i < g.Ho; i++ {
		y := i + u - g.P
		if y < 0 || y >= g.H {
			continue
		}
		s := src[i*g.Wo+jlo : i*g.Wo+jhi]
		d := plane[y*g.W+jlo+v-g.P:][:len(s)]
		for j, e := range s {
			d[j] += e
		}
	}
}

// toChannelMajor copies samples [n0, n1) of dy ([B, cout, ho·wo]) into dst
// ([cout, (n1−n0)·ho·wo]), the layout of the chunk's gemm.
func toChannelMajor[T float](g Geom, dy []T, n0, n1 int, dst []T) {
	hw, cols := g.HW(), (n1-n0)*g.HW()
	for n := n0; n < n1; n++ {
		for o := 0; o < g.Cout; o++ {
			copy(dst[o*cols+(n-n0)*hw:][:hw], dy[(n*g.Cout+o)*hw:][:hw])
		}
	}
}

// ChannelMajor returns samples [n0, n1) of dy in the layout of the chunk's
// gemm, [cout, (n1−n0)·ho·wo]: dy's own slice for one sample, otherwise a
// copy in ws.Aux (toChannelMajor).
func ChannelMajor[T mem.Float](g Geom, ws *mem.Workspace[T], dy []T, n0, n1 int) []T {
	if n1-n0 == 1 {
		return dy[n0*g.OutSize():][:g.OutSize()]
	}
	dycm := mem.Grow(&ws.Aux, g.Cout*(n1-n0)*g.HW())
	toChannelMajor(g, dy, n0, n1, dycm)
	return dycm
}
