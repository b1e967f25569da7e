package trainer

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"github.com/flsweep/flsweep/internal/mem"
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
//
// With relu set the op is ReLU followed by the pool, as the session builds
// it for a ReLU layer that only the pool reads (reluIntoPool): max-pooling
// commutes with the ReLU, so y = relu(pool(x)) on a quarter of the values,
// and the backward pass routes dy·[y > 0] to the arg-max. These are the
// two layers' values and gradients bit for bit: ties keep the window's
// first element either way (a window the ReLU zeroes had its arg-max's
// gradient zeroed too), a NaN still wins its window and passes the ReLU,
// and the masked gradient is +0 where ReLU's backward pass makes it +0.
type maxPoolOp[T float] struct {
	opBase
	name    string
	c, h, w int // input
	relu    bool
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
func (op *maxPoolOp[T]) String() string {
	if op.relu {
		return "relu+maxpool2(" + op.name + ")"
	}
	return "maxpool2(" + op.name + ")"
}
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
	op.pool(y, x, planes)
	if op.relu {
		relu(y, y)
	}
	return t, nil
}

// pool writes the 2×2 windows' maxima of x's planes into y and their
// arg-maxima into op.arg.
func (op *maxPoolOp[T]) pool(y, x []T, planes int) {
	ho, wo := op.ho(), op.wo()
	if y32, ok := any(y).([]float32); ok {
		maxPool32(y32, op.arg, any(x).([]float32), planes, op.h, op.w)
		return
	}
	for p := 0; p < planes; p++ {
		base := p * op.h * op.w
		for i := 0; i < ho; i++ {
			for j := 0; j < wo; j++ {
				k0 := base + 2*i*op.w + 2*j
				best, arg := x[k0], k0
				for _, k := range [3]int{k0 + 1, k0 + op.w, k0 + op.w + 1} {
					if v := x[k]; v > best || v != v && best == best {
						best, arg = v, k
					}
				}
				o := (p*ho+i)*wo + j
				y[o], op.arg[o] = best, int32(arg)
			}
		}
	}
}

// maxPool32 is the float32 forward pass without data-dependent branches:
// it compares order-preserving integer keys of the values (floatKey), so
// the selections compile to conditional moves. Ties keep the first element
// of the window in row-major order, as the generic loop does, and the
// first NaN wins its window.
func maxPool32(y []float32, arg []int32, x []float32, planes, h, w int) {
	if vec.MaxPool != nil {
		vec.MaxPool(y, arg, x, planes, h, w)
		return
	}
	ho, wo := h/2, w/2
	for p := 0; p < planes; p++ {
		base := p * h * w
		for i := 0; i < ho; i++ {
			r0 := base + 2*i*w
			o := (p*ho + i) * wo
			maxPoolRowsGo(y[o:o+wo], arg[o:o+wo], x[r0:r0+2*w], w, int32(r0))
		}
	}
}

// maxPoolRowsGo pools the 2×2 windows whose top-left corners are x[0],
// x[2], …, x[2·(len(y)−1)], the second row w further on, into y and arg
// (indices into x, offset by base).
func maxPoolRowsGo(y []float32, arg []int32, x []float32, w int, base int32) {
	w32 := int32(w)
	for j := range int32(len(y)) {
		k := 2 * j
		best, at := floatKey(x[k]), k
		if c := floatKey(x[k+1]); c > best {
			best, at = c, k+1
		}
		if c := floatKey(x[w32+k]); c > best {
			best, at = c, w32+k
		}
		if c := floatKey(x[w32+k+1]); c > best {
			at = w32 + k + 1
		}
		y[j], arg[j] = x[at], base+at
	}
}

// floatKey maps a float32 to a uint32 whose unsigned order is the float
// order (−Inf < … < −0 < +0 < … < +Inf; −0 and +0 compare equal as floats
// but get distinct keys, which only matters for ties between them), with
// every NaN above +Inf. Non-negative floats set the sign bit, negative ones
// flip all bits.
func floatKey(v float32) uint32 {
	b := math.Float32bits(v)
	k := b ^ (uint32(int32(b)>>31) | 0x80000000)
	return k | nanMask(b)
}

func (op *maxPoolOp[T]) SymDiff(_ G.Nodes, out, dy *G.Node) (G.Nodes, error) {
	args := G.Nodes{dy}
	if op.relu {
		args = append(args, out) // y, for the ReLU's mask
	}
	dx, err := G.ApplyOp(&maxPoolDiffOp[T]{fwd: op}, args...)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

type maxPoolDiffOp[T float] struct {
	gradOpBase
	fwd    *maxPoolOp[T]
	dx     outBuf[T]
	masked []T // with the ReLU: dy·[y > 0]
}

func (op *maxPoolDiffOp[T]) Arity() int {
	if op.fwd.relu {
		return 2
	}
	return 1
}
func (op *maxPoolDiffOp[T]) Type() hm.Type {
	if op.fwd.relu {
		return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
	}
	return hm.NewFnType(tensorType(4), tensorType(4))
}
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
	if f.relu {
		y, err := dataN[T](vs[1], len(dy), op, "y")
		if err != nil {
			return nil, err
		}
		m := mem.Grow(&op.masked, len(dy))
		reluDx(m, y, dy)
		dy = m
	}
	for o, k := range f.arg {
		dx[k] += dy[o]
	}
	return t, nil
}
