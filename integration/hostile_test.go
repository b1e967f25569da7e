package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/flsweep/flsweep/conf"
	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/sweep"
	"github.com/flsweep/flsweep/workflows"
)

// bucketTree is every file of a local bucket with the SHA-256 of its
// contents.
func bucketTree(t *testing.T, dir string) map[string]string {
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

// hostileSpec is a small valid spec named name, with extra appended.
func hostileSpec(name, extra string) string {
	return "name: " + name + "\ndataset: {name: fmnist}\npartition: {scheme: iid, clients: 4}\nmodel: {arch: logreg}\n" +
		"train: {lr: 0.1, batch_size: 10, local_steps: 1}\nrounds: 1\nclients_per_round: 2\n" + extra
}

func writeSpec(t *testing.T, spec string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostileInputCLI: hostile specs through the real starter and worker.
// The starter refuses what it can check alone before anything starts; what
// only the worker can check (its data directory, what its bucket holds)
// fails the sweep workflow's PlanSweep once, non-retryably. Either way the
// bucket is left as it was. engine.TestHostileInput covers every case
// against a real file bucket; these are the ones that matter most end to end.
func TestHostileInputCLI(t *testing.T) {
	requireEnv(t)
	e := newEnv(t)
	local := []struct{ name, give, want string }{
		{"name escaping its prefix", hostileSpec("../escape", ""), `name = "../escape"`},
		{"NUL in name", hostileSpec(`"demo\0x"`, ""), "use 1-63 characters"},
		{"unicode look-alike name", hostileSpec("d\u0435mo", ""), "use 1-63 characters"},
		{"oversized spec", hostileSpec("big", "description: "+strings.Repeat("x", sweep.MaxSpecBytes)+"\n"), "the limit of 1048576 bytes"},
		{"alias bomb", hostileSpec("bomb", "sampler:\n  name: uniform\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"+
			"  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"), "expands to more than 100000 values"},
		{"grid explosion", hostileSpec("grid", "seeds: ["+strings.Repeat("1,", 999)+"1]\ngrid:\n  train.lr: ["+strings.Repeat("0.1,", 199)+"0.1]\n"), "more than 100000 points"},
		{"rounds beyond keys", strings.Replace(hostileSpec("rounds", ""), "rounds: 1", "rounds: 1000000", 1), "rounds = 1000000 exceeds 999999"},
		{"clients beyond keys", strings.Replace(hostileSpec("clients", ""), "clients: 4", "clients: 2000000", 1), "partition.clients = 2000000 exceeds 999999"},
		{"NaN", hostileSpec("nan", "aggregator: {name: fedavg, server_lr: .nan}\n"), "server_lr"},
		{"duplicate key", hostileSpec("dup", "rounds: 2\n"), `"rounds" appears twice`},
	}
	for _, tt := range local {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.starter("sweep", "start", "-f", writeSpec(t, tt.give))
			if err == nil || !strings.Contains(out, tt.want) {
				t.Errorf("sweep start: err %v, output %.600q; want a failure saying %q", err, out, tt.want)
			}
		})
	}
	if files := bucketTree(t, e.blob); len(files) != 0 {
		t.Fatalf("specs refused by the starter wrote %v", files)
	}

	// What only the worker can refuse. The worker writes its bucket's
	// identity marker when it starts: wait for it, so that the bucket
	// compared below is the one the refusals must leave as it is.
	e.worker()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(e.blob, engine.BucketMarker)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker wrote no %s within a minute", engine.BucketMarker)
		}
	}
	ctx := t.Context()
	st, err := store.Open(ctx, conf.DirURL(e.blob))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A sweep "taken" stored by another spec, and one stored by a build with
	// 10-digit point IDs.
	taken, err := store.SweepKeys("taken")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutJSON(ctx, taken.Spec(), engine.StoredSweep{Hash: "another spec's hash", File: "other.yaml"}); err != nil {
		t.Fatal(err)
	}
	oldSpec := hostileSpec("old", "")
	old, err := sweep.Parse("old.yaml", []byte(oldSpec))
	if err != nil {
		t.Fatal(err)
	}
	old.Points[0].ID = old.Points[0].ID[:1+sweep.LegacyPointIDHex]
	ok, _ := store.SweepKeys("old")
	if err := st.PutJSON(ctx, ok.Spec(), engine.StoredSweep{Hash: old.Hash(), File: "old.yaml", YAML: oldSpec, Sweep: old}); err != nil {
		t.Fatal(err)
	}
	remote := []struct{ name, sweep, give, want string }{
		{"data root outside the data directory", "outside", strings.Replace(hostileSpec("outside", ""), "{name: fmnist}", "{name: fmnist, root: /etc}", 1), "outside the worker's data directory"},
		{"data root escaping through ..", "dotdot", strings.Replace(hostileSpec("dotdot", ""), "{name: fmnist}", "{name: fmnist, root: ../../../../etc}", 1), "outside the worker's data directory"},
		{"unsupported data URL", "ftp", strings.Replace(hostileSpec("ftp", ""), "{name: fmnist}", "{name: fmnist, root: 'ftp://host/x'}", 1), `scheme "ftp" is not supported`},
		{"sweep name taken by another spec", "taken", hostileSpec("taken", ""), `sweep "taken" already exists`},
		{"sweep planned by an older build", "old", oldSpec, "planned by an older flsweep build"},
	}
	for _, tt := range remote {
		t.Run(tt.name, func(t *testing.T) {
			before := bucketTree(t, e.blob)
			out, err := e.starter("sweep", "start", "-f", writeSpec(t, tt.give), "--wait")
			if err == nil {
				t.Fatalf("sweep start --wait succeeded:\n%s", out)
			}
			checkPlanRefused(t, workflows.SweepID(tt.sweep), tt.want)
			if after := bucketTree(t, e.blob); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the bucket changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}

	// `sweep resume` of the older build's sweep says so before starting
	// anything.
	before := bucketTree(t, e.blob)
	out, err := e.starter("sweep", "resume", "old")
	if err == nil || !strings.Contains(out, "planned by an older flsweep build") || !strings.Contains(out, "with the build that planned it") {
		t.Errorf("sweep resume of an older build's sweep: err %v, output %q; want the older-build error and how to proceed", err, out)
	}
	if after := bucketTree(t, e.blob); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("sweep resume changed the bucket")
	}
}

// checkPlanRefused checks that the sweep workflow id failed, that its
// PlanSweep activity ran exactly once and failed non-retryably, and that the
// failure says want.
func checkPlanRefused(t *testing.T, id, want string) {
	t.Helper()
	ctx := t.Context()
	c := server.Client()
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Errorf("workflow %s is %v; want failed", id, s)
	}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled, failed := 0, 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == steps.PlanSweep.Info.Name {
			scheduled++
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() != 1 {
			t.Errorf("an activity of %s started attempt %d; bad input must not be retried", id, a.GetAttempt())
		}
		if a := ev.GetActivityTaskFailedEventAttributes(); a != nil {
			failed++
			f := a.GetFailure()
			if !f.GetApplicationFailureInfo().GetNonRetryable() {
				t.Errorf("PlanSweep failure of %s is retryable: %v", id, f)
			}
			if !strings.Contains(f.GetMessage(), want) {
				t.Errorf("PlanSweep failure of %s says %q; want %q", id, f.GetMessage(), want)
			}
		}
	}
	if scheduled != 1 || failed != 1 {
		t.Errorf("%s: PlanSweep scheduled %d times, failed %d times; want once each", id, scheduled, failed)
	}
}
