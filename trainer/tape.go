package trainer

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// tape executes a compiled gorgonia graph: every op node's Do, in a fixed
// topological order, with argument slices built once. gorgonia builds the
// graph and its symbolic gradient; tape replaces only the TapeMachine,
// which allocates on every instruction of every step (the argument slice,
// and the boxed arguments of its trace logging even with tracing off: about
// 98 allocations per MLP training step). Every op of the trainer's graphs
// reuses its output buffer, so a step through tape allocates nothing.
// gorgonia's own ops (the gradient sums it inserts where a node feeds two
// consumers, as in ResNet's skip connections) run through their
// UsePreallocDo into the previous step's result when they have one; that
// still allocates inside gorgonia's tensor package, about 3 times per sum
// (24 per ResNet-18 step, measured), which only replacing those ops would
// remove.
type tape struct {
	steps []tapeStep
	vals  []G.Value       // by node, in execution order
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
	t := &tape{vals: make([]G.Value, len(sorted)), index: make(map[*G.Node]int, len(sorted))}
	for i := range sorted {
		n := sorted[len(sorted)-1-i]
		t.index[n] = i
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
