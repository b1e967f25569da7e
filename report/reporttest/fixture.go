// Package reporttest writes a small sweep with hand-chosen numbers into a
// bucket, for the tests of package report and of `starter report`. Every
// value is a multiple of 1/8 where it matters, so the expected means,
// quantiles and shares are exact; report_test.go states them.
//
// The sweep, "fixture", has 4 clients in two groups ({0, 1} and {2, 3}), 3
// classes, 6 rounds evaluated every 2 (rounds 0, 2, 4, 6), seeds 1 and 2,
// and the grid algorithm: [fedavg, fedprox(mu=0.1), scaffold, fedfv]:
//
//   - fedavg and fedprox: both seeds done;
//   - scaffold: seed 1 done, seed 2 still running (rounds 0..4 committed,
//     part files only);
//   - fedfv: nothing yet (pending);
//   - fedavg records global_train_loss; fedavg was attacked in rounds 1
//     (both seeds) and 5 (seed 1) by rlu and llg+.
package reporttest

import (
	"context"
	"fmt"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// Name is the fixture sweep's name.
const Name = "fixture"

// Spec is the fixture sweep's spec.
const Spec = `
name: fixture
dataset: {name: synthetic}
partition: {scheme: hics, clients: 4, alphas: [0.1, 1]}
model: {arch: mlp, hidden: [8]}
rounds: 6
clients_per_round: 2
eval_every: 2
seeds: [1, 2]
grid:
  algorithm: [fedavg, {name: fedprox, mu: 0.1}, scaffold, fedfv]
`

// series are a point's values at the evaluated rounds 0, 2, 4, 6 (fewer
// for a point that has not got there).
type series struct {
	acc, loss, trainLoss []float64
	// clientAcc are the clients' local test accuracies at the point's last
	// evaluated round; earlier evaluated rounds give every client 0.25.
	clientAcc []float64
	selected  func(round int) []int // the round's selected clients
	rounds    int                   // rounds committed
	done      bool
}

func f(v float64) *float64 { return &v }

var (
	odd01  = func(r int) []int { return map[bool][]int{true: {0, 2}, false: {0, 1}}[r%2 == 1] }
	all23  = func(int) []int { return []int{2, 3} }
	all13  = func(int) []int { return []int{1, 3} }
	points = map[string]series{
		"algorithm=fedavg seed=1": {acc: []float64{.125, .5, .75, .875}, loss: []float64{2, 1.5, 1, .5}, trainLoss: []float64{2, 1, .5, .25},
			clientAcc: []float64{.5, .625, .875, 1}, selected: odd01, rounds: 6, done: true},
		"algorithm=fedavg seed=2": {acc: []float64{.125, .25, .75, .75}, loss: []float64{2, 1.75, 1, .75}, trainLoss: []float64{2, 1.5, .5, .25},
			clientAcc: []float64{.375, .75, .875, 1}, selected: all23, rounds: 6, done: true},
		"algorithm=fedprox(mu=0.1) seed=1": {acc: []float64{.125, .625, .75, .75}, loss: []float64{2, 1.25, 1, 1},
			clientAcc: []float64{.5, .5, .5, .5}, selected: all13, rounds: 6, done: true},
		"algorithm=fedprox(mu=0.1) seed=2": {acc: []float64{.125, .625, .75, .625}, loss: []float64{2, 1.25, 1, 1.25},
			clientAcc: []float64{.25, .25, .75, .75}, selected: all13, rounds: 6, done: true},
		"algorithm=scaffold seed=1": {acc: []float64{.125, .75, .875, .875}, loss: []float64{2, 1, .5, .5},
			clientAcc: []float64{1, 1, 1, 1}, selected: all13, rounds: 6, done: true},
		"algorithm=scaffold seed=2": {acc: []float64{.125, .75, .875}, loss: []float64{2, 1, .5},
			clientAcc: []float64{.5, .5, .5, .5}, selected: all13, rounds: 4},
	}
	// partitions are the label counts of clients 0..3 per seed.
	partitions = map[uint64][][]int32{
		1: {{8, 2, 0}, {0, 10, 0}, {3, 3, 4}, {5, 0, 5}},
		2: {{10, 0, 0}, {1, 1, 8}, {4, 3, 3}, {2, 2, 6}},
	}
)

// attack is one attacks row of fedavg.
type attack struct {
	seed       uint64
	round      int32
	client     int32
	method     string
	iacc, cacc *float64
	na         string
}

var attacks = []attack{
	{1, 1, 0, "rlu", f(1), f(1), ""}, {1, 1, 2, "rlu", f(.5), f(1), ""},
	{1, 1, 0, "llg+", f(.5), f(.5), ""}, {1, 1, 2, "llg+", f(.5), f(1), ""},
	{2, 1, 2, "rlu", f(.75), f(1), ""}, {2, 1, 3, "rlu", f(.75), f(.5), ""},
	{2, 1, 2, "llg+", nil, nil, "batch of more than one sample"}, {2, 1, 3, "llg+", f(.25), f(.5), ""},
	{1, 5, 0, "rlu", f(1), f(1), ""}, {1, 5, 2, "rlu", f(1), f(1), ""},
}

// Write writes the fixture sweep into the bucket at blobURL: its stored
// spec, and each started point's tables, DONE.json or COMMITTED.json.
func Write(ctx context.Context, blobURL string) error {
	st, err := store.Open(ctx, blobURL)
	if err != nil {
		return err
	}
	defer st.Close()
	sw, err := sweep.Parse("fixture.yaml", []byte(Spec))
	if err != nil {
		return err
	}
	sk, err := store.SweepKeys(sw.Name)
	if err != nil {
		return err
	}
	if err := st.PutJSON(ctx, sk.Spec(), engine.StoredSweep{Hash: sw.Hash(), File: "fixture.yaml", YAML: Spec, Sweep: sw}); err != nil {
		return err
	}
	for _, p := range sw.Points {
		s, ok := points[p.Label]
		if !ok {
			continue // pending: nothing written
		}
		pk, err := sk.Point(p.ID)
		if err != nil {
			return err
		}
		if err := writePoint(ctx, st, sw.Name, p, pk, s); err != nil {
			return fmt.Errorf("point %s: %w", p.Label, err)
		}
	}
	return nil
}

func writePoint(ctx context.Context, st *store.Store, name string, p sweep.Point, pk store.PointKeys, s series) error {
	seed := int64(p.Config.Seed)
	var rounds []store.RoundRow
	var clients []store.ClientRow
	lastEval := 2 * (len(s.acc) - 1)
	for r := 0; r <= s.rounds; r++ {
		row := store.RoundRow{Sweep: name, Point: p.ID, Seed: seed, Round: int32(r), Evaluated: r%2 == 0}
		sel := map[int]bool{}
		if r > 0 {
			for _, c := range s.selected(r) {
				sel[c] = true
			}
		}
		if row.Evaluated {
			i := r / 2
			row.TestAcc, row.TestLoss = f(s.acc[i]), f(s.loss[i])
			if s.trainLoss != nil {
				row.GlobalTrainLoss = f(s.trainLoss[i])
			}
		}
		rounds = append(rounds, row)
		for c := range 4 {
			if !sel[c] && !row.Evaluated {
				continue
			}
			cr := store.ClientRow{Sweep: name, Point: p.ID, Seed: seed, Round: int32(r), Client: int32(c), Selected: sel[c]}
			if row.Evaluated {
				acc := .25
				if r == lastEval {
					acc = s.clientAcc[c]
				}
				cr.TestN, cr.TestAcc = new(int32(8)), f(acc)
			}
			clients = append(clients, cr)
		}
	}
	var parts []store.PartitionRow
	for c, counts := range partitions[p.Config.Seed] {
		train := int32(0)
		for _, x := range counts {
			train += x
		}
		parts = append(parts, store.PartitionRow{Sweep: name, Point: p.ID, Seed: seed, Client: int32(c), Train: train, Test: 8,
			Importance: 0.25, LabelCounts: counts, Group: new(int32(c / 2))})
	}
	var atk []store.AttackRow
	for _, a := range attacks {
		if a.seed == p.Config.Seed && p.Config.AlgorithmName() == "fedavg" {
			atk = append(atk, store.AttackRow{Sweep: name, Point: p.ID, Seed: seed, Round: a.round, Client: a.client, Method: a.method,
				Algorithm: "fedavg", IAcc: a.iacc, CAcc: a.cacc, NotApplicable: a.na})
		}
	}
	status := steps.StatusRunning
	if s.done {
		status = steps.StatusDone
	}
	point := store.PointRow{Sweep: name, Point: p.ID, Index: int32(p.Index), Label: p.Label, Seed: seed, Dataset: "synthetic",
		Partition: "hics", NumClients: 4, Rounds: 6, ClientsPerRound: 2, Algorithm: p.Config.AlgorithmName(), Status: status,
		RoundsDone: int32(s.rounds), Config: string(p.Config.Canonical())}
	if err := store.WriteRows(ctx, st, pk.Compacted(store.TablePartitions), parts); err != nil {
		return err
	}
	if err := store.WriteRows(ctx, st, pk.Compacted(store.TablePoints), []store.PointRow{point}); err != nil {
		return err
	}
	if !s.done {
		// A running point: one part file per committed round.
		for r := 0; r <= s.rounds; r++ {
			var cs []store.ClientRow
			for _, c := range clients {
				if int(c.Round) == r {
					cs = append(cs, c)
				}
			}
			if err := store.WriteRows(ctx, st, pk.Part(store.TableRounds, r), rounds[r:r+1]); err != nil {
				return err
			}
			if err := store.WriteRows(ctx, st, pk.Part(store.TableClients, r), cs); err != nil {
				return err
			}
		}
		return st.PutJSON(ctx, pk.Committed(s.rounds), store.Commit{Round: s.rounds})
	}
	if err := store.WriteRows(ctx, st, pk.Compacted(store.TableRounds), rounds); err != nil {
		return err
	}
	if err := store.WriteRows(ctx, st, pk.Compacted(store.TableClients), clients); err != nil {
		return err
	}
	if len(atk) > 0 {
		if err := store.WriteRows(ctx, st, pk.Compacted(store.TableAttacks), atk); err != nil {
			return err
		}
	}
	return st.PutJSON(ctx, pk.Done(), steps.PointResult{Point: p.ID, Status: steps.StatusDone, RoundsDone: s.rounds, TestAcc: s.acc[len(s.acc)-1]})
}
