package workflows_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/activities"
	"github.com/flsweep/flsweep/engine"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/workflows"
)

// envFor returns a test environment with the real workflows and activities
// over eng.
func envFor(eng *engine.Engine) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	workflows.Register(env)
	(&activities.Activities{Engine: eng}).Register(env)
	return env
}

// manySpec is a sweep of n one-round points (seeds 0..n-1) that train in
// milliseconds.
func manySpec(n int) []byte {
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = strconv.Itoa(i)
	}
	return fmt.Appendf(nil, `
name: many
dataset: {name: synthetic}
partition: {scheme: iid, clients: 2}
model: {arch: logreg}
train: {lr: 0.1, batch_size: 8, local_steps: 1}
rounds: 1
clients_per_round: 1
seeds: [%s]
run: {concurrency: 4}
`, strings.Join(seeds, ", "))
}

// TestSweepContinuesAsNew runs a sweep of 110 points (more than
// steps.MaxListed, so nothing lists them) in pages of 25: each run starts
// one page, drains its window and continues as new with the cursor and
// the status letters; a stop held for a point not started yet survives
// the boundaries; the chain ends with every point done but that one, and
// a second sweep over the same bucket (a resume) starts no workflow for
// the points that have DONE.json.
func TestSweepContinuesAsNew(t *testing.T) {
	const n, page = 110, 25
	env, eng := setup(t)
	plan, err := eng.PlanSweep(t.Context(), steps.PlanSweepInput{File: "many.yaml", Spec: manySpec(n), PageSize: page})
	require.NoError(t, err)
	stopped, err := eng.ReadPlan(t.Context(), steps.PlanPageInput{Sweep: plan.Name, PageSize: page, Page: 3})
	require.NoError(t, err)
	held := stopped.Points[2] // point 77, started in the fourth run
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.StopSignal, workflows.Control{Point: held.ID})
	}, 0)
	in := workflows.SweepInput{File: "many.yaml", Spec: manySpec(n), PageSize: page}
	res, runs, children := runChain(t, env, eng, in, func(next *workflows.SweepInput, run int) {
		require.Equal(t, min(n, run*page), next.State.Next, "run %d ends after its page", run)
		require.Equal(t, strings.Repeat("d", next.State.Next), strings.ReplaceAll(next.State.Codes[:next.State.Next], "s", "d"), "every point before the cursor has ended")
		require.Len(t, next.State.Codes, n)
	})
	require.Equal(t, 5, runs, "110 points in pages of 25")
	require.Len(t, children, n-1, "every point but the stopped one ran once")
	require.Equal(t, n, res.Total)
	require.Equal(t, n-1, res.Counts[steps.StatusDone], "counts %v", res.Counts)
	require.Equal(t, 1, res.Counts[steps.StatusStopped], "the held stop survived 3 boundaries")
	require.Empty(t, res.Points, "a sweep of more than steps.MaxListed points lists none")

	// Resumed: only the stopped point runs.
	res, runs, children = runChain(t, envFor(eng), eng, workflows.SweepInput{File: "many.yaml", Spec: manySpec(n), PageSize: page}, func(*workflows.SweepInput, int) {})
	require.Len(t, children, 1, "the resumed sweep started a workflow for a point with DONE.json")
	require.Equal(t, n, res.Counts[steps.StatusDone], "counts %v after %d runs", res.Counts, runs)
}

// runChain runs a SweepWorkflow and each run it continues as new with, in
// a fresh environment over eng, checking (or changing) each run's state
// with check, and returns the result, the number of runs and the IDs of
// the point workflows started, in start order.
func runChain(t *testing.T, env *testsuite.TestWorkflowEnvironment, eng *engine.Engine, in workflows.SweepInput, check func(*workflows.SweepInput, int)) (workflows.SweepResult, int, []string) {
	t.Helper()
	runs := 0
	var children []string
	for {
		runs++
		env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
			if info.WorkflowType.Name == workflows.PointWorkflowName {
				children = append(children, info.WorkflowExecution.ID)
			}
		})
		env.ExecuteWorkflow(workflows.SweepWorkflowName, in)
		require.True(t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if !errors.As(err, &can) {
			require.NoError(t, err)
			var res workflows.SweepResult
			require.NoError(t, env.GetWorkflowResult(&res))
			return res, runs, children
		}
		var next workflows.SweepInput
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
		require.NotNil(t, next.State)
		check(&next, runs)
		in = next
		env = envFor(eng) // the next run: a fresh environment, the same bucket
	}
}

// TestSweepKeepsItsIDScheme: a sweep keeps the point workflow IDs of its
// first run across Continue-As-New. A new sweep's are labelled
// (PointWorkflowID) and its state says so in every run; a sweep whose state
// comes from a build before labelled IDs (no label_ids: the first run's
// state is rewritten so here) starts its later points with unlabelled IDs,
// though this build would label a new sweep's.
func TestSweepKeepsItsIDScheme(t *testing.T) {
	const n, page = 6, 2 // three runs of two points
	for _, older := range []bool{false, true} {
		_, eng := setup(t)
		in := workflows.SweepInput{File: "many.yaml", Spec: manySpec(n), PageSize: page}
		plan, err := eng.PlanSweep(t.Context(), steps.PlanSweepInput{File: in.File, Spec: in.Spec, PageSize: page})
		require.NoError(t, err)
		res, runs, children := runChain(t, envFor(eng), eng, in, func(next *workflows.SweepInput, run int) {
			require.Equal(t, !older || run == 1, next.State.LabelIDs, "older %v, run %d", older, run)
			if older && run == 1 {
				next.State.LabelIDs = false
				for i := range next.State.Listed {
					next.State.Listed[i].WorkflowID = workflows.UnlabelledPointWorkflowID(plan.Name, plan.Points[i].ID)
				}
			}
		})
		require.Equal(t, 3, runs)
		require.Len(t, children, n)
		require.Len(t, res.Points, n)
		// The points of a page start together, in no fixed order: match
		// each child to its point by the ID its workflow ID ends with.
		started := map[string]string{}
		for _, c := range children {
			started[c[strings.LastIndexByte(c, '/')+1:]] = c
		}
		for i, p := range plan.Points {
			want := workflows.PointWorkflowID(plan.Name, p)
			require.Equal(t, "sweep/many/seed="+strconv.Itoa(i)+"/"+p.ID, want)
			if older && i >= page {
				want = workflows.UnlabelledPointWorkflowID(plan.Name, p.ID)
			}
			require.Equal(t, want, started[p.ID], "older %v, point %d", older, i)
			if !older || i >= page {
				require.Equal(t, want, res.Points[i].WorkflowID, "the status names point %d's workflow", i)
			}
		}
	}
}
