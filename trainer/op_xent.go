package trainer

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// xentOp is the mean softmax cross-entropy of logits z: [B, C] against
// labels y: [B] (class indices stored as floats), fused and computed with
// log-sum-exp in float64:
//
//	ℓ_i = log Σ_j exp(z_ij − m_i) + m_i − z_{i,y_i},   m_i = max_j z_ij
//	L   = (1/B) Σ_i ℓ_i
//
// Its gradient is dL/dz_ij = (softmax(z_i)_j − [j = y_i])/B, so each row of
// dz, and therefore the output-bias gradient of every sample, sums to zero
// (specs/hicsfl.md §1.2, pitfall 13).
//
// Stock gorgonia cannot be used here. gorgonia.org/tensor v0.9.24's float32
// SoftMax and LogSoftMax kernels (defaultengine_softmax.go,
// softMaxLastDimF32) start every row's maximum at the first element of the
// whole tensor and skip the row's own first element, so a row such as
// [100, 0] yields softmax [NaN, 0] and log-softmax [−Inf, −Inf]: max
// subtraction is broken. Log(SoftMax(z)) would also be −Inf once a
// probability underflows, and the chain needs a one-hot matrix and four
// more nodes (HadamardProd, Sum, Mean, Neg) that allocate every step.
//
// The op also records ℓ_i and whether argmax_j z_ij = y_i (first maximum
// wins; a NaN row is never correct) for Predict, and the logits for
// Trainer.Forward.
//
// scale (1 unless an Objective says otherwise) multiplies the gradient, not
// the reported loss: FedEBA+'s aligned gradient uses (1 − α)·∇CE.
type xentOp[T float] struct {
	opBase
	classes int
	scale   float64
	// propFair, if not nil, further scales the gradient by φ'(ℓ̄) of the
	// forward pass's mean loss ℓ̄ (PropFair's transformed loss).
	propFair *PropFairLoss
	loss     []float64 // ℓ_i of the last forward pass
	lse      []float64 // log Σ_j exp(z_ij)
	correct  []bool
	logits   []T // z of the last forward pass (the output layer's buffer)
	mean     float64
	out      G.Value // *G.F32 or *G.F64, reused
}

var _ G.SDOp = (*xentOp[float32])(nil)

func newXentOp[T float](classes int) *xentOp[T] {
	op := &xentOp[T]{classes: classes, scale: 1}
	if dtypeOf[T]() == tensor.Float32 {
		op.out = G.NewF32(0)
	} else {
		op.out = G.NewF64(0)
	}
	return op
}

func (op *xentOp[T]) Arity() int { return 2 }
func (op *xentOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(1), hm.TypeVariable('a'))
}
func (op *xentOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}
func (op *xentOp[T]) String() string        { return "softmax-xent" }
func (op *xentOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *xentOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *xentOp[T]) DiffWRT(int) []bool    { return []bool{true, false} }

// labelsOf checks the float-coded labels; we fill them ourselves, so a bad
// one is a bug, reported as an error rather than an index panic.
func labelsOf[T float](v G.Value, classes int) ([]T, error) {
	y, err := dataOf[T](v)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	for i, l := range y {
		if !(l >= 0 && l < T(classes)) || l != T(int(l)) {
			return nil, fmt.Errorf("labels[%d] = %v is not a class index in [0, %d)", i, l, classes)
		}
	}
	return y, nil
}

func (op *xentOp[T]) Do(vs ...G.Value) (G.Value, error) {
	y, err := labelsOf[T](vs[1], op.classes)
	if err != nil {
		return nil, fmt.Errorf("%v %w", op, err)
	}
	batch := len(y)
	z, err := dataN[T](vs[0], batch*op.classes, op, "logits")
	if err != nil {
		return nil, err
	}
	if len(op.loss) != batch {
		op.loss = make([]float64, batch)
		op.lse = make([]float64, batch)
		op.correct = make([]bool, batch)
	}
	op.logits = z
	var sum float64
	for i := 0; i < batch; i++ {
		row := z[i*op.classes : (i+1)*op.classes]
		label := int(y[i])
		m, arg := float64(row[0]), 0
		for j, v := range row {
			if float64(v) > m {
				m, arg = float64(v), j
			}
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		lse := m + math.Log(s)
		op.lse[i] = lse
		op.loss[i] = lse - float64(row[label])
		op.correct[i] = arg == label && !math.IsNaN(lse)
		sum += op.loss[i]
	}
	op.mean = sum / float64(batch)
	switch o := op.out.(type) {
	case *G.F32:
		*o = G.F32(op.mean)
	case *G.F64:
		*o = G.F64(op.mean)
	}
	return op.out, nil
}

func (op *xentOp[T]) SymDiff(in G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	dz, err := G.ApplyOp(&xentGradOp[T]{fwd: op}, in[0], in[1], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, nil}, nil
}

// xentGradOp computes dz_ij = g·(exp(z_ij − lse_i) − [j = y_i])/B, with the
// lse_i of the forward pass.
type xentGradOp[T float] struct {
	gradOpBase
	fwd *xentOp[T]
	dz  outBuf[T]
}

func (op *xentGradOp[T]) Arity() int { return 3 }
func (op *xentGradOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(2), tensorType(1), hm.TypeVariable('a'), tensorType(2))
}
func (op *xentGradOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(op, ds[0], 2)
}
func (op *xentGradOp[T]) String() string        { return "softmax-xent.grad" }
func (op *xentGradOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *xentGradOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *xentGradOp[T]) Do(vs ...G.Value) (G.Value, error) {
	f := op.fwd
	y, err := labelsOf[T](vs[1], f.classes)
	if err != nil {
		return nil, fmt.Errorf("%v %w", op, err)
	}
	batch := len(y)
	if len(f.lse) != batch {
		return nil, fmt.Errorf("%v: forward pass saw %d samples, backward %d", op, len(f.lse), batch)
	}
	z, err := dataN[T](vs[0], batch*f.classes, op, "logits")
	if err != nil {
		return nil, err
	}
	g, err := scalarOf(vs[2])
	if err != nil {
		return nil, fmt.Errorf("%v seed: %w", op, err)
	}
	scale := g * f.scale / float64(batch)
	if f.propFair != nil {
		scale *= f.propFair.Scale(f.mean)
	}
	t, dz := op.dz.get(batch, f.classes)
	for i := 0; i < batch; i++ {
		row, out := z[i*f.classes:(i+1)*f.classes], dz[i*f.classes:(i+1)*f.classes]
		lse, label := f.lse[i], int(y[i])
		for j, v := range row {
			p := math.Exp(float64(v) - lse)
			if j == label {
				p--
			}
			out[j] = T(p * scale)
		}
	}
	return t, nil
}
