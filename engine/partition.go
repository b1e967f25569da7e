package engine

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// Split is a point's data and its division into clients: what PreparePoint
// computes and records in the partitions table. Every point of a seed with
// the same data and partition settings gets the same Split.
type Split struct {
	Data  *dataset.Dataset
	Part  partition.Partition
	Noise partition.Noise // the clients' feature noise; zero: none
	Stats []partition.ClientStats
	Pop   fl.Population // sizes and importances p_k
}

// PointSplit computes point p's Split with the code PreparePoint runs (the
// same data loading, partition stream and partitioners), without Temporal
// and without touching the blob store. The configuration is validated
// first.
func (e *Engine) PointSplit(ctx context.Context, p sweep.Point) (*Split, error) {
	if err := p.Config.Validate(e.Reg); err != nil {
		return nil, err
	}
	return e.split(ctx, p.Config)
}

// WritePartition writes point p's partitions table (PartitionRows) to the
// key PreparePoint writes, replacing what is there.
func (e *Engine) WritePartition(ctx context.Context, sweepName string, p sweep.Point, sp *Split) error {
	sk, err := store.SweepKeys(sweepName)
	if err != nil {
		return err
	}
	pk, err := sk.Point(p.ID)
	if err != nil {
		return err
	}
	return store.WriteRows(ctx, e.Store, pk.Compacted(store.TablePartitions), PartitionRows(sweepName, p, sp))
}

// PartitionRows returns the partitions table of point p: one row per
// client.
func PartitionRows(sweepName string, p sweep.Point, sp *Split) []store.PartitionRow {
	rows := make([]store.PartitionRow, len(sp.Stats))
	for k, s := range sp.Stats {
		rows[k] = store.PartitionRow{
			Sweep: sweepName, Point: p.ID, Seed: int64(p.Config.Seed), Client: int32(k),
			Train: int32(s.Train), Test: int32(s.Test), Importance: sp.Pop.P[k],
			LabelCounts: int32s(s.LabelCounts), TestLabelCounts: int32s(testCounts(s, sp.Data.Classes)), Entropy: s.Entropy,
		}
		if sp.Part.Group != nil {
			rows[k].Group = ptr(int32(sp.Part.Group[k]))
		}
		if sp.Noise.Active() {
			rows[k].NoiseSigma = ptr(sp.Noise.Std(k))
		}
	}
	return rows
}

// testCounts returns a client's test label counts, zeros without test sets.
func testCounts(s partition.ClientStats, classes int) []int {
	if s.TestLabelCounts == nil {
		return make([]int, classes)
	}
	return s.TestLabelCounts
}

// split loads c's data and partitions it.
func (e *Engine) split(ctx context.Context, c sweep.Config) (*Split, error) {
	spec, err := e.datasetSpec(c)
	if err != nil {
		return nil, err
	}
	ds, err := e.Data.GetSpec(ctx, spec)
	if err != nil {
		return nil, err
	}
	part, err := makePartition(c, ds)
	if err != nil {
		return nil, err
	}
	// The noise is NIID-Bench's, on the [0, 1] pixels before any normalisation
	// (partition.Noise): on normalised data it is scaled by 1/std_c.
	sp := &Split{Data: ds, Part: part, Noise: partition.Noise{Sigma: c.Partition.Noise, Clients: c.Partition.Clients, Seed: c.Seed, ChannelScale: ds.Norm.InvStd()}}
	sp.Stats = partition.Stats(part, ds.Train.Y, ds.Test.Y, ds.Classes)
	sizes := make([]int, len(part.Train))
	for k, idx := range part.Train {
		sizes[k] = len(idx)
	}
	if sp.Pop, err = fl.NewPopulation(sizes, c.Importance); err != nil {
		return nil, err
	}
	sp.Pop.Classes = ds.Classes
	sp.Pop.Entropy = make([]float64, len(sp.Stats))
	for k, s := range sp.Stats {
		sp.Pop.Entropy[k] = s.Entropy
	}
	return sp, nil
}

// datasetSpec is the dataset c names, normalised as c says, where this
// engine finds it.
func (e *Engine) datasetSpec(c sweep.Config) (dataset.Spec, error) {
	root, err := e.dataRoot(c)
	if err != nil {
		return dataset.Spec{}, err
	}
	s := dataset.Spec{Name: c.Dataset.Name, Root: root, Norm: c.Dataset.Norm()}
	if c.Dataset.Name == "fedprox-synthetic" {
		d := c.Dataset
		s.Root = ""
		s.FedProx = dataset.FedProxOptions{Alpha: d.Alpha, Beta: d.Beta, Users: d.Users, IID: d.IID, Seed: d.DataSeed, Samples: d.Samples}
	}
	return s, nil
}

// makePartition splits the training data into clients and gives each a
// local test set, from the stream that all points of a seed share. The
// scheme's partitioner draws first, then the test sets (partition.test)
// from the same stream.
func makePartition(c sweep.Config, ds *dataset.Dataset) (partition.Partition, error) {
	r := fl.Stream(fl.Key{Seed: c.Seed, Round: 0, Client: fl.Server, Purpose: fl.PurposePartition})
	pc := c.Partition
	labels := ds.Train.Y
	var p partition.Partition
	var err error
	// The server's public set is drawn first; the scheme then splits the
	// rest (pool), and its lists are lifted back to train indices.
	var pool []int
	if pc.PublicPerClass > 0 {
		if p.Public, pool, err = partition.Reserve(labels, ds.Classes, pc.PublicPerClass, r); err != nil {
			return partition.Partition{}, fmt.Errorf("partition.public_per_class = %d of %s: %w", pc.PublicPerClass, ds.Name, err)
		}
		labels = make([]uint8, len(pool))
		for i, k := range pool {
			labels[i] = ds.Train.Y[k]
		}
	}
	switch pc.Scheme {
	case sweep.SchemeIID:
		p.Train, err = partition.IID(len(labels), pc.Clients, r)
	case sweep.SchemeDirichlet:
		p.Train, err = partition.Dirichlet(labels, ds.Classes, pc.Clients, partition.DirichletOptions{Alpha: pc.Alpha, MinSize: pc.MinSize}, r)
	case sweep.SchemeShards:
		p.Train, err = partition.Shards(labels, pc.Clients, pc.ShardsPerClient, r)
	case sweep.SchemeKLabels:
		p.Train, err = partition.KLabels(labels, ds.Classes, pc.Clients, pc.LabelsPerClient, r)
	case sweep.SchemeQuantity:
		p.Train, err = partition.Quantity(len(labels), pc.Clients, partition.QuantityOptions{Alpha: pc.Alpha, MinSize: pc.MinSize}, r)
	case sweep.SchemeMixed:
		p.Train, err = partition.Mixed(labels, ds.Classes, pc.Clients, partition.MixedOptions{Alpha: pc.Alpha}, r)
	case sweep.SchemeHiCS:
		opts := partition.GroupOptions{Alphas: pc.Alphas, Clients: pc.Clients, MinSize: pc.MinSize}
		if pc.Test == sweep.TestCosplit {
			opts.TestLabels = ds.Test.Y
		}
		p, err = partition.Groups(labels, ds.Classes, opts, r)
	case sweep.SchemeUnbalanced:
		var sizes []int
		switch {
		case len(pc.Sizes) > 0:
			sizes = pc.Sizes
		case pc.SizeExponent != 0:
			sizes, err = partition.PowerLawSizes(len(labels), pc.Clients, pc.SizeExponent, pc.MinSize)
		default:
			sizes, err = partition.DirichletSizes(len(labels), pc.Clients, partition.QuantityOptions{Alpha: pc.SizeAlpha, MinSize: pc.MinSize}, r)
		}
		if err == nil {
			p.Train, err = partition.Unbalanced(labels, ds.Classes, partition.UnbalancedOptions{Sizes: sizes, Alpha: pc.Alpha}, r)
		}
	case sweep.SchemeNatural:
		if ds.Natural == nil || len(ds.Natural.Train) != pc.Clients {
			err = fmt.Errorf("dataset %s has no natural split into %d clients: %w", ds.Name, pc.Clients, fl.ErrInvalid)
			break
		}
		p.Train = cloneLists(ds.Natural.Train)
		if pc.Test == sweep.TestNatural {
			p.Test, p.TestFrom = cloneLists(ds.Natural.Test), partition.SourceTest
		}
	default:
		err = fmt.Errorf("partition.scheme = %q is unknown: %w", pc.Scheme, fl.ErrInvalid)
	}
	if err != nil {
		return partition.Partition{}, fmt.Errorf("partition (%s, %d clients of %s): %w", pc.Scheme, pc.Clients, ds.Name, err)
	}
	if pool != nil {
		partition.Lift(p.Train, pool)
		labels = ds.Train.Y
	}
	switch pc.Test {
	case sweep.TestCosplit, sweep.TestNatural:
		return p, nil // the scheme made them
	case sweep.TestHoldout:
		keep, test, err := partition.HoldOut(p.Train, labels, pc.TestFraction, r)
		if err != nil {
			return partition.Partition{}, fmt.Errorf("partition.test = holdout: %w", err)
		}
		p.Train, p.Test, p.TestFrom = keep, test, partition.SourceTrain
		return p, nil
	default: // split
		sizes := make([]int, len(p.Train))
		for k, idx := range p.Train {
			sizes[k] = max(1, int(math.Round(pc.TestFraction*float64(len(idx)))))
		}
		test, err := partition.FromTestSet(p.Train, labels, ds.Test.Y, ds.Classes, sizes, r)
		if err != nil {
			return partition.Partition{}, fmt.Errorf("partition.test = split: %w", err)
		}
		p.Test, p.TestFrom = test, partition.SourceTest
		return p, nil
	}
}

func cloneLists(lists [][]int) [][]int {
	out := make([][]int, len(lists))
	for k, l := range lists {
		out[k] = slices.Clone(l)
	}
	return out
}

// evaluateNoisyClients scores w on every client's local test set as that
// client sees it: its noisy copy (partition.Noise), predicted client by
// client. Memory: one client's test copy at a time.
func (e *Engine) evaluateNoisyClients(ctx context.Context, env *pointEnv, w []float32) (ClientEvals, error) {
	n := env.pop.N()
	per := ClientEvals{N: make([]int, n), LossSum: make([]float64, n), Correct: make([]int, n)}
	split := env.testSplit()
	for k := 0; k < n; k++ {
		if k >= len(env.part.Test) || len(env.part.Test[k]) == 0 {
			continue
		}
		ex := env.noisy(split, env.part.TestFrom, k, env.part.Test[k])
		loss, correct, err := e.predict(ctx, env, w, ex.X, ex.Y, ex.Idx)
		if err != nil {
			return ClientEvals{}, err
		}
		for i := range loss {
			per.LossSum[k] += float64(loss[i])
			if correct[i] {
				per.Correct[k]++
			}
		}
		per.N[k] = len(loss)
	}
	return per, nil
}
