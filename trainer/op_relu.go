package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// reluOp is y = max(x, 0) on [B, F], with PyTorch's subgradient 0 at x = 0
// (threshold_backward tests x > 0). A NaN input stays NaN.
//
// Stock gorgonia's Rectify is two nodes, a ≥ comparison and a
// HadamardProd, whose backward pass adds two more; each allocates a fresh
// [B, F] tensor every step, and its subgradient at 0 is 1.
type reluOp[T float] struct {
	opBase
	name string
	y    outBuf[T]
}

var _ G.SDOp = (*reluOp[float32])(nil)

func (op *reluOp[T]) Arity() int    { return 1 }
func (op *reluOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(2), tensorType(2)) }
func (op *reluOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want [B, F]", op, ds[0])
	}
	return s.Clone(), nil
}
func (op *reluOp[T]) String() string        { return "relu(" + op.name + ")" }
func (op *reluOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *reluOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *reluOp[T]) DiffWRT(int) []bool    { return []bool{true} }
func (op *reluOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	s := vs[0].Shape()
	if len(s) != 2 || s[0]*s[1] != len(x) {
		return nil, fmt.Errorf("%v: input shape %v with %d values", op, s, len(x))
	}
	t, y := op.y.get(s[0], s[1])
	for i, v := range x {
		if v > 0 || v != v {
			y[i] = v
		} else {
			y[i] = 0
		}
	}
	return t, nil
}

// SymDiff returns dx = dy·[x > 0].
func (op *reluOp[T]) SymDiff(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&reluDxOp[T]{name: op.name}, in[0], dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

type reluDxOp[T float] struct {
	gradOpBase
	name string
	dx   outBuf[T]
}

func (op *reluDxOp[T]) Arity() int { return 2 }
func (op *reluDxOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(2))
}
func (op *reluDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("%v: input shape %v, want [B, F]", op, ds[0])
	}
	return s.Clone(), nil
}
func (op *reluDxOp[T]) String() string        { return "relu.dx(" + op.name + ")" }
func (op *reluDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *reluDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *reluDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	dy, err := dataN[T](vs[1], len(x), op, "dy")
	if err != nil {
		return nil, err
	}
	s := vs[0].Shape()
	if len(s) != 2 || s[0]*s[1] != len(x) {
		return nil, fmt.Errorf("%v: input shape %v with %d values", op, s, len(x))
	}
	t, dx := op.dx.get(s[0], s[1])
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
	return t, nil
}
