package trainer

import (
	"fmt"
	"slices"
	"unsafe"

	G "gorgonia.org/gorgonia"
)

// Output buffers shared by ops whose values are never live at once.
//
// Every op of the trainer writes its value into a buffer of its own
// (outBuf), so a graph holds one buffer per node: ResNet-18 at batch 50
// held 800 MB of them per client, half of them gradients that are dead a
// few steps after they are written. A session instead plans, when it is
// built, which buffers can share memory: a value is live from the step
// that writes it to the last step that reads it, and buffers whose values
// are live at disjoint times take views of one arena (a greedy interval
// allocation in execution order, each buffer into the smallest free arena
// that fits it). The arithmetic does not change, only where the values
// live: a step computes exactly what it computed into its own buffer.
//
// The plan is conservative where a value may outlive its readers in the
// graph:
//   - an op without an outBuf (gorgonia's own ops, the loss) may return a
//     view of an argument, so its arguments live as long as its value;
//   - values read after the tape has run live to its end: the gradients
//     the session copies, the loss's inputs (xentOp keeps the logits), the
//     embedding (Predict reads it);
//   - buffers bound to the flat gradient (outBuf.bind) are never shared.
//
// checkShared verifies, after each run, that every sharing op returned its
// own buffer (an op returning a view of its input would let the input's
// arena be reused while the view is still read).

// bufferedOp is an op whose value lives in its outBuf.
type bufferedOp[T float] interface{ outBuffer() *outBuf[T] }

// sharedBuf is one planned buffer: the step that writes it, the last step
// that reads it (len(tape.steps) for values read after the run) and the
// arena it is a view of.
type sharedBuf[T float] struct {
	step, until, arena int
	buf                *outBuf[T]
}

// planBuffers turns the plan on; the tests turn it off to compare.
var planBuffers = true

// shareBuffers plans and binds the shared buffers of s's tape; pinned are
// the positions (in tape.vals) of values read after the run. It returns
// the floats the plan saves.
func (s *session[T]) shareBuffers(pinned []int) int {
	if !planBuffers {
		return 0
	}
	t := s.tape
	end := len(t.steps)
	last := make([]int, len(t.vals)) // by position: the last step reading the value
	for i := range last {
		last[i] = -1
	}
	for i, st := range t.steps {
		for _, a := range st.args {
			last[a] = max(last[a], i)
		}
	}
	for _, p := range pinned {
		last[p] = end
	}
	// An op without a buffer of its own may return a view of an argument:
	// the arguments live as long as the value (backwards, so that chains
	// of such ops extend all the way).
	for i := end - 1; i >= 0; i-- {
		st := t.steps[i]
		if _, ok := st.op.(bufferedOp[T]); ok {
			continue
		}
		for _, a := range st.args {
			last[a] = max(last[a], last[st.out])
		}
	}

	type arena struct {
		id   int
		size int // floats: the largest buffer it holds
		free int // the step after which it is free
		bufs []*outBuf[T]
		lens []int
	}
	var arenas []*arena
	total := 0
	for i, st := range t.steps {
		op, ok := st.op.(bufferedOp[T])
		if !ok {
			continue
		}
		buf := op.outBuffer()
		size := t.nodes[st.out].Shape().TotalSize()
		if buf.bound || size <= 0 {
			continue
		}
		total += size
		until := max(last[st.out], i)
		// The smallest free arena that holds size, else the largest free one
		// (grown), else a new one.
		var best, big *arena
		for _, a := range arenas {
			if a.free >= i {
				continue
			}
			if a.size >= size && (best == nil || a.size < best.size) {
				best = a
			}
			if big == nil || a.size > big.size {
				big = a
			}
		}
		if best == nil {
			best = big
		}
		if best == nil {
			best = &arena{id: len(arenas)}
			arenas = append(arenas, best)
		}
		best.size = max(best.size, size)
		best.free = until
		best.bufs = append(best.bufs, buf)
		best.lens = append(best.lens, size)
		s.shared = append(s.shared, sharedBuf[T]{step: i, until: until, arena: best.id, buf: buf})
	}
	planned := 0
	for _, a := range arenas {
		data := make([]T, a.size)
		planned += a.size
		for k, b := range a.bufs {
			b.share(data[:a.lens[k]])
		}
	}
	return total - planned
}

// checkShared reports an op that returned something other than its own
// (shared) buffer, which the plan does not allow for.
func (s *session[T]) checkShared() error {
	for _, sb := range s.shared {
		st := s.tape.steps[sb.step]
		v := s.tape.vals[st.out]
		d, ok := v.Data().([]T)
		if !ok || len(sb.buf.data) == 0 || len(d) == 0 || unsafe.SliceData(d) != unsafe.SliceData(sb.buf.data) {
			return fmt.Errorf("op %v returned a value outside its output buffer: the session's buffer plan (bufplan.go) does not allow for that", st.op)
		}
	}
	return nil
}

// positionsOf returns the tape positions of nodes.
func (t *tape) positionsOf(nodes ...*G.Node) []int {
	var ps []int
	for _, n := range nodes {
		if p, ok := t.index[n]; ok && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// outBuffer is the buffer each op's value lives in (bufplan.go).

func (op *actOp[T]) outBuffer() *outBuf[T]         { return &op.y }
func (op *actDxOp[T]) outBuffer() *outBuf[T]       { return &op.dx }
func (op *bnOp[T]) outBuffer() *outBuf[T]          { return &op.y }
func (op *bnDxOp[T]) outBuffer() *outBuf[T]        { return &op.dx }
func (op *bnParamGradOp[T]) outBuffer() *outBuf[T] { return &op.d }
func (op *convOp[T]) outBuffer() *outBuf[T]        { return &op.y }
func (op *convDxOp[T]) outBuffer() *outBuf[T]      { return &op.dx }
func (op *convDwOp[T]) outBuffer() *outBuf[T]      { return &op.dw }
func (op *embedOp[T]) outBuffer() *outBuf[T]       { return &op.y }
func (op *embedDxOp[T]) outBuffer() *outBuf[T]     { return &op.dx }
func (op *linearOp[T]) outBuffer() *outBuf[T]      { return &op.y }
func (op *linearDxOp[T]) outBuffer() *outBuf[T]    { return &op.dx }
func (op *linearDwOp[T]) outBuffer() *outBuf[T]    { return &op.dw }
func (op *biasGradOp[T]) outBuffer() *outBuf[T]    { return &op.db }
func (op *maxPoolOp[T]) outBuffer() *outBuf[T]     { return &op.y }
func (op *maxPoolDiffOp[T]) outBuffer() *outBuf[T] { return &op.dx }
func (op *maskOp[T]) outBuffer() *outBuf[T]        { return &op.y }
func (op *maskDxOp[T]) outBuffer() *outBuf[T]      { return &op.dx }
func (op *addOp[T]) outBuffer() *outBuf[T]         { return &op.y }
func (op *avgPoolOp[T]) outBuffer() *outBuf[T]     { return &op.y }
func (op *avgPoolDxOp[T]) outBuffer() *outBuf[T]   { return &op.dx }
func (op *preluOp[T]) outBuffer() *outBuf[T]       { return &op.y }
func (op *preluDxOp[T]) outBuffer() *outBuf[T]     { return &op.dx }
func (op *preluDaOp[T]) outBuffer() *outBuf[T]     { return &op.da }
func (op *xentGradOp[T]) outBuffer() *outBuf[T]    { return &op.dz }
