package trainer

// This file holds what every op in this package shares: the element-type
// constraint, gorgonia type and value plumbing and reusable output buffers.
// The scratch memory the ops share and the products that run in it are
// package mem's (mem.Workspace, mem.Workspace.Gemm).
//
// # How our ops live inside gorgonia
//
// Each op implements gorgonia.Op and, when it is differentiable,
// gorgonia.SDOp, so gorgonia.Grad builds the backward graph from our
// SymDiff methods, and our tape (tape.go, which replaced gorgonia's
// TapeMachine) runs the forward and backward nodes in one fixed order.
//
// An op instance belongs to exactly one graph, and a graph to one session,
// which one goroutine uses at a time. That lets an op keep state between its
// forward and backward halves (BatchNorm's batch statistics, max-pool's
// arg-max) and reuse its output tensor across steps instead of allocating one
// per step. Ops do not implement UsePreallocDoer, so they never write into a
// register that holds another node's value. Stock ops may write into a dead
// value's buffer or reshape it in place (reshapeOp.UnsafeDo), which is why
// outBuf restores the shape on every call and no op reads its own output.
//
// Ops never panic on data: NaN and ±Inf flow through (the tape runs the ops
// on the training call's goroutine, where nothing recovers a panic: one
// would kill the process and every training in it).

import (
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"slices"
	"unsafe"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flsweep/flsweep/internal/mem"
)

// float is the element type of a graph (mem.Float): float32 in
// production, float64 in the finite-difference tests.
type float = mem.Float

func dtypeOf[T float]() tensor.Dtype {
	var z T
	if _, ok := any(z).(float32); ok {
		return tensor.Float32
	}
	return tensor.Float64
}

// tensorType is the gorgonia type of a d-dimensional tensor of the graph's dtype.
func tensorType(d int) hm.Type { return G.TensorType{Dims: d, Of: hm.TypeVariable('a')} }

// opBase holds the methods that are the same for all our ops.
type opBase struct{}

func (opBase) ReturnsPtr() bool     { return true }
func (opBase) CallsExtern() bool    { return false }
func (opBase) OverwritesInput() int { return -1 }

// gradOpBase marks backward ops: they are not differentiated again.
type gradOpBase struct{ opBase }

func (gradOpBase) DiffWRT(n int) []bool { return make([]bool, n) }
func (gradOpBase) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("second derivatives are not implemented")
}

// hashOf implements Op.Hashcode from the op's String, which names the layer;
// gorgonia merges nodes with equal op hashes and equal children.
// sameShape is InferShape for ops whose output has the shape of their first
// input, which must have dims dimensions (any number if dims is 0).
func sameShape(op fmt.Stringer, d G.DimSizer, dims int) (tensor.Shape, error) {
	s, ok := d.(tensor.Shape)
	if !ok || dims > 0 && len(s) != dims {
		return nil, fmt.Errorf("%v: input shape %v, want %d dimensions", op, d, dims)
	}
	return s.Clone(), nil
}

func hashOf(s fmt.Stringer) uint32 {
	h := fnv.New32a()
	io.WriteString(h, s.String())
	return h.Sum32()
}

func writeHash(h hash.Hash, s fmt.Stringer) { io.WriteString(h, s.String()) }

// dataOf returns the backing slice of a dense tensor value of element type T.
// It uses the typed accessors, which reinterpret the tensor's memory;
// Dense.Data() would build the slice through reflect and allocate twice per
// call.
func dataOf[T float](v G.Value) ([]T, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("want *tensor.Dense, got %T", v)
	}
	if d.Dtype() != dtypeOf[T]() {
		return nil, fmt.Errorf("want %v data, got %v", dtypeOf[T](), d.Dtype())
	}
	if dtypeOf[T]() == tensor.Float32 {
		s := d.Float32s()
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), nil
	}
	s := d.Float64s()
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), nil
}

// dataN is dataOf plus a length check; op and what name the input in errors.
func dataN[T float](v G.Value, n int, op fmt.Stringer, what string) ([]T, error) {
	s, err := dataOf[T](v)
	if err != nil {
		return nil, fmt.Errorf("%v %s: %w", op, what, err)
	}
	if len(s) != n {
		return nil, fmt.Errorf("%v %s: %d values, want %d", op, what, len(s), n)
	}
	return s, nil
}

// scalarOf reads a scalar value (the gradient seed of the cost).
func scalarOf(v G.Value) (float64, error) {
	switch s := v.(type) {
	case *G.F32:
		return float64(*s), nil
	case *G.F64:
		return float64(*s), nil
	case *tensor.Dense:
		if s.Shape().TotalSize() == 1 {
			switch d := s.Data().(type) {
			case []float32:
				return float64(d[0]), nil
			case []float64:
				return d[0], nil
			case float32:
				return float64(d), nil
			case float64:
				return d, nil
			}
		}
	}
	return 0, fmt.Errorf("want a scalar, got %T", v)
}

// outBuf is an op's output tensor, allocated once and reused every step.
// A gradient op's buffer may be bound to a slice of the session's flat
// gradient vector, so that the gradient lands there without a copy.
type outBuf[T float] struct {
	t     *tensor.Dense
	data  []T
	bound bool
}

// bind makes data the buffer's backing slice.
func (o *outBuf[T]) bind(data []T) {
	o.t, o.data, o.bound = nil, data, true
}

// share makes data, a view of an arena shared with other ops' buffers
// (bufplan.go), the buffer's backing slice.
func (o *outBuf[T]) share(data []T) {
	o.t, o.data = nil, data
}

// get returns the buffer with the given shape; a stock op downstream may
// have reshaped it in place since the last call. A bound buffer of the
// wrong size is unbound and reallocated (the session then copies the
// gradient instead).
func (o *outBuf[T]) get(shape ...int) (*tensor.Dense, []T) {
	size := 1
	for _, d := range shape {
		size *= d
	}
	if len(o.data) != size {
		o.data, o.t, o.bound = make([]T, size), nil, false
	}
	// The tensor keeps copies of shape, so that callers' shapes stay on
	// the stack: no allocation on the usual path.
	if o.t == nil {
		o.t = tensor.New(tensor.WithShape(slices.Clone(shape)...), tensor.WithBacking(o.data))
		return o.t, o.data
	}
	if !o.t.Shape().Eq(tensor.Shape(shape)) {
		if err := o.t.Reshape(slices.Clone(shape)...); err != nil {
			// Cannot happen: the size matches. Start afresh rather than panic.
			o.t = tensor.New(tensor.WithShape(slices.Clone(shape)...), tensor.WithBacking(o.data))
		}
	}
	return o.t, o.data
}

// convertCopy copies src into dst, converting the element type.
func convertCopy[D, S float](dst []D, src []S) {
	if d, ok := any(dst).([]float32); ok {
		if s, ok := any(src).([]float32); ok {
			copy(d, s)
			return
		}
	}
	if d, ok := any(dst).([]float64); ok {
		if s, ok := any(src).([]float64); ok {
			copy(d, s)
			return
		}
	}
	for i := range dst {
		dst[i] = D(src[i])
	}
}
