package engine

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// pointOf parses a one-point spec whose partition block (and dataset, if
// given) is part.
func pointOf(t *testing.T, part string) sweep.Point {
	t.Helper()
	sw, err := sweep.Parse("p.yaml", []byte("name: p\nmodel: {arch: mlp, hidden: [8]}\nclients_per_round: 2\nseeds: [4]\n"+part))
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Points) != 1 {
		t.Fatalf("%d points; want 1", len(sw.Points))
	}
	return sw.Points[0]
}

// TestPointSplitEveryScheme builds every scheme through the engine's code
// path on generated data and checks what the steps rely on: n train lists,
// disjoint, each non-empty; test sets where the spec asks for them, from the
// right split; groups for hics; the same split from a fresh engine; and the
// same split for a point that differs only in its method (the partition
// stream is shared by all points of a seed).
func TestPointSplitEveryScheme(t *testing.T) {
	cifar := t.TempDir()
	if err := dataset.WriteCIFARFixture(cifar, 40, 30, 1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		part     string
		clients  int
		wantFrom partition.Source
		groups   bool
	}{
		{"iid", "partition: {scheme: homo, clients: 10}", 10, partition.SourceTest, false},
		{"dirichlet holdout", "partition: {scheme: dirichlet, clients: 10, alpha: 0.5, test: holdout}", 10, partition.SourceTrain, false},
		{"shards", "partition: {scheme: shards, clients: 10}", 10, partition.SourceTest, false},
		{"k-labels", "partition: {scheme: noniid-#label2, clients: 10}", 10, partition.SourceTest, false},
		{"quantity", "partition: {scheme: iid-diff-quantity, clients: 10, alpha: 0.5}", 10, partition.SourceTest, false},
		{"mixed", "partition: {scheme: mixed, clients: 10, alpha: 0.5}", 10, partition.SourceTest, false},
		{"hics split", "partition: {scheme: hics, clients: 10, alphas: [0.01, 0.5]}", 10, partition.SourceTest, true},
		{"hics cosplit", "partition: {scheme: hics, clients: 10, alphas: [0.01, 0.5], test: cosplit}", 10, partition.SourceTest, true},
		{"unbalanced sizes", "partition: {scheme: unbalanced, clients: 4, sizes: [500, 300, 200, 100], alpha: 0.1}", 4, partition.SourceTest, false},
		{"unbalanced power law", "partition: {scheme: unbalanced, clients: 10, size_exponent: 1}", 10, partition.SourceTest, false},
		{"unbalanced dirichlet", "partition: {scheme: unbalanced, clients: 10, size_alpha: 1, alpha: 1}", 10, partition.SourceTest, false},
		{"noise", "partition: {scheme: iid, clients: 10, noise: 0.5}", 10, partition.SourceTest, false},
		{"natural", "dataset: {name: fedprox-synthetic, alpha: 1, beta: 1, users: 8}\npartition: {scheme: natural, clients: 8, test: natural}", 8, partition.SourceTest, false},
		{"cifar10", "dataset: {name: cifar10, root: " + filepath.ToSlash(cifar) + "}\npartition: {scheme: dirichlet, clients: 4, alpha: 1, min_size: 5}", 4, partition.SourceTest, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tt.part, "dataset:") {
				tt.part = "dataset: {name: synthetic}\n" + tt.part
			}
			p := pointOf(t, tt.part)
			sp, err := newEngine(t).PointSplit(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if len(sp.Part.Train) != tt.clients || len(sp.Part.Test) != tt.clients || sp.Part.TestFrom != tt.wantFrom {
				t.Fatalf("split has %d train and %d test lists from %q; want %d, %d, %q", len(sp.Part.Train), len(sp.Part.Test), sp.Part.TestFrom, tt.clients, tt.clients, tt.wantFrom)
			}
			seen := map[int]bool{}
			for k, list := range sp.Part.Train {
				if len(list) == 0 || len(sp.Part.Test[k]) == 0 {
					t.Errorf("client %d: %d train, %d test samples; want both > 0", k, len(list), len(sp.Part.Test[k]))
				}
				for _, i := range list {
					if seen[i] {
						t.Fatalf("sample %d is in two clients", i)
					}
					seen[i] = true
				}
			}
			if (sp.Part.Group != nil) != tt.groups {
				t.Errorf("groups = %v; want groups: %t", sp.Part.Group, tt.groups)
			}
			again, err := newEngine(t).PointSplit(context.Background(), p)
			if err != nil || !reflect.DeepEqual(again.Part, sp.Part) {
				t.Errorf("a second engine computes another split (%v)", err)
			}
			q := p
			q.Config.Sampler = sweep.Method{Name: "md"}
			other, err := newEngine(t).PointSplit(context.Background(), q)
			if err != nil || !reflect.DeepEqual(other.Part, sp.Part) {
				t.Errorf("a point differing only in its sampler gets another split (%v)", err)
			}
		})
	}
}

// TestWritePartitionMatchesPreparePoint: the rows `starter partition show`
// writes are the rows PreparePoint writes, at the same key.
func TestWritePartitionMatchesPreparePoint(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	specText := "name: w\ndataset: {name: synthetic}\npartition: {scheme: hics, clients: 10, alphas: [0.05, 1], noise: 0.3}\nmodel: {arch: mlp, hidden: [8]}\nclients_per_round: 2\nrounds: 1\nseeds: [2]\n"
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "w.yaml", Spec: []byte(specText)})
	if err != nil {
		t.Fatal(err)
	}
	sw, err := sweep.Parse("w.yaml", []byte(specText))
	if err != nil {
		t.Fatal(err)
	}
	p := sw.Points[0]
	if _, err := e.PreparePoint(ctx, steps.PointRef{Sweep: plan.Name, Point: p.ID}); err != nil {
		t.Fatal(err)
	}
	sk, _ := store.SweepKeys(plan.Name)
	pk, _ := sk.Point(p.ID)
	prepared, err := store.ReadRows[store.PartitionRow](ctx, e.Store, pk.Compacted(store.TablePartitions))
	if err != nil {
		t.Fatal(err)
	}
	e2 := newEngine(t)
	sp, err := e2.PointSplit(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.WritePartition(ctx, plan.Name, p, sp); err != nil {
		t.Fatal(err)
	}
	written, err := store.ReadRows[store.PartitionRow](ctx, e2.Store, pk.Compacted(store.TablePartitions))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(written, prepared) {
		t.Errorf("WritePartition rows differ from PreparePoint's:\n got %+v\nwant %+v", written, prepared)
	}
	if len(prepared) != 10 || prepared[9].Group == nil || *prepared[9].Group != 1 || prepared[9].NoiseSigma == nil || *prepared[9].NoiseSigma != 0.3 || *prepared[0].NoiseSigma != 0 {
		t.Errorf("rows = %+v; want 10, client 9 in group 1 with noise 0.3, client 0 with noise 0", prepared)
	}
}

// TestNoiseReachesTrainingAndEvaluation checks where feature noise applies:
// client k's training examples and its local test set are its noisy copy
// (σ_k = σ·k/(n-1)), client 0's are the clean data, the global test split is
// clean, and a run with noise is reproducible and differs from one without.
func TestNoiseReachesTrainingAndEvaluation(t *testing.T) {
	ctx := context.Background()
	const noisySpec = "name: nz\ndataset: {name: synthetic}\npartition: {scheme: iid, clients: 6, noise: 0.5}\nmodel: {arch: mlp, hidden: [8]}\ntrain: {lr: 0.1, batch_size: 10, local_steps: 3}\nclients_per_round: 3\nrounds: 2\neval_every: 1\nseeds: [1]\n"
	run := func(text string) (snapshot, *Engine, steps.PlanSweepOutput) {
		e := newEngine(t)
		in := steps.PlanSweepInput{File: "nz.yaml", Spec: []byte(text)}
		if _, err := e.RunSweep(ctx, in, nil); err != nil {
			t.Fatal(err)
		}
		plan, err := e.PlanSweep(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return take(t, e, plan), e, plan
	}
	a, e, plan := run(noisySpec)
	b, _, _ := run(noisySpec)
	compare(t, "two noisy runs", b, a)
	clean, _, _ := run(strings.Replace(noisySpec, ", noise: 0.5", "", 1))
	if a.Results[0].ModelSHA256 == clean.Results[0].ModelSHA256 {
		t.Error("noise changed nothing: the noisy run ends with the clean run's model")
	}

	env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: plan.Points[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	dim := env.data.Dim()
	row := func(ex []float32, p int) []float32 { return ex[p*dim : (p+1)*dim] }
	x0, x5 := env.examples(0), env.examples(5)
	i0, i5 := env.part.Train[0][0], env.part.Train[5][0]
	if !slices.Equal(row(x0.X, x0.Idx[0]), row(env.data.Train.X, i0)) {
		t.Error("client 0's training sample differs from the data; client 0 must be clean")
	}
	if slices.Equal(row(x5.X, x5.Idx[0]), row(env.data.Train.X, i5)) || x5.Y[x5.Idx[0]] != env.data.Train.Y[i5] {
		t.Error("client 5's first training sample is clean or mislabelled; want it noisy with its label")
	}
	w := make([]float32, env.net.NumParams())
	for i := range w {
		w[i] = float32(i%7) * 0.01
	}
	sum, per, err := e.evaluate(ctx, env, w)
	if err != nil {
		t.Fatal(err)
	}
	cleanEnv := *env
	cleanEnv.noise = partition.Noise{}
	cleanSum, cleanPer, err := e.evaluate(ctx, &cleanEnv, w)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TestAcc != cleanSum.TestAcc || sum.TestLoss != cleanSum.TestLoss {
		t.Errorf("the global test split is scored %v/%v with noise and %v/%v without; it must stay clean", sum.TestAcc, sum.TestLoss, cleanSum.TestAcc, cleanSum.TestLoss)
	}
	// Client 0 is predicted in a batch of its own here and within the whole
	// test split there. OpenBLAS picks its kernels by matrix size, so the
	// same sample's loss may differ in the last bits between the two; the
	// pure-Go build agrees exactly. Noise moves the loss far more.
	if per.N[0] != cleanPer.N[0] || math.Abs(per.LossSum[0]-cleanPer.LossSum[0]) > 1e-6*math.Abs(cleanPer.LossSum[0]) {
		t.Errorf("client 0's local test loss %v differs from the clean %v", per.LossSum[0], cleanPer.LossSum[0])
	}
	if per.LossSum[5] == cleanPer.LossSum[5] {
		t.Errorf("client 5's local test loss %v equals the clean one; its test set must be noisy", per.LossSum[5])
	}
}

// TestShardsHoldoutFMNIST is the Fashion-MNIST client setup of FedEBA+
// (Wang et al., arXiv 2301.12407) through the spec and the engine's
// partition code, on Fashion-MNIST-sized labels without the data:
// 60,000 label-sorted samples, 100 clients with 2 of 200 shards of 300, and
// an 80/20 holdout of each client's samples as its local test set. Every
// training index is used exactly once (kept or held out), each client holds
// 600 samples of at most 2 labels, split 480/120 and stratified. The spec
// with only scheme, clients and test: holdout means the same (2 shards per
// client and test_fraction 0.2 are the defaults).
func TestShardsHoldoutFMNIST(t *testing.T) {
	labels := make([]uint8, 60000)
	for i := range labels {
		labels[i] = uint8(i / 6000)
	}
	ds := &dataset.Dataset{Name: "fmnist", Classes: 10, Shape: [3]int{1, 28, 28}, Train: dataset.Split{Y: labels, N: len(labels)}}
	split := func(part string) partition.Partition {
		t.Helper()
		p, err := makePartition(pointOf(t, "dataset: {name: fmnist}\n"+part).Config, ds)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := split("partition: {scheme: shards, clients: 100, shards_per_client: 2, test: holdout, test_fraction: 0.2}")
	if len(p.Train) != 100 || len(p.Test) != 100 || p.TestFrom != partition.SourceTrain {
		t.Fatalf("%d train and %d test lists from %q; want 100 each from the train split", len(p.Train), len(p.Test), p.TestFrom)
	}
	uses := make([]int, len(labels))
	for k := range p.Train {
		if len(p.Train[k]) != 480 || len(p.Test[k]) != 120 {
			t.Errorf("client %d: %d train / %d test samples; want 480 / 120", k, len(p.Train[k]), len(p.Test[k]))
		}
		var all, test [10]int
		for _, i := range p.Train[k] {
			uses[i]++
			all[labels[i]]++
		}
		for _, i := range p.Test[k] {
			uses[i]++
			all[labels[i]]++
			test[labels[i]]++
		}
		held := 0
		for c := range all {
			if all[c]%300 != 0 || test[c] != all[c]/5 {
				t.Errorf("client %d: %d samples of label %d, %d held out; want a multiple of 300 (whole shards), a fifth held out", k, all[c], c, test[c])
			}
			if all[c] > 0 {
				held++
			}
		}
		if held > 2 {
			t.Errorf("client %d holds %d labels; want at most 2", k, held)
		}
	}
	for i, n := range uses {
		if n != 1 {
			t.Fatalf("training sample %d is used %d times; want exactly once", i, n)
		}
	}
	if d := split("partition: {scheme: shards, clients: 100, test: holdout}"); !reflect.DeepEqual(d, p) {
		t.Error("the spec with the defaults gives another partition than shards_per_client: 2, test_fraction: 0.2")
	}
}
