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
		// HiCS-FL cnn.py::FMNIST_CNN on 1×28×28 (specs/hicsfl.md §3.2):
		//   conv1 32·1·3·3 (no bias) = 288; prelu1 1; bn1 γ, β 64
		//   conv2 32·32·9 + 32 = 9,248; prelu2 1; bn2 64
		//   conv3 64·32·9 + 64 = 18,496; prelu3 1; bn3 128
		//   28 → 28 → 28 → pool 14 → 14 → pool 7: fc1 64·7·7·64 + 64 = 200,768; out 64·10 + 10 = 650
		//   trainable 288+1+64 + 9,248+1+64 + 18,496+1+128 + 200,768 + 650 = 229,709
		//   buffers 2·(32+32+64) = 256; total 229,965
		{"cnn-hics-3conv 1x28x28-10", Spec{Arch: ArchCNNHiCS3Conv}, mnist, 10, 229_965, 229_709},
		// HiCS-FL cnn.py::CIFAR10_CNN on 3×32×32: 32 → 30 → 15 → 13 → 6 → 4:
		//   conv1 32·3·9 + 32 = 896; conv2 64·32·9 + 64 = 18,496; conv3 64·64·9 + 64 = 36,928
		//   fc1 64·4·4·64 + 64 = 65,600; out 64·10 + 10 = 650; total 122,570
		{"cnn-hics-cifar 3x32x32-10", Spec{Arch: ArchCNNHiCSCIFAR}, [3]int{3, 32, 32}, 10, 122_570, 122_570},
		// specs/fedeba.md §3.1: 797,962 parameters; 32 → 28 → 14 → 10 → 5:
		//   conv1 64·3·25 + 64 = 4,864; conv2 64·64·25 + 64 = 102,464
		//   fc1 1,600·384 + 384 = 614,784; fc2 384·192 + 192 = 73,920; out 192·10 + 10 = 1,930
		{"cnn-fedeba-cifar 3x32x32-10", Spec{Arch: ArchCNNFedEBACIFAR}, [3]int{3, 32, 32}, 10, 797_962, 797_962},
		// LeNet-5 on 3×32×32 (specs/rlu.md §4): 32 → 28 → 14 → 10 → 5:
		//   conv1 6·3·25 + 6 = 456; conv2 16·6·25 + 16 = 2,416; fc1 400·120 + 120 = 48,120
		//   fc2 120·84 + 84 = 10,164; out 84·10 + 10 = 850; total 62,006
		{"lenet 3x32x32-10", Spec{Arch: ArchLeNet}, [3]int{3, 32, 32}, 10, 62_006, 62_006},
		// On 1×28×28 it is NIID-Bench's SimpleCNN-MNIST, 44,426 parameters
		// (specs/fnrfl.md §4): 156 + 2,416 + 256·120+120 + 10,164 + 850.
		{"lenet tanh 1x28x28-10", Spec{Arch: ArchLeNet, Activation: ActTanh}, mnist, 10, 44_426, 44_426},
		// ResNet-18 for CIFAR-10: 11,173,962 trainable (specs/fnrfl.md §0;
		// 44.70 MB of float32 in FNR-FL's Table 3):
		//   convs 1,728 + 147,456 + 524,288 + 2,097,152 + 8,388,608 = 11,159,232
		//   BatchNorm γ, β over 4,800 channels (64 + 4·64 + 5·128 + 5·256 + 5·512) = 9,600
		//   fc 512·10 + 10 = 5,130; buffers 2·4,800 = 9,600 more
		{"resnet18 3x32x32-10", Spec{Arch: ArchResNet18}, [3]int{3, 32, 32}, 10, 11_183_562, 11_173_962},
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
			if n.NumParams() != tt.wantTotal || trainable != tt.wantTrainable || n.NumTrainable() != trainable {
				t.Errorf("NumParams() = %d, trainable %d (NumTrainable %d); want %d, %d", n.NumParams(), trainable, n.NumTrainable(), tt.wantTotal, tt.wantTrainable)
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
		{Spec{Arch: ArchCNNHiCS3Conv}, mnist, 10, "cnn-hics-3conv:1x28x28:10",
			[]string{
				"conv1.w", "prelu1.a", "bn1.gamma", "bn1.beta", "bn1.running_mean", "bn1.running_var",
				"conv2.w", "conv2.b", "prelu2.a", "bn2.gamma", "bn2.beta", "bn2.running_mean", "bn2.running_var",
				"conv3.w", "conv3.b", "prelu3.a", "bn3.gamma", "bn3.beta", "bn3.running_mean", "bn3.running_var",
				"fc1.w", "fc1.b", "out.w", "out.b",
			}, []int{10, 64}, []int{10}},
		{Spec{Arch: ArchCNNHiCSCIFAR}, [3]int{3, 32, 32}, 10, "cnn-hics-cifar:3x32x32:10",
			[]string{"conv1.w", "conv1.b", "conv2.w", "conv2.b", "conv3.w", "conv3.b", "fc1.w", "fc1.b", "out.w", "out.b"},
			[]int{10, 64}, []int{10}},
		{Spec{Arch: ArchCNNFedEBACIFAR}, [3]int{3, 32, 32}, 10, "cnn-fedeba-cifar:3x32x32:10",
			[]string{"conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc1.w", "fc1.b", "fc2.w", "fc2.b", "out.w", "out.b"},
			[]int{10, 192}, []int{10}},
		{Spec{Arch: ArchLeNet}, [3]int{3, 32, 32}, 10, "lenet:3x32x32:relu:10",
			[]string{"conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc1.w", "fc1.b", "fc2.w", "fc2.b", "out.w", "out.b"},
			[]int{10, 84}, []int{10}},
		{Spec{Arch: ArchLeNet, Activation: ActSigmoid}, [3]int{1, 28, 28}, 10, "lenet:1x28x28:sigmoid:10",
			[]string{"conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc1.w", "fc1.b", "fc2.w", "fc2.b", "out.w", "out.b"},
			[]int{10, 84}, []int{10}},
		// A non-default MLP activation enters the key; ReLU does not
		// (keys of existing models must not change).
		{Spec{Arch: ArchMLP, Hidden: []int{64}, Activation: ActTanh}, [3]int{3, 8, 8}, 4, "mlp:3x8x8:64:tanh:4",
			[]string{"fc1.w", "fc1.b", "out.w", "out.b"}, []int{4, 64}, []int{4}},
		{Spec{Arch: ArchMLP, Hidden: []int{64}, Activation: ActReLU}, [3]int{3, 8, 8}, 4, "mlp:3x8x8:64:4",
			[]string{"fc1.w", "fc1.b", "out.w", "out.b"}, []int{4, 64}, []int{4}},
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
			if n.Embedding() != tt.wantOutW[1] {
				t.Errorf("Embedding() = %d; want the output layer's input width %d", n.Embedding(), tt.wantOutW[1])
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
		{Spec{Arch: ArchLeNet, Activation: ActTanh}, ""},
		{Spec{Arch: ArchMLP, Activation: ActSigmoid}, ""},
		{Spec{Arch: ArchResNet18}, ""},
		{Spec{Arch: ArchLeNet, Activation: "elu"}, "spec.activation"},
		{Spec{Arch: ArchCNNHiCS, Activation: ActTanh}, "spec.activation"},
		{Spec{Arch: ArchLeNet, Hidden: []int{3}}, "spec.hidden"},
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
		// 3×3 valid convolutions and pools: 17 → 15 → 7 → 5 → 2 → 0.
		{"cnn-hics-cifar input too small", Spec{Arch: ArchCNNHiCSCIFAR}, [3]int{3, 17, 17}, 10},
		{"lenet input too small", Spec{Arch: ArchLeNet}, [3]int{1, 15, 15}, 10},
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
	tr := newTrainer()
	for _, tt := range tests {
		n := mustNet(t, tt.spec, mnist, 10)
		if got := tr.evalBatchFor(n); got != tt.want {
			t.Errorf("evalBatchFor(%s) = %d; want %d", n.Key(), got, tt.want)
		}
	}
}
