package sampling_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// answers returns loss answers to pow-d's query: client, loss, client,
// loss, ...
func answers(kv ...float64) []fl.Answer {
	var out []fl.Answer
	for i := 0; i < len(kv); i += 2 {
		out = append(out, fl.Answer{Query: 1, Ask: fl.AskLoss, Client: int(kv[i]), Loss: kv[i+1], Samples: 100})
	}
	return out
}

func plan(t *testing.T, p sampling.PowD, in fl.PlanInput, r *rand.Rand) fl.Plan {
	t.Helper()
	got, err := p.Plan(in, r)
	if err != nil {
		t.Fatalf("%+v.Plan: %v", p, err)
	}
	return got
}

// TestPowDQuery checks the first phase: with no answers, Plan asks d
// distinct clients, ascending, for their loss, and selects nothing yet.
func TestPowDQuery(t *testing.T) {
	pop := population(t, unbalanced, fl.ImportanceSize)
	p := sampling.PowD{M: 3, D: 6}
	for seed := range uint64(50) {
		got := plan(t, p, fl.PlanInput{Round: 1, Pop: pop}, rand.New(rand.NewPCG(seed, 1)))
		if got.Selection != nil || got.Query == nil {
			t.Fatalf("Plan without answers = %+v; want a query and no selection", got)
		}
		q := got.Query
		if q.Ask != fl.AskLoss || len(q.Clients) != p.D {
			t.Errorf("query = %+v; want %d clients asked %q", q, p.D, fl.AskLoss)
		}
		if err := q.Validate(pop.N()); err != nil { // distinct, ascending, in [0, n)
			t.Error(err)
		}
	}
}

// TestPowDSelect checks the second phase against hand-ranked answers: the
// m highest losses win, equal losses go to the lower client ID, and the
// selection is ascending with ω_k = 1/m and one draw each, whatever the
// order of the answers.
func TestPowDSelect(t *testing.T) {
	pop := population(t, equalSizes(8), fl.ImportanceSize)
	tests := []struct {
		name        string
		giveM       int
		giveAnswers []fl.Answer
		want        []int
	}{
		// 3 has 0.9; 1 and 4 tie at 0.5, and 1 < 4 takes the second place.
		{"tie", 2, answers(4, 0.5, 3, 0.9, 5, 0.2, 1, 0.5), []int{1, 3}},
		// The same answers in another order.
		{"tie reordered", 2, answers(1, 0.5, 5, 0.2, 4, 0.5, 3, 0.9), []int{1, 3}},
		{"highest one", 1, answers(0, 2.3, 7, 2.4, 2, 0.1, 6, 2.35), []int{7}},
		// All equal: the 3 lowest IDs.
		{"all equal", 3, answers(7, 1, 2, 1, 5, 1, 6, 1), []int{2, 5, 6}},
		// m = d: every candidate.
		{"m = d", 4, answers(6, 0.3, 0, 0.1, 2, 0.2, 7, 0.4), []int{0, 2, 6, 7}},
	}
	for _, tt := range tests {
		p := sampling.PowD{M: tt.giveM, D: len(tt.giveAnswers)}
		got := plan(t, p, fl.PlanInput{Round: 2, Pop: pop, Answers: tt.giveAnswers}, rand.New(rand.NewPCG(1, 1)))
		if got.Query != nil || got.Selection == nil {
			t.Errorf("%s: Plan = %+v; want a selection and no query", tt.name, got)
			continue
		}
		sel := *got.Selection
		w, d := make([]float64, tt.giveM), make([]int, tt.giveM)
		for i := range w {
			w[i], d[i] = 1/float64(tt.giveM), 1
		}
		if !slices.Equal(sel.Clients, tt.want) || !slices.Equal(sel.Weights, w) || !slices.Equal(sel.Draws, d) {
			t.Errorf("%s: selection = %+v; want clients %v, weights %v, draws %v", tt.name, sel, tt.want, w, d)
		}
	}
}

// TestPowDInclusion checks the candidate draw against its exact
// distribution, sequential sampling without replacement ∝ p_k (numpy's
// choice(replace=False, p=p)), over R = 100,000 draws from PCG(1, 1):
//
//   - d = 1 over p = (0.1, 0.2, 0.3, 0.4): P(k ∈ A) = p_k;
//   - d = 2 over p = (0.5, 0.3, 0.2): P(k ∈ A) = p_k + Σ_{j≠k} p_j·p_k/(1 − p_j),
//     that is (0.5 + 0.15/0.7 + 0.1/0.8, 0.3 + 0.15/0.5 + 0.06/0.8,
//     0.2 + 0.1/0.5 + 0.06/0.7) = (0.839286, 0.675, 0.485714), summing to d.
//
// Each frequency is a mean of R Bernoulli(π_k) draws, with standard error
// √(π_k(1 − π_k)/R) ≤ 0.0016; the tolerance is 4 standard errors, which a
// correct sampler exceeds with probability 6e-5 per client (and the seed
// is fixed, so the test is deterministic).
func TestPowDInclusion(t *testing.T) {
	const R = 100000
	tests := []struct {
		name     string
		giveSize []int
		giveD    int
	}{
		{"d = 1", []int{10, 20, 30, 40}, 1},
		{"d = 2 of 3", []int{50, 30, 20}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pop := population(t, tt.giveSize, fl.ImportanceSize)
			p := sampling.PowD{M: 1, D: tt.giveD}
			r := rand.New(rand.NewPCG(1, 1))
			count := make([]int, pop.N())
			for range R {
				for _, k := range plan(t, p, fl.PlanInput{Pop: pop}, r).Query.Clients {
					count[k]++
				}
			}
			exact := inclusion(pop.P, tt.giveD)
			for k, pk := range pop.P {
				want := exact[k]
				got := float64(count[k]) / R
				if tol := 4 * math.Sqrt(want*(1-want)/R); math.Abs(got-want) > tol {
					t.Errorf("client %d (p = %v) in A at rate %.5f; want %.5f ± %.5f", k, pk, got, want, tol)
				}
			}
		})
	}
}

// inclusion returns P(k ∈ A) for a draw of d clients one at a time without
// replacement, each ∝ p among those left, by summing the probability
// Π_s p_{k_s}/(1 − Σ_{r<s} p_{k_r}) of every ordered sequence.
func inclusion(p []float64, d int) []float64 {
	out := make([]float64, len(p))
	var walk func(seq []int, prob, left float64)
	walk = func(seq []int, prob, left float64) {
		if len(seq) == d {
			for _, k := range seq {
				out[k] += prob
			}
			return
		}
		for k, pk := range p {
			if !slices.Contains(seq, k) {
				walk(append(seq, k), prob*pk/left, left-pk)
			}
		}
	}
	walk(nil, 1, 1)
	return out
}

// TestInclusionKnownValues checks the reference itself against the values
// worked out by hand in TestPowDInclusion's comment.
func TestInclusionKnownValues(t *testing.T) {
	got := inclusion([]float64{0.5, 0.3, 0.2}, 2)
	want := []float64{0.5 + 0.15/0.7 + 0.1/0.8, 0.3 + 0.15/0.5 + 0.06/0.8, 0.2 + 0.1/0.5 + 0.06/0.7}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12 {
			t.Errorf("inclusion(p, 2)[%d] = %v; want %v", k, got[k], want[k])
		}
	}
}

// TestPowDRejects checks the errors: more candidates than clients, answers
// of the wrong count, and a population with too few clients of positive
// importance to supply d distinct candidates.
func TestPowDRejects(t *testing.T) {
	pop := population(t, equalSizes(4), fl.ImportanceSize)
	tests := []struct {
		name string
		give sampling.PowD
		in   fl.PlanInput
	}{
		{"d > n", sampling.PowD{M: 2, D: 5}, fl.PlanInput{Pop: pop}},
		{"too few answers", sampling.PowD{M: 2, D: 3}, fl.PlanInput{Pop: pop, Answers: answers(0, 1, 1, 2)}},
		{"too many answers", sampling.PowD{M: 1, D: 2}, fl.PlanInput{Pop: pop, Answers: answers(0, 1, 1, 2, 3, 3)}},
		// Two clients of positive importance cannot supply 3 candidates.
		{"zero importance", sampling.PowD{M: 1, D: 3}, fl.PlanInput{Pop: fl.Population{Sizes: []int{1, 1, 1, 1}, P: []float64{0.5, 0, 0.5, 0}}}},
	}
	for _, tt := range tests {
		if got, err := tt.give.Plan(tt.in, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("%s: Plan = %+v, %v; want fl.ErrInvalid", tt.name, got, err)
		}
	}
}

// TestPowDNeverDrawsZeroImportance checks that clients with p_k = 0 are
// never candidates while enough others are left.
func TestPowDNeverDrawsZeroImportance(t *testing.T) {
	pop := fl.Population{Sizes: []int{1, 1, 1, 1, 1}, P: []float64{0.25, 0, 0.5, 0, 0.25}}
	r := rand.New(rand.NewPCG(2, 2))
	for range 1000 {
		got := plan(t, sampling.PowD{M: 1, D: 3}, fl.PlanInput{Pop: pop}, r)
		if !slices.Equal(got.Query.Clients, []int{0, 2, 4}) {
			t.Fatalf("query = %v; want the positive-importance clients [0 2 4]", got.Query.Clients)
		}
	}
}

// TestPowDDeterministic checks purity: equal inputs and equal streams give
// equal plans in both phases, and the selection does not read the stream.
func TestPowDDeterministic(t *testing.T) {
	pop := population(t, unbalanced, fl.ImportanceSize)
	p := sampling.PowD{M: 2, D: 5}
	key := fl.Key{Seed: 3, Point: "p", Round: 4, Client: fl.Server, Purpose: fl.PurposeSample}
	in := fl.PlanInput{Round: 4, Pop: pop}
	a, b := plan(t, p, in, fl.Stream(key)), plan(t, p, in, fl.Stream(key))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("query phase: Plan = %+v, then %+v; want equal", a.Query, b.Query)
	}
	var ans []fl.Answer
	for i, k := range a.Query.Clients {
		ans = append(ans, fl.Answer{Query: 1, Ask: fl.AskLoss, Client: k, Loss: float64(i % 3)})
	}
	in.Answers = ans
	a, b = plan(t, p, in, fl.Stream(key)), plan(t, p, in, rand.New(rand.NewPCG(9, 9)))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("selection phase: Plan = %+v, then %+v; want equal", a.Selection, b.Selection)
	}
}

// TestNewPowDDefault checks that d defaults to 2m, the HiCS-FL code's
// choice (specs/hicsfl.md §2).
func TestNewPowDDefault(t *testing.T) {
	got, err := sampling.NewPowD(3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sampling.PowD{M: 3, D: 6}); got != want {
		t.Errorf("NewPowD(3, nil) = %+v; want %+v", got, want)
	}
}

// TestPowDMAboveD checks that a PowD built directly with m > d (which
// NewPowD refuses) returns an error instead of panicking.
func TestPowDMAboveD(t *testing.T) {
	pop := population(t, equalSizes(4), fl.ImportanceSize)
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("Plan panicked: %v; want fl.ErrInvalid", r)
		}
	}()
	_, err := sampling.PowD{M: 3, D: 2}.Plan(fl.PlanInput{Pop: pop, Answers: answers(0, 1, 1, 2)}, rand.New(rand.NewPCG(1, 1)))
	if !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Plan with m = 3 > d = 2: error = %v; want fl.ErrInvalid", err)
	}
	// Two answers of one client are not two candidates.
	_, err = sampling.PowD{M: 1, D: 2}.Plan(fl.PlanInput{Pop: pop, Answers: answers(0, 1, 0, 2)}, rand.New(rand.NewPCG(1, 1)))
	if !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("Plan with a client answering twice: error = %v; want fl.ErrInvalid", err)
	}
}
