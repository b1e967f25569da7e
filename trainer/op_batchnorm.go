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

// bnOp is PyTorch's nn.BatchNorm2d(C) (Ioffe & Szegedy, ICML 2015,
// arXiv:1502.03167, Algorithm 1) on x: [B, C, H, W] with per-channel γ, β:
//
//	training:  μ = mean_{n,h,w} x,  σ² = mean_{n,h,w} (x − μ)²   (biased)
//	           y = γ·(x − μ)/√(σ² + ε) + β
//	           running_mean ← (1 − m)·running_mean + m·μ
//	           running_var  ← (1 − m)·running_var  + m·σ²·N/(N − 1)   (unbiased, N = B·H·W)
//	eval:      y = γ·(x − running_mean)/√(running_var + ε) + β
//
// with m = 0.1 and ε = 1e-5, PyTorch's defaults. Statistics are summed in
// float64.
//
// gorgonia's BatchNorm gets the momentum convention and the unbiased running
// variance right, but it cannot be used as is: its default γ and β have the
// full input shape instead of [C] (and are drawn from GlorotN), its
// SetTraining(true) resets the running statistics to 0 and 1, which would
// discard the buffers we load from the flat vector, and its float64 backward
// pass reads the running variance where it means the running mean.
//
// The running statistics live in the op (runMean, runVar) between the
// session loading them from the flat vector and storing them back.
type bnOp[T float] struct {
	opBase
	name      string
	c, h, w   int
	hw        int // h·w
	train     bool
	runMean   []T       // views into the session's flat weights
	runVar    []T       //
	mean, inv []float64 // batch mean and 1/√(σ² + ε) of the last forward pass, for backward
	gen       int       // forward passes so far
	sums      bnSums    // Σ dy and Σ dy·x̂ per channel, shared by the three gradient ops
	coef      []T       // per-channel scale and shift of the forward pass
	acc       []float64 // per-channel Σ x and Σ (x − μ)² of batchStats
	y         outBuf[T]
	// relu makes the op BatchNorm followed by ReLU, as the session builds
	// it for a ReLU layer that only the BatchNorm's output feeds
	// (reluInto): the affine map and the ReLU in one pass, the same values.
	relu bool
	// maskGrad makes the backward pass of such an op take the gradient of
	// the ReLU's output and mask it in its own passes (vec.BNDxReLU,
	// vec.ChannelDotReLU), where the mask x·scale + shift > 0 is computed
	// from the forward pass's coefficients exactly as the forward pass
	// computed the ReLU's input: the same values as a separate ReLU
	// gradient's, without its pass. Only with the vector kernels.
	maskGrad bool
}

// bnSums caches the per-channel sums of a backward pass: the gradients of
// x, γ and β all need them, and computing them once saves two passes over
// the activations.
type bnSums struct {
	gen       int // the forward pass they belong to; −1: none
	sdy, sdyx []float64
}

var _ G.SDOp = (*bnOp[float32])(nil)

func newBNOp[T float](l layer, train bool) *bnOp[T] {
	c := l.in[0]
	return &bnOp[T]{
		name: l.name, c: c, h: l.in[1], w: l.in[2], hw: l.in[1] * l.in[2], train: train,
		runMean: make([]T, c), runVar: make([]T, c),
		mean: make([]float64, c), inv: make([]float64, c),
		sums: bnSums{gen: -1, sdy: make([]float64, c), sdyx: make([]float64, c)},
	}
}

func (op *bnOp[T]) Arity() int { return 3 }
func (op *bnOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(1), tensorType(1), tensorType(4))
}
func (op *bnOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != 4 || s[1] != op.c {
		return nil, fmt.Errorf("%v: input shape %v, want [B, %d, H, W]", op, ds[0], op.c)
	}
	return s.Clone(), nil
}
func (op *bnOp[T]) String() string {
	name := "batchnorm"
	if op.relu {
		name += "+relu"
	}
	if !op.train {
		name += ".eval"
	}
	return name + "(" + op.name + ")"
}
func (op *bnOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *bnOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *bnOp[T]) DiffWRT(int) []bool    { return []bool{true, true, true} }

func (op *bnOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	batch := len(x) / (op.c * op.hw)
	if batch*op.c*op.hw != len(x) || batch == 0 {
		return nil, fmt.Errorf("%v: x has %d values, not a positive multiple of %d", op, len(x), op.c*op.hw)
	}
	gamma, err := dataN[T](vs[1], op.c, op, "gamma")
	if err != nil {
		return nil, err
	}
	beta, err := dataN[T](vs[2], op.c, op, "beta")
	if err != nil {
		return nil, err
	}
	op.gen++
	if op.train {
		op.batchStats(x, batch)
	} else {
		for c := range op.c {
			op.mean[c] = float64(op.runMean[c])
			op.inv[c] = 1 / math.Sqrt(float64(op.runVar[c])+bnEps)
		}
	}
	t, y := op.y.get(batch, op.c, op.h, op.w)
	coef := mem.Grow(&op.coef, 2*op.c)
	scale, shift := coef[:op.c], coef[op.c:]
	for c := range op.c {
		sc := float64(gamma[c]) * op.inv[c]
		scale[c], shift[c] = T(sc), T(float64(beta[c])-op.mean[c]*sc)
	}
	if y32, ok := any(y).([]float32); ok && op.relu && vec.BNAffineReLU != nil {
		vec.BNAffineReLU(y32, any(x).([]float32), any(scale).([]float32), any(shift).([]float32), op.hw)
		return t, nil
	}
	if y32, ok := any(y).([]float32); ok && vec.BNAffine != nil {
		vec.BNAffine(y32, any(x).([]float32), any(scale).([]float32), any(shift).([]float32), op.hw)
	} else {
		for p := 0; p*op.hw < len(y); p++ {
			s, b := scale[p%op.c], shift[p%op.c]
			ys, xs := y[p*op.hw:(p+1)*op.hw], x[p*op.hw:(p+1)*op.hw]
			for i, v := range xs {
				ys[i] = v*s + b
			}
		}
	}
	if op.relu {
		relu(y, y)
	}
	return t, nil
}

// batchStats computes the batch mean and inverse standard deviation per
// channel (two passes, float64) and updates the running statistics.
func (op *bnOp[T]) batchStats(x []T, batch int) {
	N := float64(batch * op.hw)
	acc := mem.Grow(&op.acc, 2*op.c)
	sum, ss := acc[:op.c], acc[op.c:]
	x32, vector := any(x).([]float32)
	vector = vector && vec.ChannelSum != nil
	plane := func(n, c int) []T { return x[(n*op.c+c)*op.hw:][:op.hw] }
	if vector {
		vec.ChannelSum(sum, x32, op.c, op.hw)
	} else {
		for c := range op.c {
			sum[c] = 0
			for n := 0; n < batch; n++ {
				sum[c] += sum64(plane(n, c))
			}
		}
	}
	for c := range op.c {
		op.mean[c] = sum[c] / N
	}
	if vector {
		vec.ChannelSqDev(ss, x32, op.mean, op.hw)
	} else {
		for c := range op.c {
			ss[c] = 0
			for n := 0; n < batch; n++ {
				ss[c] += sqDev64(plane(n, c), op.mean[c])
			}
		}
	}
	for c := range op.c {
		mean, variance := op.mean[c], ss[c]/N
		op.inv[c] = 1 / math.Sqrt(variance+bnEps)
		unbiased := variance
		if N > 1 {
			unbiased = ss[c] / (N - 1)
		}
		op.runMean[c] = T((1-bnMomentum)*float64(op.runMean[c]) + bnMomentum*mean)
		op.runVar[c] = T((1-bnMomentum)*float64(op.runVar[c]) + bnMomentum*unbiased)
	}
}

// SymDiff returns, with x̂ = (x − μ)/√(σ² + ε) and N = B·H·W per channel,
//
//	dx = γ/√(σ² + ε) · (dy − mean(dy) − x̂·mean(dy·x̂))
//	dγ = Σ dy·x̂,   dβ = Σ dy
//
// (training mode; in eval mode μ and σ² are constants and dx = γ/√(var+ε)·dy).
func (op *bnOp[T]) SymDiff(in G.Nodes, out, dy *G.Node) (G.Nodes, error) {
	op.maskGrad = op.relu && fuseReLUBackward && vecMaskGrad[T]()
	if !op.maskGrad {
		var err error
		if dy, err = reluGrad[T](op.relu, op.name, out, dy); err != nil {
			return nil, err
		}
	}
	dx, err := G.ApplyOp(&bnDxOp[T]{fwd: op}, in[0], in[1], dy)
	if err != nil {
		return nil, err
	}
	dg, err := G.ApplyOp(&bnParamGradOp[T]{fwd: op, gamma: true}, in[0], dy)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&bnParamGradOp[T]{fwd: op}, in[0], dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dg, db}, nil
}

// fuseReLUBackward lets a BatchNorm with its ReLU mask the gradient in its
// own backward passes (bnOp.maskGrad); the tests turn it off to compare.
var fuseReLUBackward = true

// vecMaskGrad reports whether the vector kernels can run a BatchNorm's
// backward pass with its ReLU's mask (float32, with the forward pass in
// vec.BNAffineReLU, whose rounding the mask repeats).
func vecMaskGrad[T float]() bool {
	var z T
	_, f32 := any(z).(float32)
	return f32 && vec.BNAffineReLU != nil && vec.BNDxReLU != nil && vec.ChannelDotReLU != nil
}

// channelSums returns, per channel, Σ dy and Σ dy·x̂ of the current
// backward pass, computing them on the first call after a forward pass.
func (op *bnOp[T]) channelSums(x, dy []T, batch int) *bnSums {
	s := &op.sums
	if s.gen == op.gen {
		return s
	}
	if x32, ok := any(x).([]float32); ok && vec.ChannelDot != nil {
		if dy32 := any(dy).([]float32); op.maskGrad {
			scale, shift := any(op.coef[:op.c]).([]float32), any(op.coef[op.c:2*op.c]).([]float32)
			vec.ChannelDotReLU(s.sdy, s.sdyx, x32, dy32, op.mean, scale, shift, op.hw)
		} else {
			vec.ChannelDot(s.sdy, s.sdyx, x32, dy32, op.mean, op.hw)
		}
		for c := range op.c {
			s.sdyx[c] *= op.inv[c]
		}
		s.gen = op.gen
		return s
	}
	for c := range op.c {
		mean, inv := op.mean[c], op.inv[c]
		var sdy, sdyx float64
		for n := 0; n < batch; n++ {
			off := (n*op.c + c) * op.hw
			a, b := dot64(x[off:off+op.hw], dy[off:off+op.hw], mean)
			sdy += a
			sdyx += b
		}
		s.sdy[c], s.sdyx[c] = sdy, sdyx*inv
	}
	s.gen = op.gen
	return s
}

type bnDxOp[T float] struct {
	gradOpBase
	fwd  *bnOp[T]
	coef []T // per-channel coefficients a, b, c0
	dx   outBuf[T]
}

func (op *bnDxOp[T]) Arity() int { return 3 }
func (op *bnDxOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(1), tensorType(4), tensorType(4))
}
func (op *bnDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return op.fwd.InferShape(ds[0])
}
func (op *bnDxOp[T]) String() string        { return "batchnorm.dx(" + op.fwd.name + ")" }
func (op *bnDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *bnDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *bnDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	f := op.fwd
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	batch := len(x) / (f.c * f.hw)
	gamma, err := dataN[T](vs[1], f.c, op, "gamma")
	if err != nil {
		return nil, err
	}
	dy, err := dataN[T](vs[2], len(x), op, "dy")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(batch, f.c, f.h, f.w)
	N := float64(batch * f.hw)
	var sums *bnSums
	if f.train {
		sums = f.channelSums(x, dy, batch)
	}
	// k·(dy − mdy − x̂·mdyx) with x̂ = (x − μ)·inv is a·dy + b·x + c0 per
	// channel: two multiply-adds per element in T.
	coef := mem.Grow(&op.coef, 3*f.c)
	ca, cb, cc := coef[:f.c], coef[f.c:2*f.c], coef[2*f.c:]
	for c := range f.c {
		mean, inv := f.mean[c], f.inv[c]
		k := float64(gamma[c]) * inv
		var mdy, mdyx float64
		if sums != nil {
			mdy, mdyx = sums.sdy[c]/N, sums.sdyx[c]/N
		}
		ca[c], cb[c], cc[c] = T(k), T(-k*mdyx*inv), T(k*(mean*inv*mdyx-mdy))
	}
	if dx32, ok := any(dx).([]float32); ok && f.maskGrad {
		scale, shift := any(f.coef[:f.c]).([]float32), any(f.coef[f.c:2*f.c]).([]float32)
		vec.BNDxReLU(dx32, any(dy).([]float32), any(x).([]float32), any(ca).([]float32), any(cb).([]float32), any(cc).([]float32), scale, shift, f.hw)
		return t, nil
	}
	if dx32, ok := any(dx).([]float32); ok && vec.BNDx != nil {
		vec.BNDx(dx32, any(dy).([]float32), any(x).([]float32), any(ca).([]float32), any(cb).([]float32), any(cc).([]float32), f.hw)
		return t, nil
	}
	for p := 0; p*f.hw < len(dx); p++ {
		a, b, c0 := ca[p%f.c], cb[p%f.c], cc[p%f.c]
		xs, ds, out := x[p*f.hw:(p+1)*f.hw], dy[p*f.hw:(p+1)*f.hw], dx[p*f.hw:(p+1)*f.hw]
		for i, v := range xs {
			out[i] = a*ds[i] + b*v + c0
		}
	}
	return t, nil
}

// bnParamGradOp is dγ = Σ dy·x̂ (gamma) or dβ = Σ dy per channel, from the
// channel sums the three gradient ops share. Both take x and dy.
type bnParamGradOp[T float] struct {
	gradOpBase
	fwd   *bnOp[T]
	gamma bool
	d     outBuf[T]
}

func (op *bnParamGradOp[T]) Arity() int { return 2 }
func (op *bnParamGradOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(1))
}
func (op *bnParamGradOp[T]) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.fwd.c}, nil
}
func (op *bnParamGradOp[T]) String() string {
	if op.gamma {
		return "batchnorm.dgamma(" + op.fwd.name + ")"
	}
	return "batchnorm.dbeta(" + op.fwd.name + ")"
}
func (op *bnParamGradOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *bnParamGradOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *bnParamGradOp[T]) Do(vs ...G.Value) (G.Value, error) {
	f := op.fwd
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v x: %w", op, err)
	}
	batch := len(x) / (f.c * f.hw)
	dy, err := dataN[T](vs[1], len(x), op, "dy")
	if err != nil {
		return nil, err
	}
	t, d := op.d.get(f.c)
	sums := f.channelSums(x, dy, batch)
	src := sums.sdy
	if op.gamma {
		src = sums.sdyx
	}
	for c := range f.c {
		d[c] = T(src[c])
	}
	return t, nil
}

// The reductions below sum in float64 over four lanes, combined in a fixed
// order at the end, so results are deterministic; one running sum would
// make every element wait for the previous addition.

// sum64 returns Σ x_i.
func sum64[T float](x []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i])
		s1 += float64(x[i+1])
		s2 += float64(x[i+2])
		s3 += float64(x[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// sqDev64 returns Σ (x_i − m)².
func sqDev64[T float](x []T, m float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		d0, d1, d2, d3 := float64(x[i])-m, float64(x[i+1])-m, float64(x[i+2])-m, float64(x[i+3])-m
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(x); i++ {
		d := float64(x[i]) - m
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// dot64 returns Σ dy_i and Σ dy_i·(x_i − m).
func dot64[T float](x, dy []T, m float64) (sdy, sdyx float64) {
	dy = dy[:len(x)]
	var a0, a1, b0, b1 float64
	i := 0
	for ; i+2 <= len(x); i += 2 {
		d0, d1 := float64(dy[i]), float64(dy[i+1])
		a0 += d0
		a1 += d1
		b0 += d0 * (float64(x[i]) - m)
		b1 += d1 * (float64(x[i+1]) - m)
	}
	for ; i < len(x); i++ {
		d := float64(dy[i])
		a0 += d
		b0 += d * (float64(x[i]) - m)
	}
	return a0 + a1, b0 + b1
}
