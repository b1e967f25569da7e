package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// maskOp is inverted dropout with a mask the session fills before every
// step: y = x ⊙ m and dx = dy ⊙ m, where each entry of m is 0 (dropped, with
// probability p) or 1/(1 − p). The mask is drawn from the Train call's
// stream (session.drawMasks); gorgonia's Dropout seeds its own generator
// from the clock (nn.go: time.Now().UnixNano()), so runs would never repeat.
// Training graphs only: evaluation graphs have no dropout.
type maskOp[T float] struct {
	opBase
	name string
	dims int
	m    *mask[T]
	y    outBuf[T]
}

var _ G.SDOp = (*maskOp[float32])(nil)

func (op *maskOp[T]) Arity() int    { return 1 }
func (op *maskOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims)) }
func (op *maskOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(op, ds[0], op.dims)
}
func (op *maskOp[T]) String() string        { return "dropout(" + op.name + ")" }
func (op *maskOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *maskOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *maskOp[T]) DiffWRT(int) []bool    { return []bool{true} }
func (op *maskOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataN[T](vs[0], len(op.m.data), op, "x")
	if err != nil {
		return nil, err
	}
	t, y := op.y.get(vs[0].Shape()...)
	for i, m := range op.m.data {
		y[i] = x[i] * m
	}
	return t, nil
}

func (op *maskOp[T]) SymDiff(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&maskDxOp[T]{fwd: op}, dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

type maskDxOp[T float] struct {
	gradOpBase
	fwd *maskOp[T]
	dx  outBuf[T]
}

func (op *maskDxOp[T]) Arity() int { return 1 }
func (op *maskDxOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.fwd.dims), tensorType(op.fwd.dims))
}
func (op *maskDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return op.fwd.InferShape(ds...)
}
func (op *maskDxOp[T]) String() string        { return "dropout.dx(" + op.fwd.name + ")" }
func (op *maskDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *maskDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *maskDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	dy, err := dataN[T](vs[0], len(op.fwd.m.data), op, "dy")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(vs[0].Shape()...)
	for i, m := range op.fwd.m.data {
		dx[i] = dy[i] * m
	}
	return t, nil
}

// addOp is the residual connection y = a + b of a ResNet block (a and b of
// equal shape); dy flows to both inputs unchanged.
type addOp[T float] struct {
	opBase
	name string
	y    outBuf[T]
	// relu makes the op the addition followed by ReLU, as the session
	// builds it for a ReLU layer that only the addition feeds (reluInto).
	relu bool
}

var _ G.SDOp = (*addOp[float32])(nil)

func (op *addOp[T]) Arity() int { return 2 }
func (op *addOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}
func (op *addOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	a, ok1 := ds[0].(tensor.Shape)
	b, ok2 := ds[1].(tensor.Shape)
	if !ok1 || !ok2 || !a.Eq(b) {
		return nil, fmt.Errorf("%v: input shapes %v and %v differ", op, ds[0], ds[1])
	}
	return a.Clone(), nil
}
func (op *addOp[T]) String() string {
	if op.relu {
		return "add+relu(" + op.name + ")"
	}
	return "add(" + op.name + ")"
}
func (op *addOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *addOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *addOp[T]) DiffWRT(int) []bool    { return []bool{true, true} }
func (op *addOp[T]) Do(vs ...G.Value) (G.Value, error) {
	a, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v a: %w", op, err)
	}
	b, err := dataN[T](vs[1], len(a), op, "b")
	if err != nil {
		return nil, err
	}
	t, y := op.y.get(vs[0].Shape()...)
	if y32, ok := any(y).([]float32); ok && op.relu && vec.AddReLU != nil {
		vec.AddReLU(y32, any(a).([]float32), any(b).([]float32))
		return t, nil
	}
	addInto(y, a, b)
	if op.relu {
		relu(y, y)
	}
	return t, nil
}

// addInto writes a + b into y, by the vector kernels where the CPU has
// them: one rounding per element either way, so the same bits. As a
// scalar loop it took 2% of a ResNet-18 step (1.8 ns a float).
func addInto[T float](y, a, b []T) {
	if y32, ok := any(y).([]float32); ok && vec.Add != nil {
		vec.Add(y32, any(a).([]float32), any(b).([]float32))
		return
	}
	for i, v := range a[:len(y)] {
		y[i] = v + b[i]
	}
}
func (op *addOp[T]) SymDiff(_ G.Nodes, out, dy *G.Node) (G.Nodes, error) {
	dy, err := reluGrad[T](op.relu, op.name, out, dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dy, dy}, nil
}

// avgPoolOp is global average pooling, PyTorch's AdaptiveAvgPool2d((1, 1))
// followed by flatten: [B, C, H, W] → [B, C], y[n, c] = mean_{h,w} x[n, c, h, w]
// (summed in float64).
type avgPoolOp[T float] struct {
	opBase
	name    string
	c, h, w int
	y       outBuf[T]
}

var _ G.SDOp = (*avgPoolOp[float32])(nil)

func (op *avgPoolOp[T]) Arity() int    { return 1 }
func (op *avgPoolOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(4), tensorType(2)) }
func (op *avgPoolOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 4 || s[1] != op.c || s[2] != op.h || s[3] != op.w {
		return nil, fmt.Errorf("%v: input shape %v, want [B, %d, %d, %d]", op, ds[0], op.c, op.h, op.w)
	}
	return tensor.Shape{s[0], op.c}, nil
}
func (op *avgPoolOp[T]) String() string        { return "avgpool(" + op.name + ")" }
func (op *avgPoolOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *avgPoolOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *avgPoolOp[T]) DiffWRT(int) []bool    { return []bool{true} }
func (op *avgPoolOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	hw := op.h * op.w
	planes := len(x) / hw
	t, y := op.y.get(planes/op.c, op.c)
	for p := range planes {
		var s float64
		for _, v := range x[p*hw : (p+1)*hw] {
			s += float64(v)
		}
		y[p] = T(s / float64(hw))
	}
	return t, nil
}
func (op *avgPoolOp[T]) SymDiff(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&avgPoolDxOp[T]{fwd: op}, dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

type avgPoolDxOp[T float] struct {
	gradOpBase
	fwd *avgPoolOp[T]
	dx  outBuf[T]
}

func (op *avgPoolDxOp[T]) Arity() int    { return 1 }
func (op *avgPoolDxOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(2), tensorType(4)) }
func (op *avgPoolDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: dy shape %v", op, ds[0])
	}
	return tensor.Shape{s[0], op.fwd.c, op.fwd.h, op.fwd.w}, nil
}
func (op *avgPoolDxOp[T]) String() string        { return "avgpool.dx(" + op.fwd.name + ")" }
func (op *avgPoolDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *avgPoolDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *avgPoolDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	dy, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v dy: %w", op, err)
	}
	f := op.fwd
	hw := f.h * f.w
	t, dx := op.dx.get(len(dy)/f.c, f.c, f.h, f.w)
	inv := 1 / T(hw)
	for p, d := range dy {
		v := d * inv
		row := dx[p*hw : (p+1)*hw]
		for i := range row {
			row[i] = v
		}
	}
	return t, nil
}
