// Command partbench measures the time and peak memory of partitioning a
// label vector (Fashion-MNIST's 60,000 train labels by default) into many
// clients with each partitioner of package partition. It prints one table;
// nothing is asserted.
//
//	go run ./partition/partbench [-labels .data/datasets/fmnist/train-labels-idx1-ubyte] [-clients 1000] [-runs 5]
//
// Each partitioner runs in a fresh child process (this program re-executed),
// so the peak resident set size the kernel reports for that child (getrusage
// ru_maxrss) is its own. "peak RSS" is that figure; "over baseline" subtracts
// the peak of a child that only loads the labels; "alloc/op" is the bytes the
// Go heap allocated per call (runtime.MemStats.TotalAlloc); the time is the
// median wall time of -runs calls after one warm-up call, each with a fresh
// stream. Without -labels the labels are 6,000 of each of 10 classes,
// interleaved, which is Fashion-MNIST's train split up to order.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/partition"
)

// cases are the partitioners measured, with the settings that make them
// feasible at the requested number of clients (see the notes).
func cases(clients int) []benchCase {
	return []benchCase{
		{"iid (homo)", "", func(y []uint8, r *rand.Rand) error { _, err := partition.IID(len(y), clients, r); return err }},
		{"dirichlet (noniid-labeldir)", "alpha 0.5, min 10", func(y []uint8, r *rand.Rand) error {
			_, err := partition.Dirichlet(y, 10, clients, partition.DirichletOptions{Alpha: 0.5}, r)
			return err
		}},
		{"k-labels (noniid-#label2)", "k = 2", func(y []uint8, r *rand.Rand) error { _, err := partition.KLabels(y, 10, clients, 2, r); return err }},
		{"quantity (iid-diff-quantity)", "alpha 5, min 10 (0.5 is infeasible at 1,000 clients)", func(y []uint8, r *rand.Rand) error {
			_, err := partition.Quantity(len(y), clients, partition.QuantityOptions{Alpha: 5}, r)
			return err
		}},
		{"mixed", "alpha 0.5, 10 clients (its only size)", func(y []uint8, r *rand.Rand) error {
			_, err := partition.Mixed(y, 10, 10, partition.MixedOptions{Alpha: 0.5}, r)
			return err
		}},
		{"shards", "2 per client", func(y []uint8, r *rand.Rand) error { _, err := partition.Shards(y, clients, 2, r); return err }},
		{"hics groups", "alphas 0.5, 1, 2, 5, 10; code minimum", func(y []uint8, r *rand.Rand) error {
			_, err := partition.Groups(y, 10, partition.GroupOptions{Alphas: []float64{0.5, 1, 2, 5, 10}, Clients: clients}, r)
			return err
		}},
		{"hics groups + test co-split", "as above, 10,000 test labels", func(y []uint8, r *rand.Rand) error {
			_, err := partition.Groups(y, 10, partition.GroupOptions{Alphas: []float64{0.5, 1, 2, 5, 10}, Clients: clients, TestLabels: testLabels}, r)
			return err
		}},
		{"unbalanced, iid labels", "power-law sizes, exponent 1, min 10", func(y []uint8, r *rand.Rand) error {
			sizes, err := partition.PowerLawSizes(len(y), clients, 1, 10)
			if err == nil {
				_, err = partition.Unbalanced(y, 10, partition.UnbalancedOptions{Sizes: sizes}, r)
			}
			return err
		}},
		{"unbalanced, Dirichlet labels", "power-law sizes, exponent 1, min 10, alpha 0.5", func(y []uint8, r *rand.Rand) error {
			sizes, err := partition.PowerLawSizes(len(y), clients, 1, 10)
			if err == nil {
				_, err = partition.Unbalanced(y, 10, partition.UnbalancedOptions{Sizes: sizes, Alpha: 0.5}, r)
			}
			return err
		}},
		{"test sets: split", "dirichlet 0.5, then 20% from the test split", func(y []uint8, r *rand.Rand) error {
			train, err := partition.Dirichlet(y, 10, clients, partition.DirichletOptions{Alpha: 0.5}, r)
			if err != nil {
				return err
			}
			sizes := make([]int, len(train))
			for k, t := range train {
				sizes[k] = max(1, len(t)/5)
			}
			_, err = partition.FromTestSet(train, y, testLabels, 10, sizes, r)
			return err
		}},
		{"test sets: holdout", "dirichlet 0.5, then 20% held out", func(y []uint8, r *rand.Rand) error {
			train, err := partition.Dirichlet(y, 10, clients, partition.DirichletOptions{Alpha: 0.5}, r)
			if err == nil {
				_, _, err = partition.HoldOut(train, y, 0.2, r)
			}
			return err
		}},
		{"noise: all clients' copies", "sigma 0.5, 60,000 × 784 values", func(y []uint8, r *rand.Rand) error {
			parts, err := partition.IID(len(y), clients, r)
			if err != nil {
				return err
			}
			z := partition.Noise{Sigma: 0.5, Clients: clients, Seed: r.Uint64()}
			for k, idx := range parts {
				_ = z.Copy(pixels, 784, idx, partition.SourceTrain, k) // one client's copy at a time, as the engine does
			}
			return nil
		}},
	}
}

type benchCase struct {
	name, settings string
	run            func(labels []uint8, r *rand.Rand) error
}

var (
	testLabels []uint8
	pixels     []float32 // zero images, for the noise case only
)

func main() {
	labelsFile := flag.String("labels", "", "IDX train labels (default: 6,000 per class of 10)")
	clients := flag.Int("clients", 1000, "clients")
	runs := flag.Int("runs", 5, "timed calls per partitioner")
	one := flag.Int("one", -1, "internal: run case N once in this process and report")
	flag.Parse()
	labels, err := loadLabels(*labelsFile)
	if err != nil {
		log.Fatal(err)
	}
	testLabels = make([]uint8, 10000)
	for i := range testLabels {
		testLabels[i] = uint8(i % 10)
	}
	cs := cases(*clients)
	if *one >= 0 {
		child(cs, *one, labels, *runs)
		return
	}
	base := measure(len(cs), *labelsFile, *clients, *runs) // no such case: the child only loads the labels
	fmt.Printf("partitioning %d labels into %d clients; Go %s, GOMAXPROCS %d; baseline child peak RSS %.1f MiB\n\n",
		len(labels), *clients, runtime.Version(), runtime.GOMAXPROCS(0), base.rss)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "partitioner\tsettings\tmedian time\talloc/op\tpeak RSS\tover baseline")
	for i, c := range cs {
		m := measure(i, *labelsFile, *clients, *runs)
		if m.err != "" {
			fmt.Fprintf(tw, "%s\t%s\terror: %s\t\t\t\n", c.name, c.settings, m.err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f MiB\t%.1f MiB\t%.1f MiB\n", c.name, c.settings, m.time.Round(10*time.Microsecond), m.alloc, m.rss, m.rss-base.rss)
	}
	tw.Flush()
}

type result struct {
	time       time.Duration
	alloc, rss float64 // MiB
	err        string
}

// measure runs case i in a child process and reads its report and peak RSS.
func measure(i int, labelsFile string, clients, runs int) result {
	cmd := exec.Command(os.Args[0], "-one", strconv.Itoa(i), "-labels", labelsFile, "-clients", strconv.Itoa(clients), "-runs", strconv.Itoa(runs))
	out, err := cmd.Output()
	var res result
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.rss = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	if err != nil {
		res.err = strings.TrimSpace(string(out)) + " " + err.Error()
		return res
	}
	f := strings.Fields(string(out))
	if len(f) == 2 {
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		alloc, _ := strconv.ParseFloat(f[1], 64)
		res.time, res.alloc = time.Duration(ns), alloc
	} else if len(f) > 0 {
		res.err = strings.Join(f, " ")
	}
	return res
}

// child runs case i: one warm-up call, then runs timed calls, and prints the
// median nanoseconds and the MiB allocated per call.
func child(cs []benchCase, i int, labels []uint8, runs int) {
	if i >= len(cs) {
		return
	}
	c := cs[i]
	if strings.HasPrefix(c.name, "noise") {
		pixels = make([]float32, len(labels)*784)
	}
	if err := c.run(labels, rand.New(rand.NewPCG(0, 1))); err != nil {
		fmt.Println(err)
		os.Exit(0)
	}
	var times []time.Duration
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for s := range uint64(runs) {
		r := rand.New(rand.NewPCG(s+1, 1))
		start := time.Now()
		if err := c.run(labels, r); err != nil {
			fmt.Println(err)
			os.Exit(0)
		}
		times = append(times, time.Since(start))
	}
	runtime.ReadMemStats(&after)
	slices.Sort(times)
	fmt.Println(int64(times[len(times)/2]), float64(after.TotalAlloc-before.TotalAlloc)/float64(runs)/(1<<20))
}

func loadLabels(file string) ([]uint8, error) {
	if file == "" {
		y := make([]uint8, 60000)
		for i := range y {
			y[i] = uint8(i % 10)
		}
		return y, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return dataset.ReadIDXLabels(f, 0)
}
