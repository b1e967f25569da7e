package trainer

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// maxPoolOp is nn.MaxPool2d(2): 2×2 windows with stride 2, odd trailing rows
// and columns dropped (floor). The backward pass routes dy to the arg-max
// of each window.
//
// gorgonia's MaxPool2D is not used because a NaN input leaves its arg-max
// at −1 and its backward pass then indexes dx[−1]: a panic inside the tape
// machine's goroutine, which kills the process instead of returning
// ErrDiverged. Here a NaN wins its window, so it propagates and every index
// stays valid.
type maxPoolOp[T float] struct {
	opBase
	name    string
	c, h, w int // input
	arg     []int32
	y       outBuf[T]
}

var _ G.SDOp = (*maxPoolOp[float32])(nil)

func (op *maxPoolOp[T]) ho() int { return op.h / 2 }
func (op *maxPoolOp[T]) wo() int { return op.w / 2 }

func (op *maxPoolOp[T]) Arity() int    { return 1 }
func (op *maxPoolOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(4), tensorType(4)) }
func (op *maxPoolOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 4 || s[1] != op.c || s[2] != op.h || s[3] != op.w {
		return nil, fmt.Errorf("%v: input shape %v, want [B, %d, %d, %d]", op, ds[0], op.c, op.h, op.w)
	}
	return tensor.Shape{s[0], op.c, op.ho(), op.wo()}, nil
}
func (op *maxPoolOp[T]) String() string        { return "maxpool2(" + op.name + ")" }
func (op *maxPoolOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *maxPoolOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *maxPoolOp[T]) DiffWRT(int) []bool    { return []bool{true} }
func (op *maxPoolOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	planes := len(x) / (op.h * op.w)
	if planes*op.h*op.w != len(x) || planes%op.c != 0 {
		return nil, fmt.Errorf("%v: x has %d values, not a multiple of %d·%d·%d", op, len(x), op.c, op.h, op.w)
	}
	ho, wo := op.ho(), op.wo()
	t, y := op.y.get(planes/op.c, op.c, ho, wo)
	if len(op.arg) != len(y) {
		op.arg = make([]int32, len(y))
	}
	for p := 0; p < planes; p++ {
		base := p * op.h * op.w
		for i := 0; i < ho; i++ {
			for j := 0; j < wo; j++ {
				k0 := base + 2*i*op.w + 2*j
				best, arg := x[k0], k0
				for _, k := range [3]int{k0 + 1, k0 + op.w, k0 + op.w + 1} {
					if v := x[k]; v > best || v != v {
						best, arg = v, k
					}
				}
				o := (p*ho+i)*wo + j
				y[o], op.arg[o] = best, int32(arg)
			}
		}
	}
	return t, nil
}

func (op *maxPoolOp[T]) SymDiff(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&maxPoolDiffOp[T]{fwd: op}, dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

type maxPoolDiffOp[T float] struct {
	gradOpBase
	fwd *maxPoolOp[T]
	dx  outBuf[T]
}

func (op *maxPoolDiffOp[T]) Arity() int    { return 1 }
func (op *maxPoolDiffOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(4), tensorType(4)) }
func (op *maxPoolDiffOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%v: dy shape %v", op, ds[0])
	}
	return tensor.Shape{s[0], op.fwd.c, op.fwd.h, op.fwd.w}, nil
}
func (op *maxPoolDiffOp[T]) String() string        { return "maxpool2.dx(" + op.fwd.name + ")" }
func (op *maxPoolDiffOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *maxPoolDiffOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *maxPoolDiffOp[T]) Do(vs ...G.Value) (G.Value, error) {
	f := op.fwd
	dy, err := dataN[T](vs[0], len(f.arg), op, "dy")
	if err != nil {
		return nil, err
	}
	batch := len(dy) / (f.c * f.ho() * f.wo())
	t, dx := op.dx.get(batch, f.c, f.h, f.w)
	clear(dx)
	for o, k := range f.arg {
		dx[k] += dy[o]
	}
	return t, nil
}
