package claims

import (
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/results"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// experiments is the repository's experiments directory, and archiveDir
// its archive of results (README.md, "Archives").
const (
	experiments = "../experiments"
	archiveDir  = "archive"
)

// TestArchivedSweeps checks experiments/archive against the experiments:
// every archived sweep is the sweep of an experiment's spec, every archived
// point is one of that spec's points as committed (a point's ID hashes its
// whole configuration) and finished, and every shipped claim evaluates on
// the archive without an error. So an archived result never stands for a
// configuration the specs no longer hold; a point added to a grid leaves
// the archived ones valid.
func TestArchivedSweeps(t *testing.T) {
	dir := filepath.Join(experiments, archiveDir)
	if _, err := os.Stat(filepath.Join(dir, "sweeps")); os.IsNotExist(err) {
		t.Skip("no sweep archived")
	}
	url := conf.DirURL(dir)
	names, err := results.List(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sweep.Sweep{}
	for _, specs := range experimentSpecs(t) {
		maps.Copy(byName, specs)
	}
	st, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, name := range names {
		spec, ok := byName[name]
		if !ok {
			t.Errorf("archived sweep %s is no experiment's spec", name)
			continue
		}
		sk, err := store.SweepKeys(name)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := st.Dirs(t.Context(), sk.Prefix())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if !slices.ContainsFunc(spec.Points, func(p sweep.Point) bool { return p.ID == id }) {
				t.Errorf("archived sweep %s holds point %s, which its spec does not define (a point's ID is the hash of its configuration: the spec changed since it ran; re-run it, or archive it under a spec that says what ran)", name, id)
				continue
			}
			pk, _ := sk.Point(id)
			var done steps.PointResult
			if err := st.GetJSON(t.Context(), pk.Done(), &done); err != nil || (done.Status != steps.StatusDone && done.Status != steps.StatusDiverged) {
				t.Errorf("archived point %s of %s is not finished (%+v, %v)", id, name, done, err)
			}
		}
	}
	if _, err := Evaluate(t.Context(), url, shipped(t)); err != nil {
		t.Errorf("the shipped claims on the archive: %v", err)
	}
}

// TestShippedClaims: every experiment (a directory of experiments/ with a
// README.md) has a claims.yaml of 3 to 6 claims that parses, every claim's
// sweeps are sweeps its experiment's specs define, and every claim's SQL
// runs on the tables' schemas (Check).
func TestShippedClaims(t *testing.T) {
	files := shipped(t)
	specs := experimentSpecs(t)
	for _, f := range files {
		exp := filepath.Base(filepath.Dir(f.Path))
		if n := len(f.Claims); n < 3 || n > 6 {
			t.Errorf("%s: %d claims; want 3 to 6 headline claims", f.Path, n)
		}
		for _, c := range f.Claims {
			for _, s := range c.Sweeps {
				if _, ok := specs[exp][s]; !ok {
					t.Errorf("%s: claim %q reads sweep %s, which no spec of experiments/%s names", f.Path, c.ID, s, exp)
				}
			}
		}
	}
	if err := Check(t.Context(), files); err != nil {
		t.Error(err)
	}
}

// TestShippedClaimsOnSyntheticRuns evaluates every shipped claim over a
// synthetic run of its experiment's own specs: every point of every spec,
// with the labels and configurations the specs give it, and made-up
// metrics (test accuracy rising with the round, losses falling, fairness
// and attack scores drawn from a fixed stream). The verdicts mean nothing
// here; two things are checked:
//
//   - every claim finds data and gets a verdict: its filters on sweeps,
//     labels, methods and rounds match what the specs produce, so no claim
//     sits at "not run" once its sweeps have run;
//   - where a claim computes what one of the experiment's own queries
//     (experiments/<paper>/sql, whose output the experiment's README
//     reports) computes, the two agree to the query's rounding.
func TestShippedClaimsOnSyntheticRuns(t *testing.T) {
	files := shipped(t)
	blob := "file://" + filepath.ToSlash(t.TempDir()) + "?create_dir=1&metadata=skip"
	st, err := store.Open(t.Context(), blob)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, byName := range experimentSpecs(t) {
		for _, s := range byName {
			writeSynthetic(t, st, s)
		}
	}
	rs, err := Evaluate(t.Context(), blob, files)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]Value{}
	for _, r := range rs {
		if r.Verdict == NotRun || r.Ours == nil || len(r.Missing) > 0 {
			t.Errorf("%s: claim %q: %s (%s), missing %v; want a value from the synthetic run", r.File, r.Claim.ID, r.Verdict, r.Reason, r.Missing)
			continue
		}
		ours[filepath.Base(filepath.Dir(r.File))+"/"+r.Claim.ID] = *r.Ours
	}
	setups := map[string]string{}
	for _, f := range files {
		setups[filepath.Base(filepath.Dir(f.Path))] = f.Setup
	}
	// The experiments' queries, each reduced to the one number a claim
	// computes: the query's file (wrapped as q), the sweeps it runs over,
	// and the claim's value (a claim id, or SQL over the claims file's
	// setup macros), with the query's rounding as the tolerance. Rounds to
	// 75%: paper_speedup's speed-ups equal those of paper.sql's rounds,
	// a run that never reached 75% (NULL in paper.sql) counted at its last
	// round, as paper_speedup counts it (every point of these sweeps runs
	// the same rounds).
	tests := []struct {
		exp, query string
		sweeps     []string
		pick       string // SQL over q and exp's setup macros
		claim      string // a claim id of exp, or SQL returning one number over its setup macros
		tol        float64
	}{
		{"fedeba", "paired", []string{"fedeba-eba", "fedeba-tau", "fedeba-baselines"},
			`SELECT CAST(d_acc AS DOUBLE) FROM q WHERE method = 'algorithm=fedeba+(alpha=0.9,tau=0.1,theta=0)'`, "acc-above-fedavg", 0.005},
		{"fnrfl", "table2", []string{"fnrfl-central", "fnrfl-fmnist", "fnrfl-mnist-full"},
			`SELECT vs_fedavg FROM q WHERE dataset = 'fmnist' AND method = 'fnrfl' AND scenario = '{"alpha":0.5,"clients":10,"public_per_class":100,"scheme":"noniid-labeldir"}'`,
			"label-skew-gain", 5e-5},
		{"fnrfl", "table2", []string{"fnrfl-central", "fnrfl-fmnist", "fnrfl-mnist-full"},
			`SELECT acc FROM q WHERE dataset = 'fmnist' AND method = 'fnrfl' AND scenario = '{"alpha":0.5,"clients":10,"public_per_class":100,"scheme":"noniid-labeldir"}'`,
			"label-skew-accuracy", 5e-5},
		{"hicsfl", "smooth", []string{"hicsfl-paper-settings"},
			`SELECT sum(acc_step_sd * CASE sampler WHEN 'random' THEN -1 ELSE 1 END) FROM q WHERE setting = 'hics-1' AND sampler IN ('random', 'hics')`,
			"smoother-setting-1", 1e-4},
		{"hicsfl", "paper", []string{"hicsfl-paper"},
			`SELECT exp(avg(ln(coalesce(random_to75, rounds_done) / coalesce(to75, rounds_done)))) FROM q WHERE sampler = 'hics'`, "speedup-setting-2", 1e-9},
		{"hicsfl", "paper", []string{"hicsfl-paper-baselines"},
			`SELECT exp(avg(ln(coalesce(random_to75, rounds_done) / coalesce(to75, rounds_done)))) FROM q WHERE sampler = 'clustered-similarity'`, "cs-speedup-setting-2", 1e-9},
		{"rlu", "insweep_iacc", []string{"rlu-insweep", "rlu-insweep-momentum"},
			`SELECT rlu FROM q WHERE sweep = 'rlu-insweep' AND algorithm = 'fedavg' AND round = 1`, "untrained-exact", 5e-4},
		{"sampling-theory", "../summary", []string{"sampling-theory-n10"},
			`SELECT md_minus_u FROM q WHERE importance = 'uniform'`,
			`SELECT mean FROM gap('uniform', 'md', 'uniform')`, 5e-5},
		{"sampling-theory", "../summary", []string{"sampling-theory-n20"},
			`SELECT cl_minus_md FROM q WHERE importance = 'size'`,
			`SELECT mean FROM gap('size', 'clustered', 'md')`, 5e-5},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join(experiments, tt.exp, "sql", tt.query+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		q := strings.TrimSuffix(strings.TrimSpace(string(b)), ";")
		want := queryNumber(t, blob, tt.sweeps, setups[tt.exp], "WITH q AS (\n"+q+"\n) "+tt.pick)
		var got float64
		if v, ok := ours[tt.exp+"/"+tt.claim]; ok {
			got = v.Value
		} else {
			got = queryNumber(t, blob, tt.sweeps, setups[tt.exp], tt.claim)
		}
		if math.Abs(got-want) > tt.tol {
			t.Errorf("%s: %s gives %v; sql/%s.sql %v (tolerance %v)", tt.exp, tt.claim, got, tt.query, want, tt.tol)
		}
	}
}

// queryNumber runs setup and then q, which returns one number, over the
// sweeps of the bucket.
func queryNumber(t *testing.T, blob string, sweeps []string, setup, q string) float64 {
	t.Helper()
	db, err := results.Open(t.Context(), blob, sweeps, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := run(t.Context(), db.DB, setup, "SELECT ("+q+") AS value", false)
	if err != nil || v == nil {
		t.Fatalf("%s: %v, %v", q, v, err)
	}
	return v.Value
}

// shipped loads experiments/*/claims.yaml and checks that every
// experiment has one.
func shipped(t *testing.T) []*File {
	t.Helper()
	files, err := LoadAll([]string{experiments})
	if err != nil {
		t.Fatal(err)
	}
	readmes, err := filepath.Glob(filepath.Join(experiments, "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readmes {
		if filepath.Base(filepath.Dir(r)) == archiveDir {
			continue // the archive of results, not an experiment
		}
		want := filepath.Join(filepath.Dir(r), FileName)
		if !slices.ContainsFunc(files, func(f *File) bool { return f.Path == want }) {
			t.Errorf("%s has no %s", filepath.Dir(r), FileName)
		}
	}
	if len(files) < 5 {
		t.Fatalf("%d claims files; want one per paper, 5", len(files))
	}
	return files
}

// experimentSpecs parses every sweep spec of every experiment: experiment
// directory → sweep name → spec.
func experimentSpecs(t *testing.T) map[string]map[string]*sweep.Sweep {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(experiments, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]map[string]*sweep.Sweep{}
	for _, p := range paths {
		if filepath.Base(p) == FileName {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sweep.Parse(p, b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		exp := filepath.Base(filepath.Dir(p))
		if specs[exp] == nil {
			specs[exp] = map[string]*sweep.Sweep{}
		}
		specs[exp][s.Name] = s
	}
	return specs
}

// writeSynthetic writes a made-up run of every point of s into the
// bucket: one Parquet file per table.
func writeSynthetic(t *testing.T, st *store.Store, s *sweep.Sweep) {
	t.Helper()
	var points []store.PointRow
	var rounds []store.RoundRow
	var parts []store.PartitionRow
	var attacks []store.AttackRow
	for _, p := range s.Points {
		c := p.Config
		h := fnv.New64a()
		h.Write([]byte(s.Name + "/" + p.ID))
		rng := rand.New(rand.NewPCG(h.Sum64(), c.Seed)) // test data only: a fixed stream per point
		seed := int64(c.Seed)
		points = append(points, store.PointRow{Sweep: s.Name, Point: p.ID, Index: int32(p.Index), Label: p.Label, Seed: seed,
			Dataset: c.Dataset.Name, Partition: c.Partition.Scheme, NumClients: int32(c.Partition.Clients), NumParams: 1000,
			Rounds: int32(c.Rounds), ClientsPerRound: int32(c.ClientsPerRound), Importance: c.Importance, Sampler: c.Sampler.Name,
			Aggregator: c.Aggregator.Name, Algorithm: c.AlgorithmName(), Config: string(c.Canonical()), Status: "done", RoundsDone: int32(c.Rounds)})
		top, tau := 0.5+0.4*rng.Float64(), 2+float64(c.Rounds)/5*rng.Float64()
		for r := 0; r <= c.Rounds; r++ {
			row := store.RoundRow{Sweep: s.Name, Point: p.ID, Seed: seed, Round: int32(r), Clients: int32(c.ClientsPerRound),
				DownFloats: int64(c.ClientsPerRound) * 1000, UpFloats: int64(c.ClientsPerRound) * (1000 + int64(rng.IntN(3))), RoundTrips: 1,
				Evaluated: c.EvalEvery > 0 && (r%c.EvalEvery == 0 || r == c.Rounds)}
			if row.Evaluated {
				acc := min(1, max(0, top*(1-math.Exp(-float64(r)/tau))+0.02*rng.NormFloat64()))
				loss := 2.3*math.Exp(-float64(r)/tau) + 0.3 + 0.01*rng.Float64()
				v := 50 + 100*rng.Float64()
				row.TestAcc, row.TestLoss, row.GlobalTrainLoss = &acc, &loss, &loss
				row.ClientAccMean, row.ClientAccVarPct2 = &acc, &v
				w5, b5 := acc/2, min(1, acc*1.2)
				row.ClientAccWorst, row.ClientAccBest = &w5, &b5
			}
			rounds = append(rounds, row)
		}
		n := c.Partition.Clients
		for k := range n {
			pr := store.PartitionRow{Sweep: s.Name, Point: p.ID, Seed: seed, Client: int32(k), Train: 100, Test: 20, Importance: 1 / float64(n)}
			if len(c.Partition.Alphas) > 0 {
				g := int32(k * len(c.Partition.Alphas) / n)
				pr.Group = &g
			}
			parts = append(parts, pr)
		}
		for _, r := range c.Attack.Rounds {
			for k := range n {
				for _, m := range c.Attack.Methods {
					ia, ca := 0.5+0.5*rng.Float64(), 0.5+0.5*rng.Float64()
					attacks = append(attacks, store.AttackRow{Sweep: s.Name, Point: p.ID, Seed: seed, Round: int32(r), Client: int32(k),
						Method: m, Algorithm: c.AlgorithmName(), Modelled: true, IAcc: &ia, CAcc: &ca})
				}
			}
		}
	}
	writeRows(t, st, s, store.TablePoints, points)
	writeRows(t, st, s, store.TableRounds, rounds)
	writeRows(t, st, s, store.TablePartitions, parts)
	if len(attacks) > 0 {
		writeRows(t, st, s, store.TableAttacks, attacks)
	}
}

// writeRows writes rows as the compacted file of table of the sweep's
// first point (the views read every file of the sweep, whoever's it is).
func writeRows[T any](t *testing.T, st *store.Store, s *sweep.Sweep, table store.Table, rows []T) {
	t.Helper()
	sk, err := store.SweepKeys(s.Name)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := sk.Point(s.Points[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteRows(t.Context(), st, pk.Compacted(table), rows); err != nil {
		t.Fatal(err)
	}
}
