package trainer

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flsweep/flsweep/internal/vector"
)

// actOp is an elementwise activation on a tensor of any shape:
//
//	ReLU:     y = max(x, 0),           dy/dx = [x > 0]   (PyTorch's subgradient 0 at x = 0)
//	Tanh:     y = tanh(x),             dy/dx = 1 − y²
//	Sigmoid:  y = 1/(1 + e^(−x)),      dy/dx = y·(1 − y)
//
// A NaN input stays NaN. Tanh and Sigmoid are computed in float64 and
// rounded once; their backward pass reads y, which the graph passes to the
// gradient op as an input (an op never reads its own output buffer, see
// ops.go).
//
// Stock gorgonia's Rectify is two nodes, a ≥ comparison and a
// HadamardProd, whose backward pass adds two more; each allocates a fresh
// tensor every step, and its subgradient at 0 is 1. Its Tanh and Sigmoid
// also allocate per step.
type actOp[T float] struct {
	opBase
	name string
	act  actKind
	dims int
	y    outBuf[T]
}

var _ G.SDOp = (*actOp[float32])(nil)

func (op *actOp[T]) Arity() int    { return 1 }
func (op *actOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(op.dims), tensorType(op.dims)) }
func (op *actOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(op, ds[0], op.dims)
}
func (op *actOp[T]) String() string        { return op.act.String() + "(" + op.name + ")" }
func (op *actOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *actOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *actOp[T]) DiffWRT(int) []bool    { return []bool{true} }
func (op *actOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	t, y := op.y.get(vs[0].Shape()...)
	switch op.act {
	case actReLU:
		relu(y, x)
	case actTanh:
		for i, v := range x {
			y[i] = T(math.Tanh(float64(v)))
		}
	case actSigmoid:
		for i, v := range x {
			y[i] = T(sigmoid(float64(v)))
		}
	}
	return t, nil
}

// sigmoid is 1/(1 + e^(−x)), written so that neither branch overflows.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// SymDiff returns dx = dy·f'(x), through actDxOp(x, y, dy).
func (op *actOp[T]) SymDiff(in G.Nodes, out, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&actDxOp[T]{name: op.name, act: op.act, dims: op.dims}, in[0], out, dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// reluGrad returns the gradient at a fused op's output before its ReLU
// (bnOp.relu, addOp.relu): dy·[y > 0] for the fused output y = relu(v),
// where y > 0 exactly where v > 0, by the ReLU layer's own gradient op. dy
// as it is when relu is false.
func reluGrad[T float](relu bool, name string, out, dy *G.Node) (*G.Node, error) {
	if !relu {
		return dy, nil
	}
	return G.ApplyOp(&actDxOp[T]{name: name + ".relu", act: actReLU, dims: 4}, out, out, dy)
}

type actDxOp[T float] struct {
	gradOpBase
	name string
	act  actKind
	dims int
	dx   outBuf[T]
}

func (op *actDxOp[T]) Arity() int { return 3 }
func (op *actDxOp[T]) Type() hm.Type {
	t := tensorType(op.dims)
	return hm.NewFnType(t, t, t, t)
}
func (op *actDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(op, ds[0], op.dims)
}
func (op *actDxOp[T]) String() string        { return op.act.String() + ".dx(" + op.name + ")" }
func (op *actDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *actDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *actDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	y, err := dataN[T](vs[1], len(x), op, "y")
	if err != nil {
		return nil, err
	}
	dy, err := dataN[T](vs[2], len(x), op, "dy")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(vs[0].Shape()...)
	switch op.act {
	case actReLU:
		reluDx(dx, x, dy)
	case actTanh:
		for i, v := range y {
			dx[i] = dy[i] * (1 - v*v)
		}
	case actSigmoid:
		for i, v := range y {
			dx[i] = dy[i] * v * (1 - v)
		}
	}
	return t, nil
}

// relu writes y = max(x, 0), keeping NaN. For float32 it works on the bit
// patterns, without branches: with random signs a comparison per element
// mispredicts half the time, which made ReLU a tenth of the MLP's step.
func relu[T float](y, x []T) {
	if y32, ok := any(y).([]float32); ok {
		x32 := any(x).([]float32)[:len(y32)]
		if vec.ReLU != nil {
			vec.ReLU(y32, x32)
			return
		}
		for i, v := range x32 {
			b := math.Float32bits(v)
			y32[i] = math.Float32frombits(b & (vector.PosMask(b) | nanMask(b)))
		}
		return
	}
	for i, v := range x {
		if v > 0 || v != v {
			y[i] = v
		} else {
			y[i] = 0
		}
	}
}

// reluDx writes dx = dy·[x > 0] (PyTorch's threshold_backward), branch-free
// for float32.
func reluDx[T float](dx, x, dy []T) {
	if dx32, ok := any(dx).([]float32); ok {
		x32, dy32 := any(x).([]float32)[:len(dx32)], any(dy).([]float32)[:len(dx32)]
		if vec.ReLUDx != nil {
			vec.ReLUDx(dx32, x32, dy32)
			return
		}
		for i, v := range x32 {
			dx32[i] = math.Float32frombits(math.Float32bits(dy32[i]) & vector.PosMask(math.Float32bits(v)))
		}
		return
	}
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

// nanMask is all ones if the float32 with bits b is NaN, else 0: NaN has a
// magnitude > 0x7f800000 (+Inf).
func nanMask(b uint32) uint32 { return uint32((0x7f800000 - int64(b&0x7fffffff)) >> 63) }
