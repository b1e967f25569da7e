package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	kgemm "github.com/flsweep/flsweep/internal/gemm"
	"github.com/flsweep/flsweep/internal/mem"
)

// linearOp is PyTorch's nn.Linear with the weight stored as [out, in]:
//
//	y = x·Wᵀ + b,   x: [B, in], W: [out, in], b: [out], y: [B, out]
//
// x may also be [B, C, H, W] with in = C·H·W: the layer flattens it, as
// torch.flatten(x, 1) does before a classifier head, without a copy.
//
// Stock gorgonia would need Mul(x, Transpose(W)) followed by BroadcastAdd,
// three nodes that allocate a transposed copy of W and the output every step.
type linearOp[T float] struct {
	opBase
	name    string
	in, out int
	xdims   int   // 2, or 4 for a [B, C, H, W] input
	xshape  shape // per-sample input shape
	needDx  bool  // false for the first layer: the input is data, its gradient unused
	ws      *mem.Workspace[T]
	fuse    *fusedSGD[T] // the session's switch for plain SGD inside the weight-gradient gemm
	w       []T          // the weight's view of the session's flat weights
	y       outBuf[T]
	// Evaluation graphs (eval) multiply by W stored transposed, [in, out]:
	// wt, loadWeights's transpose into wtOwn, or the one of the session a
	// lease switched from (moveState). See transposeW.
	eval      bool
	wt, wtOwn []T
}

// fusedSGD lets the weight-gradient ops of linear layers apply plain SGD
// inside their gemm: while on, linearDwOp computes
//
//	W ← W − η·dyᵀ·x        (gemm with alpha −η, beta 1, C = W)
//
// instead of writing dW for the optimiser to read back. For the MLP at
// batch 50 that saves writing and re-reading the 199,210-entry gradient and
// a pass over the weights every step; training a round's clients in
// parallel is bound by that memory traffic. Train turns it on for plain
// SGD (no momentum, weight decay or Objective terms), where the result is
// the same update up to rounding, and the optimiser then skips those
// weights. Each such op runs after the layer's input-gradient op, which
// reads W (an extra input of the op orders them; nothing else reads W
// after the forward pass).
type fusedSGD[T float] struct {
	on  bool
	eta T
}

var _ G.SDOp = (*linearOp[float32])(nil)

func (op *linearOp[T]) Arity() int { return 3 }
func (op *linearOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.xdims), tensorType(2), tensorType(1), tensorType(2))
}
func (op *linearOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != op.xdims || s.TotalSize() != s[0]*op.in {
		return nil, fmt.Errorf("%v: input shape %v, want [B, %d] or [B, C, H, W] with C·H·W = %d", op, ds[0], op.in, op.in)
	}
	return tensor.Shape{s[0], op.out}, nil
}
func (op *linearOp[T]) String() string        { return "linear(" + op.name + ")" }
func (op *linearOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *linearOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *linearOp[T]) DiffWRT(n int) []bool  { return []bool{op.needDx, true, true} }
func (op *linearOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	batch := len(x) / op.in
	w, err := dataN[T](vs[1], op.out*op.in, op, "W")
	if err != nil {
		return nil, err
	}
	b, err := dataN[T](vs[2], op.out, op, "b")
	if err != nil {
		return nil, err
	}
	t, y := op.y.get(batch, op.out)
	for i := 0; i < batch; i++ {
		copy(y[i*op.out:(i+1)*op.out], b)
	}
	if op.eval {
		op.ws.Gemm(false, false, batch, op.out, op.in, 1, x, op.in, op.wt, op.out, 1, y, op.out)
		return t, nil
	}
	op.ws.Gemm(false, true, batch, op.out, op.in, 1, x, op.in, w, op.in, 1, y, op.out)
	return t, nil
}

// transposeW transposes W into wtOwn for an evaluation graph, whose linear
// layer multiplies by its weight stored transposed, [in, out]. The forward
// product x·Wᵀ is then a plain one, x·(Wᵀ), which the packed gemm runs from
// B read along its rows rather than through the dot-product kernel (BenchmarkSgemm on a Zen 3:
// mlp-eval-500x200x784 at 84 GFLOP/s against 62). loadWeights transposes
// W; the sessions a lease switches to for the rest of an evaluation share
// that copy (moveState), so a model is transposed once per Predict call.
// Training graphs keep x·Wᵀ: every step changes W, so nothing would
// amortise the copy.
//
// The two orders sum differently (package packed), so an evaluation
// graph's outputs differ in rounding from a training graph's forward pass.
// Each is deterministic, and with the packed gemm a sample's outputs do
// not depend on the batch it is evaluated in.
func (op *linearOp[T]) transposeW() {
	op.wt = mem.Grow(&op.wtOwn, len(op.w))
	kgemm.Transpose(op.wt, op.w, op.out, op.in, op.in)
}

// SymDiff returns dx = dy·W, dW = dyᵀ·x and db = Σ_rows dy.
func (op *linearOp[T]) SymDiff(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	grads := make(G.Nodes, 3)
	var err error
	dw := &linearDwOp[T]{name: op.name, in: op.in, out: op.out, xdims: op.xdims, ws: op.ws, fuse: op.fuse, w: op.w}
	args := G.Nodes{dy, in[0]}
	if op.needDx {
		dx := &linearDxOp[T]{name: op.name, in: op.in, out: op.out, xdims: op.xdims, xshape: op.xshape, ws: op.ws}
		if grads[0], err = G.ApplyOp(dx, dy, in[1]); err != nil {
			return nil, err
		}
		// The weight gradient waits for the input gradient, which reads W
		// (see fusedSGD).
		args = append(args, grads[0])
		dw.after = op.xdims
	}
	if grads[1], err = G.ApplyOp(dw, args...); err != nil {
		return nil, err
	}
	if grads[2], err = G.ApplyOp(&biasGradOp[T]{name: op.name, c: op.out, dims: 2, spatial: 1}, dy); err != nil {
		return nil, err
	}
	return grads, nil
}

// linearDxOp computes dx = dy·W: [B, out]·[out, in] → [B, in], shaped
// like the forward input.
type linearDxOp[T float] struct {
	gradOpBase
	name    string
	in, out int
	xdims   int
	xshape  shape
	ws      *mem.Workspace[T]
	dx      outBuf[T]
}

func (op *linearDxOp[T]) Arity() int { return 2 }
func (op *linearDxOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(op.xdims))
}
func (op *linearDxOp[T]) dxShape(batch int) []int {
	if op.xdims == 4 {
		return []int{batch, op.xshape[0], op.xshape[1], op.xshape[2]}
	}
	return []int{batch, op.in}
}
func (op *linearDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: dy shape %v, want [B, %d]", op, ds[0], op.out)
	}
	return op.dxShape(s[0]), nil
}
func (op *linearDxOp[T]) String() string        { return "linear.dx(" + op.name + ")" }
func (op *linearDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *linearDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *linearDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	dy, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v dy: %w", op, err)
	}
	batch := len(dy) / op.out
	w, err := dataN[T](vs[1], op.out*op.in, op, "W")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(op.dxShape(batch)...)
	op.ws.Gemm(false, false, batch, op.in, op.out, 1, dy, op.out, w, op.in, 0, dx, op.in)
	return t, nil
}

// linearDwOp computes dW = dyᵀ·x: [out, B]·[B, in] → [out, in], or applies
// it to W directly (fusedSGD). A third input, the layer's dx, only orders
// the op after it.
type linearDwOp[T float] struct {
	gradOpBase
	name    string
	in, out int
	xdims   int
	after   int // dimensions of the ordering input dx, or 0 for none
	ws      *mem.Workspace[T]
	fuse    *fusedSGD[T]
	w       []T
	dw      outBuf[T]
}

func (op *linearDwOp[T]) Arity() int {
	if op.after > 0 {
		return 3
	}
	return 2
}
func (op *linearDwOp[T]) Type() hm.Type {
	if op.after > 0 {
		return hm.NewFnType(tensorType(2), tensorType(op.xdims), tensorType(op.after), tensorType(2))
	}
	return hm.NewFnType(tensorType(2), tensorType(op.xdims), tensorType(2))
}
func (op *linearDwOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.out, op.in}, nil
}
func (op *linearDwOp[T]) String() string        { return "linear.dw(" + op.name + ")" }
func (op *linearDwOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *linearDwOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *linearDwOp[T]) Do(vs ...G.Value) (G.Value, error) {
	dy, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v dy: %w", op, err)
	}
	batch := len(dy) / op.out
	x, err := dataN[T](vs[1], batch*op.in, op, "x")
	if err != nil {
		return nil, err
	}
	t, dw := op.dw.get(op.out, op.in)
	if op.fuse != nil && op.fuse.on {
		op.ws.Gemm(true, false, op.out, op.in, batch, -op.fuse.eta, dy, op.out, x, op.in, 1, op.w, op.in)
		return t, nil
	}
	op.ws.Gemm(true, false, op.out, op.in, batch, 1, dy, op.out, x, op.in, 0, dw, op.in)
	return t, nil
}

// biasGradOp sums dy over every axis except axis 1: [B, C, ...] → [C]. It is
// the gradient of a per-channel bias (linear, convolution, BatchNorm β).
// Sums run in float64, in index order.
type biasGradOp[T float] struct {
	gradOpBase
	name    string
	c       int
	dims    int // of dy: 2 for linear, 4 for convolution and BatchNorm
	spatial int // product of dy's axes after the first two
	db      outBuf[T]
	acc     []float64
}

func (op *biasGradOp[T]) Arity() int { return 1 }
func (op *biasGradOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.dims), tensorType(1))
}
func (op *biasGradOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.c}, nil
}
func (op *biasGradOp[T]) String() string        { return "bias.grad(" + op.name + ")" }
func (op *biasGradOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *biasGradOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *biasGradOp[T]) Do(vs ...G.Value) (G.Value, error) {
	dy, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v dy: %w", op, err)
	}
	spatial := op.spatial
	batch := len(dy) / (op.c * spatial)
	if batch*op.c*spatial != len(dy) {
		return nil, fmt.Errorf("%v: dy has %d values, not a multiple of %d·%d", op, len(dy), op.c, spatial)
	}
	if op.acc == nil {
		op.acc = make([]float64, op.c)
	}
	clear(op.acc)
	if dy32, ok := any(dy).([]float32); ok && spatial > 1 && vec.ChannelSum != nil {
		vec.ChannelSum(op.acc, dy32, op.c, spatial)
	} else {
		for i := 0; i < batch; i++ {
			if spatial == 1 {
				// Each channel is its own running sum; consecutive
				// channels do not wait for each other.
				for c, v := range dy[i*op.c : (i+1)*op.c] {
					op.acc[c] += float64(v)
				}
				continue
			}
			for c := 0; c < op.c; c++ {
				op.acc[c] += sum64(dy[(i*op.c+c)*spatial : (i*op.c+c+1)*spatial])
			}
		}
	}
	t, db := op.db.get(op.c)
	for c, s := range op.acc {
		db[c] = T(s)
	}
	return t, nil
}
