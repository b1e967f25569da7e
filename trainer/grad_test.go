package trainer

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// gradProbe evaluates the training loss of a float64 session at arbitrary
// weights, with a fixed batch and fixed dropout masks: s computes the loss
// and its gradient, f (a training-mode graph without the backward pass)
// the loss alone, for the many evaluations of finite differences.
type gradProbe struct {
	t    *testing.T
	s, f *session[float64]
}

func newGradProbe(t *testing.T, n *Net, ex Examples, seed uint64) *gradProbe {
	t.Helper()
	s, err := newSession[float64](n, testKern, len(ex.Idx), true)
	if err != nil {
		t.Fatal(err)
	}
	f, err := buildSession[float64](n, testKern, len(ex.Idx), true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*session[float64]{s, f} {
		x.setBatch(ex, ex.Idx)
		x.drawMasks(rand.New(rand.NewPCG(seed, 3)))
	}
	return &gradProbe{t: t, s: s, f: f}
}

func (g *gradProbe) loss(w []float64) float64 {
	loadWeights(g.f, w)
	if err := g.f.run(); err != nil {
		g.t.Fatal(err)
	}
	return g.f.xent.mean
}

// lossGrad returns the loss and the flat gradient (zero for buffers).
func (g *gradProbe) lossGrad(w []float64) (float64, []float64) {
	loadWeights(g.s, w)
	if err := g.s.run(); err != nil {
		g.t.Fatal(err)
	}
	return g.s.xent.mean, append([]float64(nil), g.s.g...)
}

// TestGradientFiniteDifferences compares the graph's gradients with central
// differences (gonum optimize/functions/validate.go does the same), in
// float64 graphs built through the same generic code as the float32 ones.
//
// Step h = 1e-6: the truncation error is O(h²·|L”'|) ≈ 1e-12 and the
// rounding error about ε64·|L|/h ≈ 1e-10, so a correct gradient agrees to
// ~1e-9, far inside the tolerance 1e-6 + 1e-5·|g|, while a wrong term is off
// by O(|g|). Ties at ReLU/PReLU/max-pool kinks have probability zero with
// continuous random data, and the seeds are fixed.
func TestGradientFiniteDifferences(t *testing.T) {
	const h = 1e-6
	tests := []struct {
		name    string
		spec    Spec
		in      [3]int
		classes int
		batch   int
		// every coordinate of tensors with at most this many values is
		// checked; larger tensors get dirs random unit directions each
		// (three if 0).
		maxCoords int
		dirs      int
		// only, if set, limits the per-tensor checks to tensors with these
		// name prefixes; a direction over all trainable weights at once
		// still checks every gradient entry's contribution.
		only []string
	}{
		{"mlp hidden [5] on 4x1x1", Spec{Arch: ArchMLP, Hidden: []int{5}}, [3]int{4, 1, 1}, 3, 6, 1 << 30, 0, nil},
		{"mlp hidden [7 6] on 2x2x2", Spec{Arch: ArchMLP, Hidden: []int{7, 6}}, [3]int{2, 2, 2}, 4, 5, 1 << 30, 0, nil},
		{"mlp tanh", Spec{Arch: ArchMLP, Hidden: []int{7, 6}, Activation: ActTanh}, [3]int{2, 2, 2}, 4, 5, 1 << 30, 0, nil},
		{"mlp sigmoid", Spec{Arch: ArchMLP, Hidden: []int{7, 6}, Activation: ActSigmoid}, [3]int{2, 2, 2}, 4, 5, 1 << 30, 0, nil},
		{"logreg on 1x3x3", Spec{Arch: ArchLogReg}, [3]int{1, 3, 3}, 4, 5, 1 << 30, 0, nil},
		// The smallest input the CNN takes: 16 → 12 → 6 → 2 → 1.
		{"cnn-hics on 1x16x16", Spec{Arch: ArchCNNHiCS}, [3]int{1, 16, 16}, 3, 3, 40, 0, nil},
		{"cnn-hics on 1x28x28", Spec{Arch: ArchCNNHiCS}, mnist, 10, 2, 10, 0, nil},
		// Padded 3×3 convolutions (the first without bias), PReLU,
		// BatchNorm, pools: 4 → 4 → 4 → 2 → 2 → 1.
		{"cnn-hics-3conv on 1x4x4", Spec{Arch: ArchCNNHiCS3Conv}, [3]int{1, 4, 4}, 3, 3, 40, 0, nil},
		// Valid 3×3 convolutions, ReLU, three dropout masks: 18 → 16 → 8 → 6 → 3 → 1.
		{"cnn-hics-cifar on 2x18x18", Spec{Arch: ArchCNNHiCSCIFAR}, [3]int{2, 18, 18}, 3, 3, 40, 0, nil},
		// 5×5 convolutions and three FC layers: 16 → 12 → 6 → 2 → 1.
		{"cnn-fedeba-cifar on 3x16x16", Spec{Arch: ArchCNNFedEBACIFAR}, [3]int{3, 16, 16}, 3, 2, 40, 0, nil},
		{"lenet relu on 1x16x16", Spec{Arch: ArchLeNet}, [3]int{1, 16, 16}, 3, 3, 40, 0, nil},
		{"lenet tanh on 1x16x16", Spec{Arch: ArchLeNet, Activation: ActTanh}, [3]int{1, 16, 16}, 3, 3, 40, 0, nil},
		{"lenet sigmoid on 1x16x16", Spec{Arch: ArchLeNet, Activation: ActSigmoid}, [3]int{1, 16, 16}, 3, 3, 40, 0, nil},
		// Stride-2 padded convolutions, 1×1 shortcuts, residual adds,
		// global average pooling: 8 → 8 → 4 → 2 → 1 (batch 3: with 2, the
		// last BatchNorms normalise two values to ±1 and the loss curves too
		// sharply for central differences). The stem, a stride-2
		// block with its 1×1 shortcut, the last block and the output layer
		// are checked tensor by tensor, the rest through the direction over
		// all weights: 11M parameters in float64 are slow.
		{"resnet18 on 1x8x8", Spec{Arch: ArchResNet18}, [3]int{1, 8, 8}, 3, 3, 4, 1,
			[]string{"conv1.", "bn1.", "layer2.0.", "layer4.1.", "out."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustNet(t, tt.spec, tt.in, tt.classes)
			ex := uniformData(11, tt.batch, n.Dim(), tt.classes)
			probe := newGradProbe(t, n, ex, 5)
			r := rand.New(rand.NewPCG(13, 0))
			w := make([]float64, n.NumParams())
			convertCopy(w, initWeights(t, n, 3))
			// Move BatchNorm γ, β and the PReLU slopes off their initial
			// values so that their gradients are generic.
			for _, p := range n.Params() {
				switch {
				case strings.HasSuffix(p.Name, ".gamma"):
					for j := range p.Len {
						w[p.Offset+j] = 0.5 + r.Float64()
					}
				case strings.HasSuffix(p.Name, ".beta"), strings.HasSuffix(p.Name, ".a"):
					for j := range p.Len {
						w[p.Offset+j] = 0.4 * (r.Float64() - 0.5)
					}
				}
			}
			_, grad := probe.lossGrad(w)
			// fd perturbs w in place and restores it (ResNet-18 has 11M
			// weights; copies would dominate the test's time).
			orig := append([]float64(nil), w...)
			fd := func(dir []float64, off int) float64 {
				for j, d := range dir {
					w[off+j] = orig[off+j] + h*d
				}
				lp := probe.loss(w)
				for j, d := range dir {
					w[off+j] = orig[off+j] - h*d
				}
				lm := probe.loss(w)
				copy(w[off:off+len(dir)], orig[off:])
				return (lp - lm) / (2 * h)
			}
			// One random direction over every trainable weight.
			{
				all := make([]float64, len(w))
				var got, dn float64
				for _, p := range n.Params() {
					if p.Trainable {
						for j := p.Offset; j < p.Offset+p.Len; j++ {
							all[j] = r.NormFloat64()
							dn += all[j] * all[j]
						}
					}
				}
				var norm float64
				for j := range all {
					all[j] /= math.Sqrt(dn)
					got += grad[j] * all[j]
					norm += grad[j] * grad[j]
				}
				if want := fd(all, 0); math.Abs(got-want) > 1e-6+1e-5*math.Sqrt(norm) {
					t.Errorf("directional derivative along all weights = %.9g; central difference %.9g", got, want)
				}
			}
			for _, p := range n.Params() {
				if !p.Trainable || tt.only != nil && !slices.ContainsFunc(tt.only, func(pre string) bool { return strings.HasPrefix(p.Name, pre) }) {
					continue
				}
				g := grad[p.Offset : p.Offset+p.Len]
				if p.Len <= tt.maxCoords {
					for j := range p.Len {
						dir := make([]float64, p.Len)
						dir[j] = 1
						if got, want := g[j], fd(dir, p.Offset); math.Abs(got-want) > 1e-6+1e-5*math.Abs(want) {
							t.Errorf("d loss/d %s[%d] = %.9g; central difference %.9g", p.Name, j, got, want)
						}
					}
					continue
				}
				var norm float64
				for _, v := range g {
					norm += v * v
				}
				norm = math.Sqrt(norm)
				for range cmp.Or(tt.dirs, 3) {
					dir := make([]float64, p.Len)
					var dn float64
					for j := range dir {
						dir[j] = r.NormFloat64()
						dn += dir[j] * dir[j]
					}
					var got float64
					for j := range dir {
						dir[j] /= math.Sqrt(dn)
						got += g[j] * dir[j]
					}
					if want := fd(dir, p.Offset); math.Abs(got-want) > 1e-6+1e-5*norm {
						t.Errorf("directional derivative along %s = %.9g; central difference %.9g (|g| = %.3g)", p.Name, got, want, norm)
					}
				}
			}
		})
	}
}

// TestBiasGradientSumsToZero checks specs/hicsfl.md pitfall 13: the
// cross-entropy gradient with respect to the output bias is softmax − one-hot
// per sample, whose entries sum to zero; hence HiCS-FL's Σ_j Δb_j = 0 under
// plain SGD.
func TestBiasGradientSumsToZero(t *testing.T) {
	const eps32 = 0x1p-24 // unit roundoff of float32
	tests := []struct {
		name    string
		spec    Spec
		in      [3]int
		classes int
	}{
		{"logreg", Spec{Arch: ArchLogReg}, [3]int{1, 8, 8}, 10},
		{"mlp", Spec{Arch: ArchMLP, Hidden: []int{32, 16}}, [3]int{1, 8, 8}, 10},
		{"cnn-hics", Spec{Arch: ArchCNNHiCS}, mnist, 10},
		{"cnn-hics-3conv", Spec{Arch: ArchCNNHiCS3Conv}, [3]int{1, 8, 8}, 10},
		{"cnn-hics-cifar", Spec{Arch: ArchCNNHiCSCIFAR}, [3]int{3, 18, 18}, 10},
		{"lenet sigmoid", Spec{Arch: ArchLeNet, Activation: ActSigmoid}, [3]int{1, 16, 16}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustNet(t, tt.spec, tt.in, tt.classes)
			_, ob := n.Output()
			ex := uniformData(21, 4, n.Dim(), tt.classes)
			w := initWeights(t, n, 4)
			// Per sample: a float32 graph with batch 1. Each entry of db is
			// (p_j − [j = y])·1 computed in float64 and rounded once to
			// float32, so |Σ_j db_j| ≤ ε32·Σ_j |db_j| (plus float64
			// rounding of p, ~1e-15).
			s, err := newSession[float32](n, testKern, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			loadWeights(s, w)
			for _, k := range ex.Idx {
				s.setBatch(ex, []int{k})
				s.drawMasks(rand.New(rand.NewPCG(uint64(k), 0)))
				if err := s.run(); err != nil {
					t.Fatal(err)
				}
				db := s.g[ob.Offset : ob.Offset+ob.Len]
				var sum, abs float64
				for _, v := range db {
					sum += float64(v)
					abs += math.Abs(float64(v))
				}
				if math.Abs(sum) > eps32*abs+1e-12 || abs == 0 {
					t.Errorf("sample %d: Σ_j d loss/d %s_j = %g; want 0 within %g (Σ|db| = %g)", k, ob.Name, sum, eps32*abs, abs)
				}
			}

			// One plain-SGD local training (no weight decay): Σ_j Δb_j ≈ 0.
			// In float32 each step b_j ← fl(b_j − fl(η·g_j)) rounds twice
			// with error ≤ ε32·(|b_j| + |η·g_j|) ≤ ε32·2·max(|b|∞ over the
			// run + |Δb|∞), and the gradient itself sums to ε32·Σ|g| ≈ 0; so
			// over K steps and C classes |Σ_j Δb_j| ≤ K·C·ε32·4·(|b|∞ + |Δb|∞).
			// Heavy-ball momentum β = 0.9 keeps the sum 0 too (each buffer
			// entry is a sum of past gradients, each summing to 0); its
			// buffer adds up to 1/(1 − β) = 10 past gradients, so the bound
			// is 10 times larger there.
			const steps = 20
			train := uniformData(22, 64, n.Dim(), tt.classes)
			for _, beta := range []float64{0, 0.9} {
				hp := sgdSteps(0.1, 16, steps)
				hp.Momentum = beta
				w2 := append([]float32(nil), w...)
				if _, err := newTrainer().Train(t.Context(), n, w2, train, hp, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
					t.Fatal(err)
				}
				biasSumZero(t, w, w2, ob, steps/(1-beta))
			}
		})
	}
}

// biasSumZero checks |Σ_j Δb_j| ≤ K·C·ε32·4·(|b|∞ + |Δb|∞) between the
// output biases of w and w2 (see TestBiasGradientSumsToZero), with k for K.
func biasSumZero(t *testing.T, w, w2 []float32, ob Param, k float64) {
	t.Helper()
	const eps32 = 0x1p-24
	var sum, abs, maxB, maxD float64
	for j := range ob.Len {
		b0, b1 := float64(w[ob.Offset+j]), float64(w2[ob.Offset+j])
		d := b1 - b0
		sum += d
		abs += math.Abs(d)
		maxB = math.Max(maxB, math.Max(math.Abs(b0), math.Abs(b1)))
		maxD = math.Max(maxD, math.Abs(d))
	}
	tol := k * float64(ob.Len) * eps32 * 4 * (maxB + maxD)
	if math.Abs(sum) > tol {
		t.Errorf("Σ_j Δ%s_j = %g after SGD; want 0 within %g (|Δb|₁ = %g)", ob.Name, sum, tol, abs)
	}
	// The bound must be tight enough to mean something.
	if tol > 1e-3*abs {
		t.Errorf("tolerance %g is not small against |Δb|₁ = %g; the test is vacuous", tol, abs)
	}
}
