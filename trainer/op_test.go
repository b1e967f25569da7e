package trainer

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
