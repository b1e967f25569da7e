package algorithm_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// The acceptance checks of FedEBA+ (Wang et al., arXiv:2301.12407) that do
// not need training: the EBA weights, the fair angle and the server's
// update rules, against values worked out by hand.

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestSoftmaxKnownValues: p = softmax(F/τ) for the digest's worked examples.
func TestSoftmaxKnownValues(t *testing.T) {
	tests := []struct {
		f    []float64
		tau  float64
		want []float64
	}{
		{[]float64{0, 4.5}, 1, []float64{0.010987, 0.989013}},
		{[]float64{1, 2, 3}, 1, []float64{0.09003, 0.24473, 0.66524}},
		{[]float64{0.2, 0.5, 1.0}, 0.1, []float64{0.000333, 0.006691, 0.992976}},
	}
	for _, tt := range tests {
		got := algorithm.Softmax(tt.f, tt.tau, nil)
		for i := range got {
			if !near(got[i], tt.want[i], 5e-6) {
				t.Errorf("softmax(%v/%v) = %v; want %v", tt.f, tt.tau, got, tt.want)
				break
			}
		}
	}
}

// TestSoftmaxProperties: the weights sum to 1 and are positive, strictly
// increase with the loss, are shift invariant, obey p(sF; τ) = p(F; τ/s),
// tend to uniform (τ → ∞) and one-hot (τ → 0), stay finite for losses of
// 50 at τ = 0.01, and the data-size prior is a no-op for equal sizes and
// multiplies by q_i otherwise.
func TestSoftmaxProperties(t *testing.T) {
	f := []float64{0.7, 2.3, 1.1, 0.2, 1.9}
	for _, tau := range []float64{0.05, 0.1, 1, 10} {
		p := algorithm.Softmax(f, tau, nil)
		sum := 0.0
		for _, v := range p {
			sum += v
			if !(v > 0) {
				t.Fatalf("τ = %v: weight %v is not positive", tau, v)
			}
		}
		if !near(sum, 1, 1e-12) {
			t.Errorf("τ = %v: Σp = %v", tau, sum)
		}
		for i := range f {
			for j := range f {
				if f[i] > f[j] && !(p[i] > p[j]) {
					t.Errorf("τ = %v: F_%d > F_%d but p_%d = %v ≤ p_%d = %v", tau, i, j, i, p[i], j, p[j])
				}
			}
		}
		shifted := make([]float64, len(f))
		scaled := make([]float64, len(f))
		for i, v := range f {
			shifted[i], scaled[i] = v+3.7, 2*v
		}
		ps, pk := algorithm.Softmax(shifted, tau, nil), algorithm.Softmax(scaled, 2*tau, nil)
		for i := range p {
			if !near(ps[i], p[i], 1e-12) || !near(pk[i], p[i], 1e-12) {
				t.Errorf("τ = %v: shift gives %v, scale gives %v; want %v", tau, ps, pk, p)
				break
			}
		}
	}
	for _, v := range algorithm.Softmax(f, 1e6, nil) {
		if !near(v, 1/float64(len(f)), 1e-5) {
			t.Errorf("τ = 1e6: weight %v; want 1/n", v)
		}
	}
	for i, v := range algorithm.Softmax(f, 1e-4, nil) {
		want := 0.0
		if i == 1 { // argmax F
			want = 1
		}
		if !near(v, want, 1e-12) {
			t.Errorf("τ = 1e-4: p_%d = %v; want %v", i, v, want)
		}
	}
	for _, v := range algorithm.Softmax([]float64{50, 49.9, 0.1}, 0.01, nil) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("losses of 50 at τ = 0.01 give %v", v)
		}
	}
	eq := algorithm.Softmax(f, 0.5, []float64{0.2, 0.2, 0.2, 0.2, 0.2})
	plain := algorithm.Softmax(f, 0.5, nil)
	q := []float64{0.1, 0.4, 0.2, 0.2, 0.1}
	prior := algorithm.Softmax(f, 0.5, q)
	norm := 0.0
	for i := range f {
		norm += q[i] * math.Exp(f[i]/0.5)
	}
	for i := range f {
		if !near(eq[i], plain[i], 1e-15) {
			t.Errorf("equal prior changed p_%d: %v vs %v", i, eq[i], plain[i])
		}
		if want := q[i] * math.Exp(f[i]/0.5) / norm; !near(prior[i], want, 1e-12) {
			t.Errorf("prior: p_%d = %v; want %v", i, prior[i], want)
		}
	}
}

// TestFairAngle: reference angles and tan φ = std_pop(L)/mean(L).
func TestFairAngle(t *testing.T) {
	single := make([]float64, 10)
	single[3] = 2.5
	tests := []struct {
		l    []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 0},
		{[]float64{1, 0, 0, 0}, 60},
		{[]float64{1, 3}, 26.56505117707799},
		{single, math.Acos(1/math.Sqrt(10)) * 180 / math.Pi}, // 71.565°, the maximum for n = 10
	}
	for _, tt := range tests {
		if got := algorithm.FairAngle(tt.l); !near(got, tt.want, 1e-9) {
			t.Errorf("FairAngle(%v) = %v; want %v", tt.l, got, tt.want)
		}
	}
	if !near(tests[3].want, 71.565, 1e-3) {
		t.Errorf("arccos(1/√10) = %v°; want 71.565°", tests[3].want)
	}
	for _, l := range [][]float64{{0.3, 0.9, 2.2}, {1, 3}, {2.1, 2.2, 2.0, 1.9, 5}} {
		mean, sq := 0.0, 0.0
		for _, v := range l {
			mean += v
		}
		mean /= float64(len(l))
		for _, v := range l {
			sq += (v - mean) * (v - mean)
		}
		cv := math.Sqrt(sq/float64(len(l))) / mean
		if got := math.Tan(algorithm.FairAngle(l) * math.Pi / 180); !near(got, cv, 1e-12) {
			t.Errorf("tan φ(%v) = %v; want the CV %v", l, got, cv)
		}
	}
}

// TestTauAnnealing: Remark M.1's schedules.
func TestTauAnnealing(t *testing.T) {
	e := algorithm.EBA{Tau: 1, Kappa: 0.5}
	for _, tt := range []struct {
		anneal string
		want   float64 // τ_3 = 1/(1 + 0.5·2)^e = 1/2^e
	}{{"", 1}, {algorithm.AnnealLinear, 0.5}, {algorithm.AnnealConcave, 1 / math.Sqrt2}, {algorithm.AnnealConvex, 0.125}} {
		e.Anneal = tt.anneal
		if got := e.TauAt(3); !near(got, tt.want, 1e-15) {
			t.Errorf("%q: τ_3 = %v; want %v", tt.anneal, got, tt.want)
		}
		if got := e.TauAt(1); got != 1 {
			t.Errorf("%q: τ_1 = %v; want τ_0", tt.anneal, got)
		}
	}
}

// server is a round of a one- or few-parameter model for the server halves.
type server struct {
	global []float32
	sums   []fl.ClientSummary
	deltas [][]float32
	ups    []fl.State
}

func f64(v float64) *float64 { return &v }

// run aggregates s with alg and returns θ^{t+1} and the report.
func (s server) run(t *testing.T, alg algorithm.Algorithm) ([]float32, fl.AggReport) {
	t.Helper()
	sel := fl.Selection{}
	for _, c := range s.sums {
		sel.Clients = append(sel.Clients, c.Client)
		sel.Weights = append(sel.Weights, 1/float64(len(s.sums)))
		sel.Draws = append(sel.Draws, 1)
	}
	agg, err := alg.Begin(algorithm.Server{Round: 1, Global: s.global, Selection: sel, Clients: s.sums,
		Rule: aggregate.WeightedDelta{EtaG: 1}, N: len(s.sums)})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range s.sums {
		var up fl.State
		if s.ups != nil {
			up = s.ups[i]
		}
		if err := agg.Add(c.Client, s.deltas[i], up); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]float32, len(s.global))
	if _, err := agg.Finish(out); err != nil {
		t.Fatal(err)
	}
	var rep fl.AggReport
	if r, ok := agg.(algorithm.Reporting); ok {
		rep = r.Report()
	}
	return out, rep
}

// TestEBAToy is App. I.1's toy: f1 = 2(x − 2)², f2 = ½(x + 4)², x_t = 0,
// one gradient step of 1/4 takes client 1 to 2 (f1 = 0) and client 2 to −1
// (f2 = 4.5). EBA at τ = 1 weighs them (0.011, 0.989), so x_EBA = −0.967,
// not the paper's −0.1, which needs p_1 = 0.3, i.e. τ ≈ 5.311; FedAvg gives
// 0.5.
func TestEBAToy(t *testing.T) {
	s := server{
		global: []float32{0},
		sums: []fl.ClientSummary{
			{Client: 0, NumExamples: 1, Steps: 1, LossBefore: f64(8), LossAfter: f64(0)},
			{Client: 1, NumExamples: 1, Steps: 1, LossBefore: f64(8), LossAfter: f64(4.5)},
		},
		deltas: [][]float32{{2}, {-1}},
	}
	for _, tt := range []struct {
		tau, want, tol float64
	}{{1, -0.967, 5e-4}, {5.311, -0.1, 5e-4}, {1e9, 0.5, 1e-7}} {
		got, rep := s.run(t, algorithm.FedEBA{EBA: algorithm.EBA{Tau: tt.tau}})
		if !near(float64(got[0]), tt.want, tt.tol) {
			t.Errorf("τ = %v: x_EBA = %v; want %v (weights %v)", tt.tau, got[0], tt.want, rep.Weights)
		}
	}
}

// TestLossProvenance: clients report distinct losses before and after
// training. FedEBA's weights follow the losses AFTER training (the local
// models'); FedEBA+'s angle and its g̃ weights p̃ follow the losses BEFORE
// training (the global model's). Swapping them must change the result.
func TestLossProvenance(t *testing.T) {
	// Before: client 0 worst; after: client 2 worst. Angles differ too.
	s := server{
		global: []float32{0, 0},
		sums: []fl.ClientSummary{
			{Client: 0, NumExamples: 5, Steps: 2, LossBefore: f64(3.0), LossAfter: f64(0.1)},
			{Client: 4, NumExamples: 5, Steps: 2, LossBefore: f64(1.0), LossAfter: f64(0.2)},
			{Client: 7, NumExamples: 5, Steps: 2, LossBefore: f64(1.0), LossAfter: f64(0.9)},
		},
		deltas: [][]float32{{1, 0}, {0, 1}, {-1, -1}},
	}
	eba := algorithm.EBA{Tau: 0.1}
	_, rep := s.run(t, algorithm.FedEBA{EBA: eba})
	want := algorithm.Softmax([]float64{0.1, 0.2, 0.9}, 0.1, nil)
	if !slices.Equal(rep.Weights, want) {
		t.Errorf("FedEBA weights %v; want softmax of the losses after training %v", rep.Weights, want)
	}
	if rep.Weights[2] < rep.Weights[0] {
		t.Error("FedEBA gave the largest weight to the client with the largest loss before training")
	}
	plus := algorithm.FedEBAPlus{EBA: eba, Alpha: 0.5, Theta: 20, ModelAlignScale: algorithm.AlignScalePaper}
	_, rep = s.run(t, plus)
	if !slices.Equal(rep.Weights, want) {
		t.Errorf("FedEBA+ weights %v; want %v", rep.Weights, want)
	}
	phiBefore := algorithm.FairAngle([]float64{3, 1, 1})
	if rep.FairAngle == nil || *rep.FairAngle != phiBefore {
		t.Errorf("FedEBA+ angle %v; want the angle of the losses before training %v (after: %v)", rep.FairAngle, phiBefore,
			algorithm.FairAngle([]float64{0.1, 0.2, 0.9}))
	}
	if !*rep.Aligned { // φ(3, 1, 1) = 25.2° > 20°; φ(0.1, 0.2, 0.9) = 37.6° would also align, so check the value above
		t.Error("FedEBA+ did not align with φ > θ")
	}
	// The broadcast: p̃ from the answers' losses at θ^t, which the
	// gradients are weighted by.
	grads := map[int][]float32{0: {1, 0}, 4: {0, 1}, 7: {0, 0}}
	var answers []fl.Answer
	for _, c := range s.sums {
		answers = append(answers, fl.Answer{Query: 1, Ask: fl.AskGradient, Client: c.Client, Loss: *c.LossBefore, Samples: 5})
	}
	b, err := plus.Broadcast(algorithm.BroadcastRound{Round: 1, Global: s.global,
		Selection: fl.Selection{Clients: []int{0, 4, 7}, Weights: []float64{1, 1, 1}, Draws: []int{1, 1, 1}}, Answers: answers,
		Vector: func(a fl.Answer) ([]float32, error) { return grads[a.Client], nil }})
	if err != nil {
		t.Fatal(err)
	}
	pt := algorithm.Softmax([]float64{3, 1, 1}, 0.1, nil)
	if b.Vector == nil || b.Vector[0] != float32(pt[0]) || b.Vector[1] != float32(pt[1]) {
		t.Errorf("g̃ = %v; want (p̃_0, p̃_1) = (%v, %v) from the losses before training", b.Vector, pt[0], pt[1])
	}
}

// TestFedEBAPlusBroadcastSteps: the losses are asked first, gradients only
// when φ > θ; θ = 0 aligns any round with unequal losses, θ ≥ 71.57° never
// does for n = 10; α = 0 asks nothing.
func TestFedEBAPlusBroadcastSteps(t *testing.T) {
	clients := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	sel := fl.Selection{Clients: clients}
	ask := func(a algorithm.FedEBAPlus, losses []float64, grads bool) algorithm.Broadcast {
		t.Helper()
		var ans []fl.Answer
		for i, l := range losses {
			ans = append(ans, fl.Answer{Query: 1, Ask: fl.AskLoss, Client: i, Loss: l, Samples: 10})
			if grads {
				ans = append(ans, fl.Answer{Query: 2, Ask: fl.AskGradient, Client: i, Loss: l, Samples: 10})
			}
		}
		b, err := a.Broadcast(algorithm.BroadcastRound{Round: 1, Global: []float32{0}, Selection: sel, Answers: ans,
			Vector: func(fl.Answer) ([]float32, error) { return []float32{1}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	plus := func(theta float64) algorithm.FedEBAPlus {
		return algorithm.FedEBAPlus{EBA: algorithm.EBA{Tau: 0.1}, Alpha: 0.9, Theta: theta, ModelAlignScale: algorithm.AlignScalePaper}
	}
	if b := ask(plus(0), nil, false); b.Query == nil || b.Query.Ask != fl.AskLoss || !slices.Equal(b.Query.Clients, clients) {
		t.Errorf("no answers: %+v; want a loss query of the selection", b)
	}
	varied := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1.0001}
	if b := ask(plus(0), varied, false); b.Query == nil || b.Query.Ask != fl.AskGradient {
		t.Errorf("θ = 0, unequal losses: %+v; want a gradient query", b)
	}
	if b := ask(plus(0), varied, true); b.Vector == nil {
		t.Error("θ = 0 with gradients: no g̃")
	}
	if b := ask(plus(0), []float64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, false); b.Query != nil || b.Vector != nil {
		t.Errorf("θ = 0, equal losses: %+v; want model alignment (nothing sent)", b)
	}
	extreme := make([]float64, 10)
	extreme[0] = 5
	if b := ask(plus(71.57), extreme, false); b.Query != nil || b.Vector != nil {
		t.Errorf("θ = 71.57°: %+v; the angle of 10 losses never exceeds arccos(1/√10) = 71.565°", b)
	}
	zero := plus(0)
	zero.Alpha = 0
	if b := ask(zero, nil, false); b.Query != nil || b.Vector != nil {
		t.Errorf("α = 0: %+v; FedEBA asks nothing", b)
	}
}

// TestModelAlignment: with K = 1 the first step is the update, so Eq. (8)
// is Δ = (1 − α)Σ p_i Δ^i + α·mean_i Δ^i; the server refuses a round whose
// clients did not upload their first step, and a gradient-aligned round
// whose clients did.
func TestModelAlignment(t *testing.T) {
	s := server{
		global: []float32{1, -1},
		sums: []fl.ClientSummary{
			{Client: 1, NumExamples: 4, Steps: 1, LossBefore: f64(1), LossAfter: f64(0.5)},
			{Client: 2, NumExamples: 4, Steps: 1, LossBefore: f64(1), LossAfter: f64(0.7)},
		},
		deltas: [][]float32{{0.5, 0.25}, {-0.125, 1}},
	}
	for i, d := range s.deltas {
		s.ups = append(s.ups, fl.State{})
		s.ups[i].Set("first_step", d)
	}
	const alpha = 0.3
	got, rep := s.run(t, algorithm.FedEBAPlus{EBA: algorithm.EBA{Tau: 0.1}, Alpha: alpha, Theta: 0, ModelAlignScale: algorithm.AlignScalePaper})
	if rep.Aligned == nil || *rep.Aligned {
		t.Fatalf("equal losses before training aligned: %+v", rep)
	}
	p := algorithm.Softmax([]float64{0.5, 0.7}, 0.1, nil)
	for j := range got {
		mix := 0.0
		for i := range p {
			mix += (1-alpha)*p[i]*float64(s.deltas[i][j]) + alpha*0.5*float64(s.deltas[i][j])
		}
		if want := float64(s.global[j]) + mix; !near(float64(got[j]), want, 1e-6) {
			t.Errorf("θ[%d] = %v; want %v", j, got[j], want)
		}
	}
	s.ups = nil
	alg := algorithm.FedEBAPlus{EBA: algorithm.EBA{Tau: 0.1}, Alpha: alpha, ModelAlignScale: algorithm.AlignScalePaper}
	agg, err := alg.Begin(algorithm.Server{Round: 1, Global: s.global, Selection: fl.Selection{Clients: []int{1, 2}}, Clients: s.sums, Rule: aggregate.WeightedDelta{EtaG: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := agg.Add(1, s.deltas[0], fl.State{}); err == nil {
		t.Error("a model-aligned round accepted an update without its first step")
	}
}

// TestPracGradientBranch: Algorithm 3's gradient branch computed literally
// (lines 14–16: g̃ = Σ p̃_i·(−Δ^i/(η_L K)), Δ̂^i = (1 − α)Δ^i − α η_L K g̃,
// Δ = Σ p_i Δ̂^i) equals the closed form the server uses, and the model
// branch is (1 − α)Σ p_i Δ^i + α·mean Δ^i/K.
func TestPracGradientBranch(t *testing.T) {
	const lr, k, alpha = 0.1, 10, 0.9
	s := server{
		global: []float32{0.5, -0.25, 2},
		sums: []fl.ClientSummary{
			{Client: 0, NumExamples: 6, Steps: k, LossBefore: f64(2.0), LossAfter: f64(0.4)},
			{Client: 3, NumExamples: 6, Steps: k, LossBefore: f64(0.5), LossAfter: f64(0.3)},
			{Client: 5, NumExamples: 6, Steps: k, LossBefore: f64(1.2), LossAfter: f64(0.9)},
		},
		deltas: [][]float32{{0.3, -0.2, 0.1}, {-0.4, 0.1, 0.05}, {0.2, 0.6, -0.3}},
	}
	prac := algorithm.PracFedEBAPlus{EBA: algorithm.EBA{Tau: 0.5}, Alpha: alpha, Theta: 15, ModelAlignScale: algorithm.AlignScalePaper}
	got, rep := s.run(t, prac)
	if !*rep.Aligned {
		t.Fatalf("φ = %v ≤ 15°", *rep.FairAngle)
	}
	p := algorithm.Softmax([]float64{0.4, 0.3, 0.9}, 0.5, nil)
	pt := algorithm.Softmax([]float64{2.0, 0.5, 1.2}, 0.5, nil)
	for j := range got {
		gt := 0.0
		for i := range pt {
			gt += pt[i] * (-float64(s.deltas[i][j]) / (lr * k))
		}
		d := 0.0
		for i := range p {
			d += p[i] * ((1-alpha)*float64(s.deltas[i][j]) - alpha*lr*k*gt)
		}
		if want := float64(s.global[j]) + d; !near(float64(got[j]), want, 1e-6) {
			t.Errorf("gradient branch θ[%d] = %v; want %v", j, got[j], want)
		}
	}
	prac.Theta = 60
	got, rep = s.run(t, prac)
	if *rep.Aligned {
		t.Fatalf("φ = %v > 60°", *rep.FairAngle)
	}
	for j := range got {
		d := 0.0
		for i := range p {
			d += (1-alpha)*p[i]*float64(s.deltas[i][j]) + alpha*float64(s.deltas[i][j])/k/3
		}
		if want := float64(s.global[j]) + d; !near(float64(got[j]), want, 1e-6) {
			t.Errorf("model branch θ[%d] = %v; want %v", j, got[j], want)
		}
	}
}

// TestFedEBAOptions: defaults are the paper's Table 1 rows; bad values are
// refused with the field's name.
func TestFedEBAOptions(t *testing.T) {
	a, err := algorithm.NewFedEBAPlus(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := a.(algorithm.FedEBAPlus); p.Alpha != 0.9 || p.Tau != 0.1 || p.Theta != 0 || p.ModelAlignScale != "paper" || p.AlignUnits != "gradient" {
		t.Errorf("FedEBA+ defaults %+v; want α 0.9, τ 0.1, θ 0, paper, gradient", p)
	}
	pr, err := algorithm.NewPracFedEBAPlus(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := pr.(algorithm.PracFedEBAPlus); p.Theta != 15 {
		t.Errorf("Prac-FedEBA+ θ = %v; want 15", p.Theta)
	}
	for _, tt := range []struct {
		opts fl.Options
		want string
	}{
		{fl.Options{"tau": 0.0}, "algorithm.tau"},
		{fl.Options{"alpha": 1.5}, "algorithm.alpha"},
		{fl.Options{"theta": -1.0}, "algorithm.theta"},
		{fl.Options{"anneal": "cubic"}, "algorithm.anneal"},
		{fl.Options{"model_align_scale": "x"}, "algorithm.model_align_scale"},
		{fl.Options{"align_units": "updates"}, "algorithm.align_units"},
	} {
		if _, err := algorithm.NewFedEBAPlus(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v; want one naming %s", tt.opts, err, tt.want)
		}
	}
}

// TestAlignUnitsTrain: the client half of a gradient-aligned round on the
// real trainer. The default (align_units unset, as the constructor leaves
// it: gradient) trains with trainer.Aligned(α, g̃) itself, bit for bit, as
// FedEBA+ did before the option existed; update trains with
// Aligned(α, float32(η_L·g̃)), bit for bit, and the two differ.
func TestAlignUnitsTrain(t *testing.T) {
	f := newFixture(t, sgd())
	g := vec(11, len(f.global), 0.5)
	def, err := algorithm.NewFedEBAPlus(fl.Options{"alpha": 0.6})
	if err != nil {
		t.Fatal(err)
	}
	if u := def.(algorithm.FedEBAPlus).AlignUnits; u != algorithm.AlignUnitsGradient {
		t.Fatalf("default align_units = %q; want gradient", u)
	}
	upd, err := algorithm.NewFedEBAPlus(fl.Options{"alpha": 0.6, "align_units": "update"})
	if err != nil {
		t.Fatal(err)
	}
	server := state(algorithm.BroadcastVector, g)

	got := f.train(def, server, fl.State{})
	want, _ := f.reference(trainer.Aligned(0.6, g))
	sameBits(t, "gradient: θ_K", got.Weights, want)

	gu := make([]float32, len(g))
	for j, v := range g {
		gu[j] = float32(f.hp.LR * float64(v))
	}
	got = f.train(upd, server, fl.State{})
	want, _ = f.reference(trainer.Aligned(0.6, gu))
	sameBits(t, "update: θ_K", got.Weights, want)
	if lit, _ := f.reference(trainer.Aligned(0.6, g)); equalBits(lit, got.Weights) {
		t.Error("update trained like gradient; the test is vacuous")
	}
	if !got.Vectors.Empty() {
		t.Errorf("an aligned client uploaded %v; want nothing besides Δ", got.Vectors.Names())
	}
}

// TestAlignUnitsKnownValues: with α = 1 the cross-entropy's weight 1 − α
// is 0, so every local step descends α·g̃ alone and the update is
// data-independent (specs/fedeba.md §6 check 9): Δ = −K·η_L·g̃ under
// gradient units and Δ = −K·η_L·(η_L·g̃) = −K·η_L²·g̃ under update units.
// With g̃_j = 0.8 (j even) and −0.4 (j odd), K = 5:
//
//	η_L = 0.1:  gradient Δ_j = −5·0.1·0.8 = −0.4 (+0.2);  update −5·0.01·0.8 = −0.04 (+0.02)
//	η_L = 0.05: gradient Δ_j = −5·0.05·0.8 = −0.2 (+0.1); update −5·0.0025·0.8 = −0.01 (+0.005)
//
// (η_L is the round's rate the Local reports, here hp.LR).
func TestAlignUnitsKnownValues(t *testing.T) {
	for _, tt := range []struct {
		units     string
		eta       float64
		even, odd float64
	}{
		{algorithm.AlignUnitsGradient, 0.1, -0.4, 0.2},
		{algorithm.AlignUnitsUpdate, 0.1, -0.04, 0.02},
		{algorithm.AlignUnitsGradient, 0.05, -0.2, 0.1},
		{algorithm.AlignUnitsUpdate, 0.05, -0.01, 0.005},
	} {
		hp := sgd()
		hp.LR = tt.eta
		f := newFixture(t, hp)
		g := make([]float32, len(f.global))
		for j := range g {
			g[j] = 0.8
			if j%2 == 1 {
				g[j] = -0.4
			}
		}
		a := algorithm.FedEBAPlus{EBA: algorithm.EBA{Tau: 0.1}, Alpha: 1, ModelAlignScale: algorithm.AlignScalePaper, AlignUnits: tt.units}
		up := f.train(a, state(algorithm.BroadcastVector, g), fl.State{})
		want := make([]float64, len(g))
		for j := range want {
			want[j] = tt.even
			if j%2 == 1 {
				want[j] = tt.odd
			}
		}
		closeTo(t, fmt.Sprintf("η_L = %v, %s: Δ", tt.eta, tt.units), up.Delta, want, 1e-6)
	}
}
