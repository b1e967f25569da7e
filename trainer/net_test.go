package trainer

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestParamCounts(t *testing.T) {
	tests := []struct {
		name          string
		spec          Spec
		in            [3]int
		classes       int
		wantTotal     int
		wantTrainable int
	}{
		// specs/fedeba.md §3.1: 784·200+200 + 200·200+200 + 200·10+10 = 157,000 + 40,200 + 2,010.
		{"mlp 784-200-200-10", Spec{Arch: ArchMLP}, mnist, 10, 199_210, 199_210},
		// 784·10 + 10.
		{"logreg 784-10", Spec{Arch: ArchLogReg}, mnist, 10, 7_850, 7_850},
		// HiCS-FL models.py::FMNIST_CNN on 1×28×28:
		//   conv1 32·1·5·5 + 32 = 832; prelu1 1; bn1 γ, β 2·32 = 64      → 897 trainable
		//   conv2 32·32·5·5 + 32 = 25,632; prelu2 1; bn2 γ, β 64           → 25,697 trainable
		//   28 → conv 24 → pool 12 → conv 8 → pool 4; out 512·10 + 10      → 5,130 trainable
		//   trainable 897 + 25,697 + 5,130 = 31,724
		//   buffers: running mean and var of bn1 and bn2, 4·32 = 128 (PyTorch's
		//   int64 num_batches_tracked counters are not kept)
		//   total 31,724 + 128 = 31,852
		{"cnn-hics 1x28x28-10", Spec{Arch: ArchCNNHiCS}, mnist, 10, 31_852, 31_724},
		// Hidden [5] on 4 inputs, 3 classes: 4·5+5 + 5·3+3 = 43.
		{"mlp tiny", Spec{Arch: ArchMLP, Hidden: []int{5}}, [3]int{4, 1, 1}, 3, 43, 43},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustNet(t, tt.spec, tt.in, tt.classes)
			trainable := 0
			for _, p := range n.Params() {
				if p.Trainable {
					trainable += p.Len
				}
			}
			if n.NumParams() != tt.wantTotal || trainable != tt.wantTrainable {
				t.Errorf("NumParams() = %d, trainable %d; want %d, %d", n.NumParams(), trainable, tt.wantTotal, tt.wantTrainable)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	tests := []struct {
		spec      Spec
		in        [3]int
		classes   int
		wantKey   string
		wantNames []string
		wantOutW  []int
		wantOutB  []int
	}{
		{Spec{Arch: ArchMLP}, mnist, 10, "mlp:1x28x28:200-200:10",
			[]string{"fc1.w", "fc1.b", "fc2.w", "fc2.b", "out.w", "out.b"}, []int{10, 200}, []int{10}},
		{Spec{Arch: ArchMLP, Hidden: []int{64}}, [3]int{3, 8, 8}, 4, "mlp:3x8x8:64:4",
			[]string{"fc1.w", "fc1.b", "out.w", "out.b"}, []int{4, 64}, []int{4}},
		{Spec{Arch: ArchLogReg}, mnist, 10, "logreg:1x28x28:10",
			[]string{"out.w", "out.b"}, []int{10, 784}, []int{10}},
		{Spec{Arch: ArchCNNHiCS}, mnist, 10, "cnn-hics:1x28x28:10",
			[]string{
				"conv1.w", "conv1.b", "prelu1.a", "bn1.gamma", "bn1.beta", "bn1.running_mean", "bn1.running_var",
				"conv2.w", "conv2.b", "prelu2.a", "bn2.gamma", "bn2.beta", "bn2.running_mean", "bn2.running_var",
				"out.w", "out.b",
			}, []int{10, 512}, []int{10}},
	}
	for _, tt := range tests {
		t.Run(tt.wantKey, func(t *testing.T) {
			n := mustNet(t, tt.spec, tt.in, tt.classes)
			if n.Key() != tt.wantKey {
				t.Errorf("Key() = %q; want %q", n.Key(), tt.wantKey)
			}
			var names []string
			off := 0
			for _, p := range n.Params() {
				names = append(names, p.Name)
				size := 1
				for _, d := range p.Shape {
					size *= d
				}
				if p.Offset != off || p.Len != size {
					t.Errorf("%s: Offset %d, Len %d, Shape %v; want contiguous Offset %d and Len %d", p.Name, p.Offset, p.Len, p.Shape, off, size)
				}
				if p.Trainable == strings.Contains(p.Name, "running") {
					t.Errorf("%s: Trainable = %v", p.Name, p.Trainable)
				}
				off += p.Len
			}
			if off != n.NumParams() {
				t.Errorf("params cover %d values; NumParams() = %d", off, n.NumParams())
			}
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("names = %v; want %v", names, tt.wantNames)
			}
			w, b := n.Output()
			if w.Name != "out.w" || !reflect.DeepEqual(w.Shape, tt.wantOutW) || b.Name != "out.b" || !reflect.DeepEqual(b.Shape, tt.wantOutB) {
				t.Errorf("Output() = %s %v, %s %v; want out.w %v, out.b %v", w.Name, w.Shape, b.Name, b.Shape, tt.wantOutW, tt.wantOutB)
			}
			// Params and Output return copies.
			n.Params()[0].Shape[0] = -1
			if n.Params()[0].Shape[0] == -1 {
				t.Error("Params() shares its Shape slices with the Net")
			}
		})
	}
}

func TestInit(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchCNNHiCS}, mnist, 10)
	w := initWeights(t, n, 7)
	if again := initWeights(t, n, 7); !equalBits(w, again) {
		t.Error("Init with equal seeds gave different weights")
	}
	if other := initWeights(t, n, 8); equalBits(w, other) {
		t.Error("Init with different seeds gave equal weights")
	}
	// PyTorch defaults: U(±1/√fan_in) for linear and conv weights and biases.
	bounds := map[string]float64{
		"conv1.w": 1 / math.Sqrt(25), "conv1.b": 1 / math.Sqrt(25),
		"conv2.w": 1 / math.Sqrt(800), "conv2.b": 1 / math.Sqrt(800),
		"out.w": 1 / math.Sqrt(512), "out.b": 1 / math.Sqrt(512),
	}
	consts := map[string]float32{
		"prelu1.a": 0.25, "prelu2.a": 0.25,
		"bn1.gamma": 1, "bn1.beta": 0, "bn1.running_mean": 0, "bn1.running_var": 1,
		"bn2.gamma": 1, "bn2.beta": 0, "bn2.running_mean": 0, "bn2.running_var": 1,
	}
	for _, p := range n.Params() {
		vals := w[p.Offset : p.Offset+p.Len]
		if bound, ok := bounds[p.Name]; ok {
			var maxAbs float64
			for _, v := range vals {
				maxAbs = math.Max(maxAbs, math.Abs(float64(v)))
			}
			// With ≥ 32 uniform draws the largest |v| exceeds bound/2 unless
			// the draws are wrong (probability 2^-32).
			if maxAbs > bound || maxAbs < bound/2 {
				t.Errorf("%s: max |w| = %v; want in [%v, %v]", p.Name, maxAbs, bound/2, bound)
			}
			continue
		}
		want, ok := consts[p.Name]
		if !ok {
			t.Errorf("%s: no expectation", p.Name)
			continue
		}
		for _, v := range vals {
			if v != want {
				t.Errorf("%s = %v; want %v", p.Name, v, want)
				break
			}
		}
	}
	if err := n.Init(make([]float32, 3), rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrInvalid) {
		t.Errorf("Init(short dst) = %v; want ErrInvalid", err)
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		give      Spec
		wantField string // "" means valid
	}{
		{Spec{Arch: ArchMLP}, ""},
		{Spec{Arch: ArchMLP, Hidden: []int{10, 3}}, ""},
		{Spec{Arch: ArchLogReg}, ""},
		{Spec{Arch: ArchCNNHiCS}, ""},
		{Spec{Arch: "resnet"}, "spec.arch"},
		{Spec{Arch: ""}, "spec.arch"},
		{Spec{Arch: ArchMLP, Hidden: []int{10, 0}}, "spec.hidden[1]"},
		{Spec{Arch: ArchMLP, Hidden: []int{}}, "spec.hidden is empty"},
		{Spec{Arch: ArchLogReg, Hidden: []int{10}}, "spec.hidden"},
	}
	for _, tt := range tests {
		err := tt.give.Validate()
		if (err == nil) != (tt.wantField == "") || (err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantField))) {
			t.Errorf("Validate(%+v) = %v; want error naming %q wrapping ErrInvalid", tt.give, err, tt.wantField)
		}
	}
	// An unknown arch lists the known ones.
	err := Spec{Arch: "resnet"}.Validate()
	for _, a := range knownArchs {
		if !strings.Contains(err.Error(), a) {
			t.Errorf("Validate(resnet) = %q; want it to list %q", err, a)
		}
	}
}

func TestNewNetRejects(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		in      [3]int
		classes int
	}{
		{"unknown arch", Spec{Arch: "vgg"}, mnist, 10},
		{"zero channel", Spec{Arch: ArchMLP}, [3]int{0, 28, 28}, 10},
		{"one class", Spec{Arch: ArchLogReg}, mnist, 1},
		// Two 5×5 convolutions and two 2×2 pools need H, W ≥ 16.
		{"cnn input too small", Spec{Arch: ArchCNNHiCS}, [3]int{1, 15, 28}, 10},
	}
	for _, tt := range tests {
		if _, err := NewNet(tt.spec, tt.in, tt.classes); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: NewNet = %v; want ErrInvalid", tt.name, err)
		}
	}
}

// TestEvalBatchFor checks the activation budget of evaluation graphs.
func TestEvalBatchFor(t *testing.T) {
	tests := []struct {
		spec Spec
		want int
	}{
		// fc1 200 + relu 200 + fc2 200 + relu 200 + out 10 = 810 floats per
		// sample; 8Mi/810 ≫ 500, so EvalBatch rules.
		{Spec{Arch: ArchMLP}, 500},
		// conv1 32·24·24 = 18,432, PReLU and BN the same (55,296), pool
		// 32·12·12 = 4,608, conv2/PReLU/BN 3·32·8·8 = 6,144, pool 512,
		// dropout 512, out 10: 67,082 floats; ⌊8,388,608/67,082⌋ = 125.
		{Spec{Arch: ArchCNNHiCS}, 125},
	}
	tr := New(nil)
	for _, tt := range tests {
		n := mustNet(t, tt.spec, mnist, 10)
		if got := tr.evalBatchFor(n); got != tt.want {
			t.Errorf("evalBatchFor(%s) = %d; want %d", n.Key(), got, tt.want)
		}
	}
}
