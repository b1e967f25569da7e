package trainer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrInvalid marks bad input: an unknown architecture, an invalid
// hyperparameter, a weight vector of the wrong length, a label outside the
// class range. Errors wrap it; test with errors.Is. Retrying cannot help.
var ErrInvalid = errors.New("invalid argument")

// ErrDiverged marks a training run in which a loss or weight became NaN or
// ±Inf. Errors wrap it together with the step at which it was seen.
var ErrDiverged = errors.New("training diverged")

// Architecture names accepted in Spec.Arch.
const (
	ArchLogReg  = "logreg"   // one linear layer Dim → classes
	ArchMLP     = "mlp"      // Dim → Hidden... (ReLU) → classes
	ArchCNNHiCS = "cnn-hics" // HiCS-FL's Fashion-MNIST CNN (models.py::FMNIST_CNN)
)

var knownArchs = []string{ArchLogReg, ArchMLP, ArchCNNHiCS}

// defaultHidden is the MLP of FedEBA+ (specs/fedeba.md §3.1, easyFL's
// 784-200-ReLU-200-ReLU-10, 199,210 parameters).
var defaultHidden = [...]int{200, 200}

// Layer constants of the HiCS-FL CNN (specs/hicsfl.md §3.2; official code
// models.py::FMNIST_CNN).
const (
	hicsChannels = 32  // both convolutions have 32 output channels
	hicsKernel   = 5   // 5×5 kernels, stride 1, no padding
	hicsDropout  = 0.2 // Dropout(0.2) before the linear layer
	bnMomentum   = 0.1 // PyTorch BatchNorm2d default momentum
	bnEps        = 1e-5
	preluInit    = 0.25 // PyTorch nn.PReLU() default init
)

// Spec names an architecture, as written in a sweep spec.
type Spec struct {
	Arch   string // "logreg" | "mlp" | "cnn-hics"
	Hidden []int  // mlp hidden widths; nil means [200, 200]. Must be empty for other archs.
}

// Validate reports whether s names a known architecture with valid options.
// Errors name the field and the fix and wrap ErrInvalid.
func (s Spec) Validate() error {
	switch s.Arch {
	case ArchMLP:
		if s.Hidden != nil && len(s.Hidden) == 0 {
			return fmt.Errorf("spec.hidden is empty; omit it for the default [200, 200], or use arch %q for no hidden layer: %w",
				ArchLogReg, ErrInvalid)
		}
		for i, h := range s.Hidden {
			if h <= 0 {
				return fmt.Errorf("spec.hidden[%d] = %d; hidden widths must be > 0: %w", i, h, ErrInvalid)
			}
		}
		return nil
	case ArchLogReg, ArchCNNHiCS:
		if len(s.Hidden) > 0 {
			return fmt.Errorf("spec.hidden = %v is only allowed with arch %q; remove it for arch %q: %w",
				s.Hidden, ArchMLP, s.Arch, ErrInvalid)
		}
		return nil
	default:
		return fmt.Errorf("spec.arch = %q is unknown; use one of %s: %w",
			s.Arch, strings.Join(knownArchs, ", "), ErrInvalid)
	}
}

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
	layerLinear  layerKind = iota // y = x·Wᵀ + b
	layerReLU                     // y = max(x, 0)
	layerConv                     // valid 2-D convolution, stride 1, with bias
	layerPReLU                    // one shared slope
	layerBN                       // BatchNorm2d
	layerMaxPool                  // 2×2, stride 2
	layerDropout                  // inverted dropout, training only
	layerFlatten                  // [B, C, H, W] → [B, C·H·W]
)

// layer is one step of a Net's forward pass. Param fields index Net.params.
type layer struct {
	kind    layerKind
	name    string
	w, b    int    // linear/conv weight and bias; prelu: w = slope; bn: w = gamma, b = beta
	rm, rv  int    // bn running mean and variance
	in, out int    // linear: features; conv: channels
	shape   [3]int // C, H, W of the layer's input (conv, prelu, bn, pool, dropout, flatten)
	k       int    // conv kernel size
	p       float64
}

// Net is a compiled architecture for one input shape and class count: the
// parameter layout and the layer sequence. It is immutable and safe for
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
	n := &Net{spec: Spec{Arch: s.Arch, Hidden: append([]int(nil), s.hidden()...)}, in: in, classes: classes}
	var err error
	switch s.Arch {
	case ArchLogReg:
		n.addLinear("out", in[0]*in[1]*in[2], classes, false)
	case ArchMLP:
		width := in[0] * in[1] * in[2]
		for i, h := range n.spec.Hidden {
			n.addLinear("fc"+strconv.Itoa(i+1), width, h, true)
			width = h
		}
		n.addLinear("out", width, classes, false)
	case ArchCNNHiCS:
		err = n.buildCNNHiCS()
	}
	if err != nil {
		return nil, err
	}
	n.outW = len(n.params) - 2
	n.key = n.makeKey()
	n.act = n.activations()
	return n, nil
}

// activations returns the number of floats the forward pass of one sample
// produces, summed over layers.
func (n *Net) activations() int {
	total := 0
	width := n.Dim()
	for _, l := range n.layers {
		switch l.kind {
		case layerLinear, layerReLU:
			if l.kind == layerLinear {
				width = l.out
			}
		case layerConv:
			width = l.out * (l.shape[1] - l.k + 1) * (l.shape[2] - l.k + 1)
		case layerPReLU, layerBN, layerDropout:
			width = l.shape[0] * l.shape[1] * l.shape[2]
		case layerMaxPool:
			width = l.shape[0] * (l.shape[1] / 2) * (l.shape[2] / 2)
		case layerFlatten:
			continue // a view
		}
		total += width
	}
	return total
}

// buildCNNHiCS lays out HiCS-FL's Fashion-MNIST CNN (Chen & Vikalo, NeurIPS
// 2024, App. A.1; official code models.py::FMNIST_CNN):
//
//	conv(C→32, 5×5) → PReLU → BatchNorm2d(32) → MaxPool 2×2 →
//	conv(32→32, 5×5) → PReLU → BatchNorm2d(32) → MaxPool 2×2 → Dropout(0.2) →
//	flatten (32·4·4 = 512 for 1×28×28) → Linear(512→classes)
//
// Note that the servers of the official code use a different model
// (cnn.py::FMNIST_CNN, specs/hicsfl.md §3.2); this is the paper's model.
func (n *Net) buildCNNHiCS() error {
	c, h, w := n.in[0], n.in[1], n.in[2]
	for i := 1; i <= 2; i++ {
		h, w = h-hicsKernel+1, w-hicsKernel+1
		if h < 2 || w < 2 {
			return fmt.Errorf("input shape %v is too small for arch %q (two 5×5 convolutions and two 2×2 pools need H, W ≥ 16): %w",
				n.in, ArchCNNHiCS, ErrInvalid)
		}
		s := strconv.Itoa(i)
		n.addConv("conv"+s, [3]int{c, h + hicsKernel - 1, w + hicsKernel - 1}, hicsChannels, hicsKernel)
		c = hicsChannels
		shape := [3]int{c, h, w}
		n.layers = append(n.layers, layer{kind: layerPReLU, name: "prelu" + s, w: n.addParam("prelu"+s+".a", true, 1), shape: shape})
		n.layers = append(n.layers, layer{
			kind: layerBN, name: "bn" + s, shape: shape,
			w:  n.addParam("bn"+s+".gamma", true, c),
			b:  n.addParam("bn"+s+".beta", true, c),
			rm: n.addParam("bn"+s+".running_mean", false, c),
			rv: n.addParam("bn"+s+".running_var", false, c),
		})
		n.layers = append(n.layers, layer{kind: layerMaxPool, name: "pool" + s, shape: shape})
		h, w = h/2, w/2
	}
	shape := [3]int{c, h, w}
	n.layers = append(n.layers, layer{kind: layerDropout, name: "drop", shape: shape, p: hicsDropout})
	n.layers = append(n.layers, layer{kind: layerFlatten, name: "flat", shape: shape})
	n.addLinear("out", c*h*w, n.classes, false)
	return nil
}

func (n *Net) addParam(name string, trainable bool, shape ...int) int {
	size := 1
	for _, d := range shape {
		size *= d
	}
	n.params = append(n.params, Param{Name: name, Shape: shape, Offset: n.size, Len: size, Trainable: trainable})
	n.size += size
	return len(n.params) - 1
}

func (n *Net) addLinear(name string, in, out int, relu bool) {
	w := n.addParam(name+".w", true, out, in)
	b := n.addParam(name+".b", true, out)
	n.layers = append(n.layers, layer{kind: layerLinear, name: name, w: w, b: b, in: in, out: out})
	if relu {
		n.layers = append(n.layers, layer{kind: layerReLU, name: name + ".relu"})
	}
}

func (n *Net) addConv(name string, in [3]int, out, k int) {
	w := n.addParam(name+".w", true, out, in[0], k, k)
	b := n.addParam(name+".b", true, out)
	n.layers = append(n.layers, layer{kind: layerConv, name: name, w: w, b: b, in: in[0], out: out, k: k, shape: in})
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
	b.WriteString(strconv.Itoa(n.classes))
	return b.String()
}

// Key is the canonical identity of the net, e.g. "mlp:1x28x28:200-200:10",
// "logreg:1x28x28:10" or "cnn-hics:1x28x28:10". Two nets with equal keys have
// equal layouts.
func (n *Net) Key() string { return n.key }

// Spec returns the architecture with defaults applied (Hidden filled in for mlp).
func (n *Net) Spec() Spec {
	return Spec{Arch: n.spec.Arch, Hidden: append([]int(nil), n.spec.Hidden...)}
}

// Input returns the input shape (C, H, W).
func (n *Net) Input() [3]int { return n.in }

// Dim returns the number of input features, C·H·W.
func (n *Net) Dim() int { return n.in[0] * n.in[1] * n.in[2] }

// Classes returns the number of output classes.
func (n *Net) Classes() int { return n.classes }

// NumParams returns the length of the flat vector (trainable weights and buffers).
func (n *Net) NumParams() int { return n.size }

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
// ([classes]). The embedding feeding it is the last hidden layer (the input
// itself for logreg). HiCS-FL's heterogeneity estimate and the label-recovery
// attacks read the bias update Δb = b_local − b_global.
func (n *Net) Output() (w, b Param) {
	w, b = n.params[n.outW], n.params[n.outW+1]
	w.Shape = append([]int(nil), w.Shape...)
	b.Shape = append([]int(nil), b.Shape...)
	return w, b
}

// Init writes a fresh model into dst, drawing from r in layout order. It
// follows PyTorch's defaults: linear and convolution weights and biases are
// drawn from U(−1/√fan_in, 1/√fan_in) (fan_in = in, or in·kh·kw for a
// convolution; this is kaiming_uniform(a=√5) for the weights), PReLU slopes
// are 0.25, BatchNorm γ = 1, β = 0, running mean 0 and running variance 1.
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
	for _, l := range n.layers {
		switch l.kind {
		case layerLinear:
			bound := 1 / math.Sqrt(float64(l.in))
			uniform(l.w, bound)
			uniform(l.b, bound)
		case layerConv:
			bound := 1 / math.Sqrt(float64(l.in*l.k*l.k))
			uniform(l.w, bound)
			uniform(l.b, bound)
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
