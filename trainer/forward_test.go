package trainer

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestForward checks Forward against Predict and the definitions: the
// logits' log-sum-exp minus the label's logit is Predict's loss, the output
// layer applied to the embedding gives the logits (z·Wᵀ + b), and logreg's
// embedding is its input.
func TestForward(t *testing.T) {
	tests := []struct {
		spec Spec
		in   [3]int
	}{
		{Spec{Arch: ArchMLP, Hidden: []int{12, 7}}, [3]int{1, 4, 4}},
		{Spec{Arch: ArchLogReg}, [3]int{1, 4, 4}},
		{Spec{Arch: ArchCNNHiCS3Conv}, [3]int{1, 8, 8}},
	}
	for _, tt := range tests {
		n := mustNet(t, tt.spec, tt.in, 5)
		t.Run(n.Key(), func(t *testing.T) {
			ex := uniformData(3, 9, n.Dim(), 5)
			ex.Idx = []int{4, 0, 8, 2, 2}
			w := initWeights(t, n, 3)
			l, c := n.Embedding(), n.Classes()
			emb, logits := make([]float32, len(ex.Idx)*l), make([]float32, len(ex.Idx)*c)
			// EvalBatch 2: three batches, the last padded.
			tr := New(&Options{EvalBatch: 2, Kernels: testChoice})
			if err := tr.Forward(t.Context(), n, w, ex, emb, logits); err != nil {
				t.Fatal(err)
			}
			loss := make([]float32, len(ex.Idx))
			if err := tr.Predict(t.Context(), n, w, ex, loss, nil); err != nil {
				t.Fatal(err)
			}
			ow, ob := n.Output()
			for i, k := range ex.Idx {
				z := logits[i*c : (i+1)*c]
				m := slices.Max(z)
				var s float64
				for _, v := range z {
					s += math.Exp(float64(v - m))
				}
				if want := float64(m) + math.Log(s) - float64(z[ex.Y[k]]); math.Abs(float64(loss[i])-want) > 1e-5 {
					t.Errorf("sample %d: loss %v; from the logits %v", i, loss[i], want)
				}
				e := emb[i*l : (i+1)*l]
				if tt.spec.Arch == ArchLogReg && !slices.Equal(e, ex.X[k*n.Dim():(k+1)*n.Dim()]) {
					t.Errorf("sample %d: logreg embedding is not the input", i)
				}
				for j := range c {
					want := float64(w[ob.Offset+j])
					for q := range l {
						want += float64(w[ow.Offset+j*l+q]) * float64(e[q])
					}
					if math.Abs(float64(z[j])-want) > 1e-5*(1+math.Abs(want)) {
						t.Errorf("sample %d: logit %d = %v; out(embedding) = %v", i, j, z[j], want)
					}
				}
			}
			if err := tr.Forward(t.Context(), n, w, ex, make([]float32, 3), nil); !errors.Is(err, ErrInvalid) {
				t.Errorf("Forward(short emb) = %v; want ErrInvalid", err)
			}
		})
	}
}

// TestGradient checks Trainer.Gradient, the full-data gradient FedEBA+'s
// alignment needs, against the float64 graph's gradient over all samples
// in one batch: batching into 3s and 4s (the last partial) and weighting by
// batch size gives the same mean for a net without BatchNorm, up to float32
// rounding (1e-5 relative to the gradient's scale), and w is untouched.
func TestGradient(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchLeNet, Activation: ActTanh}, [3]int{1, 16, 16}, 4)
	ex := uniformData(4, 10, n.Dim(), 4)
	w := initWeights(t, n, 5)
	before := slices.Clone(w)
	probe := newGradProbe(t, n, ex, 0)
	w64 := make([]float64, len(w))
	convertCopy(w64, w)
	wantLoss, want := probe.lossGrad(w64)
	var scale float64
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	tr := newTrainer()
	for _, batch := range []int{3, 4, 10, 64} {
		got := make([]float32, len(w))
		loss, err := tr.Gradient(t.Context(), n, w, ex, batch, got)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(loss-wantLoss) > 1e-5 {
			t.Errorf("batch %d: loss %v; want %v", batch, loss, wantLoss)
		}
		for j := range got {
			if math.Abs(float64(got[j])-want[j]) > 1e-5*scale {
				t.Errorf("batch %d: gradient[%d] = %v; want %v", batch, j, got[j], want[j])
				break
			}
		}
	}
	if !equalBits(w, before) {
		t.Error("Gradient changed w")
	}
}

// TestInitKinds checks the initialisations the official codes use, by
// their spread over many draws: Xavier-uniform with ReLU gain has bound
// √2·√(6/(fan_in + fan_out)) and standard deviation bound/√3; Kaiming-normal
// with mode fan_out (RLU's LeNet, FNR-FL's ResNet) has standard deviation
// √(2/fan_out). With ≥ 2,400 draws the sample standard deviation is within
// 5% of the truth (its relative standard error is about 1/√(2N) ≤ 1.5%).
func TestInitKinds(t *testing.T) {
	tests := []struct {
		spec    Spec
		in      [3]int
		param   string
		wantStd float64
		bound   float64 // 0: unbounded
	}{
		// conv2 of cnn-hics-3conv: fan_in 32·9 = 288, fan_out 32·9 = 288.
		{Spec{Arch: ArchCNNHiCS3Conv}, mnist, "conv2.w", math.Sqrt2 * math.Sqrt(6.0/576) / math.Sqrt(3), math.Sqrt2 * math.Sqrt(6.0/576)},
		// lenet conv2 (2,400 weights): fan_out 16·25 = 400 (RLU's models.py::LeNet5,
		// kaiming_normal_(mode='fan_out', nonlinearity='relu')); fan_in 6·25 = 150 would give 0.115.
		{Spec{Arch: ArchLeNet}, [3]int{3, 32, 32}, "conv2.w", math.Sqrt(2.0 / 400), 0},
		// resnet18 layer1.0.conv1: fan_out 64·9 = 576.
		{Spec{Arch: ArchResNet18}, [3]int{3, 32, 32}, "layer1.0.conv1.w", math.Sqrt(2.0 / 576), 0},
		// PyTorch's default on the FedEBA+ CNN's fc1: U(±1/√1600), std 1/(40·√3).
		{Spec{Arch: ArchCNNFedEBACIFAR}, [3]int{3, 32, 32}, "fc1.w", 1 / (40 * math.Sqrt(3)), 1.0 / 40},
	}
	for _, tt := range tests {
		n := mustNet(t, tt.spec, tt.in, 10)
		w := make([]float32, n.NumParams())
		if err := n.Init(w, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		p := paramByName(t, n, tt.param)
		var ss, maxAbs float64
		for _, v := range w[p.Offset : p.Offset+p.Len] {
			ss += float64(v) * float64(v)
			maxAbs = math.Max(maxAbs, math.Abs(float64(v)))
		}
		std := math.Sqrt(ss / float64(p.Len))
		if math.Abs(std-tt.wantStd) > 0.05*tt.wantStd || (tt.bound > 0 && maxAbs > tt.bound) {
			t.Errorf("%s %s: std %.5g, max |w| %.5g; want std %.5g and max ≤ %.5g", n.Key(), tt.param, std, maxAbs, tt.wantStd, tt.bound)
		}
	}
}
