package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
)

// RoundWorkflow runs one round of a point (DESIGN.md §3): select the clients
// (a local activity), train them (one activity each, in parallel), aggregate
// their updates, evaluate when due, and commit (a local activity). Each step
// writes to keys derived from (sweep, point, round, client), so a retry of any
// step overwrites what an earlier attempt wrote.
func RoundWorkflow(ctx workflow.Context, in RoundInput) (steps.RoundSummary, error) {
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("round %d: selecting clients", in.Round))
	sel, err := runLocal[fl.Selection](localOptions(ctx), steps.SelectClients, in.RoundRef)
	if err != nil {
		return steps.RoundSummary{}, err
	}

	workflow.SetCurrentDetails(ctx, fmt.Sprintf("round %d: training %d clients %v", in.Round, len(sel.Clients), sel.Clients))
	sums, err := trainClients(ctx, in, sel.Clients)
	if err != nil {
		return steps.RoundSummary{}, err
	}

	workflow.SetCurrentDetails(ctx, fmt.Sprintf("round %d: aggregating", in.Round))
	model, err := run[steps.AggregateOutput](activityOptions(ctx, in.TrainQueue, 10*time.Minute, 10), steps.Aggregate,
		steps.AggregateInput{RoundRef: in.RoundRef, Selection: sel, Clients: sums})
	if err != nil {
		return steps.RoundSummary{}, err
	}

	var ev *steps.EvalSummary
	if in.Eval {
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("round %d: evaluating", in.Round))
		e, err := run[steps.EvalSummary](activityOptions(ctx, in.TrainQueue, 30*time.Minute, 5), steps.Evaluate, in.RoundRef)
		if err != nil {
			return steps.RoundSummary{}, err
		}
		ev = &e
	}

	sum, err := runLocal[steps.RoundSummary](localOptions(ctx), steps.CommitRound, steps.CommitInput{
		RoundRef: in.RoundRef, Selection: sel, Clients: sums, Model: model, Eval: ev, KeepUpdates: in.KeepUpdates,
	})
	if err != nil {
		return steps.RoundSummary{}, err
	}
	workflow.SetCurrentDetails(ctx, roundDetails(sum))
	return sum, nil
}

// trainClients fans out the training of a round's clients: one TrainClient
// activity per client, or TrainClients activities over chunks of
// ClientsPerActivity clients. Summaries come back in client order.
func trainClients(ctx workflow.Context, in RoundInput, clients []int) ([]fl.ClientSummary, error) {
	options := func(summary string) workflow.Context {
		return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           in.TrainQueue,
			StartToCloseTimeout: time.Hour,
			HeartbeatTimeout:    HeartbeatTimeout,
			RetryPolicy:         retry(5),
			Summary:             summary,
		})
	}
	sums := make([]fl.ClientSummary, 0, len(clients))
	if in.ClientsPerActivity <= 1 {
		futures := make([]workflow.Future, len(clients))
		for i, k := range clients {
			futures[i] = workflow.ExecuteActivity(options(fmt.Sprintf("client %d, round %d", k, in.Round)),
				steps.TrainClient, steps.TrainClientInput{RoundRef: in.RoundRef, Client: k})
		}
		for _, f := range futures {
			var out steps.TrainClientOutput
			if err := f.Get(ctx, &out); err != nil {
				return nil, err
			}
			sums = append(sums, out.ClientSummary)
		}
		return sums, nil
	}
	var futures []workflow.Future
	for lo := 0; lo < len(clients); lo += in.ClientsPerActivity {
		chunk := clients[lo:min(lo+in.ClientsPerActivity, len(clients))]
		futures = append(futures, workflow.ExecuteActivity(options(fmt.Sprintf("clients %v, round %d", chunk, in.Round)),
			steps.TrainClients, steps.TrainClientsInput{RoundRef: in.RoundRef, Clients: chunk}))
	}
	for _, f := range futures {
		var out []steps.TrainClientOutput
		if err := f.Get(ctx, &out); err != nil {
			return nil, err
		}
		for _, o := range out {
			sums = append(sums, o.ClientSummary)
		}
	}
	return sums, nil
}

func roundDetails(s steps.RoundSummary) string {
	d := fmt.Sprintf("round %d committed: %d clients, train loss %.4f", s.Round, s.Clients, s.TrainLoss)
	if s.Eval != nil {
		d += fmt.Sprintf(", test accuracy %.4f", s.Eval.TestAcc)
	}
	return d
}
