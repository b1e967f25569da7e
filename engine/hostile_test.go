package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
)

// fileEngine is an engine over a real file bucket in a temporary directory,
// whose data directory is another one (data). It returns the engine and the
// two directories.
func fileEngine(t testing.TB) (e *Engine, bucket, data string) {
	t.Helper()
	bucket, data = t.TempDir(), t.TempDir()
	st, err := store.Open(t.Context(), conf.DirURL(bucket))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, &Options{Workers: 2, DataDir: data}), bucket, data
}

// tree is every file under dir with the SHA-256 of its contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		files[p] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// nested is v inside n levels of single-element lists.
func nested(n int, v string) string {
	return strings.Repeat("[", n) + v + strings.Repeat("]", n)
}

// laughs is a YAML alias bomb ("billion laughs"): 10^levels strings from a
// few hundred bytes, under sampler options, which are free-form.
func laughs(levels int, merge bool) string {
	var b strings.Builder
	b.WriteString("name: bomb\nsampler:\n  name: uniform\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", ")
		if merge { // merge keys: each map merges the previous one ten times
			if i == 1 {
				b.WriteString("  m0: &m0 {a: lol}\n")
			}
			refs = strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*m%d, ", i-1), 10), ", ")
			fmt.Fprintf(&b, "  m%d: &m%d {<<: [%s], k%d: lol}\n", i, i, refs, i)
			continue
		}
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, refs)
	}
	return b.String()
}

// TestHostileInput: every spec below is refused by PlanSweep (the
// SweepWorkflow's first activity) with a bad-input error (non-retryable at
// the activity boundary) that names the field and the fix, and the bucket,
// a real file bucket, is left exactly as it was. Some cases first put a
// sweep in the bucket (setup); then "as it was" means with that sweep.
func TestHostileInput(t *testing.T) {
	ctx := context.Background()
	good := strings.Replace(spec, "name: t\n", "", 1)
	withName := func(n string) string { return "name: " + n + "\n" + good }
	point := func(field string) string { return "name: h\n" + field + "\n" }
	manySeeds := make([]string, 200)
	for i := range manySeeds {
		manySeeds[i] = fmt.Sprint(i)
	}
	lrs := make([]string, 1000)
	for i := range lrs {
		lrs[i] = fmt.Sprintf("%g", float64(i+1)/1e4)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, e *Engine, data string)
		give  func(data string) string
		want  []string // the field, and words of the fix
	}{
		// Names that try to leave their blob prefix.
		{name: "name with ../", give: func(string) string { return withName("../escape") }, want: []string{`name = "../escape"`, "use 1-63 characters"}},
		{name: "absolute name", give: func(string) string { return withName("/etc/passwd") }, want: []string{`name = "/etc/passwd"`, "use 1-63"}},
		{name: "URL-encoded name", give: func(string) string { return withName(`"%2e%2e%2fx"`) }, want: []string{"name = ", "use 1-63"}},
		{name: "unicode look-alike name", give: func(string) string { return withName("d\u0435mo") }, want: []string{"name = ", "a-z, 0-9"}},
		{name: "fullwidth solidus in name", give: func(string) string { return withName("a\uff0f..\uff0fb") }, want: []string{"name = ", "a-z, 0-9"}},
		{name: "NUL in name", give: func(string) string { return withName(`"demo\0x"`) }, want: []string{"name = ", "use 1-63"}},
		{name: "very long name", give: func(string) string { return withName(strings.Repeat("a", 64)) }, want: []string{"name = ", "1-63 characters"}},
		{name: "empty name", give: func(string) string { return good }, want: []string{`name = ""`, "use 1-63"}},
		{name: "train queue escaping", give: func(string) string { return withName("q") + "run: {train_queue: ../../q}\n" }, want: []string{"run.train_queue", "use letters"}},
		// Size and shape.
		{name: "oversized spec", give: func(string) string {
			return withName("big") + "description: " + strings.Repeat("x", sweep.MaxSpecBytes) + "\n"
		}, want: []string{"the limit of 1048576 bytes", "use a grid"}},
		{name: "long description", give: func(string) string { return withName("d") + "description: " + strings.Repeat("x", 20000) + "\n" }, want: []string{"description is 20000 bytes", "YAML comment"}},
		{name: "deeply nested", give: func(string) string { return point("sampler: {name: uniform, x: " + nested(40, "1") + "}") }, want: []string{"nested more than 32 levels", "at most 4 levels"}},
		{name: "very deeply nested", give: func(string) string { return point("description: " + nested(200000, "1")) }, want: []string{"h.yaml", "depth"}},
		{name: "alias bomb", give: func(string) string { return laughs(9, false) }, want: []string{"expands to more than 100000 values", "without nested aliases"}},
		{name: "merge bomb", give: func(string) string { return laughs(9, true) }, want: []string{"expands to more than 100000 values", "without nested aliases"}},
		{name: "self-referencing alias", give: func(string) string { return point("sampler: &s {name: uniform, x: *s}") }, want: []string{"h.yaml"}},
		{name: "grid explosion", give: func(string) string {
			return point("grid:\n  train.lr: [" + strings.Join(lrs[:20], ",") + "]\n  train.momentum: [" + strings.Repeat("0.1,", 19) + "0.1]\n" +
				"  train.batch_size: [" + strings.Repeat("1,", 19) + "1]\n  rounds: [" + strings.Repeat("1,", 19) + "1]")
		}, want: []string{"more than 100000 points", "split the sweep"}},
		{name: "seeds times grid", give: func(string) string {
			return point("seeds: [" + strings.Join(manySeeds, ",") + "]\ngrid:\n  train.lr: [" + strings.Join(lrs, ",") + "]")
		}, want: []string{"200 seed(s)", "more than 100000 points", "split the sweep"}},
		{name: "duplicate key", give: func(string) string { return point("rounds: 5\nrounds: 6") }, want: []string{`"rounds" appears twice`, "merge the two"}},
		{name: "duplicate nested key", give: func(string) string { return point("train: {lr: 0.1, lr: 0.2}") }, want: []string{`"lr" already defined`}},
		{name: "empty spec", give: func(string) string { return "" }, want: []string{"the spec is empty", "see examples/demo.yaml"}},
		{name: "not a map", give: func(string) string { return "- a\n- b\n" }, want: []string{"must be a map of fields"}},
		// Numbers.
		{name: "NaN", give: func(string) string { return point("train: {lr: .nan}") }, want: []string{"train.lr = NaN", "finite"}},
		{name: "infinity", give: func(string) string { return point("train: {lr: -.inf}") }, want: []string{"train.lr = -Inf", "finite"}},
		{name: "float overflowing", give: func(string) string { return point("partition: {scheme: dirichlet, alpha: 1e400}") }, want: []string{"partition.alpha"}},
		{name: "huge integer", give: func(string) string { return point("rounds: 99999999999999999999") }, want: []string{"rounds", "want an integer"}},
		{name: "fractional rounds", give: func(string) string { return point("rounds: 2.5") }, want: []string{"rounds", "want an integer"}},
		{name: "rounds beyond 6 digits", give: func(string) string { return point("rounds: 1000000") }, want: []string{"rounds = 1000000 exceeds 999999", "run fewer rounds"}},
		{name: "clients beyond 6 digits", give: func(string) string { return point("partition: {clients: 2000000}") }, want: []string{"partition.clients = 2000000 exceeds 999999", "use fewer clients"}},
		{name: "clients per round beyond int32", give: func(string) string { return point("clients_per_round: 3000000000") }, want: []string{"clients_per_round = 3000000000", "lower clients_per_round"}},
		{name: "zero rounds", give: func(string) string { return point("rounds: 0") }, want: []string{"rounds = 0", "at least 1 round"}},
		{name: "negative clients", give: func(string) string { return point("partition: {clients: -3}") }, want: []string{"partition.clients = -3", "at least 1"}},
		{name: "zero batch", give: func(string) string { return point("train: {batch_size: 0}") }, want: []string{"train.batch_size = 0", "> 0"}},
		{name: "negative hidden width", give: func(string) string { return point("model: {arch: mlp, hidden: [-1]}") }, want: []string{"model.hidden[0] = -1", "> 0"}},
		{name: "huge hidden width", give: func(string) string { return point("model: {arch: mlp, hidden: [1000000000]}") }, want: []string{"model.hidden[0] = 1000000000 exceeds 65536", "narrower"}},
		{name: "negative seed", give: func(string) string { return point("seeds: [-1]") }, want: []string{"seeds", "non-negative integers"}},
		{name: "zero concurrency", give: func(string) string { return point("run: {concurrency: 0}") }, want: []string{"run.concurrency = 0", "at least 1"}},
		// Unknown fields and wrong types.
		{name: "unknown field", give: func(string) string { return point("roundz: 5") }, want: []string{`"roundz" is not a spec field`, "known fields"}},
		{name: "unknown nested field", give: func(string) string { return point("train: {lrr: 0.1}") }, want: []string{"train.lrr is not a known field", "known:"}},
		{name: "wrong type", give: func(string) string { return point("rounds: five") }, want: []string{"rounds", "want an integer"}},
		{name: "list for a block", give: func(string) string { return point("partition: [1, 2]") }, want: []string{"partition"}},
		{name: "unknown grid path", give: func(string) string { return point("grid: {train.zz: [1]}") }, want: []string{`"train.zz" is not a point field`, "known at this level"}},
		{name: "grid value not a list", give: func(string) string { return point("grid: {train.lr: 0.1}") }, want: []string{"grid.train.lr must be a non-empty list"}},
		// Data outside the worker's data directory.
		{name: "unknown dataset name", give: func(string) string { return point("dataset: {name: ../fmnist}") }, want: []string{`dataset.name = "../fmnist" is unknown`, "use one of"}},
		{name: "absolute data root", give: func(string) string { return point("dataset: {name: fmnist, root: /etc}") }, want: []string{`dataset.root = "/etc"`, "outside the worker's data directory", "--data-dir"}},
		{name: "relative data root escaping", give: func(string) string { return point("dataset: {name: fmnist, root: ../../../etc}") }, want: []string{"dataset.root", "outside the worker's data directory"}},
		{name: "data root through a symlink", setup: func(t *testing.T, _ *Engine, data string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(data, "elsewhere")); err != nil {
				t.Fatal(err)
			}
		}, give: func(string) string { return point("dataset: {name: fmnist, root: elsewhere/fmnist}") }, want: []string{`dataset.root = "elsewhere/fmnist"`, "outside the worker's data directory"}},
		{name: "file URL outside", give: func(string) string { return point("dataset: {name: fmnist, root: 'file:///etc'}") }, want: []string{"dataset.root", "outside the worker's data directory"}},
		{name: "file URL prefix escaping", give: func(data string) string {
			return point("dataset: {name: fmnist, root: 'file://" + data + "?prefix=../../etc/'}")
		}, want: []string{"dataset.root", "leaves the directory"}},
		{name: "unsupported data URL", give: func(string) string { return point("dataset: {name: fmnist, root: 'ftp://host/fmnist'}") }, want: []string{`scheme "ftp" is not supported`, "s3://"}},
		{name: "NUL in data root", give: func(string) string { return point(`dataset: {name: fmnist, root: "fmnist\0/x"}`) }, want: []string{"dataset.root", "control characters"}},
		// Collisions with what the bucket holds.
		{name: "sweep name taken", setup: func(t *testing.T, e *Engine, _ string) {
			if _, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)}); err != nil {
				t.Fatal(err)
			}
		}, give: func(string) string { return strings.Replace(spec, "rounds: 5", "rounds: 6", 1) }, want: []string{`sweep "t" already exists`, "another name"}},
		{name: "stored point with the same ID, another configuration", setup: func(t *testing.T, e *Engine, _ string) {
			plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "t.yaml", Spec: []byte(spec)})
			if err != nil {
				t.Fatal(err)
			}
			// What a collision leaves: the point's ID over another configuration.
			sk, _ := store.SweepKeys("t")
			pk, _ := sk.Point(plan.Points[1].ID)
			var sp StoredPoint
			if err := e.Store.GetJSON(ctx, pk.Config(), &sp); err != nil {
				t.Fatal(err)
			}
			sp.Point.Config.Train.LR = 0.2
			if err := e.Store.PutJSON(ctx, pk.Config(), sp); err != nil {
				t.Fatal(err)
			}
		}, give: func(string) string { return spec }, want: []string{"holds another configuration under that ID", "hash collision", "give the spec another name"}},
		{name: "sweep planned by an older build", setup: func(t *testing.T, e *Engine, _ string) {
			writeLegacySweep(t, e, "t")
		}, give: func(string) string { return spec }, want: []string{"planned by an older flsweep build", "p0123456789", "with the build that planned it", "under a new name"}},
	}
	if len(tests) < 30 {
		t.Fatalf("%d hostile inputs; the issue asks for at least 30", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, bucket, data := fileEngine(t)
			if tt.setup != nil {
				tt.setup(t, e, data)
			}
			before := tree(t, bucket)
			_, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "h.yaml", Spec: []byte(tt.give(data))})
			if err == nil || !IsBadInput(err) {
				t.Fatalf("PlanSweep = %v; want a bad-input error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
			t.Log(err)
			if len(err.Error()) > 4000 {
				t.Errorf("error is %d bytes long; a message must stay readable", len(err.Error()))
			}
			after := tree(t, bucket)
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("the bucket changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// writeLegacySweep stores a sweep the way a build before 128-bit point IDs
// did: the spec and one point under a 10-digit ID.
func writeLegacySweep(t *testing.T, e *Engine, name string) {
	t.Helper()
	ctx := t.Context()
	sw, err := sweep.Parse(name+".yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	sw.Name = name
	sw.Points = sw.Points[:1]
	sw.Points[0].ID = "p0123456789"
	sk, _ := store.SweepKeys(name)
	pk, err := sk.Point(sw.Points[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.PutJSON(ctx, pk.Config(), StoredPoint{Sweep: name, Point: sw.Points[0]}); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.PutJSON(ctx, sk.Spec(), StoredSweep{Hash: sw.Hash(), File: name + ".yaml", YAML: spec, Sweep: sw}); err != nil {
		t.Fatal(err)
	}
}

// TestOlderBuildPoint: a point stored under a 10-digit ID (a point workflow
// of an older build's sweep, picked up by this build's worker) is refused
// by PreparePoint as bad input that says what happened, not as a hash
// mismatch, and nothing is written.
func TestOlderBuildPoint(t *testing.T) {
	e, bucket, _ := fileEngine(t)
	writeLegacySweep(t, e, "t")
	before := tree(t, bucket)
	_, err := e.PreparePoint(t.Context(), steps.PointRef{Sweep: "t", Point: "p0123456789"})
	if !IsBadInput(err) || !strings.Contains(err.Error(), "planned by an older flsweep build") || strings.Contains(err.Error(), "hashes to") {
		t.Errorf("PreparePoint of an older build's point: %v; want the older-build error", err)
	}
	if after := tree(t, bucket); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("PreparePoint changed the bucket")
	}
}

// TestStoredIDCollision: a real collision against the bucket, with point IDs
// cut to one hex digit. Sweep c is planned with one learning rate; a spec of
// the same name whose one point has another learning rate but the same
// (short) ID has the same sweep hash, so only the comparison of full
// configurations tells them apart: before 128-bit IDs it went unnoticed and
// the second spec's rounds would have continued the first one's. PlanSweep
// refuses it, and the stored point is kept.
func TestStoredIDCollision(t *testing.T) {
	defer sweep.ShortenPointIDsForTest(1)()
	ctx := t.Context()
	e, bucket, _ := fileEngine(t)
	specWith := func(lr int) string {
		return strings.Replace(strings.Replace(spec, "name: t", "name: c", 1), "grid:\n  sampler: [uniform, md]\n", "", 1) +
			fmt.Sprintf("train: {lr: 0.%03d, batch_size: 16, local_steps: 4}\n", lr)
	}
	first := strings.Replace(specWith(1), "train: {lr: 0.1, batch_size: 16, local_steps: 4}\n", "", 1)
	plan, err := e.PlanSweep(ctx, steps.PlanSweepInput{File: "c.yaml", Spec: []byte(first)})
	if err != nil {
		t.Fatal(err)
	}
	// Find another learning rate whose point has the same one-digit ID.
	var other string
	for lr := 2; lr < 1000 && other == ""; lr++ {
		s := strings.Replace(specWith(lr), "train: {lr: 0.1, batch_size: 16, local_steps: 4}\n", "", 1)
		sw, err := sweep.Parse("c.yaml", []byte(s))
		if err == nil && sw.Points[0].ID == plan.Points[0].ID {
			other = s
		}
	}
	if other == "" {
		t.Fatal("no colliding learning rate among 998; with 16 IDs there must be one")
	}
	before := tree(t, bucket)
	_, err = e.PlanSweep(ctx, steps.PlanSweepInput{File: "c.yaml", Spec: []byte(other)})
	if !IsBadInput(err) || !strings.Contains(err.Error(), "holds another configuration under that ID") {
		t.Errorf("PlanSweep of a colliding point: %v; want the collision error", err)
	}
	if after := tree(t, bucket); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the colliding plan changed the bucket")
	}
}
