package trainer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/flsweep/flsweep/errkind"
)

// ErrInvalid marks bad input: an unknown architecture, an invalid
// hyperparameter, a weight vector of the wrong length, a label outside the
// class range. Errors wrap it; test with errors.Is. Retrying cannot help.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid argument")

// ErrDiverged marks a training run in which a loss or weight became NaN or
// ±Inf. Errors wrap it together with the step at which it was seen.
var ErrDiverged = errkind.New(errkind.Diverged, "training diverged")

// Architecture names accepted in Spec.Arch.
const (
	ArchLogReg         = "logreg"           // one linear layer Dim → classes
	ArchMLP            = "mlp"              // Dim → Hidden... (activation) → classes
	ArchCNNHiCS        = "cnn-hics"         // HiCS-FL's Fashion-MNIST CNN of the paper (models.py::FMNIST_CNN)
	ArchCNNHiCS3Conv   = "cnn-hics-3conv"   // the official code's Fashion-MNIST CNN (cnn.py::FMNIST_CNN)
	ArchCNNHiCSCIFAR   = "cnn-hics-cifar"   // HiCS-FL's CIFAR-10 CNN (cnn.py::CIFAR10_CNN)
	ArchCNNFedEBACIFAR = "cnn-fedeba-cifar" // FedEBA+'s CIFAR-10 CNN (easyFL, 797,962 parameters)
	ArchLeNet          = "lenet"            // LeNet-5 of RLU (Chen & Vikalo, ICML 2024), Activation relu|tanh|sigmoid
	ArchResNet18       = "resnet18"         // ResNet-18 for 32×32 inputs (FNR-FL; He et al. 2016)
)

var knownArchs = []string{ArchLogReg, ArchMLP, ArchCNNHiCS, ArchCNNHiCS3Conv, ArchCNNHiCSCIFAR, ArchCNNFedEBACIFAR, ArchLeNet, ArchResNet18}

// Activation names accepted in Spec.Activation (mlp and lenet).
const (
	ActReLU    = "relu"
	ActTanh    = "tanh"
	ActSigmoid = "sigmoid"
)

// defaultHidden is the MLP of FedEBA+ (specs/fedeba.md §3.1, easyFL's
// 784-200-ReLU-200-ReLU-10, 199,210 parameters).
var defaultHidden = [...]int{200, 200}

// PyTorch's defaults for the layers the nets share.
const (
	bnMomentum = 0.1 // BatchNorm2d momentum
	bnEps      = 1e-5
	preluInit  = 0.25 // nn.PReLU() initial slope
)

// Spec names an architecture, as written in a sweep spec.
type Spec struct {
	Arch       string // one of the Arch constants
	Hidden     []int  // mlp hidden widths; nil means [200, 200]. Must be empty for other archs.
	Activation string // mlp and lenet: relu (default, also ""), tanh or sigmoid. Must be empty for other archs.
}

// Validate reports whether s names a known architecture with valid options.
// Errors name the field and the fix and wrap ErrInvalid.
func (s Spec) Validate() error {
	if !contains(knownArchs, s.Arch) {
		return fmt.Errorf("spec.arch = %q is unknown; use one of %s: %w",
			s.Arch, strings.Join(knownArchs, ", "), ErrInvalid)
	}
	if s.Arch == ArchMLP {
		if s.Hidden != nil && len(s.Hidden) == 0 {
			return fmt.Errorf("spec.hidden is empty; omit it for the default [200, 200], or use arch %q for no hidden layer: %w",
				ArchLogReg, ErrInvalid)
		}
		for i, h := range s.Hidden {
			if h <= 0 {
				return fmt.Errorf("spec.hidden[%d] = %d; hidden widths must be > 0: %w", i, h, ErrInvalid)
			}
		}
	} else if len(s.Hidden) > 0 {
		return fmt.Errorf("spec.hidden = %v is only allowed with arch %q; remove it for arch %q: %w",
			s.Hidden, ArchMLP, s.Arch, ErrInvalid)
	}
	switch {
	case s.Activation == "":
	case s.Arch != ArchMLP && s.Arch != ArchLeNet:
		return fmt.Errorf("spec.activation = %q is only allowed with arch %q or %q; arch %q has a fixed activation: %w",
			s.Activation, ArchMLP, ArchLeNet, s.Arch, ErrInvalid)
	case s.Activation != ActReLU && s.Activation != ActTanh && s.Activation != ActSigmoid:
		return fmt.Errorf("spec.activation = %q is unknown; use %s, %s or %s: %w",
			s.Activation, ActReLU, ActTanh, ActSigmoid, ErrInvalid)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// HiddenEmbedding reports whether nets of this architecture have a hidden
// layer feeding the output layer (every architecture but logreg, whose
// output reads the input): MOON's representation z and FNR-FL's feature.
func (s Spec) HiddenEmbedding() bool { return s.Arch != ArchLogReg }

// hidden returns the MLP hidden widths with the default applied.
func (s Spec) hidden() []int {
	if s.Arch != ArchMLP {
		return nil
	}
	if s.Hidden == nil {
		return defaultHidden[:]
	}
	return s.Hidden
}

// activation returns the activation with the default applied ("" for archs
// whose activations are fixed).
func (s Spec) activation() string {
	if s.Arch != ArchMLP && s.Arch != ArchLeNet {
		return ""
	}
	if s.Activation == "" {
		return ActReLU
	}
	return s.Activation
}

// Param is one tensor inside the flat weight vector.
//
// Shapes follow PyTorch: a linear weight is [out, in] (row j holds the
// weights of output unit j), a convolution weight is [out, in, kh, kw].
type Param struct {
	Name      string // e.g. "fc1.w", "fc1.b", "conv1.w", "bn1.gamma", "bn1.running_mean", "prelu1.a", "out.w", "out.b"
	Shape     []int
	Offset    int // start in the flat vector
	Len       int
	Trainable bool // false for buffers (BatchNorm running statistics): not updated by the optimiser, but part of the model and averaged by FL like weights
}

type layerKind int

const (
	layerLinear  layerKind = iota // y = x·Wᵀ + b, x the source flattened per sample
	layerConv                     // 2-D convolution with stride, zero padding and optional bias
	layerAct                      // elementwise ReLU, Tanh or Sigmoid
	layerPReLU                    // PReLU with one shared slope
	layerBN                       // BatchNorm2d
	layerMaxPool                  // 2×2 max-pool, stride 2
	layerAvgPool                  // global average pool [C, H, W] → [C]
	layerDropout                  // inverted dropout, training graphs only
	layerAdd                      // y = src + src2 (residual connection)
	layerEmbed                    // the embedding that feeds the output layer (an identity tap; see op_embed.go)
)

// actKind is an elementwise activation.
type actKind int

const (
	actReLU actKind = iota
	actTanh
	actSigmoid
)

var actNames = map[string]actKind{ActReLU: actReLU, ActTanh: actTanh, ActSigmoid: actSigmoid}

func (a actKind) String() string {
	return [...]string{"relu", "tanh", "sigmoid"}[a]
}

// initKind is how Net.Init draws a linear or convolution weight. Biases
// always follow PyTorch's default U(±1/√fan_in).
type initKind int

const (
	initTorch      initKind = iota // PyTorch's default: U(±1/√fan_in) (kaiming_uniform with a = √5)
	initXavierReLU                 // nn.init.xavier_uniform_(w, gain=calculate_gain('relu')): U(±√2·√(6/(fan_in+fan_out)))
	initKaimingOut                 // nn.init.kaiming_normal_(w, mode='fan_out', nonlinearity='relu'): N(0, 2/fan_out)
)

// shape is the shape of one sample's activations: [C, H, W]; a flat vector
// of F features is [F, 1, 1].
type shape [3]int

func (s shape) size() int { return s[0] * s[1] * s[2] }

// layer is one node of a Net's forward pass. Param fields index Net.params
// (−1 when absent); src and src2 index Net.layers (−1 is the net's input).
type layer struct {
	kind      layerKind
	name      string
	src, src2 int
	spatial   bool // the output is [B, C, H, W] (otherwise [B, F])
	in, out   shape
	w, b      int // linear/conv weight and bias (b −1 if the layer has none); prelu: w = slope; bn: w = gamma, b = beta
	rm, rv    int // bn running mean and variance
	k, stride int // conv kernel size and stride
	pad       int // conv zero padding
	act       actKind
	p         float64 // dropout probability
	init      initKind
}

// Net is a compiled architecture for one input shape and class count: the
// parameter layout and the layer graph. It is immutable and safe for
// concurrent use.
type Net struct {
	spec    Spec
	in      [3]int
	classes int
	key     string
	params  []Param
	layers  []layer
	size    int
	outW    int // index of the output layer's weight in params
	embed   int // index of the embedding layer in layers, or −1 (logreg: the input is the embedding)
	act     int // forward activations per sample (floats), for sizing eval batches
}

// NewNet lays out the architecture s for inputs of shape in (C, H, W) and
// the given number of classes.
func NewNet(s Spec, in [3]int, classes int) (*Net, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if in[0] <= 0 || in[1] <= 0 || in[2] <= 0 {
		return nil, fmt.Errorf("input shape %v must be positive (C, H, W): %w", in, ErrInvalid)
	}
	if classes < 2 {
		return nil, fmt.Errorf("classes = %d; need at least 2: %w", classes, ErrInvalid)
	}
	n := &Net{
		spec:    Spec{Arch: s.Arch, Hidden: append([]int(nil), s.hidden()...), Activation: s.activation()},
		in:      in,
		classes: classes,
		embed:   -1,
	}
	b := &builder{n: n, cur: -1, shape: shape(in), spatial: true}
	switch s.Arch {
	case ArchLogReg:
		b.linear("out", classes, initTorch)
	case ArchMLP:
		a := actNames[n.spec.Activation]
		for i, h := range n.spec.Hidden {
			name := "fc" + strconv.Itoa(i+1)
			b.linear(name, h, initTorch)
			b.activation(name+"."+a.String(), a)
		}
		b.output(initTorch)
	case ArchCNNHiCS:
		b.cnnHiCS()
	case ArchCNNHiCS3Conv:
		b.cnnHiCS3Conv()
	case ArchCNNHiCSCIFAR:
		b.cnnHiCSCIFAR()
	case ArchCNNFedEBACIFAR:
		b.cnnFedEBACIFAR()
	case ArchLeNet:
		b.lenet(actNames[n.spec.Activation])
	case ArchResNet18:
		b.resnet18()
	}
	if b.err != nil {
		return nil, b.err
	}
	n.outW = len(n.params) - 2
	n.key = n.makeKey()
	n.act = n.activations()
	return n, nil
}

// builder appends layers to a Net, tracking the current output's shape.
type builder struct {
	n       *Net
	cur     int   // index of the layer whose output is current; −1 = the input
	shape   shape // its per-sample shape
	spatial bool  // whether it is [B, C, H, W]
	err     error
}

func (b *builder) push(l layer) int {
	b.n.layers = append(b.n.layers, l)
	b.cur = len(b.n.layers) - 1
	b.shape, b.spatial = l.out, l.spatial
	return b.cur
}

func (b *builder) param(name string, trainable bool, dims ...int) int {
	n := b.n
	size := 1
	for _, d := range dims {
		size *= d
	}
	n.params = append(n.params, Param{Name: name, Shape: dims, Offset: n.size, Len: size, Trainable: trainable})
	n.size += size
	return len(n.params) - 1
}

func (b *builder) fail(format string, a ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("input shape %v is too small for arch %q: "+format+": %w",
			append(append([]any{b.n.in, b.n.spec.Arch}, a...), ErrInvalid)...)
	}
}

// linear appends a fully connected layer of out units on the current output
// (flattened per sample).
func (b *builder) linear(name string, out int, init initKind) {
	w := b.param(name+".w", true, out, b.shape.size())
	bias := b.param(name+".b", true, out)
	b.push(layer{kind: layerLinear, name: name, src: b.cur, in: b.shape, out: shape{out, 1, 1}, w: w, b: bias, init: init})
}

// output appends the embedding tap and the output layer.
func (b *builder) output(init initKind) {
	b.n.embed = b.push(layer{kind: layerEmbed, name: "embed", src: b.cur, in: shape{b.shape.size(), 1, 1}, out: shape{b.shape.size(), 1, 1}})
	b.linear("out", b.n.classes, init)
}

// conv appends a convolution with cout k×k filters.
func (b *builder) conv(name string, cout, k, stride, pad int, bias bool, init initKind) {
	b.convFrom(b.cur, b.shape, name, cout, k, stride, pad, bias, init)
}

// convFrom appends a convolution of the output of layer src (shape in).
func (b *builder) convFrom(src int, in shape, name string, cout, k, stride, pad int, bias bool, init initKind) int {
	ho, wo := (in[1]+2*pad-k)/stride+1, (in[2]+2*pad-k)/stride+1
	if in[1]+2*pad < k || in[2]+2*pad < k {
		b.fail("%s needs H, W ≥ %d, has %d×%d", name, k-2*pad, in[1], in[2])
		ho, wo = 1, 1
	}
	w := b.param(name+".w", true, cout, in[0], k, k)
	bi := -1
	if bias {
		bi = b.param(name+".b", true, cout)
	}
	return b.push(layer{kind: layerConv, name: name, src: src, spatial: true, in: in, out: shape{cout, ho, wo},
		w: w, b: bi, k: k, stride: stride, pad: pad, init: init})
}

func (b *builder) activation(name string, a actKind) {
	b.push(layer{kind: layerAct, name: name, src: b.cur, spatial: b.spatial, in: b.shape, out: b.shape, act: a})
}

func (b *builder) prelu(name string) {
	b.push(layer{kind: layerPReLU, name: name, src: b.cur, spatial: b.spatial, in: b.shape, out: b.shape, w: b.param(name+".a", true, 1)})
}

func (b *builder) bn(name string) {
	c := b.shape[0]
	b.push(layer{
		kind: layerBN, name: name, src: b.cur, spatial: true, in: b.shape, out: b.shape,
		w:  b.param(name+".gamma", true, c),
		b:  b.param(name+".beta", true, c),
		rm: b.param(name+".running_mean", false, c),
		rv: b.param(name+".running_var", false, c),
	})
}

func (b *builder) maxPool(name string) {
	if b.shape[1] < 2 || b.shape[2] < 2 {
		b.fail("%s needs H, W ≥ 2, has %d×%d", name, b.shape[1], b.shape[2])
	}
	out := shape{b.shape[0], max(1, b.shape[1]/2), max(1, b.shape[2]/2)}
	b.push(layer{kind: layerMaxPool, name: name, src: b.cur, spatial: true, in: b.shape, out: out})
}

func (b *builder) dropout(name string, p float64) {
	b.push(layer{kind: layerDropout, name: name, src: b.cur, spatial: b.spatial, in: b.shape, out: b.shape, p: p})
}

// cnnHiCS lays out HiCS-FL's Fashion-MNIST CNN of the paper (Chen & Vikalo,
// NeurIPS 2024, App. A.1; official code models.py::FMNIST_CNN):
//
//	conv(C→32, 5×5) → PReLU → BatchNorm2d(32) → MaxPool 2×2 →
//	conv(32→32, 5×5) → PReLU → BatchNorm2d(32) → MaxPool 2×2 → Dropout(0.2) →
//	flatten (32·4·4 = 512 for 1×28×28) → Linear(512→classes)
//
// with PyTorch's default initialisation. The servers of the official code
// use another model, cnn-hics-3conv (specs/hicsfl.md §3.2).
func (b *builder) cnnHiCS() {
	for i := 1; i <= 2; i++ {
		s := strconv.Itoa(i)
		b.conv("conv"+s, 32, 5, 1, 0, true, initTorch)
		b.prelu("prelu" + s)
		b.bn("bn" + s)
		b.maxPool("pool" + s)
	}
	b.dropout("drop", 0.2)
	b.output(initTorch)
}

// cnnHiCS3Conv lays out the Fashion-MNIST CNN the official HiCS-FL servers
// use (cnn.py::FMNIST_CNN, specs/hicsfl.md §3.2):
//
//	conv(C→32, 3×3, pad 1, no bias) → PReLU → BN(32) →
//	conv(32→32, 3×3, pad 1) → PReLU → BN(32) → MaxPool 2×2 →
//	conv(32→64, 3×3, pad 1) → PReLU → BN(64) → MaxPool 2×2 →
//	flatten (64·7·7 = 3,136) → Linear(→64) → ReLU → Linear(64→classes)
//
// Conv and linear weights are Xavier-uniform with ReLU gain, as the servers
// initialise them (server_hics.py); biases keep PyTorch's default.
func (b *builder) cnnHiCS3Conv() {
	b.conv("conv1", 32, 3, 1, 1, false, initXavierReLU)
	b.prelu("prelu1")
	b.bn("bn1")
	b.conv("conv2", 32, 3, 1, 1, true, initXavierReLU)
	b.prelu("prelu2")
	b.bn("bn2")
	b.maxPool("pool2")
	b.conv("conv3", 64, 3, 1, 1, true, initXavierReLU)
	b.prelu("prelu3")
	b.bn("bn3")
	b.maxPool("pool3")
	b.linear("fc1", 64, initXavierReLU)
	b.activation("fc1.relu", actReLU)
	b.output(initXavierReLU)
}

// cnnHiCSCIFAR lays out HiCS-FL's CIFAR-10 CNN ("the model used by the paper
// introducing FedAvg"; cnn.py::CIFAR10_CNN, specs/hicsfl.md §3.2; the same
// net is the client-sampling theory paper's CNN_CIFAR_dropout,
// specs/sampling-theory.md §5):
//
//	conv(C→32, 3×3) → ReLU → MaxPool 2×2 → Dropout(0.2) →
//	conv(32→64, 3×3) → ReLU → MaxPool 2×2 → Dropout(0.2) →
//	conv(64→64, 3×3) → Dropout(0.2) →
//	flatten (64·4·4 = 1,024 for 3×32×32) → Linear(→64) → ReLU → Linear(64→classes)
//
// Conv and linear weights are Xavier-uniform with ReLU gain (server_hics.py).
func (b *builder) cnnHiCSCIFAR() {
	b.conv("conv1", 32, 3, 1, 0, true, initXavierReLU)
	b.activation("conv1.relu", actReLU)
	b.maxPool("pool1")
	b.dropout("drop1", 0.2)
	b.conv("conv2", 64, 3, 1, 0, true, initXavierReLU)
	b.activation("conv2.relu", actReLU)
	b.maxPool("pool2")
	b.dropout("drop2", 0.2)
	b.conv("conv3", 64, 3, 1, 0, true, initXavierReLU)
	b.dropout("drop3", 0.2)
	b.linear("fc1", 64, initXavierReLU)
	b.activation("fc1.relu", actReLU)
	b.output(initXavierReLU)
}

// cnnFedEBACIFAR lays out FedEBA+'s CIFAR-10 CNN (easyFL's CNN,
// specs/fedeba.md §3.1), with PyTorch's default initialisation:
//
//	conv(C→64, 5×5) → ReLU → MaxPool 2×2 → conv(64→64, 5×5) → ReLU → MaxPool 2×2 →
//	flatten (64·5·5 = 1,600 for 3×32×32) → Linear(→384) → ReLU → Linear(384→192) → ReLU →
//	Linear(192→classes)
func (b *builder) cnnFedEBACIFAR() {
	for i := 1; i <= 2; i++ {
		s := strconv.Itoa(i)
		b.conv("conv"+s, 64, 5, 1, 0, true, initTorch)
		b.activation("conv"+s+".relu", actReLU)
		b.maxPool("pool" + s)
	}
	b.linear("fc1", 384, initTorch)
	b.activation("fc1.relu", actReLU)
	b.linear("fc2", 192, initTorch)
	b.activation("fc2.relu", actReLU)
	b.output(initTorch)
}

// lenet lays out the LeNet-5 of RLU's official code (models.py::LeNet5,
// specs/rlu.md §4) with activation a after every layer but the last:
//
//	conv(C→6, 5×5) → a → MaxPool 2×2 → conv(6→16, 5×5) → a → MaxPool 2×2 →
//	flatten (16·5·5 = 400 for 32×32, 256 for 28×28) → Linear(→120) → a →
//	Linear(120→84) → a → Linear(84→classes)
//
// Convolution weights are Kaiming-normal with mode fan_out and ReLU gain,
//
//	w ~ N(0, 2/fan_out),  fan_out = out_channels·5·5 (150 for conv1, 400 for conv2)
//
// as the RLU code's kaiming_normal_(m.weight, mode='fan_out',
// nonlinearity='relu'), whatever the activation; their biases and the linear
// layers keep PyTorch's default. With ReLU on 1×28×28 this is also the layout
// of NIID-Bench's SimpleCNN-MNIST (44,426 parameters, specs/fnrfl.md §4),
// which keeps PyTorch's default initialisation throughout.
func (b *builder) lenet(a actKind) {
	for i, c := range []int{6, 16} {
		s := strconv.Itoa(i + 1)
		b.conv("conv"+s, c, 5, 1, 0, true, initKaimingOut)
		b.activation("conv"+s+"."+a.String(), a)
		b.maxPool("pool" + s)
	}
	b.linear("fc1", 120, initTorch)
	b.activation("fc1."+a.String(), a)
	b.linear("fc2", 84, initTorch)
	b.activation("fc2."+a.String(), a)
	b.output(initTorch)
}

// resnet18 lays out ResNet-18 for small images as in FNR-FL's code
// (resnetcifar.py::ResNet18_cifar10; He et al., CVPR 2016, arXiv:1512.03385):
// a 3×3 stride-1 stem without max-pool, four stages of two BasicBlocks
// (64, 128, 256, 512 channels; stages 2–4 start with stride 2 and a 1×1
// convolution + BatchNorm shortcut), global average pooling and a linear
// layer. Convolutions have no bias and are Kaiming-normal (fan_out, ReLU);
// BatchNorm γ = 1, β = 0. For 3×32×32 and 10 classes it has 11,173,962
// trainable parameters (specs/fnrfl.md §0).
func (b *builder) resnet18() {
	b.conv("conv1", 64, 3, 1, 1, false, initKaimingOut)
	b.bn("bn1")
	b.activation("relu1", actReLU)
	for stage, c := range []int{64, 128, 256, 512} {
		for blk := range 2 {
			stride := 1
			if stage > 0 && blk == 0 {
				stride = 2
			}
			b.basicBlock(fmt.Sprintf("layer%d.%d", stage+1, blk), c, stride)
		}
	}
	b.push(layer{kind: layerAvgPool, name: "avgpool", src: b.cur, in: b.shape, out: shape{b.shape[0], 1, 1}})
	b.output(initTorch)
}

// basicBlock appends relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)).
func (b *builder) basicBlock(name string, c, stride int) {
	x, xs := b.cur, b.shape
	b.convFrom(x, xs, name+".conv1", c, 3, stride, 1, false, initKaimingOut)
	b.bn(name + ".bn1")
	b.activation(name+".relu1", actReLU)
	b.conv(name+".conv2", c, 3, 1, 1, false, initKaimingOut)
	b.bn(name + ".bn2")
	main, ms := b.cur, b.shape
	short := x
	if stride != 1 || xs[0] != c {
		b.convFrom(x, xs, name+".shortcut.conv", c, 1, stride, 0, false, initKaimingOut)
		b.bn(name + ".shortcut.bn")
		short = b.cur
	}
	b.push(layer{kind: layerAdd, name: name + ".add", src: main, src2: short, spatial: true, in: ms, out: ms})
	b.activation(name+".relu2", actReLU)
}

// activations returns the number of floats the forward pass of one sample
// produces in an evaluation graph, summed over layers.
func (n *Net) activations() int {
	total := 0
	for _, l := range n.layers {
		if l.kind != layerDropout {
			total += l.out.size()
		}
	}
	return total
}

func (n *Net) makeKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%dx%dx%d:", n.spec.Arch, n.in[0], n.in[1], n.in[2])
	if n.spec.Arch == ArchMLP {
		for i, h := range n.spec.Hidden {
			if i > 0 {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(h))
		}
		b.WriteByte(':')
	}
	// The default ReLU of mlp stays out of the key, so keys of existing
	// models do not change; lenet always names its activation.
	if a := n.spec.Activation; a != "" && (n.spec.Arch == ArchLeNet || a != ActReLU) {
		b.WriteString(a)
		b.WriteByte(':')
	}
	b.WriteString(strconv.Itoa(n.classes))
	return b.String()
}

// Key is the canonical identity of the net, e.g. "mlp:1x28x28:200-200:10",
// "logreg:1x28x28:10", "cnn-hics:1x28x28:10" or "lenet:3x32x32:tanh:10".
// Two nets with equal keys have equal layouts.
func (n *Net) Key() string { return n.key }

// Spec returns the architecture with defaults applied (Hidden filled in for
// mlp, Activation for mlp and lenet).
func (n *Net) Spec() Spec {
	return Spec{Arch: n.spec.Arch, Hidden: append([]int(nil), n.spec.Hidden...), Activation: n.spec.Activation}
}

// Input returns the input shape (C, H, W).
func (n *Net) Input() [3]int { return n.in }

// Dim returns the number of input features, C·H·W.
func (n *Net) Dim() int { return n.in[0] * n.in[1] * n.in[2] }

// Classes returns the number of output classes.
func (n *Net) Classes() int { return n.classes }

// NumParams returns the length of the flat vector (trainable weights and buffers).
func (n *Net) NumParams() int { return n.size }

// NumTrainable returns the number of trainable parameters (NumParams minus
// the BatchNorm running statistics).
func (n *Net) NumTrainable() int {
	t := 0
	for _, p := range n.params {
		if p.Trainable {
			t += p.Len
		}
	}
	return t
}

// Params returns the layout of the flat vector, in order; the tensors are
// contiguous and cover [0, NumParams()).
func (n *Net) Params() []Param {
	out := make([]Param, len(n.params))
	for i, p := range n.params {
		p.Shape = append([]int(nil), p.Shape...)
		out[i] = p
	}
	return out
}

// Output returns the output layer's weight ([classes, embedding]) and bias
// ([classes]). The embedding feeding it (Embedding) is the last hidden layer
// (the input itself for logreg). HiCS-FL's heterogeneity estimate and the
// label-recovery attacks read the bias update Δb = b_local − b_global.
func (n *Net) Output() (w, b Param) {
	w, b = n.params[n.outW], n.params[n.outW+1]
	w.Shape = append([]int(nil), w.Shape...)
	b.Shape = append([]int(nil), b.Shape...)
	return w, b
}

// Embedding returns the width L of the embedding that feeds the output
// layer: the representation z of MOON's contrastive loss, FNR-FL's feature
// whose norm is measured, and the e of the label-recovery attacks. It is
// the output layer's input dimension (Dim for logreg).
func (n *Net) Embedding() int { return n.params[n.outW].Shape[1] }

// FLOPs returns the floating-point operations of one training step per
// sample, counting the matrix products only (2 per multiply-add):
//
//	2·(forward + weight-gradient + input-gradient multiply-adds)
//
// where a linear layer has in·out multiply-adds and a convolution
// cout·cin·k²·ho·wo, each once in the forward pass, once in its weight
// gradient and once in its input gradient, except the input gradient of a
// layer that reads the net's input. Elementwise work (activations,
// BatchNorm, pooling, the loss, the optimiser) is not counted.
func (n *Net) FLOPs() int64 {
	var f int64
	for _, l := range n.layers {
		var macs int64
		switch l.kind {
		case layerLinear:
			macs = int64(l.in.size()) * int64(l.out[0])
		case layerConv:
			macs = int64(l.out[0]) * int64(l.in[0]*l.k*l.k) * int64(l.out[1]*l.out[2])
		default:
			continue
		}
		f += 2 * 2 * macs
		if l.src >= 0 {
			f += 2 * macs
		}
	}
	return f
}

// Init writes a fresh model into dst, drawing from r in layout order. Unless
// an architecture's documentation says otherwise it follows PyTorch's
// defaults: linear and convolution weights and biases are drawn from
// U(−1/√fan_in, 1/√fan_in) (fan_in = in, or in·kh·kw for a convolution; this
// is kaiming_uniform(a=√5) for the weights), PReLU slopes are 0.25,
// BatchNorm γ = 1, β = 0, running mean 0 and running variance 1.
func (n *Net) Init(dst []float32, r *rand.Rand) error {
	if len(dst) != n.size {
		return fmt.Errorf("init: dst has length %d; net %s has %d parameters: %w", len(dst), n.key, n.size, ErrInvalid)
	}
	if r == nil {
		return fmt.Errorf("init: nil *rand.Rand; pass a seeded stream: %w", ErrInvalid)
	}
	fill := func(i int, v float32) {
		p := n.params[i]
		for j := range dst[p.Offset : p.Offset+p.Len] {
			dst[p.Offset+j] = v
		}
	}
	uniform := func(i int, bound float64) {
		p := n.params[i]
		for j := range dst[p.Offset : p.Offset+p.Len] {
			dst[p.Offset+j] = float32(bound * (2*r.Float64() - 1))
		}
	}
	normal := func(i int, std float64) {
		p := n.params[i]
		for j := range dst[p.Offset : p.Offset+p.Len] {
			dst[p.Offset+j] = float32(std * r.NormFloat64())
		}
	}
	weights := func(l layer, fanIn, fanOut int) {
		switch l.init {
		case initTorch:
			uniform(l.w, 1/math.Sqrt(float64(fanIn)))
		case initXavierReLU:
			uniform(l.w, math.Sqrt2*math.Sqrt(6/float64(fanIn+fanOut)))
		case initKaimingOut:
			normal(l.w, math.Sqrt(2/float64(fanOut)))
		}
		if l.b >= 0 {
			uniform(l.b, 1/math.Sqrt(float64(fanIn)))
		}
	}
	for _, l := range n.layers {
		switch l.kind {
		case layerLinear:
			weights(l, l.in.size(), l.out[0])
		case layerConv:
			weights(l, l.in[0]*l.k*l.k, l.out[0]*l.k*l.k)
		case layerPReLU:
			fill(l.w, preluInit)
		case layerBN:
			fill(l.w, 1)
			fill(l.b, 0)
			fill(l.rm, 0)
			fill(l.rv, 1)
		}
	}
	return nil
}
