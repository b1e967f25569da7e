package trainer

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tape executes a compiled gorgonia graph: every op node's Do, in a fixed
// topological order, with argument slices built once. gorgonia builds the
// graph and its symbolic gradient; tape replaces only the TapeMachine,
// which allocates on every instruction of every step (the argument slice,
// and the boxed arguments of its trace logging even with tracing off: about
// 98 allocations per MLP training step). Every op of the trainer's graphs
// reuses its output buffer, so a step through tape allocates nothing.
// The gradient sums gorgonia inserts where a node feeds two consumers (as
// in ResNet's skip connections) are its elementwise "+" of two tensors of
// one shape; newTape replaces them by the trainer's addOp, which adds into
// its own buffer. (gorgonia's UsePreallocDo computes the sum into a new
// tensor and copies it: about 3 allocations and a copy per sum, 24 per
// ResNet-18 step.) The sum is the same float addition, so results do not
// change. Other gorgonia ops run through their UsePreallocDo into the
// previous step's result when they have one.
type tape struct {
	steps []tapeStep
	vals  []G.Value       // by node, in execution order
	nodes []*G.Node       // by position, as vals
	index map[*G.Node]int // node → position in vals
}

type tapeStep struct {
	op   G.Op
	out  int       // position of the node's value
	args []int     // positions of the arguments' values
	in   []G.Value // the argument slice, refilled each run
}

// newTape orders g's nodes (gorgonia's stable topological sort, reversed:
// arguments first). Nodes without arguments are values: inputs, weights
// and constants, read once here (their tensors are filled in place).
func newTape(g *G.ExprGraph) (*tape, error) {
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, err
	}
	t := &tape{vals: make([]G.Value, len(sorted)), nodes: make([]*G.Node, len(sorted)), index: make(map[*G.Node]int, len(sorted))}
	for i := range sorted {
		n := sorted[len(sorted)-1-i]
		t.index[n] = i
		t.nodes[i] = n
		args := g.From(n.ID())
		if args.Len() == 0 {
			if t.vals[i] = n.Value(); t.vals[i] == nil {
				return nil, fmt.Errorf("node %v has neither arguments nor a value", n)
			}
			continue
		}
		st := tapeStep{op: n.Op(), out: i}
		for args.Next() {
			a, ok := args.Node().(*G.Node)
			if !ok {
				return nil, fmt.Errorf("node %v: argument %v is not a gorgonia node", n, args.Node())
			}
			p, seen := t.index[a]
			if !seen {
				return nil, fmt.Errorf("node %v: argument %v comes later in the order", n, a)
			}
			st.args = append(st.args, p)
		}
		if st.op == nil {
			return nil, fmt.Errorf("node %v has arguments but no op", n)
		}
		if op := gradSum(n, sorted, st.args, len(sorted)); op != nil {
			st.op = op
		}
		st.in = make([]G.Value, len(st.args))
		t.steps = append(t.steps, st)
	}
	return t, nil
}

// run executes every op once.
func (t *tape) run() error {
	for i := range t.steps {
		st := &t.steps[i]
		for j, a := range st.args {
			st.in[j] = t.vals[a]
		}
		var v G.Value
		var err error
		if pd, ok := st.op.(G.UsePreallocDoer); ok && t.vals[st.out] != nil {
			v, err = pd.UsePreallocDo(t.vals[st.out], st.in...)
		} else {
			v, err = st.op.Do(st.in...)
		}
		if err != nil {
			return fmt.Errorf("%v: %w", st.op, err)
		}
		t.vals[st.out] = v
	}
	return nil
}

// gradSum returns the trainer's addOp for n when n is gorgonia's
// elementwise sum of two tensors of n's shape and dtype (the gradient sums
// of nodes with two consumers), and nil otherwise. args are the positions
// of n's arguments in the reversed order sorted.
func gradSum(n *G.Node, sorted G.Nodes, args []int, count int) G.Op {
	if len(args) != 2 || n.Op().String() != "+ false" || n.Op().Arity() != 2 {
		return nil
	}
	if _, ok := n.Op().(G.BinaryOp); !ok {
		return nil
	}
	for _, p := range args {
		a := sorted[count-1-p]
		if !a.Shape().Eq(n.Shape()) || a.Dtype() != n.Dtype() || a.Shape().IsScalar() {
			return nil
		}
	}
	switch n.Dtype() {
	case tensor.Float32:
		return &addOp[float32]{name: "grad " + n.Name()}
	case tensor.Float64:
		return &addOp[float64]{name: "grad " + n.Name()}
	}
	return nil
}
