package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/trainer"
)

// benchModel is one model of `starter bench`: the papers' nets on their
// datasets' shapes (Fashion-MNIST 1×28×28, CIFAR-10 3×32×32), 10 classes.
type benchModel struct {
	name string
	spec trainer.Spec
	in   [3]int
}

var benchModels = []benchModel{
	{"logreg", trainer.Spec{Arch: trainer.ArchLogReg}, [3]int{1, 28, 28}},
	{"mlp", trainer.Spec{Arch: trainer.ArchMLP}, [3]int{1, 28, 28}},
	{"cnn-hics", trainer.Spec{Arch: trainer.ArchCNNHiCS}, [3]int{1, 28, 28}},
	{"cnn-hics-3conv", trainer.Spec{Arch: trainer.ArchCNNHiCS3Conv}, [3]int{1, 28, 28}},
	{"lenet", trainer.Spec{Arch: trainer.ArchLeNet}, [3]int{1, 28, 28}},
	{"cnn-hics-cifar", trainer.Spec{Arch: trainer.ArchCNNHiCSCIFAR}, [3]int{3, 32, 32}},
	{"cnn-fedeba-cifar", trainer.Spec{Arch: trainer.ArchCNNFedEBACIFAR}, [3]int{3, 32, 32}},
	{"resnet18", trainer.Spec{Arch: trainer.ArchResNet18}, [3]int{3, 32, 32}},
}

// benchReport is the output of `starter bench --json`.
type benchReport struct {
	Version            string  `json:"version"`
	BLAS               string  `json:"blas"`
	BLASCore           string  `json:"blas_core"`   // the products' kernels: "packed AVX-512", "packed AVX2", or the BLAS's, e.g. OpenBLAS's "SkylakeX"
	Elementwise        string  `json:"elementwise"` // trainer.Kernels(): "AVX-512", "AVX2" or "portable Go"
	Cores              int     `json:"cores"`
	SGEMM              string  `json:"sgemm"` // what the SGEMM rate measures
	MachineSGEMMGFLOPs float64 `json:"machine_sgemm_gflops"`
	// SGEMMNTGFLOPs is the same with B transposed (C = A·Bᵀ), the
	// orientation gonum's kernels run fastest (internal/gemm/gonum.go).
	SGEMMNTGFLOPs float64       `json:"sgemm_nt_gflops"`
	Models        []benchResult `json:"models"`
	// PeakRSSMB is the process's peak resident memory at the end (Linux;
	// 0 elsewhere): with --models naming one model, what a worker needs to
	// train it with the given clients at once, plus the runtime and the
	// SGEMM measurement's matrices (a few MB). infra/bench/peer.sh runs one
	// process per model for it.
	PeakRSSMB float64 `json:"peak_rss_mb"`
}

type benchResult struct {
	Name            string  `json:"name"`
	BLAS            string  `json:"blas"`
	Params          int     `json:"params"`
	Batch           int     `json:"batch"`
	Clients         int     `json:"clients"`         // trained concurrently
	SamplesPerS     float64 `json:"samples_per_s"`   // all clients together
	SamplesPerS1    float64 `json:"samples_per_s_1"` // one client alone
	MFLOPsPerSample float64 `json:"mflops_per_sample"`
	GFLOPs          float64 `json:"gflops"`
	RatioToSGEMM    float64 `json:"ratio_to_sgemm"`
	Seconds         float64 `json:"seconds"`
}

func benchCommand() *command {
	var (
		asJSON  bool
		models  string
		batch   int
		seconds float64
		clients int
	)
	return &command{
		name:    "bench",
		summary: "measure training speed per model (samples/s, GFLOP/s) against this machine's SGEMM rate",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print JSON")
			fs.StringVar(&models, "models", "", "comma-separated models (default all but resnet18; \"all\" for all)")
			fs.IntVar(&batch, "batch", 50, "minibatch size")
			fs.Float64Var(&seconds, "seconds", 3, "measuring time per figure")
			fs.IntVar(&clients, "clients", 0, "clients trained concurrently (default GOMAXPROCS)")
		},
		run: func(ctx context.Context, g *globals, args []string) error {
			if len(args) > 0 || batch < 1 || seconds <= 0 || clients < 0 {
				return fmt.Errorf("bench takes flags only (--batch ≥ 1, --seconds > 0): %w", errUsage)
			}
			if clients == 0 {
				clients = runtime.GOMAXPROCS(0)
			}
			sel, err := selectModels(models)
			if err != nil {
				return err
			}
			dur := time.Duration(seconds * float64(time.Second))
			rep := benchReport{
				Version: conf.Version, BLAS: trainer.BLAS, BLASCore: g.kernels.Core(), Elementwise: trainer.Kernels(), Cores: runtime.GOMAXPROCS(0),
				SGEMM: fmt.Sprintf("C = A·B, %d×%d×%d float32, row-major, no transposes, %d goroutines at once, best of 3",
					sgemmSize, sgemmSize, sgemmSize, runtime.GOMAXPROCS(0)),
			}
			rep.MachineSGEMMGFLOPs = machineSGEMM(ctx, g.kernels, false, dur)
			rep.SGEMMNTGFLOPs = machineSGEMM(ctx, g.kernels, true, dur)
			for _, m := range sel {
				if err := ctx.Err(); err != nil {
					return err
				}
				res, err := benchTrain(ctx, g.kernels, m, batch, clients, dur)
				if err != nil {
					return fmt.Errorf("bench %s: %w", m.name, err)
				}
				res.RatioToSGEMM = res.GFLOPs / rep.MachineSGEMMGFLOPs
				rep.Models = append(rep.Models, res)
				if !asJSON {
					fmt.Fprintf(g.out, "%-17s %8.0f samples/s (%d clients), %7.0f alone, %6.2f GFLOP/s, %3.0f%% of SGEMM\n",
						res.Name, res.SamplesPerS, res.Clients, res.SamplesPerS1, res.GFLOPs, 100*res.RatioToSGEMM)
				}
			}
			rep.PeakRSSMB = peakRSSMB()
			if asJSON {
				enc := json.NewEncoder(g.out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			printBench(g, rep)
			return nil
		},
	}
}

func selectModels(list string) ([]benchModel, error) {
	if list == "" {
		return benchModels[:len(benchModels)-1], nil
	}
	if list == "all" {
		return benchModels, nil
	}
	var out []benchModel
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, m := range benchModels {
			if m.name == name {
				out, found = append(out, m), true
			}
		}
		if !found {
			var names []string
			for _, m := range benchModels {
				names = append(names, m.name)
			}
			return nil, fmt.Errorf("unknown model %q; use %s: %w", name, strings.Join(names, ", "), errUsage)
		}
	}
	return out, nil
}

func printBench(g *globals, rep benchReport) {
	fmt.Fprintf(g.out, "\nbuild %s (BLAS %s), products %s, elementwise ops %s, %d cores; SGEMM %.1f GFLOP/s (%s); with B transposed %.1f GFLOP/s\n\n",
		rep.Version, rep.BLAS, rep.BLASCore, rep.Elementwise, rep.Cores, rep.MachineSGEMMGFLOPs, rep.SGEMM, rep.SGEMMNTGFLOPs)
	tw := tabwriter.NewWriter(g.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tblas\tparams\tbatch\tclients\tsamples/s\talone\tMFLOP/sample\tGFLOP/s\tof SGEMM\t")
	for _, m := range rep.Models {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.0f%%\t\n",
			m.Name, m.BLAS, m.Params, m.Batch, m.Clients, m.SamplesPerS, m.SamplesPerS1, m.MFLOPsPerSample, m.GFLOPs, 100*m.RatioToSGEMM)
	}
	tw.Flush()
	fmt.Fprintln(g.out, "\nsamples/s: all clients trained concurrently; alone: one client. GFLOP/s counts matrix products only")
	fmt.Fprintln(g.out, "(trainer.Net.FLOPs: forward, weight and input gradients); of SGEMM = GFLOP/s ÷ the SGEMM rate above.")
	if rep.PeakRSSMB > 0 {
		fmt.Fprintf(g.out, "peak resident memory of this process: %.0f MB (one model per run measures that model's)\n", rep.PeakRSSMB)
	}
}

// sgemmSize is the side of the square SGEMM of the machine-rate figure.
const sgemmSize = 512

// machineSGEMM measures the build's float32 gemm on sgemmSize³ products
// (B transposed if transB), GOMAXPROCS goroutines at once (each product
// single-threaded with OpenBLAS; gonum splits large products across
// goroutines itself), for about d per trial, and returns the best of three
// trials in GFLOP/s.
func machineSGEMM(ctx context.Context, k trainer.KernelChoice, transB bool, d time.Duration) float64 {
	const n = sgemmSize
	p := runtime.GOMAXPROCS(0)
	mats := make([][3][]float32, p)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range mats {
		for j := range 3 {
			mats[i][j] = make([]float32, n*n)
			for k := range mats[i][j] {
				mats[i][j][k] = r.Float32()
			}
		}
	}
	best := 0.0
	for range 3 {
		calls := make([]int64, p)
		start := time.Now()
		var wg sync.WaitGroup
		for i := range p {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(start) < d/3 && ctx.Err() == nil {
					trainer.SGEMM(k, transB, n, n, n, mats[i][0], mats[i][1], mats[i][2])
					calls[i]++
				}
			}()
		}
		wg.Wait()
		var total int64
		for _, c := range calls {
			total += c
		}
		best = max(best, 2*float64(n*n*n)*float64(total)/time.Since(start).Seconds()/1e9)
	}
	return best
}

// benchTrain measures training of model m: clients goroutines each train
// their own client (600 synthetic samples with Fashion-MNIST's or
// CIFAR-10's shape, uniform pixels and labels) with plain SGD in calls of
// 10 local steps of the given batch, after one warm-up call that compiles
// the graphs; then one client alone.
func benchTrain(ctx context.Context, k trainer.KernelChoice, m benchModel, batch, clients int, d time.Duration) (benchResult, error) {
	n, err := trainer.NewNet(m.spec, m.in, 10)
	if err != nil {
		return benchResult{}, err
	}
	tr := trainer.New(&trainer.Options{Kernels: k})
	steps := 10
	if m.spec.Arch == trainer.ArchResNet18 {
		steps = 1
	}
	hp := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.01, BatchSize: batch, LocalSteps: steps}
	type job struct {
		w, w0 []float32
		ex    trainer.Examples
		r     *rand.Rand
	}
	jobs := make([]job, clients)
	for i := range jobs {
		j := &jobs[i]
		j.w0 = make([]float32, n.NumParams())
		if err := n.Init(j.w0, rand.New(rand.NewPCG(uint64(i), 1))); err != nil {
			return benchResult{}, err
		}
		j.w = make([]float32, len(j.w0))
		j.ex = syntheticExamples(uint64(i), 600, n.Dim(), 10)
		j.r = rand.New(rand.NewPCG(uint64(i), 2))
	}
	// run trains client i until d has passed (at least one call) and
	// returns the samples trained.
	run := func(i int, d time.Duration) (int, error) {
		j := &jobs[i]
		samples := 0
		for start := time.Now(); samples == 0 || time.Since(start) < d; {
			copy(j.w, j.w0)
			res, err := tr.Train(ctx, n, j.w, j.ex, hp, j.r, nil)
			if err != nil {
				return 0, err
			}
			samples += res.Samples
		}
		return samples, nil
	}
	concurrent := func(k int, d time.Duration) (float64, float64, error) {
		counts, errs := make([]int, k), make([]error, k)
		start := time.Now()
		var wg sync.WaitGroup
		for i := range k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts[i], errs[i] = run(i, d)
			}()
		}
		wg.Wait()
		el := time.Since(start).Seconds()
		total := 0
		for i := range k {
			if errs[i] != nil {
				return 0, 0, errs[i]
			}
			total += counts[i]
		}
		return float64(total) / el, el, nil
	}
	// Warm up: every client compiles its graphs once.
	if _, _, err := concurrent(clients, 0); err != nil {
		return benchResult{}, err
	}
	all, el, err := concurrent(clients, d)
	if err != nil {
		return benchResult{}, err
	}
	one, el1, err := concurrent(1, d/2)
	if err != nil {
		return benchResult{}, err
	}
	flops := float64(n.FLOPs())
	return benchResult{
		Name: m.name, BLAS: trainer.BLAS, Params: n.NumParams(), Batch: batch, Clients: clients,
		SamplesPerS: all, SamplesPerS1: one, MFLOPsPerSample: flops / 1e6,
		GFLOPs: all * flops / 1e9, Seconds: el + el1,
	}, nil
}

// syntheticExamples returns count samples of dim uniform pixels in [0, 1)
// with uniform labels.
func syntheticExamples(seed uint64, count, dim, classes int) trainer.Examples {
	r := rand.New(rand.NewPCG(seed, 3))
	ex := trainer.Examples{X: make([]float32, count*dim), Y: make([]uint8, count), Dim: dim, Idx: make([]int, count)}
	for i := range ex.X {
		ex.X[i] = r.Float32()
	}
	for i := range count {
		ex.Y[i], ex.Idx[i] = uint8(r.IntN(classes)), i
	}
	return ex
}
