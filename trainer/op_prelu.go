package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// preluOp is PyTorch's nn.PReLU() with one slope a shared by all channels
// (gorgonia has no PReLU):
//
//	y = x       if x > 0
//	y = a·x     otherwise
type preluOp[T float] struct {
	opBase
	name string
	dims int
	y    outBuf[T]
}

var _ G.SDOp = (*preluOp[float32])(nil)

func (op *preluOp[T]) Arity() int { return 2 }
func (op *preluOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.dims), tensorType(1), tensorType(op.dims))
}
func (op *preluOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input is not a shape", op)
	}
	return s.Clone(), nil
}
func (op *preluOp[T]) String() string        { return "prelu(" + op.name + ")" }
func (op *preluOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *preluOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *preluOp[T]) DiffWRT(int) []bool    { return []bool{true, true} }
func (op *preluOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	a, err := dataN[T](vs[1], 1, op, "a")
	if err != nil {
		return nil, err
	}
	t, y := op.y.get(vs[0].Shape()...)
	slope := a[0]
	for i, v := range x {
		if v > 0 {
			y[i] = v
		} else {
			y[i] = slope * v
		}
	}
	return t, nil
}

// SymDiff returns dx = dy·(x > 0 ? 1 : a) and da = Σ_{x ≤ 0} dy·x.
func (op *preluOp[T]) SymDiff(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&preluDxOp[T]{name: op.name, dims: op.dims}, in[0], in[1], dy)
	if err != nil {
		return nil, err
	}
	da, err := G.ApplyOp(&preluDaOp[T]{name: op.name, dims: op.dims}, in[0], dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, da}, nil
}

type preluDxOp[T float] struct {
	gradOpBase
	name string
	dims int
	dx   outBuf[T]
}

func (op *preluDxOp[T]) Arity() int { return 3 }
func (op *preluDxOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.dims), tensorType(1), tensorType(op.dims), tensorType(op.dims))
}
func (op *preluDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input is not a shape", op)
	}
	return s.Clone(), nil
}
func (op *preluDxOp[T]) String() string        { return "prelu.dx(" + op.name + ")" }
func (op *preluDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *preluDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *preluDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	a, err := dataN[T](vs[1], 1, op, "a")
	if err != nil {
		return nil, err
	}
	dy, err := dataN[T](vs[2], len(x), op, "dy")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(vs[0].Shape()...)
	slope := a[0]
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = slope * dy[i]
		}
	}
	return t, nil
}

type preluDaOp[T float] struct {
	gradOpBase
	name string
	dims int
	da   outBuf[T]
}

func (op *preluDaOp[T]) Arity() int { return 2 }
func (op *preluDaOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.dims), tensorType(op.dims), tensorType(1))
}
func (op *preluDaOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.Shape{1}, nil }
func (op *preluDaOp[T]) String() string                                 { return "prelu.da(" + op.name + ")" }
func (op *preluDaOp[T]) Hashcode() uint32                               { return hashOf(op) }
func (op *preluDaOp[T]) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op *preluDaOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	dy, err := dataN[T](vs[1], len(x), op, "dy")
	if err != nil {
		return nil, err
	}
	var s float64
	for i, v := range x {
		if v <= 0 {
			s += float64(v) * float64(dy[i])
		}
	}
	t, da := op.da.get(1)
	da[0] = T(s)
	return t, nil
}
