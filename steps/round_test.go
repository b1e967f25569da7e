package steps

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
)

// script is an Exec that answers each step as a small method would and
// records the calls in order: "Name" for a single call, "Name×k" for a
// fan-out of k inputs.
type script struct {
	calls []string
	ins   map[string][]any // the inputs of each step's calls, in order
	// queries are the sampler's questions before it selects; bcastQueries
	// the algorithm's before it broadcasts.
	queries, bcastQueries []fl.Query
	sel                   fl.Selection
	selects               int
}

func (s *script) Run(info Info, in, out any) error {
	s.calls = append(s.calls, info.Name)
	s.record(info.Name, in)
	switch o := out.(type) {
	case *fl.Plan:
		s.selects++
		if s.selects <= len(s.queries) {
			q := s.queries[s.selects-1]
			*o = fl.Plan{Query: &q}
			return nil
		}
		sel := s.sel
		*o = fl.Plan{Selection: &sel}
	case *BroadcastOutput:
		if len(s.bcastQueries) > 0 {
			q := s.bcastQueries[0]
			s.bcastQueries = s.bcastQueries[1:]
			*o = BroadcastOutput{Query: &q}
			return nil
		}
		*o = BroadcastOutput{Sent: true}
	case *RefineOutput:
		*o = RefineOutput{Refined: []int{s.sel.Clients[0]}}
	case *AggregateOutput:
		*o = AggregateOutput{ModelSHA256: "sha"}
	case *EvalSummary:
		*o = EvalSummary{TestAcc: 0.5}
	case *RoundSummary:
		c := in.(CommitInput)
		*o = RoundSummary{Round: c.Round, Clients: len(c.Clients)}
	default:
		return fmt.Errorf("script: unexpected step %s", info.Name)
	}
	return nil
}

func (s *script) RunAll(info Info, ins, outs []any) error {
	s.calls = append(s.calls, fmt.Sprintf("%s×%d", info.Name, len(ins)))
	for i, in := range ins {
		s.record(info.Name, in)
		switch o := outs[i].(type) {
		case *[]fl.Answer:
			q := in.(QueryInput)
			for _, k := range q.Clients {
				*o = append(*o, fl.Answer{Query: q.Query, Ask: q.Ask, Client: k, Loss: float64(k)})
			}
		case *[]fl.ClientSummary:
			for _, k := range in.(TrainInput).Clients {
				*o = append(*o, fl.ClientSummary{Client: k})
			}
		case *[]Finding:
			*o = nil
		default:
			return fmt.Errorf("script: unexpected fan-out %s", info.Name)
		}
	}
	return nil
}

func (s *script) Status(string) {}

func (s *script) record(name string, in any) {
	if s.ins == nil {
		s.ins = map[string][]any{}
	}
	s.ins[name] = append(s.ins[name], in)
}

func roundIn(phases Phases, eval bool, per int) RoundInput {
	return RoundInput{RoundRef: RoundRef{PointRef: PointRef{Sweep: "s", Point: "p"}, Round: 3}, Eval: eval, Phases: phases, ClientsPerActivity: per}
}

// TestRoundPhases: Round puts the protocol's phases in their order
// (docs/architecture.md, "The round") for a plain round, one whose sampler
// asks first, one with every optional phase, and one that selects nobody.
func TestRoundPhases(t *testing.T) {
	sel := fl.Selection{Clients: []int{2, 5, 7}, Weights: []float64{1, 1, 1}, Draws: []int{1, 1, 1}}
	for _, tt := range []struct {
		name   string
		s      *script
		in     RoundInput
		want   []string
		commit int // clients in the committed round
	}{
		{"plain, evaluated", &script{sel: sel}, roundIn(Phases{}, true, 1),
			[]string{"SelectClients", "TrainClients×3", "Aggregate", "Evaluate", "CommitRound"}, 3},
		{"plain, chunks of 2, not evaluated", &script{sel: sel}, roundIn(Phases{}, false, 2),
			[]string{"SelectClients", "TrainClients×2", "Aggregate", "CommitRound"}, 3},
		{"pow-d: a loss query first", &script{sel: sel, queries: []fl.Query{{Ask: fl.AskLoss, Clients: []int{1, 2, 5, 7, 9}}}}, roundIn(Phases{}, false, 2),
			[]string{"SelectClients", "QueryClients×3", "SelectClients", "TrainClients×2", "Aggregate", "CommitRound"}, 3},
		{"every phase, the broadcast asks", &script{sel: sel, bcastQueries: []fl.Query{{Ask: fl.AskGradient, Clients: []int{2, 5, 7}}}},
			roundIn(Phases{Broadcast: true, Inspect: true, Refine: true, Probe: []int{3}, Population: 10}, true, 3),
			// The selected clients' updates in one chunk, the 7 probes in
			// chunks of 3.
			[]string{"SelectClients", "Broadcast", "QueryClients×1", "Broadcast", "TrainClients×1", "InspectUpdates×4", "RefineUpdates", "Aggregate", "Evaluate", "CommitRound"}, 3},
		{"nobody selected", &script{sel: fl.Selection{}}, roundIn(Phases{Broadcast: true, Refine: true}, false, 1),
			[]string{"SelectClients", "TrainClients×0", "Aggregate", "CommitRound"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sum, err := Round(tt.s, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tt.s.calls, tt.want) {
				t.Errorf("calls %v; want %v", tt.s.calls, tt.want)
			}
			if sum.Round != 3 || sum.Clients != tt.commit {
				t.Errorf("summary %+v; want round 3 with %d clients", sum, tt.commit)
			}
			if tt.in.Phases.Probe == nil {
				return
			}
			var got [][]int
			for _, in := range tt.s.ins["InspectUpdates"] {
				i := in.(InspectInput)
				if i.Probe != (i.Summaries == nil) || i.Probe && !i.Broadcast {
					t.Errorf("inspect input %+v: probes carry no summaries and the broadcast flag, the rest their summaries", i)
				}
				got = append(got, i.Clients)
			}
			if want := [][]int{{2, 5, 7}, {0, 1, 3}, {4, 6, 8}, {9}}; !reflect.DeepEqual(got, want) {
				t.Errorf("inspected chunks %v; want the selection, then the other clients in chunks of 3: %v", got, want)
			}
		})
	}
}

// TestRoundCarriesAnswers: the sampler's second call sees the answers to
// its query and the query's note; each training chunk gets its own clients' loss answers; the
// commit records the answers, the query count and the broadcast.
func TestRoundCarriesAnswers(t *testing.T) {
	s := &script{sel: fl.Selection{Clients: []int{2, 7}, Weights: []float64{1, 1}, Draws: []int{1, 1}},
		queries: []fl.Query{{Ask: fl.AskLoss, Clients: []int{2, 4, 7}, Note: []byte(`{"chosen":[2,7]}`)}}}
	if _, err := Round(s, roundIn(Phases{}, false, 1)); err != nil {
		t.Fatal(err)
	}
	second := s.ins["SelectClients"][1].(SelectInput)
	if len(second.Answers) != 3 || second.Answers[1].Client != 4 || second.Answers[1].Query != 1 {
		t.Errorf("the sampler's second call saw answers %+v; want the 3 answers to query 1", second.Answers)
	}
	if string(second.Note) != `{"chosen":[2,7]}` {
		t.Errorf("the sampler's second call got note %q; want its query's", second.Note)
	}
	if first := s.ins["SelectClients"][0].(SelectInput); first.Note != nil {
		t.Errorf("the sampler's first call got note %q; want none", first.Note)
	}
	for i, in := range s.ins["TrainClients"] {
		ti := in.(TrainInput)
		if len(ti.Answers) != 1 || ti.Answers[0].Client != ti.Clients[0] {
			t.Errorf("training chunk %d (clients %v) got answers %+v; want its own client's", i, ti.Clients, ti.Answers)
		}
	}
	c := s.ins["CommitRound"][0].(CommitInput)
	if c.Queries != 1 || len(c.Answers) != 3 || c.Broadcast || c.Model.ModelSHA256 != "sha" {
		t.Errorf("commit input %+v; want 1 query, 3 answers, no broadcast, the aggregate's model", c)
	}
}

// TestRoundBoundsQueries: a sampler that never stops asking fails the
// round after MaxQueries questions instead of looping.
func TestRoundBoundsQueries(t *testing.T) {
	qs := make([]fl.Query, MaxQueries+5)
	for i := range qs {
		qs[i] = fl.Query{Ask: fl.AskLoss, Clients: []int{0}}
	}
	s := &script{sel: fl.Selection{Clients: []int{0}, Weights: []float64{1}, Draws: []int{1}}, queries: qs}
	_, err := Round(s, roundIn(Phases{}, false, 1))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d queries", MaxQueries)) {
		t.Fatalf("error %v; want the query bound", err)
	}
	if n := strings.Count(strings.Join(s.calls, " "), "QueryClients"); n != MaxQueries {
		t.Errorf("%d queries ran; want %d", n, MaxQueries)
	}
}

// TestRoundStopsAtFirstError: a failing step ends the round with its error
// and runs no later phase.
func TestRoundStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	s := &failing{script: script{sel: fl.Selection{Clients: []int{1}, Weights: []float64{1}, Draws: []int{1}}}, fail: Aggregate.Name, err: boom}
	if _, err := Round(s, roundIn(Phases{}, true, 1)); !errors.Is(err, boom) {
		t.Fatalf("error %v; want the aggregate's", err)
	}
	if want := []string{"SelectClients", "TrainClients×1", "Aggregate"}; !slices.Equal(s.calls, want) {
		t.Errorf("calls %v; want %v", s.calls, want)
	}
}

type failing struct {
	script
	fail string
	err  error
}

func (f *failing) Run(info Info, in, out any) error {
	if info.Name == f.fail {
		f.calls = append(f.calls, info.Name)
		return f.err
	}
	return f.script.Run(info, in, out)
}

// TestHelpers: chunks, ShouldEval and Routed by known values.
func TestHelpers(t *testing.T) {
	if got := chunks([]int{1, 2, 3, 4, 5}, 2); !reflect.DeepEqual(got, [][]int{{1, 2}, {3, 4}, {5}}) {
		t.Errorf("chunks of 2 = %v", got)
	}
	if got := chunks([]int{1, 2}, 0); !reflect.DeepEqual(got, [][]int{{1}, {2}}) {
		t.Errorf("chunks of 0 = %v; want size 1", got)
	}
	if got := chunks(nil, 3); got != nil {
		t.Errorf("chunks of nothing = %v", got)
	}
	c := chunks([]int{1, 2, 3}, 2)
	if c[0] = append(c[0], 9); c[1][0] != 3 {
		t.Error("appending to a chunk overwrote the next one")
	}
	for _, tt := range []struct {
		r, every, rounds int
		want             bool
	}{{5, 5, 30, true}, {6, 5, 30, false}, {30, 7, 30, true}, {3, 0, 30, false}} {
		if got := ShouldEval(tt.r, tt.every, tt.rounds); got != tt.want {
			t.Errorf("ShouldEval(%d, %d, %d) = %v", tt.r, tt.every, tt.rounds, got)
		}
	}
	if got := Routed("train", "v1@b"); got != "train@v1@b" {
		t.Errorf("Routed = %q", got)
	}
	if got := Routed("train", ""); got != "train" {
		t.Errorf("Routed without identity = %q", got)
	}
}

// TestAfterRound: a committed round goes on; a divergence ends the point
// whatever else; damage recovers until MaxRecoveries, then fails; any other
// error fails.
func TestAfterRound(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		err               error
		diverged, damaged bool
		recoveries        int
		want              Outcome
	}{
		{nil, false, false, 0, NextRound},
		{boom, true, false, 0, EndDiverged},
		{boom, true, true, MaxRecoveries, EndDiverged},
		{boom, false, true, 0, Recover},
		{boom, false, true, MaxRecoveries - 1, Recover},
		{boom, false, true, MaxRecoveries, Fail},
		{boom, false, false, 0, Fail},
	} {
		if got := AfterRound(tt.err, tt.diverged, tt.damaged, tt.recoveries); got != tt.want {
			t.Errorf("AfterRound(%v, diverged %v, damaged %v, %d) = %v; want %v", tt.err, tt.diverged, tt.damaged, tt.recoveries, got, tt.want)
		}
	}
}
