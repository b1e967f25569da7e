package workflows_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/workflows"
)

// runCounted runs a sweep through the workflows and returns its results by
// point and the activities started, by name.
func runCounted(t *testing.T, specText string) (map[string]steps.PointResult, map[string]int) {
	t.Helper()
	env, _ := setup(t)
	var mu sync.Mutex
	started := map[string]int{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		started[info.ActivityType.Name]++
	})
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(specText)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	out := map[string]steps.PointResult{}
	for _, p := range res.Points {
		require.Equal(t, steps.StatusDone, p.Status, p.Error)
		out[p.ID] = *p.Result
	}
	return out, started
}

// TestSmallRoundsRunInOneActivity: with at most clients_per_activity clients
// per round, rounds run in RunRound activities (several rounds in one while
// they take less than steps.RunRoundBatch; no round workflow, no per-step
// activity), and the results are the in-process runner's, also across
// Continue-As-New, which ends every batch.
func TestSmallRoundsRunInOneActivity(t *testing.T) {
	want := localResults(t, spec)
	for _, c := range []struct {
		run      string
		min, max int // RunRound activities of 2 points x 5 rounds
	}{
		{"run: {clients_per_activity: 3}\n", 2, 10},
		{"run: {clients_per_activity: 5, continue_as_new_every: 2}\n", 6, 10},
	} {
		run := c.run
		got, started := runCounted(t, spec+run)
		require.Equal(t, want, got, run)
		require.GreaterOrEqual(t, started[steps.RunRound.Name], c.min, run)
		require.LessOrEqual(t, started[steps.RunRound.Name], c.max, run)
		for _, s := range []string{steps.TrainClients.Name, steps.Aggregate.Name, steps.Evaluate.Name} {
			require.Zero(t, started[s], "%s: %s ran as its own activity", run, s)
		}
	}
}

// TestSmallRoundsWithQueriesAndState: methods with a query phase (pow-d
// asks 6 clients) and with client and server state give the in-process
// results when their rounds run in one activity.
func TestSmallRoundsWithQueriesAndState(t *testing.T) {
	got, started := runCounted(t, methodsSpec+"run: {clients_per_activity: 6, continue_as_new_every: 2}\n")
	require.Equal(t, localResults(t, methodsSpec), got)
	require.GreaterOrEqual(t, started[steps.RunRound.Name], 9) // 3 points x 3 runs
	require.LessOrEqual(t, started[steps.RunRound.Name], 15)
	require.Zero(t, started[steps.QueryClients.Name]+started[steps.TrainClients.Name])
}

// TestRoundTooLargeFansOut: a round whose fan-out does not fit in one
// activity goes back to the round workflow: pow-d's query of 6 clients in
// chunks of 3 (every round), and binomial sampling that selects more than
// its expected 3 clients (some rounds). The results do not change.
func TestRoundTooLargeFansOut(t *testing.T) {
	got, started := runCounted(t, methodsSpec+"run: {clients_per_activity: 3}\n")
	require.Equal(t, localResults(t, methodsSpec), got)
	require.Equal(t, 15, started[steps.RunRound.Name])
	require.Equal(t, 30, started[steps.QueryClients.Name], "3 points x 5 rounds x 2 query chunks")

	const binomial = `
name: wfn
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 8
clients_per_round: 3
sampler: binomial
eval_every: 4
seeds: [5, 6]
`
	got, started = runCounted(t, binomial+"run: {clients_per_activity: 3}\n")
	require.Equal(t, localResults(t, binomial), got)
	require.GreaterOrEqual(t, started[steps.RunRound.Name], 2)
	require.LessOrEqual(t, started[steps.RunRound.Name], 16)
	require.Positive(t, started[steps.TrainClients.Name], "no round selected more than 3 clients")
	require.Less(t, started[steps.TrainClients.Name], 32, "every round fanned out")
}
