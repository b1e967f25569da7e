package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"github.com/flsweep/flsweep/internal/conv"
	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/packed"
	"github.com/flsweep/flsweep/internal/wino"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The convolution op runs on the kernels of package conv (im2col and
// col2im, Winograd's F(2×2, 3×3), F(2×2, 5×5), F(4×4, 3×3) and F(4×4,
// 5×5), their channel-lane forms), which conv.Geom describes; the ops here
// hold a step's state (the transformed weights, the cached column
// matrices or transformed inputs), drive the chunks' products, and add the
// bias with the elementwise kernels (vec).
//
// Stock gorgonia's Conv2d multiplies the other way round and then transposes
// to NCHW (an extra node and copy per step), and it has no bias.

// convGeom is a convolution layer's geometry and kernels (conv.Geom), with
// what only the ops read.
type convGeom struct {
	conv.Geom
	name   string
	bias   bool
	needDx bool
	packed bool // float32 products by the packed product (KernelChoice.BLAS unset)
}

// newConvGeom returns the geometry of convolution layer l and the kernels
// that compute it under k.
func newConvGeom(l layer, k kernels) convGeom {
	return convGeom{
		Geom: conv.NewGeom(l.in[0], l.out[0], l.k, l.stride, l.pad, l.in[1], l.in[2], l.out[1], l.out[2], k.Kernels),
		name: l.name, bias: l.b >= 0, packed: k.packed,
	}
}

// colOffset is where the column matrix of the chunk starting at sample n0
// (a multiple of Chunk()) begins in a training step's cached matrices;
// colOffset(batch) for a batch's end is their length.
func (g convGeom) colOffset(n0 int) int { return chunkOffset(n0, g.Chunk(), g.KDim(), g.HW()) }

// chunkOffset is where the chunk starting at sample n0 (a multiple of c)
// begins among matrices of rows rows, chunk after chunk, each with cols
// columns a sample and rows conv.ColLd apart.
func chunkOffset(n0, c, rows, cols int) int {
	off := n0 / c * rows * conv.ColLd(c*cols)
	if rest := n0 % c; rest > 0 {
		off += rows * conv.ColLd(rest*cols)
	}
	return off
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
	if clDo[T](g.CL, func() { clForward(any(op).(*convOp[float32]), f32(x), f32(w), f32(b), f32(y), batch) }) {
		return
	}
	oc := g.Cout * g.Cin
	ut := mem.Grow(&op.u, g.Xi()*oc+g.WinoScratch()) // U, then scratch
	u := ut[:g.Xi()*oc]
	conv.WinoTransformWeights(g.Geom, w, u, ut[g.Xi()*oc:])
	op.cached = op.train && g.cacheWino(batch)
	g.WinoChunks(batch, func(n0, n1, cols, ld int) {
		v, m := mem.Grow(&op.ws.Col, g.Xi()*g.Cin*ld), mem.Grow(&op.ws.Aux, g.Xi()*g.Cout*ld)
		if op.cached {
			v = mem.Grow(&op.cols, g.winoOffset(batch))[g.winoOffset(n0):][:g.Xi()*g.Cin*ld]
		}
		conv.WinoInput(g.Geom, op.ws, x, n0, n1, v, ld)
		for xi := range g.Xi() {
			op.ws.Gemm(false, false, g.Cout, cols, g.Cin, 1, u[xi*g.Cout*g.Cin:], g.Cin, v[xi*g.Cin*ld:], ld, 0, m[xi*g.Cout*ld:], ld)
		}
		conv.WinoOutput(g.Geom, op.ws, m, ld, y, n0, n1, b)
	})
}

// clForward is winoForward on the channel-lane path.
func clForward(op *convOp[float32], x, w, b, y []float32, batch int) {
	g, ws := op.g, op.ws
	oc := g.Cout * g.Cin
	nut := g.Xi()*g.Cin*conv.ClLd(g.Cout) + oc                 // Uᵀ and a transpose's scratch
	ut := mem.Grow(&op.u, g.Xi()*oc+max(g.WinoScratch(), nut)) // U, then scratch or Uᵀ
	u, uT := ut[:g.Xi()*oc], ut[g.Xi()*oc:]
	conv.WinoTransformWeights(g.Geom, w, u, uT)
	// One chunk of at least TransMinM columns multiplies by U_ξᵀ through
	// the packed gemm's Bᵀ packing, as fast as an explicit transpose; the
	// main kernel sums in the same order either way (cout ≥ TransMinN
	// keeps the product off the dot-product kernel). Several chunks would
	// pack it again each, so they transpose once.
	nt := batch <= g.WinoChunk() && batch*g.Tiles() >= packed.TransMinM && g.Cout >= packed.TransMinN
	if !nt {
		conv.ClTransposeWeights(g.Geom, u, uT)
	}
	// The transformed inputs are transformed again for the weight
	// gradient rather than kept: ResNet-18's first stage would keep 31 MB
	// a convolution, whose writing and reading took longer than the
	// transform (4 ms against 2.5 for a batch of 50).
	op.cached = false
	ldv, ldm := conv.ClLd(g.Cin), conv.ClLd(g.Cout)
	g.WinoChunks(batch, func(n0, n1, cols, _ int) {
		vt, mt := mem.Grow(&ws.Col, g.Xi()*cols*ldv), mem.Grow(&ws.Aux, g.Xi()*cols*ldm)
		conv.ClInput(g.Geom, ws, x, n0, n1, vt)
		for xi := range g.Xi() {
			if nt {
				ws.Gemm(false, true, cols, g.Cout, g.Cin, 1, vt[xi*cols*ldv:], ldv, u[xi*oc:], g.Cin, 0, mt[xi*cols*ldm:], ldm)
				continue
			}
			ws.Gemm(false, false, cols, g.Cout, g.Cin, 1, vt[xi*cols*ldv:], ldv, uT[xi*oc:], g.Cout, 0, mt[xi*cols*ldm:], ldm)
		}
		conv.ClOutput(g.Geom, ws, mt, y, n0, n1, b)
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
func (g convGeom) cacheCols(batch int) bool { return g.KDim()*batch*g.HW() <= g.cacheBudget() }

// cacheBudget is the most floats a training step keeps for the weight
// gradient: maxCachedCols, twice that with at most fewCout output channels.
func (g convGeom) cacheBudget() int {
	if g.Cout <= fewCout {
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
// sample n0 (a multiple of WinoChunk()) begin in a training step's cached
// ones; winoOffset(batch) for a batch's end is their length.
func (g convGeom) winoOffset(n0 int) int {
	return chunkOffset(n0, g.WinoChunk(), g.Xi()*g.Cin, g.Tiles())
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
	if !ok || len(s) != 4 || s[1] != op.g.Cin || s[2] != op.g.H || s[3] != op.g.W {
		return nil, fmt.Errorf("%v: input shape %v, want [B, %d, %d, %d]", op, ds[0], op.g.Cin, op.g.H, op.g.W)
	}
	return tensor.Shape{s[0], op.g.Cout, op.g.Ho, op.g.Wo}, nil
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
	batch := len(x) / g.InSize()
	w, err := dataN[T](vs[1], g.Cout*g.KDim(), op, "W")
	if err != nil {
		return nil, err
	}
	var b []T
	if g.bias {
		if b, err = dataN[T](vs[2], g.Cout, op, "b"); err != nil {
			return nil, err
		}
	}
	t, y := op.y.get(batch, g.Cout, g.Ho, g.Wo)
	if g.Wino {
		op.winoForward(x, w, b, y, batch)
		return t, nil
	}
	if clDo[T](g.CLI, func() { cliForward(any(op).(*convOp[float32]), f32(x), f32(w), f32(b), f32(y), batch) }) {
		return t, nil
	}
	hw := g.HW()
	op.cached = op.train && g.cacheCols(batch)
	for n0 := 0; n0 < batch; n0 += g.Chunk() {
		n1 := min(n0+g.Chunk(), batch)
		cols := (n1 - n0) * hw
		ld := conv.ColLd(cols)
		col, ycm := mem.Grow(&op.ws.Col, g.KDim()*ld), mem.Grow(&op.ws.Aux, g.Cout*cols)
		if op.cached {
			col = mem.Grow(&op.cols, g.colOffset(batch))[g.colOffset(n0):][:g.KDim()*ld]
		}
		conv.Im2colChunk(g.Geom, op.ws, x, n0, n1, col, ld)
		if n1-n0 == 1 {
			// One sample: its [cout, ho·wo] output is the product's layout.
			yn := y[n0*g.OutSize():][:g.OutSize()]
			op.ws.Gemm(false, false, g.Cout, cols, g.KDim(), 1, w, g.KDim(), col, ld, 0, yn, cols)
			for o := 0; b != nil && o < g.Cout; o++ {
				addBias(yn[o*hw:(o+1)*hw], yn[o*hw:(o+1)*hw], b[o:o+1])
			}
			continue
		}
		op.ws.Gemm(false, false, g.Cout, cols, g.KDim(), 1, w, g.KDim(), col, ld, 0, ycm, cols)
		for n := n0; n < n1; n++ {
			for o := 0; o < g.Cout; o++ {
				src, dst := ycm[o*cols+(n-n0)*hw:][:hw], y[(n*g.Cout+o)*hw:][:hw]
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

// cliForward is the im2col forward pass on the channel-lane path.
func cliForward(op *convOp[float32], x, w, b, y []float32, batch int) {
	g, ws := op.g, op.ws
	ldc, ldy, ohw := conv.ClLd(g.KDim()), conv.ClLd(g.Cout), g.Ho*g.Wo
	wt := mem.Grow(&ws.DU, g.KDim()*g.Cout)
	packed.Transpose(wt, w, g.Cout, g.KDim(), g.KDim())
	op.cached = false
	for n0 := 0; n0 < batch; n0 += g.Chunk() {
		n1 := min(n0+g.Chunk(), batch)
		cols := (n1 - n0) * ohw
		colt, yt := mem.Grow(&ws.Col, cols*ldc), mem.Grow(&ws.Aux, cols*ldy)
		conv.CliCols(g.Geom, ws, x, n0, n1, colt, ldc)
		ws.Gemm(false, false, cols, g.Cout, g.KDim(), 1, colt, ldc, wt, g.Cout, 0, yt, ldy)
		for n := n0; n < n1; n++ {
			for o0 := 0; o0 < g.Cout; o0 += 16 {
				wino.Drain16(&y[(n*g.Cout+o0)*ohw], uintptr(ohw*4), uintptr(g.Wo*4), &yt[(n-n0)*ohw*ldy+o0], uintptr(g.Wo*ldy*4), g.Wo, g.Ho, uintptr(ldy*4))
			}
			for o := 0; b != nil && o < g.Cout; o++ {
				p := y[(n*g.Cout+o)*ohw:][:ohw]
				addBias(p, p, b[o:o+1])
			}
		}
	}
}

// SymDiff returns dx = col2im(Wᵀ·dy), dW = Σ_chunks dy·colᵀ and db = Σ dy.
func (op *convOp[T]) SymDiff(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	grads := make(G.Nodes, len(in))
	var err error
	dw := &convDwOp[T]{g: op.g, ws: op.ws, fwd: op}
	dwArgs := G.Nodes{dy, in[0]}
	if op.g.needDx {
		dx, dxArgs := &convDxOp[T]{g: op.g, ws: op.ws, fwd: op}, G.Nodes{dy, in[1]}
		if op.g.Wino {
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
		bg := &biasGradOp[T]{name: op.g.name, c: op.g.Cout, dims: 4, spatial: op.g.HW()}
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
	return tensor.Shape{s[0], op.g.Cin, op.g.H, op.g.W}, nil
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
	batch := len(dy) / g.OutSize()
	w, err := dataN[T](vs[1], g.Cout*g.KDim(), op, "W")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(batch, g.Cin, g.H, g.W)
	if op.dw != nil {
		op.dw.done = false
		if fuseWinoBackward && op.dw.dw.bound {
			x, err := dataN[T](vs[2], batch*g.InSize(), op, "x")
			if err != nil {
				return nil, err
			}
			_, dw := op.dw.dw.get(g.Cout, g.Cin, g.K, g.K)
			op.winoBackward(dy, x, dx, dw, batch)
			op.dw.done = true
			return t, nil
		}
	}
	if g.Wino {
		op.winoDx(dy, dx, batch)
		return t, nil
	}
	if clDo[T](g.CLI, func() {
		conv.CliInputGrad(g.Geom, any(op.ws).(*mem.Workspace[float32]), f32(dy), f32(w), f32(dx), batch)
	}) {
		return t, nil
	}
	clear(dx)
	hw := g.HW()
	for n0 := 0; n0 < batch; n0 += g.Chunk() {
		n1 := min(n0+g.Chunk(), batch)
		cols := (n1 - n0) * hw
		ld := conv.ColLd(cols)
		col := mem.Grow(&op.ws.Col, g.KDim()*ld)
		dycm := conv.ChannelMajor(g.Geom, op.ws, dy, n0, n1)
		op.ws.Gemm(true, false, g.KDim(), cols, g.Cout, 1, w, g.KDim(), dycm, cols, 0, col, ld)
		conv.Col2imChunk(g.Geom, op.ws, col, ld, dx, n0, n1)
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
	return tensor.Shape{op.g.Cout, op.g.Cin, op.g.K, op.g.K}, nil
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
	batch := len(dy) / g.OutSize()
	x, err := dataN[T](vs[1], batch*g.InSize(), op, "x")
	if err != nil {
		return nil, err
	}
	t, dw := op.dw.get(g.Cout, g.Cin, g.K, g.K)
	if op.done {
		op.done = false
		return t, nil
	}
	if g.Wino {
		op.winoDw(dy, x, dw, batch)
		return t, nil
	}
	if clDo[T](g.CLI, func() {
		conv.CliWeightGrad(g.Geom, any(op.ws).(*mem.Workspace[float32]), f32(dy), f32(x), f32(dw), batch)
	}) {
		return t, nil
	}
	hw := g.HW()
	// dWᵀ = col·dYᵀ where that gives dW = dY·colᵀ's bits: the product
	// then packs the chunk's dY transposed (cout·cols floats) rather than
	// its column matrix (k²·cin·cols).
	var dwt []T
	if _, f32 := any(dw).([]float32); f32 && g.dwTransposed() {
		dwt = mem.Grow(&op.ws.DU, g.KDim()*g.Cout)
	}
	for n0 := 0; n0 < batch; n0 += g.Chunk() {
		n1 := min(n0+g.Chunk(), batch)
		cols := (n1 - n0) * hw
		ld := conv.ColLd(cols)
		var col []T
		if op.fwd.cached {
			col = op.fwd.cols[g.colOffset(n0):][:g.KDim()*ld]
		} else {
			col = mem.Grow(&op.ws.Col, g.KDim()*ld)
			conv.Im2colChunk(g.Geom, op.ws, x, n0, n1, col, ld)
		}
		dycm := conv.ChannelMajor(g.Geom, op.ws, dy, n0, n1)
		beta := T(1)
		if n0 == 0 {
			beta = 0
		}
		if dwt != nil {
			op.ws.Gemm(false, true, g.KDim(), g.Cout, cols, 1, col, ld, dycm, cols, beta, dwt, g.Cout)
			continue
		}
		op.ws.Gemm(false, true, g.Cout, g.KDim(), cols, 1, dycm, cols, col, ld, beta, dw, g.KDim())
	}
	if dwt != nil {
		packed.Transpose(any(dw).([]float32), any(dwt).([]float32), g.KDim(), g.Cout, g.Cout)
	}
	return t, nil
}

// dwTransposed reports whether the im2col weight gradient computes dWᵀ =
// col·dYᵀ instead of dW = dY·colᵀ (convDwOp.Do): on the packed gemm, in
// float32, where both products take its main kernel (at least
// packed.TransMinN rows and columns of C), which sums each entry along k
// in one order whichever operand is A, so the bits are the same.
func (g convGeom) dwTransposed() bool {
	return g.packed && g.Cout >= packed.TransMinN && g.KDim() >= packed.TransMinN && useDwT
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
	if clDo[T](g.CL, func() {
		conv.ClBackward(g.Geom, any(op.ws).(*mem.Workspace[float32]), f32(op.fwd.u), f32(dy), nil, f32(dx), nil, batch)
	}) {
		return
	}
	g.WinoChunks(batch, func(n0, n1, cols, ld int) {
		dm := mem.Grow(&op.ws.Aux, g.Xi()*g.Cout*ld)
		conv.WinoGrad(g.Geom, op.ws, dy, n0, n1, dm, ld)
		op.winoDxChunk(dm, dx, n0, n1, cols, ld)
	})
}

// winoDxChunk computes the chunk [n0, n1)'s dx from its transformed output
// gradients dm: dV_ξ = U_ξᵀ·dM_ξ (in ws.Col), transformed back.
func (op *convDxOp[T]) winoDxChunk(dm, dx []T, n0, n1, cols, ld int) {
	g, u := op.g, op.fwd.u
	dv := mem.Grow(&op.ws.Col, g.Xi()*g.Cin*ld)
	for xi := range g.Xi() {
		op.ws.Gemm(true, false, g.Cin, cols, g.Cout, 1, u[xi*g.Cout*g.Cin:], g.Cin, dm[xi*g.Cout*ld:], ld, 0, dv[xi*g.Cin*ld:], ld)
	}
	conv.WinoInputGrad(g.Geom, op.ws, dv, ld, dx, n0, n1)
}

// winoBackward computes dx and dW for dy and x by Winograd in one pass
// over the chunks: each chunk's transformed output gradients dM_ξ serve
// both products, transformed once instead of once by winoDx and again by
// winoDw, and still in cache for the second. The same products in the
// same order as the two passes': the same bits.
func (op *convDxOp[T]) winoBackward(dy, x, dx, dw []T, batch int) {
	g, fwd := op.g, op.fwd
	if clDo[T](g.CL, func() {
		conv.ClBackward(g.Geom, any(op.ws).(*mem.Workspace[float32]), f32(fwd.u), f32(dy), f32(x), f32(dx), f32(dw), batch)
	}) {
		return
	}
	du, scratch := conv.WinoDu(g.Geom, op.ws)
	g.WinoChunks(batch, func(n0, n1, cols, ld int) {
		dm := mem.Grow(&op.ws.Aux, g.Xi()*g.Cout*ld)
		conv.WinoGrad(g.Geom, op.ws, dy, n0, n1, dm, ld)
		op.winoDxChunk(dm, dx, n0, n1, cols, ld)
		winoDuChunk(g, fwd, x, dm, du, n0, n1, cols, ld) // ws.Col again, for V
	})
	conv.WinoTransformWeightsGrad(g.Geom, du, dw, scratch)
}

// winoDuChunk adds the chunk [n0, n1)'s dM_ξ·V_ξᵀ into du (the first chunk
// writes it), with the forward pass's cached V or V transformed again
// into ws.Col.
func winoDuChunk[T float](g convGeom, fwd *convOp[T], x, dm, du []T, n0, n1, cols, ld int) {
	var v []T
	if fwd.cached {
		v = fwd.cols[g.winoOffset(n0):][:g.Xi()*g.Cin*ld]
	} else {
		v = mem.Grow(&fwd.ws.Col, g.Xi()*g.Cin*ld)
		conv.WinoInput(g.Geom, fwd.ws, x, n0, n1, v, ld)
	}
	beta := T(1)
	if n0 == 0 {
		beta = 0
	}
	for xi := range g.Xi() {
		fwd.ws.Gemm(false, true, g.Cout, g.Cin, cols, 1, dm[xi*g.Cout*ld:], ld, v[xi*g.Cin*ld:], ld, beta, du[xi*g.Cout*g.Cin:], g.Cin)
	}
}

// winoDw computes dW for dy and x by Winograd: dU_ξ = Σ_chunks
// dM_ξ·V_ξᵀ, then dW = Gᵀ dU G.
func (op *convDwOp[T]) winoDw(dy, x, dw []T, batch int) {
	g := op.g
	if clDo[T](g.CL, func() {
		conv.ClBackward(g.Geom, any(op.ws).(*mem.Workspace[float32]), f32(op.fwd.u), f32(dy), f32(x), nil, f32(dw), batch)
	}) {
		return
	}
	du, scratch := conv.WinoDu(g.Geom, op.ws)
	g.WinoChunks(batch, func(n0, n1, cols, ld int) {
		dm := mem.Grow(&op.ws.Aux, g.Xi()*g.Cout*ld)
		conv.WinoGrad(g.Geom, op.ws, dy, n0, n1, dm, ld)
		winoDuChunk(g, op.fwd, x, dm, du, n0, n1, cols, ld)
	})
	conv.WinoTransformWeightsGrad(g.Geom, du, dw, scratch)
}

// clDo runs f when on (g.CL or g.CLI: the convolution takes a
// channel-lane path) and T is float32 (the finite-difference tests'
// float64 graphs keep the other paths), and reports whether it did.
func clDo[T float](on bool, f func()) bool {
	if !on {
		return false
	}
	var t T
	if _, ok := any(t).(float32); !ok {
		return false
	}
	f()
	return true
}

// f32 returns s as []float32 (T is float32 on the channel-lane path).
func f32[T float](s []T) []float32 {
	if s == nil {
		return nil
	}
	return any(s).([]float32)
}
