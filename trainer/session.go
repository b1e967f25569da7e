package trainer

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"unsafe"

	"github.com/flsweep/flsweep/internal/mem"
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

// session is a compiled gorgonia graph with its tape (tape.go) and the backing
// slices of its tensors, which are filled in place. The weights live in one
// flat slice w in the net's layout: every parameter tensor and BatchNorm
// running statistic is a view into it, so loading and storing a model is
// one copy. Gradient ops write into views of the flat gradient g where they
// can (outBuf.bind), so the optimiser reads one flat vector. A session is
// used by one goroutine at a time.
type session[T float] struct {
	key   sessionKey
	net   *Net
	tape  *tape
	x, y  []T // input [batch, dim] and float-coded labels [batch]
	w, g  []T // flat weights (and buffers), flat gradient (zero at buffers)
	spans []span
	fuse  fusedSGD[T]   // plain SGD inside the linear layers' weight-gradient gemms
	fused []span        // the linear weights fusedSGD updates
	rest  []span        // spans minus fused
	grads []gradSlot[T] // training graphs: where each trainable tensor's gradient comes from
	masks []*mask[T]    // dropout masks (training graphs only)
	bns   []*bnOp[T]
	evals []*linearOp[T] // evaluation graphs: the linear layers (transposeW)
	xent  *xentOp[T]
	embed *embedOp[T] // nil for logreg
	con   contrast[T] // MOON's constants and batch rows (training graphs)
	fnorm featNorm[T] // the feature-norm penalty's constants (training graphs)
	ws    mem.Workspace[T]
	opt   optState[T]
	// shared are the output buffers planned to share memory (bufplan.go);
	// checked is set once a run has confirmed the plan's assumption.
	shared  []sharedBuf[T]
	checked bool
}

// gradSlot is one trainable tensor's gradient node and its view of g.
type gradSlot[T float] struct {
	node  *G.Node
	val   int // the node's position among the tape's values
	dst   []T
	label fmt.Stringer // the parameter's name, for errors (boxed once)
}

type mask[T float] struct {
	data []T
	p    float64
}

// buildMu serialises graph construction. Building touches gorgonia's
// package-level constant nodes (the gradient seed onef32), whose cached
// hashes are written without synchronisation. Running compiled
// graphs needs no lock.
var buildMu sync.Mutex

func newTensor[T float](data []T, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

// gradBinder is implemented by the gradient ops whose output can be bound
// to a slice of the flat gradient.
type gradBinder[T float] interface{ bindGrad([]T) }

func (op *linearDwOp[T]) bindGrad(d []T)    { op.dw.bind(d) }
func (op *biasGradOp[T]) bindGrad(d []T)    { op.db.bind(d) }
func (op *convDwOp[T]) bindGrad(d []T)      { op.dw.bind(d) }
func (op *preluDaOp[T]) bindGrad(d []T)     { op.da.bind(d) }
func (op *bnParamGradOp[T]) bindGrad(d []T) { op.d.bind(d) }

// newSession builds and compiles the graph of net n for batch size batch.
// A training graph computes the mean loss and its gradient with respect to
// every trainable parameter; an evaluation graph computes the loss with
// BatchNorm in eval mode and no dropout.
func newSession[T float](n *Net, k kernels, batch int, train bool) (s *session[T], err error) {
	return buildSession[T](n, k, batch, train, train)
}

// buildSession is newSession with the gradient optional: a training-mode
// graph without one (grad false) computes the training loss only, which
// the finite-difference tests evaluate many times.
func buildSession[T float](n *Net, k kernels, batch int, train, grad bool) (s *session[T], err error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	defer func() {
		// gorgonia panics on some malformed graphs.
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("build %s graph (batch %d): %v", n.key, batch, r)
		}
	}()
	g := G.NewGraph()
	dt := dtypeOf[T]()
	s = &session[T]{
		key:   sessionKey{net: n.key, batch: batch, train: train},
		net:   n,
		w:     make([]T, n.size),
		spans: trainableSpans(n),
	}
	s.ws.BLAS = !k.packed
	if grad {
		s.g = make([]T, n.size)
	}

	// The input is [B, C, H, W] when a convolution reads it, else [B, Dim].
	xshape := []int{batch, n.Dim()}
	for _, l := range n.layers {
		if l.src == -1 && l.kind == layerConv {
			xshape = []int{batch, n.in[0], n.in[1], n.in[2]}
		}
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
		nodes[i] = G.NewTensor(g, dt, len(p.Shape), G.WithShape(p.Shape...), G.WithName(p.Name),
			G.WithValue(newTensor(s.w[p.Offset:p.Offset+p.Len], p.Shape...)))
		wrt = append(wrt, nodes[i])
	}
	view := func(i int) []T {
		p := n.params[i]
		return s.w[p.Offset : p.Offset+p.Len]
	}

	outs := make([]*G.Node, len(n.layers))
	var pin []*G.Node // values read after the run (bufplan.go)
	input := func(i int) *G.Node {
		if i < 0 {
			return x
		}
		return outs[i]
	}
	dims := func(l layer) int {
		if l.src < 0 {
			return len(xshape)
		}
		if n.layers[l.src].spatial {
			return 4
		}
		return 2
	}
	pooled := reluIntoPool(n.layers)
	fused := reluInto(n.layers, pooled)
	for li, l := range n.layers {
		h := input(l.src)
		var out *G.Node
		switch l.kind {
		case layerLinear:
			op := &linearOp[T]{name: l.name, in: l.in.size(), out: l.out[0], xdims: dims(l), xshape: l.in, needDx: l.src >= 0,
				ws: &s.ws, fuse: &s.fuse, w: view(l.w)}
			if !train {
				op.eval = true
				s.evals = append(s.evals, op)
			}
			out, err = G.ApplyOp(op, h, nodes[l.w], nodes[l.b])
			p := n.params[l.w]
			s.fused = append(s.fused, span{p.Offset, p.Offset + p.Len})
		case layerConv:
			geom := newConvGeom(l, k)
			geom.needDx = l.src >= 0
			args := []*G.Node{h, nodes[l.w]}
			if l.b >= 0 {
				args = append(args, nodes[l.b])
			}
			out, err = G.ApplyOp(&convOp[T]{g: geom, ws: &s.ws, train: grad}, args...)
		case layerAct:
			if pooled[li] || fused[li] {
				out = h // the pool after it, or the BatchNorm or addition before it, applies the ReLU
				break
			}
			out, err = G.ApplyOp(&actOp[T]{name: l.name, act: l.act, dims: dims(l)}, h)
		case layerPReLU:
			out, err = G.ApplyOp(&preluOp[T]{name: l.name, dims: dims(l)}, h, nodes[l.w])
		case layerBN:
			op := newBNOp[T](l, train)
			op.runMean, op.runVar = view(l.rm), view(l.rv)
			op.relu = li+1 < len(n.layers) && fused[li+1]
			s.bns = append(s.bns, op)
			out, err = G.ApplyOp(op, h, nodes[l.w], nodes[l.b])
		case layerMaxPool:
			relu := l.src >= 0 && pooled[l.src]
			out, err = G.ApplyOp(&maxPoolOp[T]{name: l.name, c: l.in[0], h: l.in[1], w: l.in[2], relu: relu}, h)
		case layerAvgPool:
			out, err = G.ApplyOp(&avgPoolOp[T]{name: l.name, c: l.in[0], h: l.in[1], w: l.in[2]}, h)
		case layerDropout:
			if !train {
				out = h
				break
			}
			m := &mask[T]{data: make([]T, batch*l.in.size()), p: l.p}
			s.masks = append(s.masks, m)
			out, err = G.ApplyOp(&maskOp[T]{name: l.name, dims: dims(l), m: m}, h)
		case layerAdd:
			relu := li+1 < len(n.layers) && fused[li+1]
			out, err = G.ApplyOp(&addOp[T]{name: l.name, relu: relu}, h, input(l.src2))
		case layerEmbed:
			s.embed = &embedOp[T]{l: l.in.size(), dims: dims(l), con: &s.con, fn: &s.fnorm}
			s.fnorm.y = s.y
			s.fnorm.count = make([]int, n.classes)
			s.fnorm.mean = make([]float64, n.classes)
			s.fnorm.target = make([]float64, n.classes)
			s.fnorm.norm = make([]float64, batch)
			out, err = G.ApplyOp(s.embed, h)
			pin = append(pin, out) // Predict reads the embedding after the run
		}
		if err != nil {
			return nil, fmt.Errorf("build %s graph, layer %s: %w", n.key, l.name, err)
		}
		outs[li] = out
	}
	s.xent = newXentOp[T](n.classes)
	cost, err := G.ApplyOp(s.xent, outs[len(outs)-1], labels)
	if err != nil {
		return nil, fmt.Errorf("build %s graph, loss: %w", n.key, err)
	}
	pin = append(pin, cost, outs[len(outs)-1]) // xentOp keeps the logits for Predict
	if grad {
		grads, err := G.Grad(cost, wrt...)
		if err != nil {
			return nil, fmt.Errorf("build %s graph, gradient: %w", n.key, err)
		}
		k := 0
		for i, p := range n.params {
			if nodes[i] == nil {
				continue
			}
			dst := s.g[p.Offset : p.Offset+p.Len]
			if b, ok := grads[k].Op().(gradBinder[T]); ok {
				b.bindGrad(dst)
			}
			s.grads = append(s.grads, gradSlot[T]{node: grads[k], dst: dst, label: gradName(p.Name)})
			k++
		}
	}
	s.rest = subtractSpans(s.spans, s.fused)
	if s.tape, err = newTape(g); err != nil {
		return nil, fmt.Errorf("build %s graph (batch %d): %w", n.key, batch, err)
	}
	for i := range s.grads {
		s.grads[i].val = s.tape.index[s.grads[i].node]
		pin = append(pin, s.grads[i].node)
	}
	s.shareBuffers(s.tape.positionsOf(pin...))
	return s, nil
}

// reluIntoPool marks the ReLU layers whose only reader is the max-pool
// layer right after them: the session builds no op for them and the pool
// applies the ReLU to its output (maxPoolOp.relu), with the same values
// and gradients on a quarter of the entries (the CIFAR CNN's first ReLU
// and pool took 10% of a step as two passes each way).
func reluIntoPool(layers []layer) []bool {
	readers := make([]int, len(layers))
	for _, l := range layers {
		if l.src >= 0 {
			readers[l.src]++
		}
		if l.kind == layerAdd && l.src2 >= 0 {
			readers[l.src2]++
		}
	}
	pooled := make([]bool, len(layers))
	for i, l := range layers[:max(0, len(layers)-1)] {
		next := layers[i+1]
		pooled[i] = fuseReLUPool && l.kind == layerAct && l.act == actReLU && readers[i] == 1 &&
			next.kind == layerMaxPool && next.src == i
	}
	return pooled
}

// fuseReLUPool lets reluIntoPool fuse; the tests turn it off to compare.
var fuseReLUPool = true

// reluInto marks the ReLU layers (not already pooled) right after a
// BatchNorm or a residual addition whose only reader they are: the session
// builds no op for them, and the BatchNorm or addition applies the ReLU in
// its own pass over the output (bnOp.relu, addOp.relu), with the same
// values and, through the ReLU's gradient op on the fused output, the same
// gradients. ResNet-18's 17 ReLUs were a pass each over its activations.
func reluInto(layers []layer, pooled []bool) []bool {
	readers := make([]int, len(layers))
	for _, l := range layers {
		if l.src >= 0 {
			readers[l.src]++
		}
		if l.kind == layerAdd && l.src2 >= 0 {
			readers[l.src2]++
		}
	}
	fused := make([]bool, len(layers))
	for i, l := range layers {
		if i == 0 || !fuseReLUInto || pooled[i] || l.kind != layerAct || l.act != actReLU || l.src != i-1 || readers[i-1] != 1 {
			continue
		}
		k := layers[i-1].kind
		fused[i] = k == layerBN || k == layerAdd
	}
	return fused
}

// fuseReLUInto lets reluInto fuse; the tests turn it off to compare.
var fuseReLUInto = true

// subtractSpans returns the parts of spans (sorted, disjoint) outside cut
// (sorted, disjoint, each inside one of spans).
func subtractSpans(spans, cut []span) []span {
	var out []span
	k := 0
	for _, sp := range spans {
		lo := sp.lo
		for ; k < len(cut) && cut[k].lo < sp.hi; k++ {
			if cut[k].lo > lo {
				out = append(out, span{lo, cut[k].lo})
			}
			lo = cut[k].hi
		}
		if lo < sp.hi {
			out = append(out, span{lo, sp.hi})
		}
	}
	return out
}

// loadWeights copies the flat vector w into the session, and transposes an
// evaluation session's linear weights (linearOp.transposeW).
func loadWeights[T, S float](s *session[T], w []S) {
	convertCopy(s.w, w)
	for _, op := range s.evals {
		op.transposeW()
	}
}

// storeWeights copies the session's weights into the flat vector w.
func storeWeights[T, S float](s *session[T], w []S) { convertCopy(w, s.w) }

// moveState copies the weights and the optimiser state from src to dst,
// two sessions of the same net (an epoch's full and last partial batch).
func moveState[T float](dst, src *session[T]) {
	copy(dst.w, src.w)
	for i, op := range dst.evals {
		op.wt = src.evals[i].wt
	}
	dst.opt.copyFrom(&src.opt)
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

// setContrast copies MOON's target rows of the batch (positions pos in
// ex.Idx) into the embedding op's buffers, or turns the term off.
func (s *session[T]) setContrast(c *Contrastive, l int, pos []int) {
	if c == nil || s.embed == nil {
		s.con.on = false
		return
	}
	s.con.on, s.con.nu, s.con.tau = true, c.Mu, c.Tau
	rows := func(dst *[]T, src []float32) {
		if src == nil {
			*dst = nil
			return
		}
		d := mem.Grow(dst, len(pos)*l)
		for i, k := range pos {
			convertCopy(d[i*l:(i+1)*l], src[k*l:(k+1)*l])
		}
	}
	rows(&s.con.zg, c.Global)
	rows(&s.con.zp, c.Prev)
}

// setFeatureNorm turns the feature-norm penalty on with p's λ and targets,
// or off when p is nil or λ = 0 (so that λ = 0 trains exactly as nil).
func (s *session[T]) setFeatureNorm(p *FeatureNormPenalty) {
	if p == nil || p.Lambda == 0 || s.embed == nil {
		s.fnorm.on = false
		return
	}
	s.fnorm.on, s.fnorm.lambda = true, p.Lambda
	copy(s.fnorm.target, p.Targets)
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

// keepAll sets every dropout mask to 1: the network without dropout.
func (s *session[T]) keepAll() {
	for _, m := range s.masks {
		for i := range m.data {
			m.data[i] = 1
		}
	}
}

// run executes the tape once: forward, and backward for training graphs,
// after which s.g holds the gradient of the mean loss.
func (s *session[T]) run() error {
	if err := s.tape.run(); err != nil {
		return fmt.Errorf("run %s graph: %w", s.net.key, err)
	}
	if !s.checked {
		if err := s.checkShared(); err != nil {
			return fmt.Errorf("run %s graph: %w", s.net.key, err)
		}
		s.checked = true
	}
	for _, gs := range s.grads {
		d, err := dataN[T](s.tape.vals[gs.val], len(gs.dst), gs.label, "gradient")
		if err != nil {
			return err
		}
		// Bound gradient ops wrote into g already; others are copied.
		if unsafe.SliceData(d) != unsafe.SliceData(gs.dst) {
			copy(gs.dst, d)
		}
	}
	return nil
}

// gradName names a parameter in gradient errors.
type gradName string

func (g gradName) String() string { return string(g) }

// badBuffer returns the name of the first BatchNorm running statistic that
// is NaN or ±Inf, or "".
func (s *session[T]) badBuffer() string {
	for i, b := range s.bns {
		for _, v := range b.runMean {
			if v-v != 0 {
				return s.net.params[s.bnParam(i, false)].Name
			}
		}
		for _, v := range b.runVar {
			if v-v != 0 {
				return s.net.params[s.bnParam(i, true)].Name
			}
		}
	}
	return ""
}

// bnParam returns the param index of the i-th BatchNorm's running mean or
// variance.
func (s *session[T]) bnParam(i int, variance bool) int {
	k := 0
	for _, l := range s.net.layers {
		if l.kind != layerBN {
			continue
		}
		if k == i {
			if variance {
				return l.rv
			}
			return l.rm
		}
		k++
	}
	return -1
}
