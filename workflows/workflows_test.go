package workflows_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/activities"
	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
	"github.com/flsweep/flsweep/methods/methodstest"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
	"github.com/flsweep/flsweep/workflows"
)

// spec is a small sweep on the synthetic dataset.
const spec = `
name: wf
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 5
clients_per_round: 3
eval_every: 2
seeds: [5]
grid:
  sampler: [uniform, md]
`

// setup returns a test environment with the real workflows and the real
// activities over an in-memory bucket, and the engine behind them.
func setup(t *testing.T) (*testsuite.TestWorkflowEnvironment, *engine.Engine) {
	return setupWith(t, nil)
}

// setupWith is setup with the methods of reg (nil: the built-in ones).
func setupWith(t *testing.T, reg *methods.Registry) (*testsuite.TestWorkflowEnvironment, *engine.Engine) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	eng := engine.New(store.New(b), &engine.Options{Workers: 2, Registry: reg})
	workflows.Register(env)
	(&activities.Activities{Engine: eng}).Register(env)
	return env, eng
}

// localResults runs the same spec in-process, for comparison.
func localResults(t *testing.T, specText string) map[string]steps.PointResult {
	return localResultsWith(t, specText, nil)
}

func localResultsWith(t *testing.T, specText string, reg *methods.Registry) map[string]steps.PointResult {
	t.Helper()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	res, err := engine.New(store.New(b), &engine.Options{Registry: reg}).RunSweep(context.Background(), steps.PlanSweepInput{File: "wf.yaml", Spec: []byte(specText)}, nil)
	require.NoError(t, err)
	out := map[string]steps.PointResult{}
	for _, r := range res {
		out[r.Point] = r
	}
	return out
}

func TestSweepWorkflowMatchesLocal(t *testing.T) {
	env, _ := setup(t)
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))

	want := localResults(t, spec)
	require.Len(t, res.Points, 2)
	for _, p := range res.Points {
		require.Equal(t, steps.StatusDone, p.Status, p.Error)
		require.NotNil(t, p.Result)
		require.Equal(t, want[p.ID], *p.Result, "point %s through the workflows vs in-process", p.Label)
		require.Equal(t, workflows.PointWorkflowID("wf", p.PointInfo), p.WorkflowID)
	}
	v, err := env.QueryWorkflow(workflows.StatusQuery)
	require.NoError(t, err)
	var queried workflows.SweepStatus
	require.NoError(t, v.Get(&queried))
	require.Equal(t, "wf", queried.Name)
	require.True(t, queried.Done)
	require.Len(t, queried.Points, 2)
	require.Equal(t, steps.StatusDone, queried.Points[1].Status)
}

// TestPointContinuesAsNew runs a point whose workflow continues as new every
// 2 rounds: each run must resume after the last committed round and the end
// result must equal an uninterrupted run.
func TestPointContinuesAsNew(t *testing.T) {
	_, eng := setup(t)
	plan, err := eng.PlanSweep(context.Background(), steps.PlanSweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.NoError(t, err)
	p := plan.Points[0]
	in := workflows.PointInput{PointRef: steps.PointRef{Sweep: plan.Name, Point: p.ID}, Info: p, ContinueAsNewEvery: 2}
	runs := 0
	var res steps.PointResult
	for {
		runs++
		require.Less(t, runs, 10, "the point never finished")
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		workflows.Register(env)
		(&activities.Activities{Engine: eng}).Register(env)
		env.ExecuteWorkflow(workflows.PointWorkflowName, in)
		require.True(t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
			continue
		}
		require.NoError(t, err)
		require.NoError(t, env.GetWorkflowResult(&res))
		break
	}
	// 5 rounds, 2 per run: rounds 1-2, 3-4, 5.
	require.Equal(t, 3, runs)
	require.Equal(t, localResults(t, spec)[p.ID], res)
}

// TestTrainRetry: a training activity that fails once with a transient error
// is retried, and the result is unchanged.
func TestTrainRetry(t *testing.T) {
	env, eng := setup(t)
	acts := &activities.Activities{Engine: eng}
	var failures atomic.Int32
	env.OnActivity(steps.TrainClients.Name, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in steps.TrainInput) ([]fl.ClientSummary, error) {
			if in.Round == 2 && failures.Add(1) == 1 {
				return nil, errors.New("connection reset by peer")
			}
			return acts.TrainClients(ctx, in)
		})
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.GreaterOrEqual(t, failures.Load(), int32(2), "the failed activity was not retried")
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	want := localResults(t, spec)
	for _, p := range res.Points {
		require.Equal(t, want[p.ID], *p.Result)
	}
}

// TestBadInputIsNotRetried: a point whose data files are missing fails at
// once with a non-retryable error that says how to fix it.
func TestBadInputIsNotRetried(t *testing.T) {
	env, _ := setup(t)
	var prepares atomic.Int32
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == steps.PreparePoint.Name {
			prepares.Add(1)
		}
	})
	missing := strings.Replace(spec, "{name: synthetic}", "{name: fmnist, root: /nonexistent/fmnist}", 1)
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(missing)})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	require.Contains(t, err.Error(), "starter data fetch fmnist")
	require.Equal(t, int32(2), prepares.Load(), "PreparePoint ran more than once per point")
}

// TestBadSpecFailsPlanning: an invalid spec fails the sweep in its first
// activity, without retries.
func TestBadSpecFailsPlanning(t *testing.T) {
	env, _ := setup(t)
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(strings.Replace(spec, "lr: 0.1", "lr: -0.1", 1))})
	require.True(t, env.IsWorkflowCompleted())
	var ae *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &ae)
	require.Equal(t, steps.ErrTypeInvalid, ae.Type())
	require.Contains(t, ae.Error(), "train.lr = -0.1")
}

// TestDivergedPoint: a point whose training blows up is recorded as diverged
// and the sweep completes.
func TestDivergedPoint(t *testing.T) {
	env, _ := setup(t)
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(strings.Replace(spec, "lr: 0.1", "lr: 1e30", 1))})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	for _, p := range res.Points {
		require.Equal(t, steps.StatusDiverged, p.Status)
	}
}

// TestChunkedTrainingMatchesLocal: training clients in chunks
// (run.clients_per_activity) changes how work is dispatched, not the result.
func TestChunkedTrainingMatchesLocal(t *testing.T) {
	env, _ := setup(t)
	var chunks atomic.Int32
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == steps.TrainClients.Name {
			chunks.Add(1)
		}
	})
	chunked := spec + "run: {clients_per_activity: 2}\n"
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(chunked)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	want := localResults(t, spec)
	for _, p := range res.Points {
		require.Equal(t, want[p.ID], *p.Result)
	}
	// 2 points x 5 rounds, 3 distinct clients (at most) in chunks of 2: 1-2 activities a round.
	require.GreaterOrEqual(t, chunks.Load(), int32(10))
	require.LessOrEqual(t, chunks.Load(), int32(20))
}

// methodsSpec runs methods with a query phase (pow-d) and with client and
// server state (SCAFFOLD, MOON, FedDyn).
const methodsSpec = `
name: wfm
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 10, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 5
clients_per_round: 3
sampler: {name: pow-d, d: 6}
eval_every: 2
checkpoint_every: 2
seeds: [5]
grid:
  algorithm: [scaffold, {name: moon, mu: 1}, feddyn]
`

// TestMethodsMatchLocal: through the workflows, methods with a query phase
// and with state give the in-process runner's results bit for bit, also
// when the point workflow continues as new every 2 rounds (server and
// client state cross runs through blob storage alone).
func TestMethodsMatchLocal(t *testing.T) {
	want := localResults(t, methodsSpec)
	for _, spec := range []string{methodsSpec, methodsSpec + "run: {continue_as_new_every: 2, clients_per_activity: 2}\n"} {
		env, _ := setup(t)
		var queries atomic.Int32
		env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
			if info.ActivityType.Name == steps.QueryClients.Name {
				queries.Add(1)
			}
		})
		env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		var res workflows.SweepResult
		require.NoError(t, env.GetWorkflowResult(&res))
		require.Len(t, res.Points, 3)
		for _, p := range res.Points {
			require.Equal(t, steps.StatusDone, p.Status, p.Error)
			require.Equal(t, want[p.ID], *p.Result, "point %s through the workflows vs in-process", p.Label)
		}
		require.Positive(t, queries.Load(), "pow-d asked no query")
	}
}

// TestBroadcastAndMemoryMatchLocal: a sampler with memory, an algorithm
// whose broadcast asks the selected clients for their gradients, and an
// inspector run through the workflows as in-process.
func TestBroadcastAndMemoryMatchLocal(t *testing.T) {
	const spec = `
name: wfb
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 4
clients_per_round: 3
sampler: cycle
algorithm: {name: align, alpha: 0.5}
inspect: [record]
eval_every: 2
seeds: [5]
run: {continue_as_new_every: 2}
`
	want := localResultsWith(t, spec, methodstest.Registry(&methodstest.Recorder{}))
	rec := &methodstest.Recorder{}
	env, _ := setupWith(t, methodstest.Registry(rec))
	started := map[string]int{}
	var mu sync.Mutex
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		started[info.ActivityType.Name]++
	})
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res.Points, 1)
	require.Equal(t, want[res.Points[0].ID], *res.Points[0].Result)
	// 4 rounds: each asks 3 clients for a gradient, broadcasts, trains 3
	// clients and inspects 3 updates, one activity per client.
	require.Equal(t, 12, started[steps.QueryClients.Name])
	require.Equal(t, 8, started[steps.Broadcast.Name]) // asked, then sent
	require.Equal(t, 12, started[steps.TrainClients.Name])
	require.Equal(t, 12, started[steps.InspectUpdates.Name])
	require.Len(t, rec.Seen(), 12)
}

// TestFairMethodsMatchLocal: the fairness methods through the workflows,
// continuing as new every 2 rounds with two clients per activity, give the
// in-process results bit for bit: FedEBA+ (its loss and gradient queries
// and the broadcast of g̃ every round), AFL (λ and the averaged model in
// the server state, the average evaluated) and FedFV (the remembered
// updates of earlier rounds).
func TestFairMethodsMatchLocal(t *testing.T) {
	const spec = `
name: wff
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.3}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 4
clients_per_round: 3
eval_every: 2
seeds: [5]
grid:
  algorithm: [fedeba+, afl, {name: fedfv, tau: 2}]
run: {continue_as_new_every: 2, clients_per_activity: 2}
`
	want := localResults(t, spec)
	env, _ := setup(t)
	var broadcasts atomic.Int32
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == steps.Broadcast.Name {
			broadcasts.Add(1)
		}
	})
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res.Points, 3)
	for _, p := range res.Points {
		require.Equal(t, steps.StatusDone, p.Status, p.Error)
		require.Equal(t, want[p.ID], *p.Result, "point %s through the workflows vs in-process", p.Label)
	}
	// FedEBA+: asked for losses, asked for gradients, sent g̃, each of 4 rounds.
	require.Equal(t, int32(12), broadcasts.Load())
}

// TestUnknownAlgorithmFailsPlanning: a spec naming an unknown algorithm
// fails the sweep in its first activity, without retries.
func TestUnknownAlgorithmFailsPlanning(t *testing.T) {
	env, _ := setup(t)
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec + "algorithm: scafold\n")})
	require.True(t, env.IsWorkflowCompleted())
	var ae *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &ae)
	require.Equal(t, steps.ErrTypeInvalid, ae.Type())
	require.Contains(t, ae.Error(), `algorithm.name = "scafold" is unknown`)
}

// TestAttacksMatchLocal: a sweep with an attack block (every client,
// the unselected ones on probe updates) through the workflows, continuing
// as new every 2 rounds with two clients per activity, writes the
// in-process run's attacks rows bit for bit, and its models are those of
// the same sweep without attacks.
func TestAttacksMatchLocal(t *testing.T) {
	const base = `
name: wfa
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.5}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 4
clients_per_round: 3
eval_every: 2
seeds: [5]
grid:
  algorithm: [fedavg, scaffold]
run: {continue_as_new_every: 2, clients_per_activity: 2}
`
	spec := base + "attack: {methods: [rlu, zlg+], rounds: [2, 3], aux_per_class: 10, clients: all}\n"
	ctx := context.Background()
	attacks := func(eng *engine.Engine, points []string) []store.AttackRow {
		var rows []store.AttackRow
		sk, _ := store.SweepKeys("wfa")
		for _, p := range points {
			pk, _ := sk.Point(p)
			r, err := store.ReadRows[store.AttackRow](ctx, eng.Store, pk.Compacted(store.TableAttacks))
			require.NoError(t, err)
			rows = append(rows, r...)
		}
		return rows
	}
	b := memblob.OpenBucket(nil)
	defer b.Close()
	local := engine.New(store.New(b), nil)
	res, err := local.RunSweep(ctx, steps.PlanSweepInput{File: "wf.yaml", Spec: []byte(spec)}, nil)
	require.NoError(t, err)
	want := map[string]steps.PointResult{}
	var ids []string
	for _, r := range res {
		want[r.Point] = r
		ids = append(ids, r.Point)
	}
	plain := map[string]string{} // final model without attacks, by label
	for _, r := range localResults(t, base) {
		plain[r.ModelSHA256] = r.Point
	}

	env, eng := setup(t)
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Len(t, out.Points, 2)
	for _, p := range out.Points {
		require.Equal(t, steps.StatusDone, p.Status, p.Error)
		require.Equal(t, want[p.ID], *p.Result, "point %s through the workflows vs in-process", p.Label)
		require.Contains(t, plain, p.Result.ModelSHA256, "point %s: the attacks changed the final model", p.Label)
	}
	got, wantRows := attacks(eng, ids), attacks(local, ids)
	require.Len(t, wantRows, 2*2*8*2) // points × rounds × clients (3 selected, 5 probed) × methods
	require.Equal(t, wantRows, got)
}

// TestRefineMatchesLocal: FNR-FL's refine phase through the workflows,
// continuing as new every 2 rounds, gives the in-process results bit for
// bit, with one RefineUpdates activity per round.
func TestRefineMatchesLocal(t *testing.T) {
	const spec = `
name: wfr
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 6, alpha: 0.5, public_per_class: 20}
model: {arch: mlp, hidden: [16]}
train: {lr: 0.1, batch_size: 16, local_steps: 3}
rounds: 4
clients_per_round: 6
aggregator: {name: fedavg, normalize: true}
eval_every: 2
seeds: [5]
grid:
  algorithm: [{name: fnrfl, epochs: 2}, {name: fnrfl, epochs: 2, variant: corrected}]
run: {continue_as_new_every: 2, clients_per_activity: 3}
`
	want := localResults(t, spec)
	env, _ := setup(t)
	var refines atomic.Int32
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == steps.RefineUpdates.Name {
			refines.Add(1)
		}
	})
	env.ExecuteWorkflow(workflows.SweepWorkflowName, workflows.SweepInput{File: "wf.yaml", Spec: []byte(spec)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.SweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res.Points, 2)
	for _, p := range res.Points {
		require.Equal(t, steps.StatusDone, p.Status, p.Error)
		require.Equal(t, want[p.ID], *p.Result, "point %s through the workflows vs in-process", p.Label)
	}
	require.Equal(t, int32(2*4), refines.Load())
}
