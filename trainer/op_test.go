package trainer

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/vector"
)

// TestXentStable feeds the fused cross-entropy logits with large margins,
// where gorgonia's stock float32 softmax returns NaN (row [100, 0]) and a
// naive exp overflows (margins of 1e4). Expected losses by hand:
// ℓ = log Σ_j exp(z_j) − z_y:
//
//	[0, 0], y=0:        ln 2
//	[100, 0], y=1:      100 + ln(1 + e^−100) − 0 = 100 (to float64 precision)
//	[−1e4, 1e4], y=0:   2e4
//	[1e4, −1e4], y=0:   e^−2e4 ≈ 0
func TestXentStable(t *testing.T) {
	logits := []float32{0, 0, 100, 0, -1e4, 1e4, 1e4, -1e4}
	labels := []float32{0, 1, 0, 0}
	want := []float64{math.Ln2, 100, 2e4, 0}
	op := newXentOp[float32](2)
	z := tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(logits))
	y := tensor.New(tensor.WithShape(4), tensor.WithBacking(labels))
	out, err := op.Do(z, y)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range op.loss {
		if math.Abs(l-want[i]) > 1e-12*math.Max(1, want[i]) {
			t.Errorf("loss[%d] = %v; want %v", i, l, want[i])
		}
	}
	if got, m := float64(*out.(*G.F32)), (want[0]+want[1]+want[2]+want[3])/4; math.Abs(got-m) > 1e-3 {
		t.Errorf("mean loss = %v; want %v", got, m)
	}
	if want := []bool{true, false, false, true}; len(op.correct) != 4 || op.correct[0] != want[0] || op.correct[1] != want[1] || op.correct[2] != want[2] || op.correct[3] != want[3] {
		t.Errorf("correct = %v; want %v", op.correct, want)
	}
	// dℓ/dz = (softmax − onehot)/B, here with seed 1 and B = 4.
	gradOp := &xentGradOp[float32]{fwd: op}
	dz, err := gradOp.Do(z, y, G.NewF32(1))
	if err != nil {
		t.Fatal(err)
	}
	wantDz := []float32{-0.125, 0.125, 0.25, -0.25, -0.25, 0.25, 0, 0}
	for i, v := range dz.(*tensor.Dense).Float32s() {
		if math.Abs(float64(v-wantDz[i])) > 1e-7 {
			t.Errorf("dz[%d] = %v; want %v", i, v, wantDz[i])
		}
	}
}

// TestMaxPoolNaN checks that a NaN input propagates through our max-pool and
// its backward pass instead of producing an invalid index (gorgonia's
// MaxPool2D panics with index −1 on an all-NaN window).
func TestMaxPoolNaN(t *testing.T) {
	nan := float32(math.NaN())
	x := []float32{
		nan, nan, 1, 2,
		nan, nan, 3, 4,
		5, nan, 0, 0,
		6, 7, 0, -1,
	}
	op := &maxPoolOp[float32]{name: "p", c: 1, h: 4, w: 4}
	y, err := op.Do(tensor.New(tensor.WithShape(1, 1, 4, 4), tensor.WithBacking(x)))
	if err != nil {
		t.Fatal(err)
	}
	got := y.(*tensor.Dense).Float32s()
	if !math.IsNaN(float64(got[0])) || got[1] != 4 || !math.IsNaN(float64(got[2])) || got[3] != 0 {
		t.Errorf("maxpool = %v; want [NaN 4 NaN 0]", got)
	}
	dx, err := (&maxPoolDiffOp[float32]{fwd: op}).Do(tensor.New(tensor.WithShape(1, 1, 2, 2), tensor.WithBacking([]float32{1, 2, 3, 4})))
	if err != nil {
		t.Fatal(err)
	}
	var sum float32
	for _, v := range dx.(*tensor.Dense).Float32s() {
		sum += v
	}
	if sum != 10 {
		t.Errorf("Σ dx = %v; want Σ dy = 10 routed to one element per window", sum)
	}
}

// TestReLUBits checks the branch-free float32 ReLU and its gradient against
// their definitions on the special values: ±0, ±Inf, NaN of both signs,
// the smallest subnormals and ordinary numbers.
func TestReLUBits(t *testing.T) {
	nan := float32(math.NaN())
	negNaN := math.Float32frombits(0xffc00000)
	inf := float32(math.Inf(1))
	tiny := math.Float32frombits(1)
	x := []float32{0, float32(math.Copysign(0, -1)), inf, -inf, nan, negNaN, tiny, -tiny, 1.5, -2.5, math.MaxFloat32, -math.MaxFloat32}
	y := make([]float32, len(x))
	relu(y, x)
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(i + 1)
	}
	dx := make([]float32, len(x))
	reluDx(dx, x, dy)
	for i, v := range x {
		wantY := float32(0)
		if v > 0 || v != v {
			wantY = v
		}
		wantDx := float32(0)
		if v > 0 {
			wantDx = dy[i]
		}
		if math.Float32bits(y[i]) != math.Float32bits(wantY) && !(y[i] != y[i] && wantY != wantY) {
			t.Errorf("relu(%v) = %v; want %v", v, y[i], wantY)
		}
		if dx[i] != wantDx {
			t.Errorf("relu'(%v)·%v = %v; want %v", v, dy[i], dx[i], wantDx)
		}
	}
}

// TestConvForward compares the convolution with the definition, computed
// with plain loops in float64:
//
//	y[n, o, i, j] = b[o] + Σ_{c,u,v} W[o, c, u, v]·x[n, c, i·s+u−p, j·s+v−p]   (x = 0 outside)
//
// for the geometries the nets use (valid 5×5, padded 3×3, stride-2 3×3 and
// 1×1 shortcuts, with and without bias). Finite differences check the
// backward pass against the forward; this checks the forward itself.
func TestConvForward(t *testing.T) {
	tests := []struct {
		name          string
		cin, cout     int
		h, w, k, s, p int
		bias          bool
	}{
		{"valid 5x5", 2, 3, 9, 8, 5, 1, 0, true},
		{"padded 3x3 no bias", 2, 3, 5, 6, 3, 1, 1, false},
		{"stride 2 padded 3x3", 3, 4, 8, 7, 3, 2, 1, false},
		{"1x1 stride 2", 3, 2, 6, 6, 1, 2, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ho, wo := (tt.h+2*tt.p-tt.k)/tt.s+1, (tt.w+2*tt.p-tt.k)/tt.s+1
			l := layer{name: "c", in: shape{tt.cin, tt.h, tt.w}, out: shape{tt.cout, ho, wo}, k: tt.k, stride: tt.s, pad: tt.p, b: -1}
			if tt.bias {
				l.b = 0
			}
			const batch = 3
			r := rand.New(rand.NewPCG(7, 7))
			rnd := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = r.NormFloat64()
				}
				return v
			}
			x, w, b := rnd(batch*tt.cin*tt.h*tt.w), rnd(tt.cout*tt.cin*tt.k*tt.k), rnd(tt.cout)
			op := &convOp[float64]{g: newConvGeom(l, testKern), ws: &mem.Workspace[float64]{}}
			args := []G.Value{
				tensor.New(tensor.WithShape(batch, tt.cin, tt.h, tt.w), tensor.WithBacking(x)),
				tensor.New(tensor.WithShape(tt.cout, tt.cin, tt.k, tt.k), tensor.WithBacking(w)),
			}
			if tt.bias {
				args = append(args, tensor.New(tensor.WithShape(tt.cout), tensor.WithBacking(b)))
			}
			out, err := op.Do(args...)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*tensor.Dense).Float64s()
			for n := range batch {
				for o := range tt.cout {
					for i := range ho {
						for j := range wo {
							want := 0.0
							if tt.bias {
								want = b[o]
							}
							for c := range tt.cin {
								for u := range tt.k {
									for v := range tt.k {
										y, xx := i*tt.s+u-tt.p, j*tt.s+v-tt.p
										if y >= 0 && y < tt.h && xx >= 0 && xx < tt.w {
											want += w[((o*tt.cin+c)*tt.k+u)*tt.k+v] * x[((n*tt.cin+c)*tt.h+y)*tt.w+xx]
										}
									}
								}
							}
							if g := got[((n*tt.cout+o)*ho+i)*wo+j]; math.Abs(g-want) > 1e-12*(1+math.Abs(want)) {
								t.Fatalf("y[%d,%d,%d,%d] = %v; want %v", n, o, i, j, g, want)
							}
						}
					}
				}
			}
		})
	}
}

// TestPoolAndAddForward checks global average pooling, the residual add and
// the float32 max-pool against their definitions, and the float32 PReLU
// and its slope gradient against the generic (float64) code.
func TestPoolAndAddForward(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	const b, c, h, w = 2, 3, 4, 6
	x := make([]float64, b*c*h*w)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	xt := tensor.New(tensor.WithShape(b, c, h, w), tensor.WithBacking(x))
	avg, err := (&avgPoolOp[float64]{name: "a", c: c, h: h, w: w}).Do(xt)
	if err != nil {
		t.Fatal(err)
	}
	for p, got := range avg.(*tensor.Dense).Float64s() {
		want := 0.0
		for _, v := range x[p*h*w : (p+1)*h*w] {
			want += v / (h * w)
		}
		if math.Abs(got-want) > 1e-14 {
			t.Errorf("avgpool[%d] = %v; want %v", p, got, want)
		}
	}
	sum, err := (&addOp[float64]{name: "s"}).Do(xt, xt)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range sum.(*tensor.Dense).Float64s() {
		if got != 2*x[i] {
			t.Errorf("add[%d] = %v; want %v", i, got, 2*x[i])
		}
	}

	// Values from a small set, so windows have ties: both paths must pick
	// the same element.
	x32 := make([]float32, len(x))
	x64 := make([]float64, len(x))
	for i := range x32 {
		x32[i] = float32(r.IntN(5)) - 2
		x64[i] = float64(x32[i])
	}
	p32 := &maxPoolOp[float32]{name: "p", c: c, h: h, w: w}
	p64 := &maxPoolOp[float64]{name: "p", c: c, h: h, w: w}
	y32, err := p32.Do(tensor.New(tensor.WithShape(b, c, h, w), tensor.WithBacking(x32)))
	if err != nil {
		t.Fatal(err)
	}
	y64, err := p64.Do(tensor.New(tensor.WithShape(b, c, h, w), tensor.WithBacking(x64)))
	if err != nil {
		t.Fatal(err)
	}
	for o, v := range y32.(*tensor.Dense).Float32s() {
		if float64(v) != y64.(*tensor.Dense).Float64s()[o] || p32.arg[o] != p64.arg[o] {
			t.Errorf("maxpool[%d]: float32 %v at %d, float64 %v at %d", o, v, p32.arg[o], y64.(*tensor.Dense).Float64s()[o], p64.arg[o])
		}
	}

	dy32, dy64 := make([]float32, len(x)), make([]float64, len(x))
	for i := range x {
		x32[i] = float32(x[i])
		x64[i] = float64(x32[i])
		dy32[i] = float32(r.NormFloat64())
		dy64[i] = float64(dy32[i])
	}
	x32[0], x64[0] = 0, 0 // the kink: PReLU's slope applies at 0
	ya, yb := make([]float32, len(x)), make([]float64, len(x))
	prelu(ya, x32, dy32, 0.25)
	prelu(yb, x64, dy64, 0.25)
	for i := range ya {
		if float64(ya[i]) != yb[i] {
			t.Errorf("prelu[%d] (x = %v): float32 %v, float64 %v", i, x32[i], ya[i], yb[i])
		}
	}
	if a, b := negDot(x32, dy32), negDot(x64, dy64); math.Abs(a-b) > 1e-12*math.Abs(b) {
		t.Errorf("Σ_{x≤0} x·dy: float32 path %v, float64 path %v", a, b)
	}
}

// TestReLUPoolFused checks max-pooling with the ReLU fused in
// (maxPoolOp.relu) against a ReLU op followed by the pool, values and
// input gradients bit for bit (signed zeros included), float32 with each
// vector kernel set and the portable loops, and float64: on windows of
// special values (ties, ±0, NaN, negatives only, odd trailing rows and
// columns) and random ones.
func TestReLUPoolFused(t *testing.T) {
	eachVecSetOrNot(t, testReLUPoolFused[float32])
	testReLUPoolFused[float64](t)
}

// eachVecSetOrNot runs test with each vector kernel set the CPU runs and
// with the portable loops.
func eachVecSetOrNot(t *testing.T, test func(*testing.T)) {
	saved := vec
	defer func() { vec = saved }()
	vec = vector.Set{}
	t.Run("portable", test)
	for _, set := range vecSets {
		vec = set
		t.Run(set.Name, test)
	}
}

func testReLUPoolFused[T float](t *testing.T) {
	nan, nz := T(math.NaN()), T(math.Copysign(0, -1))
	const c, h, w = 3, 6, 7 // a trailing row and column the pool drops
	special := []T{
		-1, -2, -3, -4, // negatives only
		nz, -1, 0, -2, // −0 first, then +0
		0, nz, -5, -6,
		3, 3, -1, 2, // a positive tie
		-1, nan, 2, nan, // NaN wins
		nz, nz, nz, nz,
		2, 1, 1, 2,
	}
	r := rand.New(rand.NewPCG(5, 5))
	for batch := 1; batch <= 2; batch++ {
		x := make([]T, batch*c*h*w)
		dy := make([]T, batch*c*(h/2)*(w/2))
		for i := range x {
			x[i] = T(r.NormFloat64())
			if i < len(special) && batch == 1 {
				x[i] = special[i] // spread over windows, not window by window: varied mixes
			}
		}
		for i := range dy {
			dy[i] = T(r.NormFloat64())
		}
		dy[0] = nz
		xt := tensor.New(tensor.WithShape(batch, c, h, w), tensor.WithBacking(x))
		dyt := tensor.New(tensor.WithShape(batch, c, h/2, w/2), tensor.WithBacking(dy))

		act := &actOp[T]{name: "a", act: actReLU, dims: 4}
		ra, err := act.Do(xt)
		if err != nil {
			t.Fatal(err)
		}
		pool := &maxPoolOp[T]{name: "p", c: c, h: h, w: w}
		yt, err := pool.Do(ra)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(yt.(*tensor.Dense).Data().([]T))
		dpt, err := (&maxPoolDiffOp[T]{fwd: pool}).Do(dyt)
		if err != nil {
			t.Fatal(err)
		}
		dxt, err := (&actDxOp[T]{name: "a", act: actReLU, dims: 4}).Do(xt, ra, dpt)
		if err != nil {
			t.Fatal(err)
		}
		wantDx := slices.Clone(dxt.(*tensor.Dense).Data().([]T))

		fused := &maxPoolOp[T]{name: "p", c: c, h: h, w: w, relu: true}
		ft, err := fused.Do(xt)
		if err != nil {
			t.Fatal(err)
		}
		got := ft.(*tensor.Dense).Data().([]T)
		gdx, err := (&maxPoolDiffOp[T]{fwd: fused}).Do(dyt, ft)
		if err != nil {
			t.Fatal(err)
		}
		gotDx := gdx.(*tensor.Dense).Data().([]T)
		same := func(what string, got, want []T) {
			for i := range want {
				if got[i] != got[i] && want[i] != want[i] {
					continue
				}
				if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) || math.Signbit(float64(got[i])) != math.Signbit(float64(want[i])) {
					t.Fatalf("batch %d: %s[%d] = %v fused, want %v", batch, what, i, got[i], want[i])
				}
			}
		}
		same("y", got, want)
		same("dx", gotDx, wantDx)
	}
}

// TestReLUPoolSession trains the architectures with a ReLU before a
// max-pool two steps with the two fused (reluIntoPool) and not, and wants
// the same weights bit for bit; and checks which layers fuse.
func TestReLUPoolSession(t *testing.T) {
	for _, c := range []struct {
		spec  Spec
		in    [3]int
		fused int
	}{
		{Spec{Arch: ArchCNNFedEBACIFAR}, cifar, 2}, {Spec{Arch: ArchLeNet}, mnist, 2}, {Spec{Arch: ArchLeNet, Activation: "tanh"}, mnist, 0},
		{Spec{Arch: ArchCNNHiCS}, mnist, 0}, {Spec{Arch: ArchCNNHiCSCIFAR}, cifar, 2}, {Spec{Arch: ArchCNNHiCS3Conv}, mnist, 0},
		{Spec{Arch: ArchResNet18}, [3]int{3, 8, 8}, 0},
	} {
		n := mustNet(t, c.spec, c.in, 10)
		got := 0
		for _, p := range reluIntoPool(n.layers) {
			if p {
				got++
			}
		}
		if got != c.fused {
			t.Errorf("%s: %d ReLUs fused into pools, want %d", n.Key(), got, c.fused)
		}
		t.Logf("%s: %d ReLUs fused into pools", n.Key(), got)
		ex := uniformData(1, 40, n.Dim(), 10)
		w0 := initWeights(t, n, 1)
		train := func(fuse bool) []float32 {
			fuseReLUPool = fuse
			defer func() { fuseReLUPool = true }()
			w := append([]float32(nil), w0...)
			if _, err := newTrainer().Train(t.Context(), n, w, ex, sgdSteps(0.01, 20, 2), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatalf("%s (fused %v): %v", n.Key(), fuse, err)
			}
			return w
		}
		if !equalBits(train(true), train(false)) {
			t.Errorf("%s: weights after 2 steps differ with the ReLU fused into the pool", n.Key())
		}
	}
}

// TestReLUIntoSession trains the architectures two steps with the ReLUs
// after a BatchNorm or a residual addition fused into them (reluInto) and
// not, and wants the same weights and running statistics bit for bit; and
// checks which layers fuse (ResNet-18: the stem's and every block's first
// ReLU after BatchNorm, every block's last after the addition).
func TestReLUIntoSession(t *testing.T) {
	for _, c := range []struct {
		spec  Spec
		in    [3]int
		fused int
	}{
		{Spec{Arch: ArchResNet18}, [3]int{3, 8, 8}, 17}, {Spec{Arch: ArchCNNHiCS3Conv}, mnist, 0},
		{Spec{Arch: ArchCNNFedEBACIFAR}, cifar, 0}, {Spec{Arch: ArchMLP}, mnist, 0},
	} {
		n := mustNet(t, c.spec, c.in, 10)
		got := 0
		for _, p := range reluInto(n.layers, reluIntoPool(n.layers)) {
			if p {
				got++
			}
		}
		if got != c.fused {
			t.Errorf("%s: %d ReLUs fused, want %d", n.Key(), got, c.fused)
		}
		ex := uniformData(1, 40, n.Dim(), 10)
		w0 := initWeights(t, n, 1)
		train := func(fuse, back bool) []float32 {
			fuseReLUInto, fuseReLUBackward = fuse, back
			defer func() { fuseReLUInto, fuseReLUBackward = true, true }()
			w := append([]float32(nil), w0...)
			if _, err := newTrainer().Train(t.Context(), n, w, ex, sgdSteps(0.01, 20, 2), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatalf("%s (fused %v): %v", n.Key(), fuse, err)
			}
			return w
		}
		unfused := train(false, false)
		if !equalBits(train(true, false), unfused) {
			t.Errorf("%s: weights after 2 steps differ with the ReLUs fused", n.Key())
		}
		if !equalBits(train(true, true), unfused) {
			t.Errorf("%s: weights after 2 steps differ with the ReLUs fused and their gradients masked in the BatchNorms' backward passes", n.Key())
		}
	}
}
