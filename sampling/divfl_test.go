package sampling_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/sampling"
)

// line returns the distances |a_i − a_j| between points on a line.
func line(a ...float64) []float64 {
	n := len(a)
	d := make([]float64, n*n)
	for i := range n {
		for j := range n {
			d[i*n+j] = math.Abs(a[i] - a[j])
		}
	}
	return d
}

func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// TestDistancesKnownValues: ‖(0,0,0,0,0) − (3,4,0,0,12)‖ = 13 (the last
// value goes through the tail loop), zeros on the diagonal, symmetric.
func TestDistancesKnownValues(t *testing.T) {
	got := sampling.Distances([][]float32{{0, 0, 0, 0, 0}, {3, 4, 0, 0, 12}, {3, 4, 0, 0, 12}})
	want := []float64{0, 13, 13, 13, 0, 0, 13, 0, 0}
	if !slices.Equal(got, want) {
		t.Errorf("Distances = %v; want %v", got, want)
	}
}

// TestFacilityCostKnownValues: points 0, 1, 5, 6 on a line.
func TestFacilityCostKnownValues(t *testing.T) {
	d := line(0, 1, 5, 6)
	tests := []struct {
		giveS []int
		giveW []float64
		want  float64
	}{
		{[]int{1, 2}, ones(4), 1 + 0 + 0 + 1},
		{[]int{0}, ones(4), 0 + 1 + 5 + 6},
		{[]int{1, 2}, []float64{0.1, 0.2, 0.3, 0.4}, 0.1 + 0.4},
		{[]int{0, 1, 2, 3}, ones(4), 0},
	}
	for _, tt := range tests {
		if got := sampling.FacilityCost(d, 4, tt.giveW, tt.giveS); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("FacilityCost(S = %v, w = %v) = %v; want %v", tt.giveS, tt.giveW, got, tt.want)
		}
	}
}

// TestExactGreedyIsOptimalOnClusters: on three well-separated clusters of
// four points each (in 2-D) whose weights differ by factors of 100, exact
// greedy takes each cluster's weighted medoid, heaviest first, so its set
// of three costs the brute-force minimum over all 220 sets; and it draws
// nothing (a nil stream would panic). (Greedy is not optimal in general:
// see TestExactGreedyKnownOrder.)
func TestExactGreedyIsOptimalOnClusters(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	var gs [][]float32
	var w []float64
	for c, at := range [][2]float64{{0, 0}, {100, 0}, {0, 100}} {
		for range 4 {
			gs = append(gs, []float32{float32(at[0] + r.Float64()), float32(at[1] + r.Float64())})
			w = append(w, math.Pow(100, float64(2-c))*(1+r.Float64()))
		}
	}
	const n, m = 12, 3
	d := sampling.Distances(gs)
	got := sampling.GreedyFacility(d, n, w, m, n, nil)
	best := math.Inf(1)
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			for c := b + 1; c < n; c++ {
				best = min(best, sampling.FacilityCost(d, n, w, []int{a, b, c}))
			}
		}
	}
	if cost := sampling.FacilityCost(d, n, w, got); math.Abs(cost-best) > 1e-9*best {
		t.Errorf("greedy picked %v at cost %v; the best set costs %v", got, cost, best)
	}
}

// TestExactGreedyKnownOrder: points 0, 0.1, 0.2, 10, 10.1, 10.2 with equal
// weights. The first step takes the 1-median: 0.2 and 10 both cost 30.0 by
// hand, and in floating point 10 (client 3) costs less; then 0.1 (client
// 1). The set costs 0.5 where {1, 4} costs 0.4: greedy is not optimal here.
func TestExactGreedyKnownOrder(t *testing.T) {
	d := line(0, 0.1, 0.2, 10, 10.1, 10.2)
	got := sampling.GreedyFacility(d, 6, ones(6), 2, 6, nil)
	if want := []int{3, 1}; !slices.Equal(got, want) {
		t.Errorf("GreedyFacility = %v; want %v", got, want)
	}
	if c, opt := sampling.FacilityCost(d, 6, ones(6), got), sampling.FacilityCost(d, 6, ones(6), []int{1, 4}); !(c > opt) {
		t.Errorf("greedy's cost %v; want above the optimum %v", c, opt)
	}
}

// TestStochasticGreedyCandidates: with m = 1, stochastic greedy returns the
// best of a uniform random candidate set of s = 3 among n = 10 clients, so
// the client of rank 1 is chosen with probability s/n = 0.3 and the client
// of rank 2 with C(8,2)/C(10,3) = 28/120. Over R = 100,000 draws from
// PCG(1, 1), each frequency is within 4 standard errors.
func TestStochasticGreedyCandidates(t *testing.T) {
	const R, n = 100000, 10
	// Client k's cost is Σ_i |a_i − a_k| on a line; points spread so the
	// median clients 4 and 5 rank first and second (a_5 − a_4 breaks the tie).
	d := line(0, 1, 2, 3, 4, 4.5, 6, 7, 8, 9)
	w := ones(n)
	r := rand.New(rand.NewPCG(1, 1))
	count := make([]int, n)
	for range R {
		count[sampling.GreedyFacility(d, n, w, 1, 3, r)[0]]++
	}
	rank1, rank2 := 4, 5
	if sampling.FacilityCost(d, n, w, []int{5}) < sampling.FacilityCost(d, n, w, []int{4}) {
		rank1, rank2 = 5, 4
	}
	for _, c := range []struct {
		k    int
		want float64
	}{{rank1, 0.3}, {rank2, 28.0 / 120}} {
		got := float64(count[c.k]) / R
		if tol := 4 * math.Sqrt(c.want*(1-c.want)/R); math.Abs(got-c.want) > tol {
			t.Errorf("client %d chosen at rate %.5f; want %.5f ± %.5f", c.k, got, c.want, tol)
		}
	}
}

// TestGroupWeightsKnownValues: points 0, 1, 5, 6 with p = (0.1, 0.2, 0.3,
// 0.4) and S = {1, 2}: client 0 is nearest to 1, client 3 to 2, so ω =
// (0.1+0.2, 0.3+0.4). A point at 3, equally far from 1 and 5, joins the
// lower client.
func TestGroupWeightsKnownValues(t *testing.T) {
	got := sampling.GroupWeights(line(0, 1, 5, 6), 4, []float64{0.1, 0.2, 0.3, 0.4}, []int{1, 2})
	if want := []float64{0.3, 0.7}; math.Abs(got[0]-want[0]) > 1e-15 || math.Abs(got[1]-want[1]) > 1e-15 {
		t.Errorf("GroupWeights = %v; want %v", got, want)
	}
	got = sampling.GroupWeights(line(0, 1, 3, 5), 4, []float64{0.25, 0.25, 0.25, 0.25}, []int{1, 3})
	if want := []float64{0.75, 0.25}; !slices.Equal(got, want) {
		t.Errorf("GroupWeights with a tie = %v; want %v", got, want)
	}
}

// divflInput returns round 3's plan input with gradient answers of the
// vectors gs, the answers in reverse client order.
func divflInput(pop fl.Population, gs [][]float32) fl.PlanInput {
	var ans []fl.Answer
	for k := len(gs) - 1; k >= 0; k-- {
		ans = append(ans, fl.Answer{Query: 1, Ask: fl.AskGradient, Client: k, Loss: 1, Samples: pop.Sizes[k]})
	}
	return fl.PlanInput{Round: 3, Pop: pop, Answers: ans,
		Vector: func(a fl.Answer) ([]float32, error) { return gs[a.Client], nil }}
}

// TestDivFLPlan: the first call asks every client for its gradient; the
// second selects the medoids of two clusters of 1-D gradients, 0, 1, 2 (ten
// samples each) and 100, 101, 102 (one each), with the weights each option
// gives; equal inputs and streams give equal plans.
func TestDivFLPlan(t *testing.T) {
	pop := population(t, []int{10, 10, 10, 1, 1, 1}, fl.ImportanceSize)
	p, err := sampling.NewDivFL(2, fl.Options{"greedy": "exact"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Plan(fl.PlanInput{Round: 3, Pop: pop}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if first.Query == nil || first.Query.Ask != fl.AskGradient || !slices.Equal(first.Query.Clients, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("first plan = %+v; want a gradient query of every client", first)
	}
	gs := [][]float32{{0}, {1}, {2}, {100}, {101}, {102}}
	tests := []struct {
		giveWeights string
		wantWeights []float64
	}{
		// p = (10, 10, 10, 1, 1, 1)/33; client 1 represents 0–2, client 4 represents 3–5.
		{sampling.WeightsGroup, []float64{30.0 / 33, 3.0 / 33}},
		{sampling.WeightsUniform, []float64{0.5, 0.5}},
		{sampling.WeightsSize, []float64{10.0 / 11, 1.0 / 11}},
	}
	for _, tt := range tests {
		p, err := sampling.NewDivFL(2, fl.Options{"greedy": "exact", "weights": tt.giveWeights})
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Plan(divflInput(pop, gs), nil)
		if err != nil {
			t.Fatal(err)
		}
		sel := got.Selection
		if sel == nil || !slices.Equal(sel.Clients, []int{1, 4}) || !slices.Equal(sel.Draws, []int{1, 1}) {
			t.Errorf("weights %s: plan = %+v; want clients [1 4] drawn once", tt.giveWeights, got)
			continue
		}
		for i := range sel.Weights {
			if math.Abs(sel.Weights[i]-tt.wantWeights[i]) > 1e-15 {
				t.Errorf("weights %s: ω = %v; want %v", tt.giveWeights, sel.Weights, tt.wantWeights)
				break
			}
		}
	}
	st, _ := sampling.NewDivFL(2, nil)
	a, err := st.Plan(divflInput(pop, gs), rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.Plan(divflInput(pop, gs), rand.New(rand.NewPCG(9, 9)))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("equal inputs gave %+v and %+v", a.Selection, b.Selection)
	}
}

// TestNewDivFL: defaults are the paper's (stochastic greedy, subsample 0.1,
// group weights); bad options name the field.
func TestNewDivFL(t *testing.T) {
	p, err := sampling.NewDivFL(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (sampling.DivFL{M: 4, Greedy: "stochastic", Subsample: 0.1, Weights: "group"}); p != want {
		t.Errorf("NewDivFL(4, nil) = %+v; want %+v", p, want)
	}
	for _, o := range []fl.Options{{"greedy": "lazy"}, {"subsample": 0.0}, {"subsample": 1.5}, {"weights": "n"}, {"d": 3}} {
		if _, err := sampling.NewDivFL(4, o); !errors.Is(err, fl.ErrInvalid) {
			t.Errorf("NewDivFL(%v): err = %v; want ErrInvalid", o, err)
		}
	}
	if _, err := sampling.NewDivFL(0, nil); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("NewDivFL(m = 0): err = %v; want ErrInvalid", err)
	}
}

// TestDivFLRejects: answers that are not one gradient per client, and more
// clients per round than clients, are bad input.
func TestDivFLRejects(t *testing.T) {
	pop := population(t, equalSizes(3), fl.ImportanceSize)
	p, _ := sampling.NewDivFL(2, nil)
	gs := [][]float32{{0}, {1}, {2}}
	in := divflInput(pop, gs)
	in.Answers[1].Ask = fl.AskLoss
	if _, err := p.Plan(in, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("a loss answer: err = %v; want ErrInvalid", err)
	}
	in = divflInput(pop, gs)
	in.Answers[1].Client = 0
	if _, err := p.Plan(in, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("two answers of client 0: err = %v; want ErrInvalid", err)
	}
	in = divflInput(pop, [][]float32{{0}, {1, 2}, {2}})
	if _, err := p.Plan(in, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("gradients of different sizes: err = %v; want ErrInvalid", err)
	}
	big, _ := sampling.NewDivFL(4, nil)
	if _, err := big.Plan(fl.PlanInput{Pop: pop}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("4 of 3 clients: err = %v; want ErrInvalid", err)
	}
}

// TestDivFLRefreshSelected follows the DivFL code's setting over three
// rounds of 1-D gradients, equal weights, exact greedy (by hand: a greedy
// step adds the client that lowers Σ_i min_{k∈S} |g_i − g_k| most, the
// lower client on a tie). Round 1 asks every client: g = (0, 1, 2, 100,
// 101, 102); the first pick is client 2 (cost 300, tied with client 3),
// the second client 4 (cost 5): {2, 4}. Every client's gradient then moves
// to 10 + k, but round 2 selects from memory, round 1's gradients, so
// {2, 4} again, asks only them and remembers 12 and 14. Round 3 selects
// from (0, 1, 12, 100, 14, 102): first client 2 (203, tied with client 4),
// then client 3 (27, tied with client 5): {2, 3}.
func TestDivFLRefreshSelected(t *testing.T) {
	pop := population(t, equalSizes(6), fl.ImportanceUniform)
	p, err := sampling.NewDivFL(2, fl.Options{"greedy": "exact", "refresh": "selected"})
	if err != nil {
		t.Fatal(err)
	}
	l, ok := p.(fl.Learner)
	if !ok {
		t.Fatalf("refresh: selected gives %T; want a Learner", p)
	}
	memory := map[int][]float32{}
	var fresh [][]float32 // the round's ∇F_k(θ^t)
	round := func(r int, wantAsked, wantSel []int) {
		t.Helper()
		in := fl.PlanInput{Round: r, Pop: pop,
			Recall: func(k int) ([]float32, error) { return memory[k], nil },
			Vector: func(a fl.Answer) ([]float32, error) { return fresh[a.Client], nil }}
		q, err := l.Plan(in, nil)
		if err != nil || q.Query == nil || q.Query.Ask != fl.AskGradient || !slices.Equal(q.Query.Clients, wantAsked) {
			t.Fatalf("round %d: first plan %+v, %v; want a gradient query of %v", r, q, err, wantAsked)
		}
		for _, k := range q.Query.Clients {
			in.Answers = append(in.Answers, fl.Answer{Query: 1, Ask: fl.AskGradient, Client: k, Samples: 1})
		}
		s, err := l.Plan(in, nil) // without the note: decided again
		if err != nil || s.Selection == nil || !slices.Equal(s.Selection.Clients, wantSel) {
			t.Fatalf("round %d: second plan %+v, %v; want clients %v", r, s, err, wantSel)
		}
		// With the query's note (as the round hands it back): the same
		// selection, weights included, without reading a remembered gradient.
		if r > 1 && len(q.Query.Note) == 0 {
			t.Fatalf("round %d: the query carries no note", r)
		}
		recalls := 0
		noted := in
		noted.Note = q.Query.Note
		noted.Recall = func(k int) ([]float32, error) { recalls++; return memory[k], nil }
		if sn, err := l.Plan(noted, nil); err != nil || sn.Selection == nil || !reflect.DeepEqual(*sn.Selection, *s.Selection) {
			t.Fatalf("round %d: plan with the note %+v, %v; want %+v", r, sn, err, *s.Selection)
		}
		if r > 1 && recalls != 0 {
			t.Errorf("round %d: the plan with the note read %d remembered gradients; want none", r, recalls)
		}
		if _, err := l.Observe(fl.ObserveInput{Round: r, Pop: pop, Selection: *s.Selection, Answers: in.Answers, Vector: in.Vector,
			Remember: func(k int, v []float32) { memory[k] = v }}); err != nil {
			t.Fatal(err)
		}
	}
	all := []int{0, 1, 2, 3, 4, 5}
	fresh = [][]float32{{0}, {1}, {2}, {100}, {101}, {102}}
	round(1, all, []int{2, 4})
	fresh = [][]float32{{10}, {11}, {12}, {13}, {14}, {15}}
	round(2, []int{2, 4}, []int{2, 4})
	want := []float32{0, 1, 12, 100, 14, 102}
	for k := range all {
		if len(memory[k]) != 1 || memory[k][0] != want[k] {
			t.Fatalf("after round 2, client %d's remembered gradient is %v; want %v", k, memory[k], want[k])
		}
	}
	round(3, []int{2, 3}, []int{2, 3})

	// Answers of other clients than its selection are bad input, and so is
	// a client without a remembered gradient after round 1.
	in := fl.PlanInput{Round: 4, Pop: pop, Recall: func(k int) ([]float32, error) { return memory[k], nil },
		Answers: []fl.Answer{{Query: 1, Ask: fl.AskGradient, Client: 0}, {Query: 1, Ask: fl.AskGradient, Client: 5}}}
	if _, err := l.Plan(in, nil); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("answers of clients it did not ask: err = %v; want ErrInvalid", err)
	}
	in.Note = []byte(`{"clients": [1, 2], "weights": [0.5, 0.5], "draws": [1, 1]}`)
	if _, err := l.Plan(in, nil); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("answers of clients other than the note's selection: err = %v; want ErrInvalid", err)
	}
	in.Note = []byte(`"not a selection"`)
	if _, err := l.Plan(in, nil); !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "note") {
		t.Errorf("a note that is not a selection: err = %v; want ErrInvalid naming the note", err)
	}
	in.Note = nil
	delete(memory, 4)
	if _, err := l.Plan(fl.PlanInput{Round: 4, Pop: pop, Recall: in.Recall}, nil); !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "client 4") {
		t.Errorf("client 4 forgotten: err = %v; want ErrInvalid naming it", err)
	}
	if _, err := sampling.NewDivFL(2, fl.Options{"refresh": "stale"}); !errors.Is(err, fl.ErrInvalid) || !strings.Contains(err.Error(), "sampler.refresh") {
		t.Errorf("refresh: stale: err = %v; want ErrInvalid naming sampler.refresh", err)
	}
	if d, err := sampling.NewDivFL(2, fl.Options{"refresh": "all"}); err != nil || d != (sampling.DivFL{M: 2, Greedy: "stochastic", Subsample: 0.1, Weights: "group"}) {
		t.Errorf("refresh: all gives %+v, %v; want the default DivFL", d, err)
	}
}

// TestDistancesParallelExact: on matrices large enough to be shared among
// goroutines, DivFL's distances and every update distance equal the same
// sums computed one entry at a time, bit for bit, whatever GOMAXPROCS.
func TestDistancesParallelExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const n, dim = 37, 4000 // a row's work n·dim/2 > 2¹⁶: the parallel path (cluster.Triangle)
	gs := make([][]float32, n)
	for i := range gs {
		gs[i] = make([]float32, dim)
		for j := range gs[i] {
			gs[i][j] = float32(r.NormFloat64())
		}
	}
	gs[7] = make([]float32, dim) // a zero vector: arccos gives 0
	l2 := fourSumDistance
	for _, procs := range []int{1, 2, 5} {
		was := runtime.GOMAXPROCS(procs)
		d := sampling.Distances(gs)
		for _, distance := range []string{sampling.DistanceArccos, sampling.DistanceL1, sampling.DistanceL2} {
			u, err := sampling.UpdateDistances(gs, distance)
			if err != nil {
				t.Fatal(err)
			}
			one, _ := sampling.UpdateDistances([][]float32{gs[3], gs[29]}, distance) // a 2×2 matrix: the serial path
			if math.Float64bits(u[3][29]) != math.Float64bits(one[0][1]) || u[29][3] != u[3][29] || u[5][5] != 0 {
				t.Errorf("GOMAXPROCS %d, %s: d[3][29] = %v, d[29][3] = %v, alone %v", procs, distance, u[3][29], u[29][3], one[0][1])
			}
		}
		runtime.GOMAXPROCS(was)
		for i := range n {
			for j := range n {
				want := 0.0
				if i != j {
					want = l2(gs[i], gs[j])
				}
				if math.Float64bits(d[i*n+j]) != math.Float64bits(want) {
					t.Fatalf("GOMAXPROCS %d: d[%d][%d] = %v; one entry at a time %v", procs, i, j, d[i*n+j], want)
				}
			}
		}
	}
}

// TestDistancesGramForm: from 256 clients DivFL's distances come from
// cluster.Euclidean's Gram form; they agree with the direct four-sum form
// within 1e-12 relative (measured 8e-15), equal and zero rows stay at
// exactly 0, the matrix is symmetric with a zero diagonal, and stochastic
// greedy selects the same clients from either; at 100 clients the direct
// form runs, bit for bit.
func TestDistancesGramForm(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	const n, dim = 300, 6000 // n(n−1)/2·dim ≥ cluster's Gram size (2²⁸ multiply-adds)
	gs := make([][]float32, n)
	for i := range gs {
		gs[i] = make([]float32, dim)
		for j := range gs[i] {
			gs[i][j] = float32(r.NormFloat64() * (1 + float64(i%7)))
		}
	}
	gs[11] = slices.Clone(gs[10]) // equal rows
	gs[12] = make([]float32, dim) // a zero row
	direct := func(a, b []float32) float64 {
		s := 0.0
		for k, v := range a {
			e := float64(v) - float64(b[k])
			s += e * e
		}
		return math.Sqrt(s)
	}
	d := sampling.Distances(gs)
	worst := 0.0
	for i := range n {
		if d[i*n+i] != 0 {
			t.Fatalf("d[%d][%d] = %v; want 0", i, i, d[i*n+i])
		}
		for j := i + 1; j < n; j++ {
			if d[i*n+j] != d[j*n+i] {
				t.Fatalf("d[%d][%d] = %v but d[%d][%d] = %v", i, j, d[i*n+j], j, i, d[j*n+i])
			}
			want := direct(gs[i], gs[j])
			if want == 0 {
				if d[i*n+j] != 0 {
					t.Errorf("rows %d and %d are equal but d = %v", i, j, d[i*n+j])
				}
				continue
			}
			worst = max(worst, math.Abs(d[i*n+j]-want)/want)
		}
	}
	if worst > 1e-12 {
		t.Errorf("the Gram form's distances differ from the direct sums by %.3g relative; want ≤ 1e-12", worst)
	}
	p := make([]float64, n)
	for k := range p {
		p[k] = 1 / float64(n)
	}
	ref := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			ref[i*n+j] = direct(gs[i], gs[j])
			ref[j*n+i] = ref[i*n+j]
		}
	}
	got := sampling.GreedyFacility(d, n, p, 10, 30, rand.New(rand.NewPCG(1, 2)))
	want := sampling.GreedyFacility(ref, n, p, 10, 30, rand.New(rand.NewPCG(1, 2)))
	if !slices.Equal(got, want) {
		t.Errorf("greedy selects %v from the Gram form's distances and %v from the direct sums", got, want)
	}
	small := sampling.Distances(gs[:100])
	for i := range 100 {
		for j := i + 1; j < 100; j++ {
			if w := fourSumDistance(gs[i], gs[j]); math.Float64bits(small[i*100+j]) != math.Float64bits(w) {
				t.Fatalf("at 100 clients d[%d][%d] = %v; the direct four-sum form gives %v", i, j, small[i*100+j], w)
			}
		}
	}
}

// fourSumDistance is ‖a − b‖ as DivFL's direct form sums it: four running
// float64 sums over the coordinates, then (s0 + s1) + (s2 + s3).
func fourSumDistance(a, b []float32) float64 {
	s := [4]float64{}
	i := 0
	for ; i+4 <= len(a); i += 4 {
		for l := range 4 {
			e := float64(a[i+l]) - float64(b[i+l])
			s[l] += e * e
		}
	}
	for ; i < len(a); i++ {
		e := float64(a[i]) - float64(b[i])
		s[0] += e * e
	}
	return math.Sqrt((s[0] + s[1]) + (s[2] + s[3]))
}
