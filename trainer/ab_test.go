package trainer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flsweep/flsweep/internal/conv"
	"github.com/flsweep/flsweep/internal/packed"
)

// Interleaved A/B timing of the trainer's switches (make bench-ab).
//
// This VM's speed drifts by up to 40% from minute to minute, so two
// versions timed one after the other, in separate processes, cannot show
// a 5% difference. TestInterleavedAB instead builds one Trainer per
// configuration (the same net, weights and data) and alternates their
// Train calls in one process, round after round, so that each round's
// calls share the machine's state; it prints each configuration's median
// and best samples/s and the median of the rounds' ratios to the first.
// Nothing is asserted: the test is skipped unless FLSWEEP_AB is set.
//
//	FLSWEEP_AB      configurations separated by ';', each a comma-separated
//	                list of switch=0|1 (abSwitches), "" for the defaults:
//	                FLSWEEP_AB='; fuseWinoBackward=0'
//	FLSWEEP_AB_MODEL mlp | cnn-hics | cnn-hics-cifar | cnn-hics-3conv | lenet |
//	                cnn-fedeba-cifar (default) | resnet18
//	FLSWEEP_AB_ROUNDS rounds of calls (default 20; one warm-up round more)
//	FLSWEEP_AB_CLIENTS clients trained at once per call, each on its own
//	                goroutine, as the peer benchmark's two (default 1)
//
// A switch is read when a configuration's session is built (its first
// call) or at every op call, depending on the switch; each configuration
// sets its switches before each of its calls, so both work. The kernel
// choices (abKernels) are its Trainer's Options.Kernels instead.

// abSwitches are the switches FLSWEEP_AB can set, by name.
var abSwitches = map[string]*bool{
	"fuseWinoBackward": &fuseWinoBackward,
	"fuseReLUPool":     &fuseReLUPool,
	"fuseReLUInto":     &fuseReLUInto,
	"fuseReLUBackward": &fuseReLUBackward,
	"planBuffers":      &planBuffers,
	"inPlaceA":         &packed.ReadAInPlace,
	"inPlaceAT":        &packed.ReadATInPlace,
	"edgeKernel":       &packed.EdgeKernel,
	"longWino4Chunks":  &conv.LongWino4Chunks,
	"dwTransposed":     &useDwT,
	"runKernels":       &conv.RunKernels,
}

// abKernels are the switches FLSWEEP_AB can set that are fields of a
// Trainer's KernelChoice (1: the default kernel, 0: the alternative).
var abKernels = map[string]func(k *KernelChoice, on bool){
	"useWino45":   func(k *KernelChoice, on bool) { k.NoF45 = !on },
	"useWino43":   func(k *KernelChoice, on bool) { k.NoF43 = !on },
	"winograd":    func(k *KernelChoice, on bool) { k.Im2col = !on },
	"channelLane": func(k *KernelChoice, on bool) { k.NoChannelLane = !on },
	"packedGemm":  func(k *KernelChoice, on bool) { k.BLAS = !on },
}

type abConfig struct {
	name string
	set  map[*bool]bool
	tr   *Trainer
	ws   [][]float32
	d    []time.Duration
}

func parseAB(spec string) ([]*abConfig, error) {
	var cs []*abConfig
	for _, part := range strings.Split(spec, ";") {
		c := &abConfig{name: strings.TrimSpace(part), set: map[*bool]bool{}}
		if c.name == "" {
			c.name = "defaults"
		}
		choice := testChoice
		for _, kv := range strings.Split(part, ",") {
			kv = strings.TrimSpace(kv)
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			sw, kern := abSwitches[k], abKernels[k]
			if !ok || sw == nil && kern == nil || (v != "0" && v != "1") {
				names := make([]string, 0, len(abSwitches)+len(abKernels))
				for n := range abSwitches {
					names = append(names, n)
				}
				for n := range abKernels {
					names = append(names, n)
				}
				slices.Sort(names)
				return nil, fmt.Errorf("FLSWEEP_AB: %q: want switch=0 or switch=1 with a switch of %v", kv, names)
			}
			if kern != nil {
				kern(&choice, v == "1")
			} else {
				c.set[sw] = v == "1"
			}
		}
		c.tr = New(&Options{Kernels: choice})
		cs = append(cs, c)
	}
	return cs, nil
}

func TestInterleavedAB(t *testing.T) {
	spec := os.Getenv("FLSWEEP_AB")
	if spec == "" {
		t.Skip("FLSWEEP_AB is not set (make bench-ab)")
	}
	cs, err := parseAB(spec)
	if err != nil {
		t.Fatal(err)
	}
	model := os.Getenv("FLSWEEP_AB_MODEL")
	arch, in, steps := ArchCNNFedEBACIFAR, cifar, 2
	switch model {
	case "", ArchCNNFedEBACIFAR:
	case ArchResNet18:
		arch, steps = ArchResNet18, 1
	case ArchCNNHiCS:
		arch, in, steps = ArchCNNHiCS, mnist, 10
	case ArchCNNHiCSCIFAR:
		arch, steps = ArchCNNHiCSCIFAR, 4
	case ArchCNNHiCS3Conv:
		arch, in, steps = ArchCNNHiCS3Conv, mnist, 4
	case ArchLeNet:
		arch, in, steps = ArchLeNet, mnist, 10
	case ArchMLP:
		arch, in, steps = ArchMLP, mnist, 20
	default:
		t.Fatalf("FLSWEEP_AB_MODEL=%q: want one of the paper models (mlp, cnn-hics, cnn-hics-cifar, cnn-hics-3conv, lenet, cnn-fedeba-cifar, resnet18)", model)
	}
	rounds, clients := 20, 1
	if v := os.Getenv("FLSWEEP_AB_ROUNDS"); v != "" {
		if rounds, err = strconv.Atoi(v); err != nil || rounds < 1 {
			t.Fatalf("FLSWEEP_AB_ROUNDS=%q: want a whole number of rounds, at least 1", v)
		}
	}
	if v := os.Getenv("FLSWEEP_AB_CLIENTS"); v != "" {
		if clients, err = strconv.Atoi(v); err != nil || clients < 1 {
			t.Fatalf("FLSWEEP_AB_CLIENTS=%q: want a whole number of clients, at least 1", v)
		}
	}
	n := mustNet(t, Spec{Arch: arch}, in, 10)
	ex := uniformData(1, 1000, n.Dim(), 10)
	w0 := initWeights(t, n, 1)
	hp := sgdSteps(0.01, 50, steps)
	saved := map[*bool]bool{}
	for _, sw := range abSwitches {
		saved[sw] = *sw
	}
	defer func() {
		for sw, v := range saved {
			*sw = v
		}
	}()
	for r := 0; r <= rounds; r++ {
		for _, c := range cs {
			for sw, v := range saved {
				*sw = v
			}
			for sw, v := range c.set {
				*sw = v
			}
			for len(c.ws) < clients {
				c.ws = append(c.ws, make([]float32, len(w0)))
			}
			t0 := time.Now()
			var wg sync.WaitGroup
			errs := make([]error, clients)
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					copy(c.ws[i], w0)
					_, errs[i] = c.tr.Train(context.Background(), n, c.ws[i], ex, hp, rand.New(rand.NewPCG(1, uint64(i))), nil)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
			if r > 0 { // round 0 warms up
				c.d = append(c.d, time.Since(t0))
			}
		}
	}
	sps := func(d time.Duration) float64 { return float64(50*steps*clients) / d.Seconds() }
	fmt.Printf("%s, %d client(s) at once, %d rounds of %d steps of 50 per client, one call per configuration per round\n", n.Key(), clients, rounds, steps)
	for _, c := range cs {
		ratios := make([]float64, rounds)
		for i := range ratios {
			ratios[i] = cs[0].d[i].Seconds() / c.d[i].Seconds()
		}
		slices.Sort(ratios)
		sorted := slices.Clone(c.d)
		slices.Sort(sorted)
		fmt.Printf("%-40s median %9.1f samples/s, best %9.1f; speed against the first: median %.3f (%.3f–%.3f)\n",
			c.name, sps(sorted[len(sorted)/2]), sps(sorted[0]), ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
	}
}

// TestParseAB checks FLSWEEP_AB's parsing: the defaults, switches set
// both ways, and a clear error for an unknown switch or value.
func TestParseAB(t *testing.T) {
	cs, err := parseAB("; fuseWinoBackward=0, fuseReLUPool=1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].name != "defaults" || len(cs[0].set) != 0 {
		t.Fatalf("first configuration %+v, want the defaults", cs[0])
	}
	if v, ok := cs[1].set[&fuseWinoBackward]; !ok || v {
		t.Errorf("fuseWinoBackward=0 not parsed: %v", cs[1].set)
	}
	if v, ok := cs[1].set[&fuseReLUPool]; !ok || !v {
		t.Errorf("fuseReLUPool=1 not parsed: %v", cs[1].set)
	}
	for _, bad := range []string{"fuseWinoBackward=2", "noSuchSwitch=1", "fuseReLUPool"} {
		if _, err := parseAB(bad); err == nil || !strings.Contains(err.Error(), "fuseWinoBackward") {
			t.Errorf("parseAB(%q) = %v, want an error naming the switches", bad, err)
		}
	}
}
