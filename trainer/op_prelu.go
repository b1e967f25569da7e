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
	return sameShape(op, ds[0], 0)
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
	prelu(y, x, x, a[0])
	return t, nil
}

// prelu writes y = d where x > 0 and y = a·d elsewhere (NaN x included):
// the forward pass with d = x, the input gradient with d = dy. For float32
// the choice is a bit mask (vector.PosMask), without branches.
func prelu[T float](y, x, d []T, a T) {
	if y32, ok := any(y).([]float32); ok {
		x32, d32 := any(x).([]float32), any(d).([]float32)
		if vec.PReLU != nil {
			vec.PReLU(y32, x32, d32, float32(a))
			return
		}
		vector.PReLUGo(y32, x32, d32, float32(a))
		return
	}
	for i, v := range x {
		if v > 0 {
			y[i] = d[i]
		} else {
			y[i] = a * d[i]
		}
	}
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
	return sameShape(op, ds[0], 0)
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
	prelu(dx, x, dy, a[0])
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
	t, da := op.da.get(1)
	da[0] = T(negDot(x, dy))
	return t, nil
}

// negDot returns Σ_{x_i ≤ 0} x_i·dy_i in float64 (NaN x_i included), the
// PReLU slope's gradient. The float32 path selects with a bit mask and
// sums in four lanes (one running sum would make every element wait for
// the previous addition); the lanes are combined in a fixed order.
func negDot[T float](x, dy []T) float64 {
	if x32, ok := any(x).([]float32); ok {
		if vec.NegDot != nil {
			return vec.NegDot(x32, any(dy).([]float32))
		}
		d32 := any(dy).([]float32)[:len(x32)]
		var s [4]float64
		i := 0
		for ; i+4 <= len(x32); i += 4 {
			for l := range 4 {
				b := math.Float32bits(x32[i+l])
				s[l] += float64(math.Float32frombits(b&^vector.PosMask(b))) * float64(d32[i+l])
			}
		}
		for ; i < len(x32); i++ {
			b := math.Float32bits(x32[i])
			s[0] += float64(math.Float32frombits(b&^vector.PosMask(b))) * float64(d32[i])
		}
		return (s[0] + s[1]) + (s[2] + s[3])
	}
	var s float64
	for i, v := range x {
		if !(v > 0) {
			s += float64(v) * float64(dy[i])
		}
	}
	return s
}
