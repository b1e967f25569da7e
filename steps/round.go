package steps

import (
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/fl"
)

// MaxQueries bounds the questions a round may ask its clients (query phases
// before selection and before the broadcast together). A method that asks
// more has a bug; the round fails instead of looping.
const MaxQueries = 8

// RoundInput runs one round.
type RoundInput struct {
	RoundRef
	Eval               bool   `json:"eval"`
	KeepUpdates        bool   `json:"keep_updates,omitempty"`
	ClientsPerActivity int    `json:"clients_per_activity,omitempty"`
	Phases             Phases `json:"phases"`
	// Until, in RunRound only, lets the activity go on with rounds
	// Round+1 … Until (each evaluated as ShouldEval says) while its rounds
	// took less than RunRoundBatch in all; 0 runs round Round alone.
	Until int `json:"until,omitempty"`
}

// Round runs round in.Round of a point through x. This is the round protocol
// (docs/architecture.md, "The round"), and the only place its phases are
// put in order:
//
//	plan      SelectClients asks the sampler: a selection, or a query first
//	query     QueryClients fans out to the clients named, in chunks
//	select    SelectClients again, with the answers (repeated while it asks)
//	broadcast Broadcast: the algorithm's vector for the round (it may ask too)
//	train     TrainClients fans out over the selected clients, in chunks
//	inspect   InspectUpdates fans out over the updates (inspectors, attacks)
//	refine    RefineUpdates: the algorithm's server refines some updates (FNR-FL)
//	aggregate Aggregate: the new global model and server state
//	evaluate  Evaluate, when the round is due
//	commit    CommitRound: the round's rows, then its manifest
//
// Each step reads and writes blob keys derived from (point, round, client),
// so a retried or resumed step reads and overwrites exactly what the first
// attempt did. Round is deterministic: it runs inside workflow code.
func Round(x Exec, in RoundInput) (RoundSummary, error) {
	r := &round{x: x, in: in}
	sel, err := r.selectClients()
	if err != nil {
		return RoundSummary{}, err
	}
	// A round that selected nobody (binomial and poisson sampling can) trains
	// nobody and aggregates nothing: Aggregate keeps θ and the server state.
	sent := false
	if in.Phases.Broadcast && len(sel.Clients) > 0 {
		if sent, err = r.broadcast(sel); err != nil {
			return RoundSummary{}, err
		}
	}
	sums, err := r.train(sel, sent)
	if err != nil {
		return RoundSummary{}, err
	}
	var findings []Finding
	if in.Phases.Inspect {
		if findings, err = r.inspect(sel, sums, sent); err != nil {
			return RoundSummary{}, err
		}
	}
	var refined *RefineOutput
	if in.Phases.Refine && len(sel.Clients) > 0 {
		x.Status(fmt.Sprintf("round %d: refining", in.Round))
		out, err := Call(x, RefineUpdates, RefineInput{RoundRef: in.RoundRef, Selection: sel, Clients: sums})
		if err != nil {
			return RoundSummary{}, err
		}
		refined = &out
	}
	x.Status(fmt.Sprintf("round %d: aggregating", in.Round))
	agg := AggregateInput{RoundRef: in.RoundRef, Selection: sel, Clients: sums, Answers: r.answers}
	if refined != nil {
		agg.Refined = refined.Refined
	}
	model, err := Call(x, Aggregate, agg)
	if err != nil {
		return RoundSummary{}, err
	}
	var ev *EvalSummary
	if in.Eval {
		x.Status(fmt.Sprintf("round %d: evaluating", in.Round))
		e, err := Call(x, Evaluate, in.RoundRef)
		if err != nil {
			return RoundSummary{}, err
		}
		ev = &e
	}
	sum, err := Call(x, CommitRound, CommitInput{
		RoundRef: in.RoundRef, Selection: sel, Clients: sums, Answers: r.answers, Queries: r.queries,
		Broadcast: sent, Findings: findings, Refine: refined, Model: model, Eval: ev, KeepUpdates: in.KeepUpdates,
	})
	if err != nil {
		return RoundSummary{}, err
	}
	x.Status(Details(sum))
	return sum, nil
}

// round is one run of Round: the answers gathered so far.
type round struct {
	x       Exec
	in      RoundInput
	answers []fl.Answer
	queries int
}

// selectClients runs plan → (query → select)*: the sampler's decisions until
// it selects.
func (r *round) selectClients() (fl.Selection, error) {
	r.x.Status(fmt.Sprintf("round %d: selecting clients", r.in.Round))
	plan, err := Call(r.x, SelectClients, SelectInput{RoundRef: r.in.RoundRef})
	for err == nil && plan.Query != nil {
		if err = r.ask(*plan.Query); err == nil {
			plan, err = Call(r.x, SelectClients, SelectInput{RoundRef: r.in.RoundRef, Answers: r.answers, Note: plan.Query.Note})
		}
	}
	if err != nil {
		return fl.Selection{}, err
	}
	if plan.Selection == nil {
		return fl.Selection{}, fmt.Errorf("round %d: the sampler returned neither a query nor a selection", r.in.Round)
	}
	return *plan.Selection, nil
}

// broadcast runs (query → broadcast)*: the algorithm's decisions until its
// vector for the round is written or it sends none.
func (r *round) broadcast(sel fl.Selection) (bool, error) {
	for {
		r.x.Status(fmt.Sprintf("round %d: broadcast", r.in.Round))
		out, err := Call(r.x, Broadcast, BroadcastInput{RoundRef: r.in.RoundRef, Selection: sel, Answers: r.answers})
		if err != nil {
			return false, err
		}
		if out.Query == nil {
			return out.Sent, nil
		}
		if err := r.ask(*out.Query); err != nil {
			return false, err
		}
	}
}

// ask runs one query: a fan-out over the clients named, in chunks.
func (r *round) ask(q fl.Query) error {
	if r.queries == MaxQueries {
		return fmt.Errorf("round %d: a method asked more than %d queries in one round", r.in.Round, MaxQueries)
	}
	r.queries++
	r.x.Status(fmt.Sprintf("round %d: query %d: asking %d clients for their %s", r.in.Round, r.queries, len(q.Clients), q.Ask))
	var ins []QueryInput
	for _, c := range chunks(q.Clients, r.in.ClientsPerActivity) {
		ins = append(ins, QueryInput{RoundRef: r.in.RoundRef, Query: r.queries, Ask: q.Ask, Clients: c})
	}
	outs, err := CallAll(r.x, QueryClients, ins)
	if err != nil {
		return err
	}
	for _, o := range outs {
		r.answers = append(r.answers, o...)
	}
	return nil
}

// train fans out the training of the selected clients in chunks; summaries
// come back in selection order.
func (r *round) train(sel fl.Selection, broadcast bool) ([]fl.ClientSummary, error) {
	r.x.Status(fmt.Sprintf("round %d: training %d clients %v", r.in.Round, len(sel.Clients), sel.Clients))
	var ins []TrainInput
	for _, c := range chunks(sel.Clients, r.in.ClientsPerActivity) {
		ins = append(ins, TrainInput{RoundRef: r.in.RoundRef, Clients: c, Broadcast: broadcast, Answers: lossAnswers(r.answers, c)})
	}
	outs, err := CallAll(r.x, TrainClients, ins)
	if err != nil {
		return nil, err
	}
	sums := make([]fl.ClientSummary, 0, len(sel.Clients))
	for _, o := range outs {
		sums = append(sums, o...)
	}
	return sums, nil
}

// inspect fans out the inspectors over the round's updates in chunks, each
// with its clients' summaries (sums, in selection order).
func (r *round) inspect(sel fl.Selection, sums []fl.ClientSummary, sent bool) ([]Finding, error) {
	r.x.Status(fmt.Sprintf("round %d: inspecting %d updates", r.in.Round, len(sel.Clients)))
	var ins []InspectInput
	lo := 0
	for _, c := range chunks(sel.Clients, r.in.ClientsPerActivity) {
		ins = append(ins, InspectInput{RoundRef: r.in.RoundRef, Clients: c, Summaries: sums[lo : lo+len(c) : lo+len(c)]})
		lo += len(c)
	}
	if _, ok := slices.BinarySearch(r.in.Phases.Probe, r.in.Round); ok {
		var probes []int
		for k := range r.in.Phases.Population {
			if _, selected := slices.BinarySearch(sel.Clients, k); !selected {
				probes = append(probes, k)
			}
		}
		for _, c := range chunks(probes, r.in.ClientsPerActivity) {
			ins = append(ins, InspectInput{RoundRef: r.in.RoundRef, Probe: true, Clients: c, Broadcast: sent})
		}
	}
	outs, err := CallAll(r.x, InspectUpdates, ins)
	if err != nil {
		return nil, err
	}
	var all []Finding
	for _, o := range outs {
		all = append(all, o...)
	}
	return all, nil
}

// lossAnswers returns the first answer of each of clients that carries its
// loss of the round's global model.
func lossAnswers(answers []fl.Answer, clients []int) []fl.Answer {
	var out []fl.Answer
	for _, k := range clients {
		for _, a := range answers {
			if a.Client == k {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// Details describes a committed round for the Temporal UI.
func Details(s RoundSummary) string {
	d := fmt.Sprintf("round %d committed: %d clients, batch loss %.4f", s.Round, s.Clients, s.BatchLoss)
	if s.Eval != nil {
		d += fmt.Sprintf(", test accuracy %.4f", s.Eval.TestAcc)
	}
	return d
}
