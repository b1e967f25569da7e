package results

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/store"
)

// The queries the benchmark times, as a researcher runs them (README,
// "Querying results"). The default summary is cmd/starter's.
const (
	benchSummary = `SELECT p.sweep, p.point, p.label, p.status, p.rounds_done, round(p.final_test_acc, 4) AS final_acc,
       round(max(r.test_acc), 4) AS best_acc, arg_max(r.round, r.test_acc) AS best_round
FROM points p JOIN rounds r USING (sweep, point)
WHERE r.evaluated GROUP BY p.sweep, p.index, p.point, p.label, p.status, p.rounds_done, p.final_test_acc ORDER BY p.sweep, p.index`

	// benchCurve is each method's mean accuracy curve over its seeds.
	benchCurve = `SELECT regexp_replace(p.label, ' ?seed=\d+', '') AS method, r.round, avg(r.test_acc) AS acc, count(*) AS seeds
FROM rounds r JOIN points p USING (sweep, point) WHERE r.evaluated GROUP BY ALL ORDER BY ALL`

	// benchCompare puts each method's mean best accuracy in two sweeps side
	// by side.
	benchCompare = `WITH best AS (SELECT sweep, point, max(test_acc) AS best FROM rounds WHERE evaluated GROUP BY ALL)
SELECT regexp_replace(p.label, ' ?seed=\d+', '') AS method,
       avg(b.best) FILTER (WHERE p.sweep = 'bench-a') AS a, avg(b.best) FILTER (WHERE p.sweep = 'bench-b') AS b
FROM points p JOIN best b USING (sweep, point) GROUP BY ALL ORDER BY method`

	// benchClients is the mean accuracy of the worst 10% of clients at the
	// last round, per method: a query over the largest table.
	benchClients = `WITH last AS (SELECT sweep, point, max(round) AS round FROM clients WHERE test_acc IS NOT NULL GROUP BY ALL),
ranked AS (SELECT c.sweep, c.point, c.test_acc, percent_rank() OVER (PARTITION BY c.sweep, c.point ORDER BY c.test_acc) AS pr
           FROM clients c JOIN last l USING (sweep, point, round))
SELECT regexp_replace(p.label, ' ?seed=\d+', '') AS method, avg(test_acc) AS worst10
FROM ranked JOIN points p USING (sweep, point) WHERE pr < 0.1 GROUP BY ALL ORDER BY method`
)

// BenchmarkQuery100x200 times `starter query` on a sweep of 100 points of
// 200 rounds (and a second one for the comparison): opening the views, then
// each query, end to end as one command runs it.
func BenchmarkQuery100x200(b *testing.B) { benchmarkQuery(b, 100, 200) }

func benchmarkQuery(b *testing.B, points, rounds int) {
	ctx := b.Context()
	blobURL := conf.DirURL(b.TempDir())
	st, err := store.Open(ctx, blobURL)
	if err != nil {
		b.Fatal(err)
	}
	for i, name := range []string{"bench-a", "bench-b"} {
		if err := writeBenchSweep(ctx, st, name, points, rounds, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	one, two := []string{"bench-a"}, []string{"bench-a", "bench-b"}
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			db, err := Open(ctx, blobURL, one, false)
			if err != nil {
				b.Fatal(err)
			}
			db.Close()
		}
	})
	for _, bm := range []struct {
		name   string
		sweeps []string
		q      string
		rows   int
	}{
		{"summary", one, benchSummary, points},
		{"curve", one, benchCurve, 5 * (rounds/5 + 1)},
		{"compare", two, benchCompare, 5},
		{"clients", one, benchClients, 5},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n, err := queryCount(ctx, blobURL, bm.sweeps, bm.q); err != nil || n != bm.rows {
					b.Fatalf("%s: %d rows, %v; want %d rows", bm.name, n, err, bm.rows)
				}
			}
		})
	}
}

// queryCount opens the sweeps' views, runs q and reads its rows.
func queryCount(ctx context.Context, blobURL string, names []string, q string) (int, error) {
	db, err := Open(ctx, blobURL, names, false)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// writeBenchSweep writes a finished sweep's compacted tables (one file per
// point and table, as a finished point leaves them): 5 methods × points/5
// seeds; rounds 0..rounds, evaluated every 5th round; 10 trained clients a
// round and all 100 on evaluated rounds; 100 partition rows a point.
func writeBenchSweep(ctx context.Context, st *store.Store, name string, points, rounds int, seed uint64) error {
	const numClients, trained, classes = 100, 10, 10
	r := rand.New(rand.NewPCG(seed, 1))
	sk, err := store.SweepKeys(name)
	if err != nil {
		return err
	}
	methods := []string{"fedavg", "fedprox", "scaffold", "qffl", "fedeba"}
	for i := range points {
		id := fmt.Sprintf("p%010x", i+1)
		pk, err := sk.Point(id)
		if err != nil {
			return err
		}
		s := int64(i / len(methods))
		var rr []store.RoundRow
		var cr []store.ClientRow
		acc := 0.1
		for t := 0; t <= rounds; t++ {
			row := store.RoundRow{Sweep: name, Point: id, Seed: s, Round: int32(t), Clients: trained, Draws: trained, WeightSum: 1}
			if t > 0 {
				acc += (0.9 - acc) * 0.02 * r.Float64()
				for k := range trained {
					bl := 2 * r.Float64()
					bias := make([]float64, classes)
					for j := range bias {
						bias[j] = r.NormFloat64() * 0.01
					}
					cr = append(cr, store.ClientRow{Sweep: name, Point: id, Seed: s, Round: int32(t), Client: int32((t*trained + k) % numClients),
						Selected: true, Draws: 1, Weight: 1.0 / trained, BatchLoss: &bl, BiasDelta: bias})
				}
			}
			if t%5 == 0 || t == rounds {
				a, l := acc, 1-acc
				row.Evaluated, row.TestAcc, row.TestLoss = true, &a, &l
				for k := range numClients {
					ca := min(1, max(0, acc+0.1*r.NormFloat64()))
					n := int32(100)
					cr = append(cr, store.ClientRow{Sweep: name, Point: id, Seed: s, Round: int32(t), Client: int32(k), TestN: &n, TestAcc: &ca})
				}
			}
			rr = append(rr, row)
		}
		pr := make([]store.PartitionRow, numClients)
		for k := range pr {
			counts := make([]int32, classes)
			for j := range counts {
				counts[j] = int32(r.IntN(60))
			}
			pr[k] = store.PartitionRow{Sweep: name, Point: id, Seed: s, Client: int32(k), Train: 300, Test: 100, Importance: 0.01, LabelCounts: counts}
		}
		final := acc
		pt := []store.PointRow{{Sweep: name, Point: id, Index: int32(i), Label: fmt.Sprintf("algorithm=%s seed=%d", methods[i%len(methods)], s),
			Seed: s, Dataset: "fmnist", NumClients: numClients, Rounds: int32(rounds), ClientsPerRound: trained,
			Algorithm: methods[i%len(methods)], Status: "done", RoundsDone: int32(rounds), FinalTestAcc: &final}}
		for _, err := range []error{
			store.WriteRows(ctx, st, pk.Compacted(store.TableRounds), rr),
			store.WriteRows(ctx, st, pk.Compacted(store.TableClients), cr),
			store.WriteRows(ctx, st, pk.Compacted(store.TablePartitions), pr),
			store.WriteRows(ctx, st, pk.Compacted(store.TablePoints), pt),
		} {
			if err != nil {
				return err
			}
		}
	}
	return nil
}
