package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/fairness"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/partition"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/trainer"
)

// TestRefuse: an activity that reaches a worker on a queue routed to
// another build or bucket (steps.Routed) is refused with a retryable error
// of type Refused that says why and what to start; on its own identity's
// queue it runs (here: to the engine's bad-input error for a sweep that does
// not exist).
func TestRefuse(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	a := &Activities{Engine: engine.New(store.New(b), &engine.Options{Version: "v1"})}
	mine, err := a.Engine.Identity(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		id     engine.Identity
		typ    string
		reason string
	}{
		{"another build", engine.Identity{Build: "v2", Bucket: mine.Bucket}, steps.ErrTypeRefused, `start a worker of build "v2"`},
		{"another bucket", engine.Identity{Build: "v1", Bucket: "0123456789ab"}, steps.ErrTypeRefused, "start workers with the sweep's --blob"},
		{"its own identity", mine, steps.ErrTypeInvalid, "not in this worker's blob store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			queue := steps.Routed("fl", tc.id.String())
			a.Register(env)
			env.SetActivityTaskQueue(queue, a.Evaluate)
			env.ExecuteWorkflow(func(ctx workflow.Context) error {
				ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: queue, StartToCloseTimeout: time.Minute,
					RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
				ref := steps.RoundRef{PointRef: steps.PointRef{Sweep: "s", Point: "p0123456789abcdef0123456789abcdef"}, Round: 1}
				return workflow.ExecuteActivity(ctx, steps.Evaluate.Name, ref).Get(ctx, nil)
			})
			var ae *temporal.ApplicationError
			if err := env.GetWorkflowError(); !errors.As(err, &ae) || ae.Type() != tc.typ || !strings.Contains(ae.Error(), tc.reason) {
				t.Fatalf("error = %v; want type %s saying %q", err, tc.typ, tc.reason)
			}
			if tc.typ == steps.ErrTypeRefused && (ae.NonRetryable() || !strings.Contains(ae.Error(), queue)) {
				t.Errorf("refusal %v: non-retryable %v; want retryable, naming the queue %s", ae, ae.NonRetryable(), queue)
			}
		})
	}
}

// TestToTemporal: every package's sentinels reach Temporal as their kind's
// error type, non-retryable, whatever else the chain holds; unkinded
// errors stay retryable.
func TestToTemporal(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string // "" = returned as is (retried)
	}{
		{fmt.Errorf("spec: %w", fl.ErrInvalid), steps.ErrTypeInvalid},
		{fmt.Errorf("arch: %w", trainer.ErrInvalid), steps.ErrTypeInvalid},
		{fmt.Errorf("idx: %w", dataset.ErrNotFound), steps.ErrTypeInvalid},
		{fmt.Errorf("idx: %w", dataset.ErrInvalid), steps.ErrTypeInvalid},
		{fmt.Errorf("split: %w", partition.ErrInvalid), steps.ErrTypeInvalid},
		{fmt.Errorf("acc: %w", fairness.ErrInvalid), steps.ErrTypeInvalid},
		{fmt.Errorf("key: %w", store.ErrInvalid), steps.ErrTypeInvalid},
		{fmt.Errorf("global.bin: %w", store.ErrCorrupt), steps.ErrTypeCorrupt},
		{errors.Join(fl.ErrInvalid, store.ErrCorrupt), steps.ErrTypeCorrupt},
		{errors.Join(store.ErrCorrupt, fl.ErrInvalid), steps.ErrTypeCorrupt},
		{fmt.Errorf("step 3: %w", trainer.ErrDiverged), steps.ErrTypeDiverged},
		{fmt.Errorf("%w in %w", fl.ErrDiverged, store.ErrCorrupt), steps.ErrTypeDiverged},
		{errors.New("connection reset"), ""},
		{fmt.Errorf("get: %w", store.ErrNotFound), ""},
	} {
		got := toTemporal(c.err)
		var ae *temporal.ApplicationError
		switch {
		case c.want == "" && got != c.err:
			t.Errorf("%v became %v; want it returned as is", c.err, got)
		case c.want != "" && (!errors.As(got, &ae) || ae.Type() != c.want || !ae.NonRetryable()):
			t.Errorf("%v became %v; want a non-retryable %s", c.err, got, c.want)
		}
	}
}
