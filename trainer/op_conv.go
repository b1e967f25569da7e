package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/packed"
	"github.com/flsweep/flsweep/internal/wino"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// convGeom is a 2-D convolution with stride s and zero padding p, PyTorch's
// nn.Conv2d(cin, cout, k, stride=s, padding=p, bias=...):
//
//	y[n, o, i, j] = b[o] + Σ_{c, u, v} W[o, c, u, v] · x[n, c, i·s+u−p, j·s+v−p]
//
// (x is 0 outside the image; b is 0 without bias). It is computed as in
// Caffe, but over chunks of samples: im2col lays the receptive fields of a
// chunk out as a [cin·k·k, chunk·ho·wo] matrix, and one gemm with W viewed
// as [cout, cin·k·k] gives the chunk's outputs. Chunks hold enough samples
// for about gemmCols columns (chunk; small products run far below the
// BLAS's peak: one sample of the second HiCS convolution has only 8·8 = 64
// columns) while the column matrix stays below maxColFloats, in the
// graph's shared workspace.
//
// Stock gorgonia's Conv2d multiplies the other way round and then transposes
// to NCHW (an extra node and copy per step), and it has no bias.
type convGeom struct {
	name      string
	cin, cout int
	k, s, p   int
	h, w      int // input
	ho, wo    int // output
	bias      bool
	needDx    bool
	wino      bool // computed by F(2×2, 3×3) or F(2×2, 5×5) (winograd.go)
	wino4     bool // by F(4×4, ·) instead of F(2×2, ·) (winograd43.go, winograd45.go)
	cl        bool // on the channel-lane path (winograd_cl.go)
	cli       bool // on the channel-lane im2col path (im2col_cl.go)
	packed    bool // float32 products by the packed product (KernelChoice.BLAS unset)
}

const (
	gemmCols     = 1024    // the gemm columns a chunk aims for
	maxColFloats = 1 << 21 // largest column matrix (8 MiB of float32)
)

// newConvGeom returns the geometry of convolution layer l and the kernels
// that compute it under k.
func newConvGeom(l layer, k kernels) convGeom {
	g := convGeom{
		name: l.name, cin: l.in[0], cout: l.out[0], k: l.k, s: l.stride, p: l.pad,
		h: l.in[1], w: l.in[2], ho: l.out[1], wo: l.out[2], bias: l.b >= 0,
		packed: k.packed,
	}
	g.wino = k.winograd && g.winogradFits()
	g.wino4 = g.wino && (g.k == 3 && k.f43 && g.wino4Fits() || g.k == 5 && k.f45 && g.wino45Fits())
	g.cl = k.cl && g.clFits()
	g.cli = k.cl && g.cliFits()
	return g
}

func (g convGeom) inSize() int  { return g.cin * g.h * g.w }
func (g convGeom) outSize() int { return g.cout * g.ho * g.wo }
func (g convGeom) kdim() int    { return g.cin * g.k * g.k }
func (g convGeom) hw() int      { return g.ho * g.wo }

// chunk is the number of samples whose columns form one chunk's gemm: the
// most whose columns fit in gemmCols when that is two or more, else the
// fewest that reach it. The CIFAR CNN's second convolution (100 columns a
// sample) trained 7–10% faster in chunks of 10 samples (1,000 columns) than
// of 11 (1,100; three in-process comparisons, two Trainers each); larger
// planes keep chunks of at least gemmCols columns, which nothing measured
// beyond noise either way.
func (g convGeom) chunk() int {
	c := gemmCols / g.hw()
	if c < 2 {
		c = (gemmCols + g.hw() - 1) / g.hw()
	}
	return max(1, min(c, maxColFloats/(g.kdim()*g.hw())))
}

// colLd is the distance between the rows of a chunk's column matrix (or
// transformed tiles) of cols columns: cols rounded up to a multiple of 16
// floats, 16 more where that is a multiple of 32. Rows then start on a
// 64-byte cache line, so that the kernels' rows of 16 floats of B are one
// line each: the CIFAR CNN's second convolution (275 columns, rows 1,100
// bytes apart) read every row across two lines, and its steps ran 14–20%
// slower on one thread (6% with two clients) than with rows 304 floats
// apart. The packed gemm reads B in place unless its rows are a multiple
// of 32 floats apart (package packed, packMinM), and ResNet-18's im2col
// chunks are 1,024 columns wide, its F(4×4, 3×3) chunks 256 (wino4Cols)
// or its whole batch. The padding is never read, and the products' sums
// do not depend on it: the same bits.
func colLd(cols int) int {
	ld := (cols + 15) &^ 15
	if ld%32 == 0 {
		ld += 16
	}
	return ld
}

// colOffset is where the column matrix of the chunk starting at sample n0
// (a multiple of chunk()) begins in a training step's cached matrices;
// colOffset(batch) for a batch's end is their length.
func (g convGeom) colOffset(n0 int) int { return chunkOffset(n0, g.chunk(), g.kdim(), g.hw()) }

// chunkOffset is where the chunk starting at sample n0 (a multiple of c)
// begins among matrices of rows rows, chunk after chunk, each with cols
// columns a sample and rows colLd apart.
func chunkOffset(n0, c, rows, cols int) int {
	off := n0 / c * rows * colLd(c*cols)
	if rest := n0 % c; rest > 0 {
		off += rows * colLd(rest*cols)
	}
	return off
}

// im2col writes the receptive fields of samples [n0, n1) of x ([B, cin, h,
// w]) into col ([cin·k·k, (n1−n0)·ho·wo], rows ld apart): row (c·k+u)·k+v
// holds x[n, c, i·s+u−p, j·s+v−p] (0 outside the image) at column
// (n−n0)·ho·wo + i·wo + j. Rows are written one after another, each across
// all the chunk's samples: the column matrix (megabytes) is then written
// sequentially, while the samples it reads stay in cache. (Sample by sample,
// every sample would touch each of the cin·k·k rows, pages apart.)
func im2col[T float](g convGeom, x []T, n0, n1 int, col []T, ld int) {
	hw, in := g.hw(), g.inSize()
	for c := 0; c < g.cin; c++ {
		for u := 0; u < g.k; u++ {
			for v := 0; v < g.k; v++ {
				row := col[((c*g.k+u)*g.k+v)*ld:]
				for n := n0; n < n1; n++ {
					plane := x[n*in+c*g.h*g.w:][:g.h*g.w]
					out := row[(n-n0)*hw:][:hw]
					if g.s == 1 {
						im2colRun(g, plane, out, u, v)
						continue
					}
					for i := 0; i < g.ho; i++ {
						dst := out[i*g.wo : (i+1)*g.wo]
						y := i*g.s + u - g.p
						if y < 0 || y >= g.h {
							clear(dst)
							continue
						}
						src := plane[y*g.w : (y+1)*g.w]
						for j := range dst {
							if x := j*g.s + v - g.p; x >= 0 && x < g.w {
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
func (g convGeom) padded() convGeom {
	gp := g
	gp.h, gp.w, gp.p = g.h+2*g.p, g.w+2*g.p, 0
	return gp
}

// im2colChunk is im2col for the chunk [n0, n1), writing col (rows ld
// apart). A padded stride-1 convolution (ResNet-18's, the HiCS CNNs')
// first copies the chunk's planes into ws.Pad with their zero borders, so
// that every row of every receptive field is one whole copy: the rows of
// im2colRun's padded path are a clear, a copy and a clear each, 31 floats
// long for ResNet-18's first stage.
func im2colChunk[T float](g convGeom, ws *mem.Workspace[T], x []T, n0, n1 int, col []T, ld int) {
	if g.halves() {
		xs := mem.Grow(&ws.Pad, (n1-n0)*g.cin*g.halfPlane())
		splitHalves(g, x, n0, n1, xs)
		im2colHalves(g, xs, n1-n0, col, ld)
		return
	}
	if g.p == 0 || g.s != 1 {
		im2col(g, x, n0, n1, col, ld)
		return
	}
	xp := mem.Grow(&ws.Pad, (n1-n0)*g.padded().inSize())
	clear(xp)
	copyPadded(g, x, n0, n1, xp, true)
	im2col(g.padded(), xp, 0, n1-n0, col, ld)
}

// col2imChunk is col2im for the chunk [n0, n1) of dx, which holds zeros
// there: a padded stride-1 convolution adds into zero-padded planes in
// ws.Pad and copies their insides to dx. Each entry of dx receives the
// same additions in the same order from zero either way.
func col2imChunk[T float](g convGeom, ws *mem.Workspace[T], col []T, ld int, dx []T, n0, n1 int) {
	if g.halves() {
		xs := mem.Grow(&ws.Pad, (n1-n0)*g.cin*g.halfPlane())
		clear(xs)
		col2imHalves(g, col, ld, xs, n1-n0)
		mergeHalves(g, xs, dx, n0, n1)
		return
	}
	if g.p == 0 || g.s != 1 {
		col2im(g, col, ld, dx, n0, n1)
		return
	}
	dp := mem.Grow(&ws.Pad, (n1-n0)*g.padded().inSize())
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
func (g convGeom) halves() bool { return g.s == 2 && g.k > 1 }

// halfRow is the length of a zero-padded row split into halves, even
// columns then odd, each (w+2p+1)/2 long; halfPlane that of a plane of
// h+2p such rows.
func (g convGeom) halfRow() int   { return 2 * ((g.w + 2*g.p + 1) / 2) }
func (g convGeom) halfPlane() int { return (g.h + 2*g.p) * g.halfRow() }

// splitHalves writes samples [n0, n1) of x, zero-padded, into xs as
// half-planes ([n1−n0, cin, h+2p, halfRow], halves: even columns, then odd).
func splitHalves[T float](g convGeom, x []T, n0, n1 int, xs []T) {
	rows, hr, he := winoRowsFor[T](), g.halfRow(), g.halfRow()/2
	clear(xs)
	for n := n0; n < n1; n++ {
		for c := range g.cin {
			plane := x[(n*g.cin+c)*g.h*g.w:][:g.h*g.w]
			hp := xs[((n-n0)*g.cin+c)*g.halfPlane():]
			for y := range g.h {
				row := hp[(y+g.p)*hr:][:hr]
				ev, od := padSplit(row[:he], row[he:], g.p)
				rows.split(ev, od, plane[y*g.w:][:g.w])
			}
		}
	}
}

// mergeHalves is splitHalves' adjoint for input gradients: it writes the
// insides of the half-planes xs into samples [n0, n1) of dx.
func mergeHalves[T float](g convGeom, xs, dx []T, n0, n1 int) {
	rows, hr, he := winoRowsFor[T](), g.halfRow(), g.halfRow()/2
	for n := n0; n < n1; n++ {
		for c := range g.cin {
			plane := dx[(n*g.cin+c)*g.h*g.w:][:g.h*g.w]
			hp := xs[((n-n0)*g.cin+c)*g.halfPlane():]
			for y := range g.h {
				row := hp[(y+g.p)*hr:][:hr]
				ev, od := padSplit(row[:he], row[he:], g.p)
				rows.merge(plane[y*g.w:][:g.w], ev, od)
			}
		}
	}
}

// halfRun returns where row i of the receptive fields' row (u, v) starts
// in a half-plane: padded row 2i+u, column v/2 of the even (v even) or
// odd half.
func (g convGeom) halfRun(i, u, v int) int {
	return (2*i+u)*g.halfRow() + (v&1)*(g.halfRow()/2) + v/2
}

// im2colHalves is im2col for stride 2 from the half-planes of the chunk's
// n samples (splitHalves): the same columns, every row a copy.
func im2colHalves[T float](g convGeom, xs []T, n int, col []T, ld int) {
	hw := g.hw()
	for c := range g.cin {
		for u := range g.k {
			for v := range g.k {
				row := col[((c*g.k+u)*g.k+v)*ld:]
				for s := range n {
					hp, out := xs[(s*g.cin+c)*g.halfPlane():], row[s*hw:][:hw]
					for i := range g.ho {
						copyRow(out[i*g.wo:(i+1)*g.wo], hp[g.halfRun(i, u, v):])
					}
				}
			}
		}
	}
}

// col2imHalves is col2im for stride 2 into the half-planes xs (zeros) of
// the chunk's n samples: the same additions in the same order per entry,
// the padding's discarded by mergeHalves.
func col2imHalves[T float](g convGeom, col []T, ld int, xs []T, n int) {
	rows, hw := winoRowsFor[T](), g.hw()
	for c := range g.cin {
		for u := range g.k {
			for v := range g.k {
				row := col[((c*g.k+u)*g.k+v)*ld:]
				for s := range n {
					hp, src := xs[(s*g.cin+c)*g.halfPlane():], row[s*hw:][:hw]
					for i := range g.ho {
						rows.add(hp[g.halfRun(i, u, v):][:g.wo], src[i*g.wo:(i+1)*g.wo])
					}
				}
			}
		}
	}
}

// copyPadded copies samples [n0, n1) of x into the insides of the chunk's
// zero-padded planes xp (g.padded()'s geometry) when in, else the insides
// back into x.
func copyPadded[T float](g convGeom, x []T, n0, n1 int, xp []T, in bool) {
	gp := g.padded()
	for n := n0; n < n1; n++ {
		for c := range g.cin {
			pl := x[n*g.inSize()+c*g.h*g.w:][:g.h*g.w]
			pp := xp[((n-n0)*g.cin+c)*gp.h*gp.w:][:gp.h*gp.w]
			for y := range g.h {
				row, prow := pl[y*g.w:(y+1)*g.w], pp[(y+g.p)*gp.w+g.p:][:g.w]
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
func im2colRun[T float](g convGeom, plane, out []T, u, v int) {
	if g.p == 0 { // every output row reads a whole run (LeNet, the HiCS CNNs)
		if p32, ok := any(plane).([]float32); ok && runKernels {
			o32 := any(out).([]float32)
			_, _ = o32[g.ho*g.wo-1], p32[(g.ho-1+u)*g.w+v+g.wo-1]
			wino.CopyRuns(&o32[0], &p32[u*g.w+v], uintptr(g.w*4), g.ho, g.wo)
			return
		}
		for i := 0; i < g.ho; i++ {
			copyRow(out[i*g.wo:(i+1)*g.wo], plane[(i+u)*g.w+v:])
		}
		return
	}
	jlo, jhi := max(0, g.p-v), min(g.wo, g.w+g.p-v)
	for i := 0; i < g.ho; i++ {
		dst := out[i*g.wo : (i+1)*g.wo]
		y := i + u - g.p
		if y < 0 || y >= g.h || jlo >= jhi {
			clear(dst)
			continue
		}
		clear(dst[:jlo])
		copyRow(dst[jlo:jhi], plane[y*g.w+jlo+v-g.p:])
		clear(dst[jhi:])
	}
}

// runKernels lets im2colRun and col2imRun copy and add a sample's runs of
// a row by wino.CopyRuns and wino.AddRuns (AVX-512) where the convolution
// has no padding of its own: LeNet's and the HiCS CNNs' rows of 8 to 24
// floats went one call and, for col2im, one scalar loop at a time (44% of
// a LeNet step). The same moves and additions, in the same order: the
// same bits. A variable, so that the tests and make bench-ab can turn it
// off.
var runKernels = wino.Available

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
func col2im[T float](g convGeom, col []T, ld int, dx []T, n0, n1 int) {
	hw, in := g.hw(), g.inSize()
	if d32, ok := any(dx).([]float32); ok && runKernels && g.s == 1 && g.p == 0 && g.w <= 16 {
		// Planes up to 16 wide (LeNet's second convolution): each row of a
		// plane summed in a register over the (u, v), by wino.Col2imRows,
		// rather than runs added one float apart (AddRuns' loads then wait
		// on the previous run's stores).
		c32 := any(col).([]float32)
		_ = c32[(g.kdim()-1)*ld+(n1-n0)*hw-1]
		_ = d32[n1*in-1]
		for c := range g.cin {
			for n := n0; n < n1; n++ {
				wino.Col2imRows(&d32[n*in+c*g.h*g.w], g.h, g.w, &c32[c*g.k*g.k*ld+(n-n0)*hw], uintptr(ld*4), g.k, g.ho, g.wo)
			}
		}
		return
	}
	for c := 0; c < g.cin; c++ {
		for u := 0; u < g.k; u++ {
			for v := 0; v < g.k; v++ {
				row := col[((c*g.k+u)*g.k+v)*ld:]
				for n := n0; n < n1; n++ {
					plane := dx[n*in+c*g.h*g.w:][:g.h*g.w]
					src := row[(n-n0)*hw:][:hw]
					if g.s == 1 {
						col2imRun(g, src, plane, u, v)
						continue
					}
					for i := 0; i < g.ho; i++ {
						y := i*g.s + u - g.p
						if y < 0 || y >= g.h {
							continue
						}
						dst := plane[y*g.w : (y+1)*g.w]
						for j, s := range src[i*g.wo : (i+1)*g.wo] {
							if x := j*g.s + v - g.p; x >= 0 && x < g.w {
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
func col2imRun[T float](g convGeom, src, plane []T, u, v int) {
	if p32, ok := any(plane).([]float32); ok && runKernels && g.p == 0 {
		s32 := any(src).([]float32)
		_, _ = s32[g.ho*g.wo-1], p32[(g.ho-1+u)*g.w+v+g.wo-1]
		wino.AddRuns(&p32[u*g.w+v], uintptr(g.w*4), &s32[0], g.ho, g.wo)
		return
	}
	jlo, jhi := max(0, g.p-v), min(g.wo, g.w+g.p-v)
	if jlo >= jhi {
		return
	}
	for i := 0; i < g.ho; i++ {
		y := i + u - g.p
		if y < 0 || y >= g.h {
			continue
		}
		s := src[i*g.wo+jlo : i*g.wo+jhi]
		d := plane[y*g.w+jlo+v-g.p:][:len(s)]
		for j, e := range s {
			d[j] += e
		}
	}
}

// toChannelMajor copies samples [n0, n1) of dy ([B, cout, ho·wo]) into dst
// ([cout, (n1−n0)·ho·wo]), the layout of the chunk's gemm.
func toChannelMajor[T float](g convGeom, dy []T, n0, n1 int, dst []T) {
	hw, cols := g.hw(), (n1-n0)*g.hw()
	for n := n0; n < n1; n++ {
		for o := 0; o < g.cout; o++ {
			copy(dst[o*cols+(n-n0)*hw:][:hw], dy[(n*g.cout+o)*hw:][:hw])
		}
	}
}

// channelMajor returns samples [n0, n1) of dy in the layout of the chunk's
// gemm, [cout, (n1−n0)·ho·wo]: dy's own slice for one sample, otherwise a
// copy in ws.Aux (toChannelMajor).
func channelMajor[T float](g convGeom, ws *mem.Workspace[T], dy []T, n0, n1 int) []T {
	if n1-n0 == 1 {
		return dy[n0*g.outSize():][:g.outSize()]
	}
	dycm := mem.Grow(&ws.Aux, g.cout*(n1-n0)*g.hw())
	toChannelMajor(g, dy, n0, n1, dycm)
	return dycm
}

// convType is the op's gorgonia type: x and W are 4-D, b (if any) 1-D.
func convType(g convGeom) hm.Type {
	if g.bias {
		return hm.NewFnType(tensorType(4), tensorType(4), tensorType(1), tensorType(4))
	}
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}

type convOp[T float] struct {
	opBase
	g     convGeom
	ws    *mem.Workspace[T]
	train bool
	// cols keeps a training step's column matrices (or, by Winograd, its
	// transformed inputs), chunk after chunk, for the weight gradient,
	// which would otherwise lay them out again; only while they fit
	// (cacheCols, cacheWino).
	cols   []T
	cached bool
	y      outBuf[T]
	u      []T // Winograd: the transformed weights
}

// winoForward computes y for x by Winograd, chunk by chunk: transform
// the chunk's tiles, α² products with the transformed weights, transform
// back.
func (op *convOp[T]) winoForward(x, w, b, y []T, batch int) {
	g := op.g
	if clDo[T](g.cl, func() { clForward(any(op).(*convOp[float32]), f32(x), f32(w), f32(b), f32(y), batch) }) {
		return
	}
	oc := g.cout * g.cin
	ut := mem.Grow(&op.u, g.xi()*oc+g.winoScratch()) // U, then scratch
	u := ut[:g.xi()*oc]
	winoTransformWeights(g, w, u, ut[g.xi()*oc:])
	op.cached = op.train && g.cacheWino(batch)
	g.winoChunks(batch, func(n0, n1, cols, ld int) {
		v, m := mem.Grow(&op.ws.Col, g.xi()*g.cin*ld), mem.Grow(&op.ws.Aux, g.xi()*g.cout*ld)
		if op.cached {
			v = mem.Grow(&op.cols, g.winoOffset(batch))[g.winoOffset(n0):][:g.xi()*g.cin*ld]
		}
		winoInput(g, op.ws, x, n0, n1, v, ld)
		for xi := range g.xi() {
			op.ws.Gemm(false, false, g.cout, cols, g.cin, 1, u[xi*g.cout*g.cin:], g.cin, v[xi*g.cin*ld:], ld, 0, m[xi*g.cout*ld:], ld)
		}
		winoOutput(g, op.ws, m, ld, y, n0, n1, b)
	})
}

// maxCachedCols bounds one convolution's cached column matrices (16 MiB of
// float32): the HiCS CNN's second convolution at batch 50 needs 2.56M
// floats, ResNet-18's convolutions far more (they recompute them).
// Convolutions with at most fewCout output channels may cache twice as
// much: their products do few flops per column entry, so laying the
// columns out again costs more beside them. The CIFAR CNN's second
// convolution (64 channels, 8M floats at batch 50) trained 6–9% faster
// for its 32 MiB; ResNet-18's third stage (256 channels, 7.4M floats a
// convolution) gained nothing measurable, and would have cached three
// more such matrices (88 MiB by that count) per client.
const (
	maxCachedCols = 1 << 22
	fewCout       = 64
)

// cacheCols reports whether a training step's column matrices for batch
// samples stay cached for the weight gradient.
func (g convGeom) cacheCols(batch int) bool { return g.kdim()*batch*g.hw() <= g.cacheBudget() }

// cacheBudget is the most floats a training step keeps for the weight
// gradient: maxCachedCols, twice that with at most fewCout output channels.
func (g convGeom) cacheBudget() int {
	if g.cout <= fewCout {
		return 2 * maxCachedCols
	}
	return maxCachedCols
}

// cacheWino reports whether a training step's transformed inputs for batch
// samples stay cached for the weight gradient, within cacheCols' budget
// for the convolution: the FedEBA+ CIFAR CNN's second convolution (2.9M
// floats at batch 50) and the HiCS CNN's (0.9M) keep them, ResNet-18's
// (13M and more) transform again.
func (g convGeom) cacheWino(batch int) bool { return g.winoOffset(batch) <= g.cacheBudget() }

// winoOffset is where the transformed inputs of the chunk starting at
// sample n0 (a multiple of winoChunk()) begin in a training step's cached
// ones; winoOffset(batch) for a batch's end is their length.
func (g convGeom) winoOffset(n0 int) int {
	return chunkOffset(n0, g.winoChunk(), g.xi()*g.cin, g.tiles())
}

var _ G.SDOp = (*convOp[float32])(nil)

func (op *convOp[T]) Arity() int {
	if op.g.bias {
		return 3
	}
	return 2
}
func (op *convOp[T]) Type() hm.Type { return convType(op.g) }
func (op *convOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 4 || s[1] != op.g.cin || s[2] != op.g.h || s[3] != op.g.w {
		return nil, fmt.Errorf("%v: input shape %v, want [B, %d, %d, %d]", op, ds[0], op.g.cin, op.g.h, op.g.w)
	}
	return tensor.Shape{s[0], op.g.cout, op.g.ho, op.g.wo}, nil
}
func (op *convOp[T]) String() string        { return "conv(" + op.g.name + ")" }
func (op *convOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *convOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *convOp[T]) DiffWRT(n int) []bool {
	d := []bool{op.g.needDx, true, true}
	return d[:n]
}
func (op *convOp[T]) Do(vs ...G.Value) (G.Value, error) {
	g := op.g
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	batch := len(x) / g.inSize()
	w, err := dataN[T](vs[1], g.cout*g.kdim(), op, "W")
	if err != nil {
		return nil, err
	}
	var b []T
	if g.bias {
		if b, err = dataN[T](vs[2], g.cout, op, "b"); err != nil {
			return nil, err
		}
	}
	t, y := op.y.get(batch, g.cout, g.ho, g.wo)
	if g.wino {
		op.winoForward(x, w, b, y, batch)
		return t, nil
	}
	if clDo[T](g.cli, func() { cliForward(any(op).(*convOp[float32]), f32(x), f32(w), f32(b), f32(y), batch) }) {
		return t, nil
	}
	hw := g.hw()
	op.cached = op.train && g.cacheCols(batch)
	for n0 := 0; n0 < batch; n0 += g.chunk() {
		n1 := min(n0+g.chunk(), batch)
		cols := (n1 - n0) * hw
		ld := colLd(cols)
		col, ycm := mem.Grow(&op.ws.Col, g.kdim()*ld), mem.Grow(&op.ws.Aux, g.cout*cols)
		if op.cached {
			col = mem.Grow(&op.cols, g.colOffset(batch))[g.colOffset(n0):][:g.kdim()*ld]
		}
		im2colChunk(g, op.ws, x, n0, n1, col, ld)
		if n1-n0 == 1 {
			// One sample: its [cout, ho·wo] output is the product's layout.
			yn := y[n0*g.outSize():][:g.outSize()]
			op.ws.Gemm(false, false, g.cout, cols, g.kdim(), 1, w, g.kdim(), col, ld, 0, yn, cols)
			for o := 0; b != nil && o < g.cout; o++ {
				addBias(yn[o*hw:(o+1)*hw], yn[o*hw:(o+1)*hw], b[o:o+1])
			}
			continue
		}
		op.ws.Gemm(false, false, g.cout, cols, g.kdim(), 1, w, g.kdim(), col, ld, 0, ycm, cols)
		for n := n0; n < n1; n++ {
			for o := 0; o < g.cout; o++ {
				src, dst := ycm[o*cols+(n-n0)*hw:][:hw], y[(n*g.cout+o)*hw:][:hw]
				if b == nil {
					copy(dst, src)
					continue
				}
				addBias(dst, src, b[o:o+1])
			}
		}
	}
	return t, nil
}

// addBias writes x + b[0] into y, by the vector kernels' batch-norm
// affine map where the CPU has them: x·1 + b is x + b exactly, so the
// bits are the loop's.
func addBias[T float](y, x, b []T) {
	if y32, ok := any(y).([]float32); ok && vec.BNAffine != nil {
		vec.BNAffine(y32, any(x).([]float32), unitScale[:], any(b).([]float32), len(y))
		return
	}
	for i, v := range x[:len(y)] {
		y[i] = v + b[0]
	}
}

var unitScale = [1]float32{1}

// SymDiff returns dx = col2im(Wᵀ·dy), dW = Σ_chunks dy·colᵀ and db = Σ dy.
func (op *convOp[T]) SymDiff(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	grads := make(G.Nodes, len(in))
	var err error
	dw := &convDwOp[T]{g: op.g, ws: op.ws, fwd: op}
	dwArgs := G.Nodes{dy, in[0]}
	if op.g.needDx {
		dx, dxArgs := &convDxOp[T]{g: op.g, ws: op.ws, fwd: op}, G.Nodes{dy, in[1]}
		if op.g.wino {
			// One pass for both gradients (winoBackward): dx reads x as
			// well, and dW waits for dx.
			dx.dw, dw.after = dw, true
			dxArgs = append(dxArgs, in[0])
		}
		if grads[0], err = G.ApplyOp(dx, dxArgs...); err != nil {
			return nil, err
		}
		if dw.after {
			dwArgs = append(dwArgs, grads[0])
		}
	}
	if grads[1], err = G.ApplyOp(dw, dwArgs...); err != nil {
		return nil, err
	}
	if op.g.bias {
		bg := &biasGradOp[T]{name: op.g.name, c: op.g.cout, dims: 4, spatial: op.g.hw()}
		if grads[2], err = G.ApplyOp(bg, dy); err != nil {
			return nil, err
		}
	}
	return grads, nil
}

type convDxOp[T float] struct {
	gradOpBase
	g  convGeom
	ws *mem.Workspace[T]
	dx outBuf[T]
	// fwd is the forward op, whose transformed weights (Winograd) are
	// those of this step's W: the graph runs it first.
	fwd *convOp[T]
	// dw, for Winograd, is the layer's weight-gradient op, which runs
	// after this one: this op's third input is x, and it computes dW too
	// (winoBackward) where dw's output is bound to the flat gradient.
	dw *convDwOp[T]
}

func (op *convDxOp[T]) Arity() int {
	if op.dw != nil {
		return 3
	}
	return 2
}
func (op *convDxOp[T]) Type() hm.Type {
	if op.dw != nil {
		return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4), tensorType(4))
	}
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}
func (op *convDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%v: dy shape %v", op, ds[0])
	}
	return tensor.Shape{s[0], op.g.cin, op.g.h, op.g.w}, nil
}
func (op *convDxOp[T]) String() string        { return "conv.dx(" + op.g.name + ")" }
func (op *convDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *convDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *convDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	g := op.g
	dy, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v dy: %w", op, err)
	}
	batch := len(dy) / g.outSize()
	w, err := dataN[T](vs[1], g.cout*g.kdim(), op, "W")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(batch, g.cin, g.h, g.w)
	if op.dw != nil {
		op.dw.done = false
		if fuseWinoBackward && op.dw.dw.bound {
			x, err := dataN[T](vs[2], batch*g.inSize(), op, "x")
			if err != nil {
				return nil, err
			}
			_, dw := op.dw.dw.get(g.cout, g.cin, g.k, g.k)
			op.winoBackward(dy, x, dx, dw, batch)
			op.dw.done = true
			return t, nil
		}
	}
	if g.wino {
		op.winoDx(dy, dx, batch)
		return t, nil
	}
	if clDo[T](g.cli, func() { cliInputGrad(g, any(op.ws).(*mem.Workspace[float32]), f32(dy), f32(w), f32(dx), batch) }) {
		return t, nil
	}
	clear(dx)
	hw := g.hw()
	for n0 := 0; n0 < batch; n0 += g.chunk() {
		n1 := min(n0+g.chunk(), batch)
		cols := (n1 - n0) * hw
		ld := colLd(cols)
		col := mem.Grow(&op.ws.Col, g.kdim()*ld)
		dycm := channelMajor(g, op.ws, dy, n0, n1)
		op.ws.Gemm(true, false, g.kdim(), cols, g.cout, 1, w, g.kdim(), dycm, cols, 0, col, ld)
		col2imChunk(g, op.ws, col, ld, dx, n0, n1)
	}
	return t, nil
}

type convDwOp[T float] struct {
	gradOpBase
	g   convGeom
	ws  *mem.Workspace[T]
	fwd *convOp[T] // its cached column matrices, if any
	dw  outBuf[T]
	// after: a third input, the layer's dx, orders the op after the
	// input-gradient op, which computes dW as well when it can and then
	// sets done for this step (winoBackward).
	after, done bool
}

func (op *convDwOp[T]) Arity() int {
	if op.after {
		return 3
	}
	return 2
}
func (op *convDwOp[T]) Type() hm.Type {
	if op.after {
		return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4), tensorType(4))
	}
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}
func (op *convDwOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.g.cout, op.g.cin, op.g.k, op.g.k}, nil
}
func (op *convDwOp[T]) String() string        { return "conv.dw(" + op.g.name + ")" }
func (op *convDwOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *convDwOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *convDwOp[T]) Do(vs ...G.Value) (G.Value, error) {
	g := op.g
	dy, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v dy: %w", op, err)
	}
	batch := len(dy) / g.outSize()
	x, err := dataN[T](vs[1], batch*g.inSize(), op, "x")
	if err != nil {
		return nil, err
	}
	t, dw := op.dw.get(g.cout, g.cin, g.k, g.k)
	if op.done {
		op.done = false
		return t, nil
	}
	if g.wino {
		op.winoDw(dy, x, dw, batch)
		return t, nil
	}
	if clDo[T](g.cli, func() { cliWeightGrad(g, any(op.ws).(*mem.Workspace[float32]), f32(dy), f32(x), f32(dw), batch) }) {
		return t, nil
	}
	hw := g.hw()
	// dWᵀ = col·dYᵀ where that gives dW = dY·colᵀ's bits: the product
	// then packs the chunk's dY transposed (cout·cols floats) rather than
	// its column matrix (k²·cin·cols).
	var dwt []T
	if _, f32 := any(dw).([]float32); f32 && g.dwTransposed() {
		dwt = mem.Grow(&op.ws.DU, g.kdim()*g.cout)
	}
	for n0 := 0; n0 < batch; n0 += g.chunk() {
		n1 := min(n0+g.chunk(), batch)
		cols := (n1 - n0) * hw
		ld := colLd(cols)
		var col []T
		if op.fwd.cached {
			col = op.fwd.cols[g.colOffset(n0):][:g.kdim()*ld]
		} else {
			col = mem.Grow(&op.ws.Col, g.kdim()*ld)
			im2colChunk(g, op.ws, x, n0, n1, col, ld)
		}
		dycm := channelMajor(g, op.ws, dy, n0, n1)
		beta := T(1)
		if n0 == 0 {
			beta = 0
		}
		if dwt != nil {
			op.ws.Gemm(false, true, g.kdim(), g.cout, cols, 1, col, ld, dycm, cols, beta, dwt, g.cout)
			continue
		}
		op.ws.Gemm(false, true, g.cout, g.kdim(), cols, 1, dycm, cols, col, ld, beta, dw, g.kdim())
	}
	if dwt != nil {
		packed.Transpose(any(dw).([]float32), any(dwt).([]float32), g.kdim(), g.cout, g.cout)
	}
	return t, nil
}

// dwTransposed reports whether the im2col weight gradient computes dWᵀ =
// col·dYᵀ instead of dW = dY·colᵀ (convDwOp.Do): on the packed gemm, in
// float32, where both products take its main kernel (at least
// packed.TransMinN rows and columns of C), which sums each entry along k
// in one order whichever operand is A, so the bits are the same.
func (g convGeom) dwTransposed() bool {
	return g.packed && g.cout >= packed.TransMinN && g.kdim() >= packed.TransMinN && useDwT
}

// useDwT switches dwTransposed off for timing (make bench-ab
// AB=';dwTransposed=0'); the bits are the same.
var useDwT = true

// fuseWinoBackward lets a Winograd convolution's input-gradient op compute
// the weight gradient in the same pass (winoBackward); the tests turn it
// off to compare.
var fuseWinoBackward = true

// winoDx computes dx for dy by Winograd: dV_ξ = U_ξᵀ·dM_ξ with the
// forward pass's U, chunk by chunk, transformed back onto the input
// planes.
func (op *convDxOp[T]) winoDx(dy, dx []T, batch int) {
	g := op.g
	if clDo[T](g.cl, func() {
		clBackward(g, any(op.ws).(*mem.Workspace[float32]), any(op.fwd).(*convOp[float32]), f32(dy), nil, f32(dx), nil, batch)
	}) {
		return
	}
	g.winoChunks(batch, func(n0, n1, cols, ld int) {
		dm := mem.Grow(&op.ws.Aux, g.xi()*g.cout*ld)
		winoGrad(g, op.ws, dy, n0, n1, dm, ld)
		op.winoDxChunk(dm, dx, n0, n1, cols, ld)
	})
}

// winoDxChunk computes the chunk [n0, n1)'s dx from its transformed output
// gradients dm: dV_ξ = U_ξᵀ·dM_ξ (in ws.Col), transformed back.
func (op *convDxOp[T]) winoDxChunk(dm, dx []T, n0, n1, cols, ld int) {
	g, u := op.g, op.fwd.u
	dv := mem.Grow(&op.ws.Col, g.xi()*g.cin*ld)
	for xi := range g.xi() {
		op.ws.Gemm(true, false, g.cin, cols, g.cout, 1, u[xi*g.cout*g.cin:], g.cin, dm[xi*g.cout*ld:], ld, 0, dv[xi*g.cin*ld:], ld)
	}
	winoInputGrad(g, op.ws, dv, ld, dx, n0, n1)
}

// winoBackward computes dx and dW for dy and x by Winograd in one pass
// over the chunks: each chunk's transformed output gradients dM_ξ serve
// both products, transformed once instead of once by winoDx and again by
// winoDw, and still in cache for the second. The same products in the
// same order as the two passes': the same bits.
func (op *convDxOp[T]) winoBackward(dy, x, dx, dw []T, batch int) {
	g, fwd := op.g, op.fwd
	if clDo[T](g.cl, func() {
		clBackward(g, any(op.ws).(*mem.Workspace[float32]), any(fwd).(*convOp[float32]), f32(dy), f32(x), f32(dx), f32(dw), batch)
	}) {
		return
	}
	du, scratch := winoDu(g, op.ws)
	g.winoChunks(batch, func(n0, n1, cols, ld int) {
		dm := mem.Grow(&op.ws.Aux, g.xi()*g.cout*ld)
		winoGrad(g, op.ws, dy, n0, n1, dm, ld)
		op.winoDxChunk(dm, dx, n0, n1, cols, ld)
		winoDuChunk(g, fwd, x, dm, du, n0, n1, cols, ld) // ws.Col again, for V
	})
	winoTransformWeightsGrad(g, du, dw, scratch)
}

// winoDu returns the workspace's dU ([α², cout, cin]) and the scratch
// winoTransformWeightsGrad takes after it.
func winoDu[T float](g convGeom, ws *mem.Workspace[T]) (du, scratch []T) {
	oc := g.xi() * g.cout * g.cin
	dut := mem.Grow(&ws.DU, oc+g.winoScratch())
	return dut[:oc], dut[oc:]
}

// winoDuChunk adds the chunk [n0, n1)'s dM_ξ·V_ξᵀ into du (the first chunk
// writes it), with the forward pass's cached V or V transformed again
// into ws.Col.
func winoDuChunk[T float](g convGeom, fwd *convOp[T], x, dm, du []T, n0, n1, cols, ld int) {
	var v []T
	if fwd.cached {
		v = fwd.cols[g.winoOffset(n0):][:g.xi()*g.cin*ld]
	} else {
		v = mem.Grow(&fwd.ws.Col, g.xi()*g.cin*ld)
		winoInput(g, fwd.ws, x, n0, n1, v, ld)
	}
	beta := T(1)
	if n0 == 0 {
		beta = 0
	}
	for xi := range g.xi() {
		fwd.ws.Gemm(false, true, g.cout, g.cin, cols, 1, dm[xi*g.cout*ld:], ld, v[xi*g.cin*ld:], ld, beta, du[xi*g.cout*g.cin:], g.cin)
	}
}

// winoDw computes dW for dy and x by Winograd: dU_ξ = Σ_chunks
// dM_ξ·V_ξᵀ, then dW = Gᵀ dU G.
func (op *convDwOp[T]) winoDw(dy, x, dw []T, batch int) {
	g := op.g
	if clDo[T](g.cl, func() {
		clBackward(g, any(op.ws).(*mem.Workspace[float32]), any(op.fwd).(*convOp[float32]), f32(dy), f32(x), nil, f32(dw), batch)
	}) {
		return
	}
	du, scratch := winoDu(g, op.ws)
	g.winoChunks(batch, func(n0, n1, cols, ld int) {
		dm := mem.Grow(&op.ws.Aux, g.xi()*g.cout*ld)
		winoGrad(g, op.ws, dy, n0, n1, dm, ld)
		winoDuChunk(g, op.fwd, x, dm, du, n0, n1, cols, ld)
	})
	winoTransformWeightsGrad(g, du, dw, scratch)
}
