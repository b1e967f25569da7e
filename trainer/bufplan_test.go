package trainer

import (
	"math/rand/v2"
	"testing"
)

// TestBufferPlan trains every architecture two steps with the output
// buffers shared (bufplan.go) and with a buffer per op, and wants the same
// weights bit for bit; it checks that buffers sharing an arena are live at
// disjoint times, and that the plan saves at least a third of ResNet-18's
// buffers.
func TestBufferPlan(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		in   [3]int
	}{
		{Spec{Arch: ArchMLP}, mnist}, {Spec{Arch: ArchCNNHiCS}, mnist}, {Spec{Arch: ArchLeNet}, mnist},
		{Spec{Arch: ArchCNNFedEBACIFAR}, cifar}, {Spec{Arch: ArchCNNHiCSCIFAR}, cifar}, {Spec{Arch: ArchResNet18}, cifar},
		{Spec{Arch: ArchCNNHiCS3Conv}, mnist}, {Spec{Arch: ArchLogReg}, mnist},
	} {
		n := mustNet(t, c.spec, c.in, 10)
		ex := uniformData(1, 60, n.Dim(), 10)
		w0 := initWeights(t, n, 1)
		train := func(plan bool) []float32 {
			planBuffers = plan
			defer func() { planBuffers = true }()
			w := append([]float32(nil), w0...)
			if _, err := newTrainer().Train(t.Context(), n, w, ex, sgdSteps(0.01, 20, 2), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatalf("%s (plan %v): %v", n.Key(), plan, err)
			}
			return w
		}
		if !equalBits(train(true), train(false)) {
			t.Errorf("%s: weights after 2 steps differ with the buffer plan", n.Key())
		}

		s, err := newSession[float32](n, testKern, 50, true)
		if err != nil {
			t.Fatal(err)
		}
		total, planned := 0, map[int]int{}
		for i, a := range s.shared {
			size := len(a.buf.data)
			total += size
			planned[a.arena] = max(planned[a.arena], size)
			for _, b := range s.shared[:i] {
				if a.arena == b.arena && a.step <= b.until && b.step <= a.until {
					t.Fatalf("%s: steps %d–%d and %d–%d share arena %d", n.Key(), b.step, b.until, a.step, a.until, a.arena)
				}
			}
		}
		sum := 0
		for _, p := range planned {
			sum += p
		}
		t.Logf("%s: %d buffers, %.1f MB in %d arenas instead of %.1f MB", n.Key(), len(s.shared), float64(4*sum)/1e6, len(planned), float64(4*total)/1e6)
		if n.spec.Arch == ArchResNet18 && 3*sum > 2*total {
			t.Errorf("%s: the plan keeps %d of %d floats, want at most two thirds", n.Key(), sum, total)
		}
	}
}

// TestBufferPlanForward reads the embeddings and logits Forward takes from
// an evaluation graph after it has run (values the plan must keep to the
// end), with the plan and without.
func TestBufferPlanForward(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		in   [3]int
	}{{Spec{Arch: ArchMLP}, mnist}, {Spec{Arch: ArchCNNFedEBACIFAR}, cifar}, {Spec{Arch: ArchCNNHiCS3Conv}, mnist}, {Spec{Arch: ArchLeNet}, mnist}} {
		n := mustNet(t, c.spec, c.in, 10)
		ex := uniformData(2, 30, n.Dim(), 10)
		w := initWeights(t, n, 1)
		forward := func(plan bool) (emb, logits []float32) {
			planBuffers = plan
			defer func() { planBuffers = true }()
			emb, logits = make([]float32, len(ex.Idx)*n.Embedding()), make([]float32, len(ex.Idx)*10)
			if err := newTrainer().Forward(t.Context(), n, w, ex, emb, logits); err != nil {
				t.Fatal(err)
			}
			return emb, logits
		}
		e1, l1 := forward(true)
		e0, l0 := forward(false)
		if !equalBits(e1, e0) || !equalBits(l1, l0) {
			t.Errorf("%s: Forward's embeddings or logits differ with the buffer plan", n.Key())
		}
	}
}

// TestBufferPlanCheck: a run whose sharing op's value is not its planned
// buffer fails instead of training on values the plan may overwrite.
func TestBufferPlanCheck(t *testing.T) {
	n := mustNet(t, Spec{Arch: ArchMLP}, mnist, 10)
	s, err := newSession[float32](n, testKern, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	s.shared[0].buf = &outBuf[float32]{data: make([]float32, 1)}
	s.checked = false
	if err := s.run(); err == nil {
		t.Error("a run with a value outside its planned buffer passed the check")
	}
}
