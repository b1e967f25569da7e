package trainer

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// embedOp is the identity on the embedding z: [B, L] that feeds the output
// layer. Every graph has one (except logreg's, whose embedding is the input
// itself): evaluation graphs read z out of it (Trainer.Forward), and
// training graphs add MOON's model-contrastive term through its backward
// pass (Li, He & Song, CVPR 2021, arXiv:2103.16257, Eq. (3)):
//
//	ℓ_i = −log( e^{sim(z_i, zg_i)/τ} / (e^{sim(z_i, zg_i)/τ} + e^{sim(z_i, zp_i)/τ}) )
//	    = softplus((sim(z_i, zp_i) − sim(z_i, zg_i))/τ)
//	sim(a, b) = a·b / max(‖a‖·‖b‖, 1e-8)                 (torch.nn.CosineSimilarity)
//
// where zg_i and zp_i are sample i's embeddings under the global model and
// the client's previous local model (constants supplied by the caller), and
// the objective adds ν·(1/B)·Σ_i ℓ_i, so dz_i gains ν/B·∂ℓ_i/∂z_i. Without a
// previous model (a client's first round) MOON's logits are [sim(z, zg)/τ]
// alone and ℓ_i = 0.
//
// The backward pass also adds the feature-norm penalty λ·J_B of
// FeatureNormPenalty (our differentiable reading of FNR-FL's regulariser,
// specs/fnrfl.md §1.6): see featNorm.apply.
type embedOp[T float] struct {
	opBase
	l    int
	dims int // of the input: 2, or 4 when it flattens [B, C, H, W] (torch.flatten(x, 1))
	con  *contrast[T]
	fn   *featNorm[T]
	y    outBuf[T]
}

// contrast holds the contrastive term's constants and the current batch's
// target rows, filled by the session before every step.
type contrast[T float] struct {
	on      bool
	nu, tau float64
	zg, zp  []T // [B, L] rows of the batch; zp is nil when there is no previous model
	loss    float64
}

var _ G.SDOp = (*embedOp[float32])(nil)

func (op *embedOp[T]) Arity() int    { return 1 }
func (op *embedOp[T]) Type() hm.Type { return hm.NewFnType(tensorType(op.dims), tensorType(2)) }
func (op *embedOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	s, ok := ds[0].(tensor.Shape)
	if !ok || len(s) != op.dims || s.TotalSize() != s[0]*op.l {
		return nil, fmt.Errorf("%v: input shape %v, want %d dimensions with %d values per sample", op, ds[0], op.dims, op.l)
	}
	return tensor.Shape{s[0], op.l}, nil
}
func (op *embedOp[T]) String() string        { return "embed" }
func (op *embedOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *embedOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *embedOp[T]) DiffWRT(int) []bool    { return []bool{true} }
func (op *embedOp[T]) Do(vs ...G.Value) (G.Value, error) {
	x, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v z: %w", op, err)
	}
	t, y := op.y.get(len(x)/op.l, op.l)
	copy(y, x)
	if op.con != nil && op.con.on {
		op.con.loss = op.con.apply(x, nil, op.l)
	}
	if op.fn != nil && op.fn.on {
		op.fn.j = op.fn.apply(x, nil, op.l)
	}
	return t, nil
}

func (op *embedOp[T]) SymDiff(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&embedDxOp[T]{fwd: op}, in[0], dy)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// apply returns the mean of ℓ_i over the batch z ([B, L]) and, if dz is not
// nil, adds ν/B·∂ℓ_i/∂z_i to it. Sums run in float64.
func (c *contrast[T]) apply(z, dz []T, l int) float64 {
	batch := len(z) / l
	if c.zp == nil {
		return 0
	}
	var total float64
	scale := c.nu / float64(batch)
	for i := range batch {
		zi, gi, pi := z[i*l:(i+1)*l], c.zg[i*l:(i+1)*l], c.zp[i*l:(i+1)*l]
		var zz, gg, pp, zg, zp float64
		for j, v := range zi {
			a, g, p := float64(v), float64(gi[j]), float64(pi[j])
			zz += a * a
			gg += g * g
			pp += p * p
			zg += a * g
			zp += a * p
		}
		nz := math.Sqrt(zz)
		dg, dp := math.Max(nz*math.Sqrt(gg), cosEps), math.Max(nz*math.Sqrt(pp), cosEps)
		cg, cp := zg/dg, zp/dp
		d := (cp - cg) / c.tau
		total += softplus(d)
		if dz == nil {
			continue
		}
		// ∂ℓ/∂z = q/τ·(∂sim(z, zp)/∂z − ∂sim(z, zg)/∂z), q = σ(d), and
		// ∂sim(z, b)/∂z = b/den − sim·z/‖z‖² while ‖z‖‖b‖ > ε (else b/ε).
		q := sigmoid(d) / c.tau * scale
		kg, kp := -q/dg, q/dp
		var kz float64
		if nz*math.Sqrt(gg) > cosEps {
			kz += q * cg / zz
		}
		if nz*math.Sqrt(pp) > cosEps {
			kz -= q * cp / zz
		}
		out := dz[i*l : (i+1)*l]
		for j := range out {
			out[j] += T(kg*float64(gi[j]) + kp*float64(pi[j]) + kz*float64(zi[j]))
		}
	}
	return total / float64(batch)
}

// featNorm holds the feature-norm penalty's constants and scratch space,
// set by the session before every step, and J_B of the last forward pass.
type featNorm[T float] struct {
	on     bool
	lambda float64
	target []float64 // T_l, one per class; NaN: class l has no target
	y      []T       // the batch's float-coded labels (the session's label tensor)
	count  []int     // n_l of the batch, per class
	mean   []float64 // Ū_{B,l}, per class
	norm   []float64 // ‖z_i‖ per row
	j      float64
}

// apply returns the penalty of the batch z ([B, L]) with labels f.y,
//
//	J_B = Σ_{l ∈ L_B, T_l not NaN} ρ_l·(Ū_{B,l} − T_l)²,  ρ_l = n_l/B,  Ū_{B,l} = (1/n_l)·Σ_{y_i = l} ‖z_i‖₂
//
// and, if dz is not nil, adds λ·∂J_B/∂z_i = λ·2(Ū_{B,l} − T_l)/B · z_i/‖z_i‖
// to it for every row i of class l (nothing where z_i = 0). It returns J_B,
// not λ·J_B. Sums run in float64.
func (f *featNorm[T]) apply(z, dz []T, l int) float64 {
	batch := len(z) / l
	clear(f.count)
	clear(f.mean)
	for i := range batch {
		var zz float64
		for _, v := range z[i*l : (i+1)*l] {
			zz += float64(v) * float64(v)
		}
		c := int(f.y[i])
		f.norm[i] = math.Sqrt(zz)
		f.count[c]++
		f.mean[c] += f.norm[i]
	}
	var j float64
	for c, k := range f.count {
		if k == 0 {
			continue
		}
		f.mean[c] /= float64(k)
		if t := f.target[c]; !math.IsNaN(t) {
			d := f.mean[c] - t
			j += float64(k) / float64(batch) * d * d
		}
	}
	if dz == nil {
		return j
	}
	for i := range batch {
		c := int(f.y[i])
		if math.IsNaN(f.target[c]) || f.norm[i] == 0 {
			continue
		}
		k := f.lambda * 2 * (f.mean[c] - f.target[c]) / float64(batch) / f.norm[i]
		zi, out := z[i*l:(i+1)*l], dz[i*l:(i+1)*l]
		for q := range out {
			out[q] += T(k * float64(zi[q]))
		}
	}
	return j
}

// cosEps is torch.nn.CosineSimilarity's default eps.
const cosEps = 1e-8

// softplus is log(1 + e^x) without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

type embedDxOp[T float] struct {
	gradOpBase
	fwd *embedOp[T]
	dx  outBuf[T]
}

func (op *embedDxOp[T]) Arity() int { return 2 }
func (op *embedDxOp[T]) Type() hm.Type {
	return hm.NewFnType(tensorType(op.fwd.dims), tensorType(2), tensorType(op.fwd.dims))
}
func (op *embedDxOp[T]) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	return sameShape(op, ds[0], 0)
}
func (op *embedDxOp[T]) String() string        { return "embed.dx" }
func (op *embedDxOp[T]) Hashcode() uint32      { return hashOf(op) }
func (op *embedDxOp[T]) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *embedDxOp[T]) Do(vs ...G.Value) (G.Value, error) {
	z, err := dataOf[T](vs[0])
	if err != nil {
		return nil, fmt.Errorf("%v z: %w", op, err)
	}
	dy, err := dataN[T](vs[1], len(z), op, "dy")
	if err != nil {
		return nil, err
	}
	t, dx := op.dx.get(vs[0].Shape()...)
	copy(dx, dy)
	if c := op.fwd.con; c != nil && c.on {
		c.apply(z, dx, op.fwd.l)
	}
	if f := op.fwd.fn; f != nil && f.on {
		f.apply(z, dx, op.fwd.l)
	}
	return t, nil
}
