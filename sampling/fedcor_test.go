package sampling_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/gp"
	"github.com/flsweep/flsweep/sampling"
)

// fedcorRound is what the driver saw of one round.
type fedcorRound struct {
	asked bool
	sel   fl.Selection
	state fedcorMeta // after Observe
}

// fedcorMeta mirrors the sampler's state, read from its JSON.
type fedcorMeta struct {
	Losses    []float64 `json:"losses"`
	LossRound int       `json:"loss_round"`
	Data      []struct {
		Round  int       `json:"round"`
		Change []float64 `json:"change"`
	} `json:"data"`
	X     []float64 `json:"x"`
	Mu    []float64 `json:"mu"`
	Alpha []float64 `json:"alpha"`
}

// fedcorLoss is client k's loss at θ^{t−1} in the driver's toy world: two
// groups of clients whose losses fall at different rates, plus a
// deterministic wiggle.
func fedcorLoss(k, t int) float64 {
	rate := 0.05
	if k%2 == 1 {
		rate = 0.02
	}
	return 2 - rate*float64(t) + 0.01*math.Sin(float64(7*k+3*t))
}

// driveFedCor runs rounds 1..T the way the engine does: Plan; if it asks,
// answer every client and Plan again; then Observe with the round's
// answers. Every call gets a stream derived afresh from (seed, round).
func driveFedCor(t *testing.T, f fl.Learner, pop fl.Population, rounds int) []fedcorRound {
	t.Helper()
	st, err := f.Init(pop)
	if err != nil {
		t.Fatal(err)
	}
	stream := func(r int) *rand.Rand { return rand.New(rand.NewPCG(11, uint64(r))) }
	var out []fedcorRound
	for r := 1; r <= rounds; r++ {
		in := fl.PlanInput{Round: r, Pop: pop, State: st}
		p, err := f.Plan(in, stream(r))
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		var rr fedcorRound
		if p.Query != nil {
			rr.asked = true
			if p.Query.Ask != fl.AskLoss || len(p.Query.Clients) != pop.N() {
				t.Fatalf("round %d: query %+v; want every client's loss", r, p.Query)
			}
			for _, k := range p.Query.Clients {
				in.Answers = append(in.Answers, fl.Answer{Query: 1, Ask: fl.AskLoss, Client: k, Loss: fedcorLoss(k, r), Samples: pop.Sizes[k]})
			}
			if p, err = f.Plan(in, stream(r)); err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
		}
		if p.Selection == nil {
			t.Fatalf("round %d: no selection after the answers: %+v", r, p)
		}
		rr.sel = *p.Selection
		if st, err = f.Observe(fl.ObserveInput{Round: r, Pop: pop, State: st, Selection: rr.sel, Answers: in.Answers, Rand: stream(r)}); err != nil {
			t.Fatalf("round %d: observe: %v", r, err)
		}
		if err := json.Unmarshal(st.Meta, &rr.state); err != nil {
			t.Fatal(err)
		}
		out = append(out, rr)
	}
	return out
}

func newFedCor(t *testing.T, m int, o fl.Options) sampling.FedCor {
	t.Helper()
	p, err := sampling.NewFedCor(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return p.(sampling.FedCor)
}

// TestFedCorSchedule: with warm-up W = 2 and interval I = 3, rounds 1, 2,
// 5 and 8 are random; a round asks for every client's loss when it or the
// round before is random (1, 2, 3, 5, 6, 8, 9); the loss changes of rounds
// 1, 2, 5, 8 are recorded exactly (F(θ^t) − F(θ^{t−1}) from the answers of
// rounds t+1 and t), the GP is first fitted in round 3 and refitted in 6
// and 9, α is annealed by β for the GP's selections and reset by each fit.
func TestFedCorSchedule(t *testing.T) {
	pop := population(t, []int{10, 20, 30, 40, 50, 60, 70, 80}, fl.ImportanceSize)
	f := newFedCor(t, 3, fl.Options{"warmup": 2, "interval": 3, "dimension": 2, "warmup_epochs": 30, "epochs": 10, "history": 1})
	rs := driveFedCor(t, f, pop, 10)
	wantAsk := map[int]bool{1: true, 2: true, 3: true, 5: true, 6: true, 8: true, 9: true}
	for i, rr := range rs {
		r := i + 1
		if rr.asked != wantAsk[r] {
			t.Errorf("round %d asked = %v; want %v", r, rr.asked, wantAsk[r])
		}
		if len(rr.sel.Clients) != 3 || !slices.Equal(rr.sel.Weights, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}) {
			t.Errorf("round %d: selection %+v; want 3 clients weighted 1/3", r, rr.sel)
		}
	}
	// Data after round 9: rounds 5 and 8 (history 1 keeps rounds ≥ 8−1).
	last := rs[8].state
	if len(last.Data) != 1 || last.Data[0].Round != 8 {
		t.Fatalf("data after round 9 = %+v; want round 8's changes only", last.Data)
	}
	for k, c := range last.Data[0].Change {
		if want := fedcorLoss(k, 9) - fedcorLoss(k, 8); c != want {
			t.Errorf("round 8's change of client %d = %v; want %v", k, c, want)
		}
	}
	if d := rs[5].state.Data; len(d) != 1 || d[0].Round != 5 {
		t.Errorf("data after round 6 = %+v; want round 5's (round 2's is older than history 1)", d)
	}
	if d := rs[2].state.Data; len(d) != 2 || d[0].Round != 1 || d[1].Round != 2 {
		t.Errorf("data after round 3 = %+v; want rounds 1 and 2", d)
	}
	if rs[1].state.X != nil || rs[2].state.X == nil {
		t.Errorf("embeddings after round 2 = %v, after round 3 = %v; want the first fit in round 3", rs[1].state.X, rs[2].state.X)
	}
	if slices.Equal(rs[4].state.X, rs[5].state.X) || !slices.Equal(rs[3].state.X, rs[4].state.X) {
		t.Error("embeddings: want unchanged in rounds 4–5 and refitted in round 6")
	}
	// α: round 3 and 4 are GP rounds; round 3 fitted (α = 1) then annealed.
	for k, a := range rs[3].state.Alpha {
		want := 1.0
		for _, r := range []int{2, 3} { // rounds 3 and 4
			if slices.Contains(rs[r].sel.Clients, k) {
				want *= 0.9
			}
		}
		if math.Abs(a-want) > 1e-15 {
			t.Errorf("α_%d after round 4 = %v; want %v", k, a, want)
		}
	}
	for k, a := range rs[5].state.Alpha { // round 6 refitted, then annealed its own GP selection
		want := 1.0
		if slices.Contains(rs[5].sel.Clients, k) {
			want = 0.9
		}
		if math.Abs(a-want) > 1e-15 {
			t.Errorf("α_%d after round 6 = %v; want %v", k, a, want)
		}
	}
}

// TestFedCorReplays: the GP selection a round makes right after a fit is
// the selection of the fitted state Observe stored (Plan and Observe fit
// alike), and equal runs are equal.
func TestFedCorReplays(t *testing.T) {
	pop := population(t, equalSizes(12), fl.ImportanceSize)
	f := newFedCor(t, 4, fl.Options{"warmup": 3, "interval": 4, "dimension": 3, "warmup_epochs": 50, "epochs": 5})
	rs := driveFedCor(t, f, pop, 6)
	st := rs[3].state // round 4: fitted on rounds 1–3, then a GP selection
	alpha := make([]float64, pop.N())
	for k := range alpha {
		alpha[k] = 1
	}
	want := slices.Sorted(slices.Values(gp.Select(st.X, pop.N(), 3, f.Noise, pop.P, alpha, 4)))
	if !slices.Equal(rs[3].sel.Clients, want) {
		t.Errorf("round 4 selected %v; the stored GP selects %v", rs[3].sel.Clients, want)
	}
	if again := driveFedCor(t, f, pop, 6); !reflect.DeepEqual(again, rs) {
		t.Error("two equal runs differ")
	}
}

// TestFedCorLossesEveryRound: asking every round (the official codes'
// cost) changes nothing else.
func TestFedCorLossesEveryRound(t *testing.T) {
	pop := population(t, equalSizes(10), fl.ImportanceSize)
	o := fl.Options{"warmup": 2, "interval": 3, "dimension": 2, "warmup_epochs": 20, "epochs": 5}
	want := driveFedCor(t, newFedCor(t, 3, o), pop, 8)
	o["losses_every_round"] = true
	got := driveFedCor(t, newFedCor(t, 3, o), pop, 8)
	for i := range got {
		if !got[i].asked {
			t.Errorf("round %d did not ask", i+1)
		}
		if !reflect.DeepEqual(got[i].sel, want[i].sel) || !slices.Equal(got[i].state.X, want[i].state.X) {
			t.Errorf("round %d: selection %v, want %v; or other embeddings", i+1, got[i].sel.Clients, want[i].sel.Clients)
		}
	}
}

// TestNewFedCor: the defaults are the official codes' values; bad options
// name the field.
func TestNewFedCor(t *testing.T) {
	want := sampling.FedCor{M: 5, Warmup: 25, Interval: 5, WarmupEpochs: 1000, Epochs: 100, LR: 0.01, Dimension: 15, Noise: 0.01,
		History: 10, Gamma: 0.8, Beta: 0.9, LOO: "all"}
	if got := newFedCor(t, 5, nil); got != want {
		t.Errorf("NewFedCor(5, nil) = %+v; want %+v", got, want)
	}
	for _, o := range []fl.Options{{"warmup": 0}, {"interval": 0}, {"lr": 0.0}, {"noise": 0.0}, {"dimension": 0},
		{"gamma": 1.5}, {"beta": 0.0}, {"loo": "some"}, {"epochs": -1}, {"history": -1}, {"kernel": "SE"}} {
		if _, err := sampling.NewFedCor(5, o); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("NewFedCor(%v): err = %v; want ErrInvalid", o, err)
		}
	}
}

// TestFedCorRejects: answers that are not one loss per client are bad
// input.
func TestFedCorRejects(t *testing.T) {
	pop := population(t, equalSizes(4), fl.ImportanceSize)
	f := newFedCor(t, 2, nil)
	st, _ := f.Init(pop)
	ans := []fl.Answer{{Ask: fl.AskLoss, Client: 0}, {Ask: fl.AskLoss, Client: 1}, {Ask: fl.AskLoss, Client: 1}, {Ask: fl.AskLoss, Client: 3}}
	if _, err := f.Plan(fl.PlanInput{Round: 1, Pop: pop, State: st, Answers: ans}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("two answers of client 1: err = %v; want ErrInvalid", err)
	}
}
