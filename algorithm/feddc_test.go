package algorithm_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/aggregate"
	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestFedDCWithoutCorrectionIsFedProx checks that FedDC's extra terms
// vanish when they should: with zero drift the anchor θ^t − d_k is θ^t, and
// with last = global_update the linear term (Δθ_k − Δθ)/(η·m) is exactly 0,
// so FedDC with λ trains bit for bit like FedProx with μ = λ. That holds in
// a client's first round (no state, global_update 0) and later.
func TestFedDCWithoutCorrectionIsFedProx(t *testing.T) {
	const lambda = 0.5 // large enough that the proximal term shows
	f := newFixture(t, sgd())
	n := len(f.global)
	g := vec(41, n, 0.05) // σ = 0.05: a global update of the size 5 steps of η = 0.1 make
	tests := []struct {
		name       string
		giveServer fl.State
		giveState  fl.State
	}{
		{"first round", state("mean_update", make([]float32, n)), fl.State{}},
		{"last = global update", state("mean_update", g), state("drift", make([]float32, n), "last", slices.Clone(g))},
	}
	prox, err := algorithm.NewFedProx(fl.Options{"mu": lambda})
	if err != nil {
		t.Fatal(err)
	}
	want := f.train(prox, fl.State{}, fl.State{})
	for _, tt := range tests {
		for _, mode := range []string{algorithm.DriftSelected, algorithm.DriftAll} {
			up := f.train(algorithm.FedDC{Lambda: lambda, DriftMean: mode}, tt.giveServer, tt.giveState)
			if j := firstDiff(up.Weights, want.Weights); j >= 0 {
				t.Errorf("%s, %s: θ_k[%d] = %v; want FedProx(μ = λ)'s %v", tt.name, mode, j, up.Weights[j], want.Weights[j])
			}
		}
	}
}

// TestFedDCClient checks a client's round with nonzero drift d_k, last
// update and global update, against RLU Table 1 / App. A.9 (specs/rlu.md
// §1.7):
//
//   - it trains with CE + λ/2·‖θ − (θ^t − d_k)‖² + ⟨θ, (Δθ_k − Δθ)/(η·m)⟩,
//     η·m = 0.1·5 = 0.5 here;
//   - it keeps d_k⁺ = d_k + (θ_k − θ^t) (Eq. (82)) and last = θ_k − θ^t;
//   - it uploads Δ = (θ_k − θ^t) + d_k⁺ (drift_mean "selected": the paper's
//     θ_k + h_k) or Δ = θ_k − θ^t ("all": the server adds the drifts).
func TestFedDCClient(t *testing.T) {
	tests := []struct {
		name      string
		give      algorithm.FedDC
		wantObj   func(anchor, lin []float32) trainer.Objective
		wantDelta func(step, drift []float32) []float32
	}{
		{"selected", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftSelected}, anchored(0.1), plusDrift},
		{"all", algorithm.FedDC{Lambda: 0.1, DriftMean: algorithm.DriftAll}, anchored(0.1), stepOnly},
		// λ = 0: no proximal term, and no anchor (the trainer refuses one without μ).
		{"lambda 0", algorithm.FedDC{Lambda: 0, DriftMean: algorithm.DriftAll},
			func(_, lin []float32) trainer.Objective { return trainer.Objective{Linear: lin} }, stepOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sgd())
			n := len(f.global)
			// σ = 0.05: drifts and updates of the size 5 steps of η = 0.1 make.
			drift, last, g := vec(42, n, 0.05), vec(43, n, 0.05), vec(44, n, 0.05)
			up := f.train(tt.give, state("mean_update", g), state("drift", drift, "last", last))

			anchor, lin := make([]float32, n), make([]float32, n)
			for j := range n {
				anchor[j] = f.global[j] - drift[j]
				lin[j] = float32((float64(last[j]) - float64(g[j])) / (0.1 * 5))
			}
			w, res := f.reference(tt.wantObj(anchor, lin))
			sameBits(t, "θ_k", up.Weights, w)
			if !reflect.DeepEqual(up.Train, res) {
				t.Errorf("Train = %+v; want %+v", up.Train, res)
			}
			step := algorithm.Delta(w, f.global)
			next := make([]float32, n)
			for j := range n {
				next[j] = drift[j] + step[j]
			}
			sameBits(t, "d_k⁺", vector(t, up.State, "drift", n), next)
			sameBits(t, "last", vector(t, up.State, "last", n), step)
			sameBits(t, "Δ", up.Delta, tt.wantDelta(step, next))
		})
	}
}

// anchored is FedDC's objective with λ > 0.
func anchored(lambda float64) func(anchor, lin []float32) trainer.Objective {
	return func(anchor, lin []float32) trainer.Objective {
		return trainer.Objective{Prox: lambda, Anchor: anchor, Linear: lin}
	}
}

// plusDrift is the upload of drift_mean "selected": (θ_k − θ^t) + d_k⁺.
func plusDrift(step, drift []float32) []float32 {
	d := make([]float32, len(step))
	for j := range d {
		d[j] = step[j] + drift[j]
	}
	return d
}

// stepOnly is the upload of drift_mean "all": θ_k − θ^t.
func stepOnly(step, _ []float32) []float32 { return step }

// quadLocal is a client whose loss is ½(θ_j − a_j)² in every coordinate:
// Train takes Steps of full-gradient descent at Hyper().LR, with the
// objective's terms (Prox toward Anchor, Linear) added to the gradient, in
// float64, so a toy round can be traced by hand.
type quadLocal struct {
	a     []float64
	hp    trainer.Hyper
	ratio float64
}

func (l quadLocal) Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error) {
	var res trainer.TrainResult
	for range l.hp.LocalSteps {
		for j := range w {
			g := float64(w[j]) - l.a[j]
			if obj.Prox != 0 {
				g += obj.Prox * (float64(w[j]) - float64(obj.Anchor[j]))
			}
			if obj.Linear != nil {
				g += float64(obj.Linear[j])
			}
			w[j] = float32(float64(w[j]) - l.hp.LR*g)
		}
		res.Steps++
		res.LRSum += l.hp.LR
		res.MomentumLRSum += l.hp.LR
	}
	return res, nil
}

func (quadLocal) Embed([]float32) ([]float32, error) { return nil, nil }
func (l quadLocal) Hyper() trainer.Hyper             { return l.hp }
func (l quadLocal) Steps() int                       { return l.hp.LocalSteps }
func (quadLocal) Net() *trainer.Net                  { return nil }
func (l quadLocal) SizeRatio() float64               { return l.ratio }

// feddcRound is one traced round of a toy federation: what each client
// kept and uploaded, and the server's θ^{t+1} and memory.
type feddcRound struct {
	theta       float32   // θ^t the clients train from
	sent        float32   // the vector the server sent (Δθ^{prev} or c)
	drift, last []float32 // each client's d_k and Δθ_k (or c_k) after the round
	delta       []float32 // each client's upload Δ_k
	next        float32   // θ^{t+1}
	mean        float32   // the server's memory after the round
}

// runFedDCToy runs FedDC for len(want) rounds on two clients of quadLocal
// with targets a = 2 and −1, both selected every round with ω = ½, and
// checks every traced value exactly.
func runFedDCToy(t *testing.T, alg algorithm.FedDC, sentName, lastName string, want []feddcRound) {
	t.Helper()
	hp := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.5, BatchSize: 1, LocalSteps: 1}
	locals := []quadLocal{{a: []float64{2}, hp: hp, ratio: 1}, {a: []float64{-1}, hp: hp, ratio: 1}}
	sel := fl.Selection{Clients: []int{0, 1}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	server, err := alg.Init(1)
	if err != nil {
		t.Fatal(err)
	}
	theta := []float32{0}
	clients := make([]fl.State, 2)
	for r, w := range want {
		if theta[0] != w.theta {
			t.Fatalf("round %d: θ^t = %v; want %v", r+1, theta[0], w.theta)
		}
		sent := fl.State{}
		for _, name := range alg.Sends() {
			v := vector(t, server, name, 1)
			sent.Set(name, v)
			if name == sentName && v[0] != w.sent {
				t.Errorf("round %d: %s sent = %v; want %v", r+1, name, v[0], w.sent)
			}
		}
		deltas := make([][]float32, 2)
		ups := make([]fl.State, 2)
		for k := range 2 {
			up, err := algorithm.TrainClient(t.Context(), alg, algorithm.Client{Round: r + 1, ID: k, Global: theta, Server: sent, State: clients[k], Local: locals[k]})
			if err != nil {
				t.Fatal(err)
			}
			clients[k], deltas[k], ups[k] = up.State, up.Delta, up.Vectors
			if got := vector(t, up.State, "drift", 1)[0]; got != w.drift[k] {
				t.Errorf("round %d, client %d: d_k = %v; want %v", r+1, k, got, w.drift[k])
			}
			if got := vector(t, up.State, lastName, 1)[0]; got != w.last[k] {
				t.Errorf("round %d, client %d: %s = %v; want %v", r+1, k, lastName, got, w.last[k])
			}
			if up.Delta[0] != w.delta[k] {
				t.Errorf("round %d, client %d: Δ_k = %v; want %v", r+1, k, up.Delta[0], w.delta[k])
			}
		}
		next, s := serve(t, alg, algorithm.Server{Round: r + 1, Global: theta, State: server, Selection: sel,
			Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: 1}, N: 2}, deltas, ups)
		if next[0] != w.next {
			t.Errorf("round %d: θ^{t+1} = %v; want %v", r+1, next[0], w.next)
		}
		if got := vector(t, s, sentName, 1)[0]; got != w.mean {
			t.Errorf("round %d: %s = %v; want %v", r+1, sentName, got, w.mean)
		}
		theta, server = next, s
	}
}

// TestFedDCToyPaper traces the paper's FedDC (drift_mean "selected",
// correction "update") by hand over three rounds: two clients with losses
// ½(θ − 2)² and ½(θ + 1)², λ = ½, one step of η = ½ (η·m = ½), ω = ½ each,
// θ^1 = 0. A client's step from θ^t is θ_k = θ^t − η·[(θ^t − a_k) +
// λ·(θ^t − (θ^t − d_k)) + (last_k − g)/(η·m)], it keeps d_k += θ_k − θ^t and
// last_k = θ_k − θ^t, and uploads (θ_k − θ^t) + d_k; the server averages the
// uploads and keeps g = ½Σ(θ_k − θ^t), the mean local update without the
// drifts. Every value is dyadic, so all are exact.
//
//	round 1: θ = 0, g = 0; no correction, no drift
//	  client 0: θ_0 = 0 − ½(−2) = 1;        step 1,      d 1,       Δ 2
//	  client 1: θ_1 = 0 − ½(1) = −½;        step −½,     d −½,      Δ −1
//	  θ⁺ = ½(2 − 1) = ½;  g = ½(1 − ½) = ¼  (θ⁺ − θ = ½ would hold the drifts)
//	round 2: θ = ½, g = ¼
//	  client 0: v = (1 − ¼)/½ = 1.5, ∇ = (½ − 2) + ½(1) + 1.5 = ½
//	            θ_0 = ½ − ¼ = ¼;            step −¼,     d ¾,       Δ ½
//	  client 1: v = (−½ − ¼)/½ = −1.5, ∇ = 1.5 + ½(−½) − 1.5 = −¼
//	            θ_1 = ½ + ⅛ = ⅝;            step ⅛,      d −⅜,      Δ −¼
//	  θ⁺ = ½ + ½(½ − ¼) = ⅝;  g = ½(−¼ + ⅛) = −1/16
//	round 3: θ = ⅝, g = −1/16
//	  client 0: v = (−¼ + 1/16)/½ = −⅜, ∇ = −11/8 + ½(¾) − ⅜ = −11/8
//	            θ_0 = ⅝ + 11/16 = 21/16;    step 11/16,  d 23/16,   Δ 34/16
//	  client 1: v = (⅛ + 1/16)/½ = ⅜, ∇ = 13/8 + ½(−⅜) + ⅜ = 29/16
//	            θ_1 = ⅝ − 29/32 = −9/32;    step −29/32, d −41/32,  Δ −70/32
//	  θ⁺ = ⅝ + ½(34/16 − 70/32) = 19/32;  g = ½(22/32 − 29/32) = −7/64
func TestFedDCToyPaper(t *testing.T) {
	runFedDCToy(t, algorithm.FedDC{Lambda: 0.5, DriftMean: algorithm.DriftSelected}, "mean_update", "last", []feddcRound{
		{theta: 0, sent: 0, drift: []float32{1, -0.5}, last: []float32{1, -0.5}, delta: []float32{2, -1}, next: 0.5, mean: 0.25},
		{theta: 0.5, sent: 0.25, drift: []float32{0.75, -0.375}, last: []float32{-0.25, 0.125}, delta: []float32{0.5, -0.25}, next: 0.625, mean: -1.0 / 16},
		{theta: 0.625, sent: -1.0 / 16, drift: []float32{23.0 / 16, -41.0 / 32}, last: []float32{11.0 / 16, -29.0 / 32},
			delta: []float32{34.0 / 16, -70.0 / 32}, next: 19.0 / 32, mean: -7.0 / 64},
	})
}

// TestFedDCToyOfficial traces the official code's FedDC (drift_mean "all",
// correction "control_variate") on the same toy by hand over three rounds
// (N = 2, so the mean drift is ½(d_0 + d_1)). A client trains with the
// linear term c − c_k, keeps c_k⁺ = c_k − c − (θ_k − θ^t)/(η·m) and uploads
// θ_k − θ^t and Δc_k = c_k⁺ − c_k; the server sets θ⁺ = θ + ½ΣΔ_k +
// ½(d_0 + d_1) and c⁺ = c + ½ΣΔc_k.
//
//	round 1: θ = 0, c = 0
//	  client 0: θ_0 = 1, step 1, d 1, c_0 = −1/½ = −2, Δc −2
//	  client 1: θ_1 = −½, step −½, d −½, c_1 = 1, Δc 1
//	  θ⁺ = 0 + ½(1 − ½) + ½(1 − ½) = ½;  c⁺ = ½(−2 + 1) = −½
//	round 2: θ = ½, c = −½
//	  client 0: v = −½ + 2 = 1.5, ∇ = −1.5 + ½(1) + 1.5 = ½; θ_0 = ¼, step −¼, d ¾
//	            c_0 = −2 + ½ + ½ = −1, Δc 1
//	  client 1: v = −½ − 1 = −1.5, ∇ = 1.5 + ½(−½) − 1.5 = −¼; θ_1 = ⅝, step ⅛, d −⅜
//	            c_1 = 1 + ½ − ¼ = 1.25, Δc ¼
//	  θ⁺ = ½ + ½(−¼ + ⅛) + ½(¾ − ⅜) = ½ − 1/16 + 3/16 = ⅝;  c⁺ = −½ + ½(1 + ¼) = ⅛
//	round 3: θ = ⅝, c = ⅛
//	  client 0: v = ⅛ + 1 = 9/8, ∇ = −11/8 + ½(¾) + 9/8 = ⅛; θ_0 = 9/16, step −1/16, d 11/16
//	            c_0 = −1 − ⅛ + ⅛ = −1, Δc 0
//	  client 1: v = ⅛ − 5/4 = −9/8, ∇ = 13/8 + ½(−⅜) − 9/8 = 5/16; θ_1 = 15/32, step −5/32, d −17/32
//	            c_1 = 5/4 − ⅛ + 5/16 = 23/16, Δc 3/16
//	  θ⁺ = ⅝ + ½(−1/16 − 5/32) + ½(11/16 − 17/32) = ⅝ − 7/64 + 5/64 = 19/32;  c⁺ = ⅛ + ½(3/16) = 7/32
func TestFedDCToyOfficial(t *testing.T) {
	runFedDCToy(t, algorithm.FedDC{Lambda: 0.5, DriftMean: algorithm.DriftAll, Correction: algorithm.FedDCControlVariate}, "c", "c_i", []feddcRound{
		{theta: 0, sent: 0, drift: []float32{1, -0.5}, last: []float32{-2, 1}, delta: []float32{1, -0.5}, next: 0.5, mean: -0.5},
		{theta: 0.5, sent: -0.5, drift: []float32{0.75, -0.375}, last: []float32{-1, 1.25}, delta: []float32{-0.25, 0.125}, next: 0.625, mean: 0.125},
		{theta: 0.625, sent: 0.125, drift: []float32{11.0 / 16, -17.0 / 32}, last: []float32{-1, 23.0 / 16}, delta: []float32{-1.0 / 16, -5.0 / 32}, next: 19.0 / 32, mean: 7.0 / 32},
	})
}

// TestFedDCServerAll checks the official server's drift sum by hand: N = 4,
// θ = (1, 2), clients 0 and 2 selected with ω = (½, ½), rule θ + Σ ω Δ
// (η_g = 1), uploads Δ_0 = (0.25, 0.5), Δ_2 = (−0.75, 1), drift_sum = (0.5, −1):
//
//	rule:        θ + ½Δ_0 + ½Δ_2 = (0.75, 2.75)
//	drift_sum⁺ = drift_sum + Δ_0 + Δ_2 = (0, 0.5)
//	θ⁺ = rule + drift_sum⁺/N = (0.75, 2.875)
//	mean_update = ½Δ_0 + ½Δ_2 = (−0.25, 0.75): the drifts are not in it
//
// and that a server rate η_g = 2 is divided out of the mean update.
func TestFedDCServerAll(t *testing.T) {
	sel := fl.Selection{Clients: []int{0, 2}, Weights: []float64{0.5, 0.5}, Draws: []int{1, 1}}
	deltas := [][]float32{{0.25, 0.5}, {-0.75, 1}}
	a := algorithm.FedDC{Lambda: 0.01, DriftMean: algorithm.DriftAll}
	s0, err := a.Init(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := s0.Names(); !slices.Equal(got, []string{"drift_sum", "mean_update"}) {
		t.Errorf("Init holds %v; want [drift_sum mean_update]", got)
	}
	if got := a.Sends(); !slices.Equal(got, []string{"mean_update"}) {
		t.Errorf("Sends() = %v; want [mean_update]", got)
	}
	for _, etaG := range []float64{1, 2} {
		r := algorithm.Server{Global: []float32{1, 2}, State: state("mean_update", []float32{9, 9}, "drift_sum", []float32{0.5, -1}),
			Selection: sel, Clients: summaries(sel, nil), Rule: aggregate.WeightedDelta{EtaG: etaG}, N: 4}
		got, s := serve(t, a, r, deltas, nil)
		if etaG == 1 {
			sameBits(t, "θ⁺", got, []float32{0.75, 2.875})
		}
		sameBits(t, "drift_sum", vector(t, s, "drift_sum", 2), []float32{0, 0.5})
		sameBits(t, "mean_update", vector(t, s, "mean_update", 2), []float32{-0.25, 0.75})
	}
}
