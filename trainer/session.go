package trainer

import (
	"fmt"
	"math/rand/v2"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// sessionKey identifies a compiled graph: a graph is built for one net, one
// batch size and one mode, because gorgonia's shapes are static and
// BatchNorm and dropout behave differently in training.
type sessionKey struct {
	net   string
	batch int
	train bool
}

// session is a compiled gorgonia graph with its TapeMachine and the backing
// slices of its input, label, mask and parameter tensors, which are filled in
// place. A session is used by one goroutine at a time.
type session[T float] struct {
	key    sessionKey
	net    *Net
	vm     G.VM
	x, y   []T       // input [batch, dim] and float-coded labels [batch]
	masks  []mask[T] // dropout masks (training graphs only)
	params [][]T     // per Net param: the trainable tensor's data; nil for buffers
	grads  []*G.Node // per Net param: its gradient node (training graphs only)
	vel    [][]T     // momentum buffers, allocated on first use
	bns    []bnSlot[T]
	xent   *xentOp[T]
	tmp    scratch[T] // shared by the graph's convolutions
}

type mask[T float] struct {
	data []T
	p    float64
}

type bnSlot[T float] struct {
	op     *bnOp[T]
	rm, rv int // Net param indices of the running statistics
}

// buildMu serialises graph construction. Building touches gorgonia's
// package-level constant nodes (the gradient seed onef32), whose cached
// hashes are written without synchronisation. Running compiled
// graphs needs no lock.
var buildMu sync.Mutex

func newTensor[T float](data []T, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

// newSession builds and compiles the graph of net n for batch size batch.
// A training graph computes the mean loss and its gradient with respect to
// every trainable parameter; an evaluation graph computes the loss with
// BatchNorm in eval mode and no dropout.
func newSession[T float](n *Net, batch int, train bool) (s *session[T], err error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	defer func() {
		// NewTapeMachine panics when compilation fails.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("build %s graph (batch %d): %v", n.key, batch, r)
		}
	}()
	g := G.NewGraph()
	dt := dtypeOf[T]()
	s = &session[T]{
		key:    sessionKey{net: n.key, batch: batch, train: train},
		net:    n,
		params: make([][]T, len(n.params)),
		grads:  make([]*G.Node, len(n.params)),
	}

	xshape := []int{batch, n.Dim()}
	if n.layers[0].kind == layerConv {
		xshape = []int{batch, n.in[0], n.in[1], n.in[2]}
	}
	s.x = make([]T, batch*n.Dim())
	x := G.NewTensor(g, dt, len(xshape), G.WithShape(xshape...), G.WithName("x"), G.WithValue(newTensor(s.x, xshape...)))
	s.y = make([]T, batch)
	labels := G.NewVector(g, dt, G.WithShape(batch), G.WithName("y"), G.WithValue(newTensor(s.y, batch)))

	nodes := make([]*G.Node, len(n.params))
	var wrt G.Nodes
	for i, p := range n.params {
		if !p.Trainable {
			continue
		}
		s.params[i] = make([]T, p.Len)
		nodes[i] = G.NewTensor(g, dt, len(p.Shape), G.WithShape(p.Shape...), G.WithName(p.Name),
			G.WithValue(newTensor(s.params[i], p.Shape...)))
		wrt = append(wrt, nodes[i])
	}

	h, first := x, true
	for _, l := range n.layers {
		switch l.kind {
		case layerLinear:
			op := &linearOp[T]{name: l.name, in: l.in, out: l.out, needDx: !first}
			h, err = G.ApplyOp(op, h, nodes[l.w], nodes[l.b])
			first = false
		case layerReLU:
			h, err = G.ApplyOp(&reluOp[T]{name: l.name}, h)
		case layerConv:
			geom := newConvGeom(l)
			geom.needDx = !first
			h, err = G.ApplyOp(&convOp[T]{g: geom, tmp: &s.tmp}, h, nodes[l.w], nodes[l.b])
			first = false
		case layerPReLU:
			h, err = G.ApplyOp(&preluOp[T]{name: l.name, shape: tensor.Shape{l.shape[0], l.shape[1], l.shape[2]}}, h, nodes[l.w])
		case layerBN:
			op := newBNOp[T](l, train)
			s.bns = append(s.bns, bnSlot[T]{op: op, rm: l.rm, rv: l.rv})
			h, err = G.ApplyOp(op, h, nodes[l.w], nodes[l.b])
		case layerMaxPool:
			h, err = G.ApplyOp(&maxPoolOp[T]{name: l.name, c: l.shape[0], h: l.shape[1], w: l.shape[2]}, h)
		case layerDropout:
			if !train {
				continue
			}
			// Inverted dropout with a mask drawn from the Train call's
			// stream. gorgonia's Dropout seeds its own generator from the
			// clock (nn.go: time.Now().UnixNano()), so runs never repeat.
			shape := []int{batch, l.shape[0], l.shape[1], l.shape[2]}
			m := mask[T]{data: make([]T, batch*l.shape[0]*l.shape[1]*l.shape[2]), p: l.p}
			s.masks = append(s.masks, m)
			mn := G.NewTensor(g, dt, 4, G.WithShape(shape...), G.WithName("mask."+l.name), G.WithValue(newTensor(m.data, shape...)))
			h, err = G.HadamardProd(h, mn)
		case layerFlatten:
			h, err = G.Reshape(h, tensor.Shape{batch, l.shape[0] * l.shape[1] * l.shape[2]})
		}
		if err != nil {
			return nil, fmt.Errorf("build %s graph, layer %s: %w", n.key, l.name, err)
		}
	}
	s.xent = newXentOp[T](n.classes)
	cost, err := G.ApplyOp(s.xent, h, labels)
	if err != nil {
		return nil, fmt.Errorf("build %s graph, loss: %w", n.key, err)
	}
	if train {
		grads, err := G.Grad(cost, wrt...)
		if err != nil {
			return nil, fmt.Errorf("build %s graph, gradient: %w", n.key, err)
		}
		k := 0
		for i := range n.params {
			if nodes[i] != nil {
				s.grads[i] = grads[k]
				k++
			}
		}
	}
	s.vm = G.NewTapeMachine(g)
	return s, nil
}

// loadWeights copies the flat vector w into the session's parameters and
// BatchNorm running statistics.
func loadWeights[T, S float](s *session[T], w []S) {
	for i, p := range s.net.params {
		if s.params[i] != nil {
			convertCopy(s.params[i], w[p.Offset:p.Offset+p.Len])
		}
	}
	for _, b := range s.bns {
		rm, rv := s.net.params[b.rm], s.net.params[b.rv]
		convertCopy(b.op.runMean, w[rm.Offset:rm.Offset+rm.Len])
		convertCopy(b.op.runVar, w[rv.Offset:rv.Offset+rv.Len])
	}
}

// storeWeights is the inverse of loadWeights.
func storeWeights[T, S float](s *session[T], w []S) {
	for i, p := range s.net.params {
		if s.params[i] != nil {
			convertCopy(w[p.Offset:p.Offset+p.Len], s.params[i])
		}
	}
	for _, b := range s.bns {
		rm, rv := s.net.params[b.rm], s.net.params[b.rv]
		convertCopy(w[rm.Offset:rm.Offset+rm.Len], b.op.runMean)
		convertCopy(w[rv.Offset:rv.Offset+rv.Len], b.op.runVar)
	}
}

// moveState copies parameters, running statistics and momentum buffers from
// src to dst, two sessions of the same net (an epoch's full and last partial
// batch).
func moveState[T float](dst, src *session[T]) {
	for i := range src.params {
		if src.params[i] != nil {
			copy(dst.params[i], src.params[i])
		}
	}
	for i, b := range src.bns {
		copy(dst.bns[i].op.runMean, b.op.runMean)
		copy(dst.bns[i].op.runVar, b.op.runVar)
	}
	dst.resetVelocity(src.vel != nil)
	for i, v := range src.vel {
		copy(dst.vel[i], v)
	}
}

// resetVelocity zeroes the momentum buffers, allocating them if want.
func (s *session[T]) resetVelocity(want bool) {
	if !want {
		s.vel = nil
		return
	}
	if s.vel == nil {
		s.vel = make([][]T, len(s.params))
		for i, p := range s.params {
			if p != nil {
				s.vel[i] = make([]T, len(p))
			}
		}
	}
	for _, v := range s.vel {
		clear(v)
	}
}

// setBatch copies the samples idx of ex into the input and label tensors.
// Rows past len(idx) (padding of an evaluation batch) are zeroed with label 0.
func (s *session[T]) setBatch(ex Examples, idx []int) {
	d := ex.Dim
	for i, k := range idx {
		convertCopy(s.x[i*d:(i+1)*d], ex.X[k*d:(k+1)*d])
		s.y[i] = T(ex.Y[k])
	}
	clear(s.x[len(idx)*d:])
	clear(s.y[len(idx):])
}

// drawMasks fills the dropout masks for one step: each unit is dropped with
// probability p (r.Float64() < p) and kept units are scaled by 1/(1−p).
func (s *session[T]) drawMasks(r *rand.Rand) {
	for _, m := range s.masks {
		keep := T(1 / (1 - m.p))
		for i := range m.data {
			if r.Float64() < m.p {
				m.data[i] = 0
			} else {
				m.data[i] = keep
			}
		}
	}
}

// run executes the tape once: forward, and backward for training graphs.
func (s *session[T]) run() error {
	err := s.vm.RunAll()
	s.vm.Reset()
	if err != nil {
		return fmt.Errorf("run %s graph: %w", s.net.key, err)
	}
	return nil
}

// gradName names a parameter in gradient errors.
type gradName string

func (g gradName) String() string { return string(g) }

// grad returns the gradient of the mean loss with respect to param i after run.
func (s *session[T]) grad(i int) ([]T, error) {
	return dataN[T](s.grads[i].Value(), len(s.params[i]), gradName(s.net.params[i].Name), "gradient")
}

// sgd applies one step of PyTorch's SGD to every trainable parameter:
//
//	d ← g + λ·w;   if β > 0: v ← β·v + d, d ← v;   w ← w − η·d
//
// It returns the index of the first parameter that became NaN or ±Inf, or −1.
func (s *session[T]) sgd(lr, wd, beta float64) (int, error) {
	eta, lambda, mom := T(lr), T(wd), T(beta)
	bad := -1
	for i, w := range s.params {
		if w == nil {
			continue
		}
		g, err := s.grad(i)
		if err != nil {
			return -1, err
		}
		var v []T
		if s.vel != nil {
			v = s.vel[i]
		}
		var check T
		switch {
		case v != nil:
			for j, wj := range w {
				d := g[j] + lambda*wj
				v[j] = mom*v[j] + d
				wj -= eta * v[j]
				w[j] = wj
				check += wj - wj
			}
		case lambda != 0:
			for j, wj := range w {
				wj -= eta * (g[j] + lambda*wj)
				w[j] = wj
				check += wj - wj
			}
		default:
			for j, wj := range w {
				wj -= eta * g[j]
				w[j] = wj
				check += wj - wj
			}
		}
		// w − w is 0 for finite w and NaN for NaN or ±Inf.
		if check != 0 && bad < 0 {
			bad = i
		}
	}
	return bad, nil
}

// badBuffer returns the index of the first BatchNorm running statistic that
// is NaN or ±Inf, or −1.
func (s *session[T]) badBuffer() int {
	for _, b := range s.bns {
		for _, x := range [2]struct {
			v []T
			i int
		}{{b.op.runMean, b.rm}, {b.op.runVar, b.rv}} {
			for _, v := range x.v {
				if v-v != 0 {
					return x.i
				}
			}
		}
	}
	return -1
}
