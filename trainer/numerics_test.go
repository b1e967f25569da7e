package trainer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/internal/packed"
)

// TestNumerics checks the build suffix of every kernel choice against what
// computes the products and sums: empty only for the packed products with
// the vector kernels, "+blas-…" with KernelChoice.BLAS (or without AVX2),
// "+portable" without vector kernels, "+im2col" with Im2col, and, when
// Winograd is on, "+wino2" with NoF43 and "+wino45off" with NoF45;
// NoChannelLane changes the speed, not the bits, so nothing. The suffix
// goes into task-queue names, so it has no spaces or '@'.
func TestNumerics(t *testing.T) {
	for _, k := range []KernelChoice{
		{}, {BLAS: true}, {Im2col: true}, {NoF43: true}, {NoF45: true}, {NoChannelLane: true},
		{Im2col: true, NoF43: true, NoF45: true}, {BLAS: true, NoF43: true, NoF45: true},
	} {
		n := k.Numerics()
		has := func(part string, want bool, why string) {
			if got := strings.Contains(n, part); got != want {
				t.Errorf("%+v: Numerics() = %q: %s present %v, want %v (%s)", k, n, part, got, want, why)
			}
		}
		has("+blas-", k.BLAS || !packed.Available, "products by "+k.Core())
		has("+portable", vec.Name == "", "elementwise kernels "+Kernels())
		has("+im2col", k.Im2col, "Im2col")
		has("+wino2", k.NoF43 && !k.Im2col, "NoF43 with Winograd")
		has("+wino45off", k.NoF45 && !k.Im2col, "NoF45 with Winograd")
		if strings.ContainsAny(n, " @") {
			t.Errorf("%+v: Numerics() = %q holds a space or '@'", k, n)
		}
	}
	t.Logf("Numerics() = %q (products %s, elementwise %s)", KernelChoice{}.Numerics(), KernelChoice{}.Core(), Kernels())
}

// TestKernelChoiceFromEnv checks the environment's mapping onto the
// choice: unset and the defaults' names give the zero value, each
// alternative sets its field, and any other value is an error naming the
// variable and the values it takes.
func TestKernelChoiceFromEnv(t *testing.T) {
	vars := []string{"FLSWEEP_GEMM", "FLSWEEP_CONV", "FLSWEEP_WINO43", "FLSWEEP_WINO45", "FLSWEEP_WINO_CL"}
	for _, c := range []struct {
		env  map[string]string
		want KernelChoice
		err  string
	}{
		{env: nil},
		{env: map[string]string{"FLSWEEP_GEMM": "packed", "FLSWEEP_CONV": "winograd", "FLSWEEP_WINO43": "1", "FLSWEEP_WINO45": "1", "FLSWEEP_WINO_CL": "1"}},
		{env: map[string]string{"FLSWEEP_GEMM": "blas"}, want: KernelChoice{BLAS: true}},
		{env: map[string]string{"FLSWEEP_CONV": "im2col", "FLSWEEP_WINO_CL": "0"}, want: KernelChoice{Im2col: true, NoChannelLane: true}},
		{env: map[string]string{"FLSWEEP_WINO43": "0", "FLSWEEP_WINO45": "0"}, want: KernelChoice{NoF43: true, NoF45: true}},
		{env: map[string]string{"FLSWEEP_GEMM": "openblas"}, err: `FLSWEEP_GEMM="openblas": want packed (the default) or blas`},
		{env: map[string]string{"FLSWEEP_WINO43": "off", "FLSWEEP_CONV": "fft"}, err: `FLSWEEP_CONV="fft": want winograd (the default) or im2col; FLSWEEP_WINO43="off": want 1 (the default) or 0`},
	} {
		for _, v := range vars {
			t.Setenv(v, c.env[v])
		}
		got, err := KernelChoiceFromEnv()
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want one containing %q", c.env, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%v: %+v, %v; want %+v", c.env, got, err, c.want)
		}
	}
}

// TestKernelChoiceIsPerTrainer checks that a Trainer's Options.Kernels
// reaches its ops and no other Trainer's: each alternative that Numerics
// marks trains a model to other bits than the default (on a model whose
// layers it changes), and a default Trainer used after it, in the same
// process, gives the default bits again.
func TestKernelChoiceIsPerTrainer(t *testing.T) {
	for _, c := range []struct {
		name   string
		choice KernelChoice
		spec   Spec
		in     [3]int
		skip   string
	}{
		{"BLAS", KernelChoice{BLAS: true}, Spec{Arch: ArchMLP}, mnist, map[bool]string{false: "no AVX2: the BLAS computes the products anyway"}[packed.Available]},
		{"Im2col", KernelChoice{Im2col: true}, Spec{Arch: ArchCNNFedEBACIFAR}, cifar, ""},
		{"NoF43", KernelChoice{NoF43: true}, Spec{Arch: ArchResNet18}, [3]int{3, 16, 16}, ""},
		{"NoF45", KernelChoice{NoF45: true}, Spec{Arch: ArchCNNFedEBACIFAR}, cifar, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			n := mustNet(t, c.spec, c.in, 10)
			ex := uniformData(2, 8, n.Dim(), 10)
			w0 := initWeights(t, n, 3)
			train := func(tr *Trainer) []float32 {
				w := slices.Clone(w0)
				if _, err := tr.Train(t.Context(), n, w, ex, sgdSteps(0.05, 4, 2), rand.New(rand.NewPCG(1, 1)), nil); err != nil {
					t.Fatal(err)
				}
				return w
			}
			def := New(nil)
			want := train(def)
			if got := train(New(&Options{Kernels: c.choice})); equalBits(got, want) {
				t.Errorf("trained to the default's bits: the choice did not reach the ops")
			}
			if got := train(def); !equalBits(got, want) {
				t.Errorf("the default Trainer, after one with %+v, trained to other bits", c.choice)
			}
		})
	}
}
