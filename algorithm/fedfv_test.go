package algorithm_test

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
)

// fv builds FedFV from opts.
func fv(t *testing.T, opts fl.Options) algorithm.Algorithm {
	t.Helper()
	a, err := algorithm.NewFedFV(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fvServer returns round's algorithm.Server for the clients (ascending)
// with losses F_i(θ^t).
func fvServer(round int, global []float32, state fl.State, clients []int, loss []float64) algorithm.Server {
	sel := fl.Selection{Clients: clients, Weights: make([]float64, len(clients)), Draws: make([]int, len(clients))}
	sums := make([]fl.ClientSummary, len(clients))
	for i, k := range clients {
		sel.Weights[i], sel.Draws[i] = 1/float64(len(clients)), 1
		sums[i] = fl.ClientSummary{Client: k, NumExamples: 10, LossBefore: &loss[i]}
	}
	return algorithm.Server{Round: round, Global: global, State: state, Selection: sel, Clients: sums, N: 10}
}

// fvRound runs FedFV's server for one round whose clients uploaded the
// pseudo-gradients g_i = θ^t − θ_i (Δ_i = −g_i).
func fvRound(t *testing.T, a algorithm.Algorithm, round int, global []float32, state fl.State, clients []int, loss []float64, g [][]float32) ([]float32, fl.State) {
	t.Helper()
	deltas := make([][]float32, len(g))
	for i, gi := range g {
		deltas[i] = make([]float32, len(gi))
		for j, v := range gi {
			deltas[i][j] = -v
		}
	}
	return serve(t, a, fvServer(round, global, state, clients, loss), deltas, nil)
}

// seenOf returns the remembered rounds of a FedFV state, by client,
// checking that each has its vector "g/<client>".
func seenOf(t *testing.T, s fl.State, n int) map[int]int {
	t.Helper()
	var m struct {
		Seen map[int]int `json:"seen"`
	}
	if err := s.DecodeMeta(&m); err != nil {
		t.Fatal(err)
	}
	if len(m.Seen) != len(s.Vectors) {
		t.Errorf("state remembers %d rounds for %d vectors", len(m.Seen), len(s.Vectors))
	}
	for c := range m.Seen {
		vector(t, s, "g/"+strconv.Itoa(c), n)
	}
	if m.Seen == nil {
		m.Seen = map[int]int{}
	}
	return m.Seen
}

// TestFedFVInternal checks steps 1 and 2 of fedfv.go on hand-built
// updates: a conflicting pair is made orthogonal, the highest-loss clients
// are left untouched, α = 1 keeps everyone (the plain mean), α = 0 projects
// everyone, equal losses are ordered by client, and the code's count of
// kept clients is used.
func TestFedFVInternal(t *testing.T) {
	pair := [][]float32{{1, 0}, {-1, 1}} // g_a·g_b = −1
	// In 3-D, g_3 conflicts with g_1 and g_2 (g_1·g_3 = g_2·g_3 = −1),
	// which do not conflict with each other. Keeping g_3 (the highest
	// loss), g_1' = g_1 + g_3/3 = (2/3, −1/3, 1/3) and g_2' = g_2 + g_3/3
	// = (−1/3, 2/3, 1/3), both orthogonal to g_3, and
	// g = (g_1' + g_2' + g_3)/3 = (−2/9, −2/9, 5/9).
	three := [][]float32{{1, 0, 0}, {0, 1, 0}, {-1, -1, 1}}
	tests := []struct {
		name  string
		alpha float64
		loss  []float64
		g     [][]float32
		want  []float64
	}{
		// b kept; g_a' = g_a − (−1/2)·g_b = (0.5, 0.5) ⟂ g_b; g = (g_a' + g_b)/2.
		{"pair, b's loss higher: b kept", 0.1, []float64{0.5, 1}, pair, []float64{-0.25, 0.75}},
		{"pair, α = 1: the plain mean", 1, []float64{0.5, 1}, pair, []float64{0, 0.5}},
		// g_b' = g_b − (−1/1)·g_a = (0, 1) as well.
		{"pair, α = 0: both projected", 0, []float64{0.5, 1}, pair, []float64{0.25, 0.75}},
		// a kept; g_b' = (0, 1); g = ((1, 0) + (0, 1))/2.
		{"pair, a's loss higher: a kept", 0.1, []float64{1, 0.5}, pair, []float64{0.5, 0.5}},
		{"pair, equal losses: the higher client ID kept", 0.1, []float64{0.7, 0.7}, pair, []float64{-0.25, 0.75}},
		{"3-D, α = 0.1: one kept", 0.1, []float64{0.1, 0.2, 0.3}, three, []float64{-2.0 / 9, -2.0 / 9, 5.0 / 9}},
		// ⌈(3−1)(1−0.4)⌉ = 2: one client kept (⌈αm⌉ would keep 2 and give (−1/9, −1/9, 4/9)).
		{"3-D, α = 0.4: the code's count keeps one", 0.4, []float64{0.1, 0.2, 0.3}, three, []float64{-2.0 / 9, -2.0 / 9, 5.0 / 9}},
		// Each is projected away from the other: g_a' = g_b' = 0.
		{"opposite updates cancel", 0, []float64{0.1, 0.2}, [][]float32{{1, 0}, {-1, 0}}, []float64{0, 0}},
	}
	for _, tt := range tests {
		got := algorithm.FedFVInternal(tt.alpha, tt.loss, tt.g)
		for j := range tt.want {
			if math.Abs(got[j]-tt.want[j]) > 1e-15 {
				t.Errorf("%s: g = %v; want %v", tt.name, got, tt.want)
				break
			}
		}
	}
	// The projected g_a' = 2g − g_b of the first case is orthogonal to g_b.
	g := algorithm.FedFVInternal(0.1, []float64{0.5, 1}, pair)
	if d := (2*g[0]-float64(pair[1][0]))*float64(pair[1][0]) + (2*g[1]-float64(pair[1][1]))*float64(pair[1][1]); d != 0 {
		t.Errorf("g_a'·g_b = %v; want 0", d)
	}
}

// TestFedFVServerStep checks the whole server step with τ = 0 (no external
// projection): θ^{t+1} = θ^t − g, g rescaled to ‖mean_i g_i‖; with α = 1 it
// is the plain mean of the updates (θ^t + mean Δ_i); when the projections
// cancel, θ does not move; the state keeps nothing.
func TestFedFVServerStep(t *testing.T) {
	global := []float32{1, 2}
	pair := [][]float32{{1, 0}, {-1, 1}}
	scale := 0.5 / math.Sqrt(0.625) // ‖mean g_i‖ = ‖(0, 0.5)‖ over ‖(−0.25, 0.75)‖
	tests := []struct {
		name  string
		alpha float64
		g     [][]float32
		want  []float64
	}{
		{"b kept, rescaled", 0.1, pair, []float64{1 + 0.25*scale, 2 - 0.75*scale}},
		{"α = 1: θ + mean Δ", 1, pair, []float64{1, 1.5}},
		{"cancelling updates: no step", 0, [][]float32{{1, 0}, {-1, 0}}, []float64{1, 2}},
	}
	for _, tt := range tests {
		a := fv(t, fl.Options{"alpha": tt.alpha, "tau": 0})
		got, s := fvRound(t, a, 5, global, fl.State{}, []int{3, 7}, []float64{0.5, 1}, tt.g)
		closeTo(t, tt.name+": θ^{t+1}", got, tt.want, 1e-6)
		if !s.Empty() {
			t.Errorf("%s: τ = 0 kept state %v; want none", tt.name, s)
		}
	}
}

// TestFedFVExternal checks step 3 on a two-round 3-D example. Round 1:
// clients 0 and 1 upload g_0 = (1, 0, 0) and g_1 = (0, 1, 0), which do not
// conflict: θ^1 = θ^0 − (0.5, 0.5, 0). Round 2: client 2 alone uploads
// g_2 = (−1, 0, 1), which conflicts with g_0 only; when round 1 is in the
// window, g = g_2 + g_0 = (0, 0, 1), rescaled to ‖g_2‖ = √2; otherwise
// g = g_2. The state after each round keeps the updates later windows read.
func TestFedFVExternal(t *testing.T) {
	theta0 := []float32{0, 0, 0}
	round1 := []float64{-0.5, -0.5, 0}
	tests := []struct {
		name     string
		opts     fl.Options
		want2    []float64     // θ^2
		wantSeen []map[int]int // after rounds 1 and 2
	}{
		// Window t−τ … t−1: round 2 reads round 1.
		{"previous, τ = 1", fl.Options{"tau": 1}, []float64{-0.5, -0.5, -math.Sqrt2},
			[]map[int]int{{0: 1, 1: 1}, {2: 2}}},
		// Round 2's window is rounds 0 … 1: round 0 does not exist, so no step.
		{"previous, τ = 2", fl.Options{"tau": 2}, []float64{0.5, -0.5, -1},
			[]map[int]int{{0: 1, 1: 1}, {0: 1, 1: 1, 2: 2}}},
		// Window t−τ+1 … t: round 2 reads only itself, and g_2 does not conflict with g_2.
		{"current, τ = 1", fl.Options{"tau": 1, "external": "current"}, []float64{0.5, -0.5, -1},
			[]map[int]int{{}, {}}},
		{"current, τ = 2", fl.Options{"tau": 2, "external": "current"}, []float64{-0.5, -0.5, -math.Sqrt2},
			[]map[int]int{{0: 1, 1: 1}, {2: 2}}},
	}
	for _, tt := range tests {
		a := fv(t, tt.opts)
		theta1, s1 := fvRound(t, a, 1, theta0, fl.State{}, []int{0, 1}, []float64{0.1, 0.2}, [][]float32{{1, 0, 0}, {0, 1, 0}})
		closeTo(t, tt.name+": θ^1", theta1, round1, 1e-7)
		theta2, s2 := fvRound(t, a, 2, theta1, s1, []int{2}, []float64{0.3}, [][]float32{{-1, 0, 1}})
		closeTo(t, tt.name+": θ^2", theta2, tt.want2, 1e-6)
		for i, s := range []fl.State{s1, s2} {
			if got := seenOf(t, s, 3); !maps.Equal(got, tt.wantSeen[i]) {
				t.Errorf("%s: state after round %d remembers %v; want %v", tt.name, i+1, got, tt.wantSeen[i])
			}
		}
		if _, ok := s2.Vectors["g/2"]; ok {
			sameBits(t, tt.name+": remembered g_2", s2.Vectors["g/2"], []float32{-1, 0, 1})
		}
	}
}

// TestFedFVExternalOwnClients: with external "current" the window's newest
// round is this one, so g is projected against this round's own
// (unprojected) updates. With α = 1, g_a = (1, 0) and g_b = (−3, 0.1),
// g = mean = (−1, 0.05) conflicts with g_a and becomes (0, 0.05), rescaled
// to ‖mean‖. "previous" with τ = 1 has no round 0 to read in round 1.
func TestFedFVExternalOwnClients(t *testing.T) {
	g := [][]float32{{1, 0}, {-3, 0.1}}
	mean := math.Hypot(-1, 0.05)
	for _, tt := range []struct {
		external string
		want     []float64
	}{
		{"current", []float64{0, -mean}},
		{"previous", []float64{1, -0.05}},
	} {
		a := fv(t, fl.Options{"alpha": 1, "tau": 1, "external": tt.external})
		got, _ := fvRound(t, a, 1, []float32{0, 0}, fl.State{}, []int{0, 1}, []float64{0.1, 0.2}, g)
		closeTo(t, tt.external+": θ^1", got, tt.want, 1e-6)
	}
}

// TestFedFVHistoryPruning checks which updates the state keeps: after
// round t, each client's last update, if seen in round t−τ+1 or later
// ("previous": round t+1 reads t+1−τ … t) or t−τ+2 or later ("current":
// t−τ+2 … t+1, and round t+1's own updates arrive with it), bit for bit.
func TestFedFVHistoryPruning(t *testing.T) {
	selections := [][]int{{0, 1}, {2}, {0, 3}, {4}, {1}, {2, 3}}
	// After round 6 with τ = 2: the last rounds are 0: 3, 1: 5, 2: 6, 3: 6, 4: 4.
	final := map[string]map[int]int{"previous": {1: 5, 2: 6, 3: 6}, "current": {2: 6, 3: 6}}
	for _, external := range []string{"previous", "current"} {
		for _, tau := range []int{1, 2, 3} {
			a := fv(t, fl.Options{"tau": tau, "external": external})
			theta := make([]float32, 4)
			var s fl.State
			last, lastG := map[int]int{}, map[int][]float32{}
			for i, clients := range selections {
				r := i + 1
				g := make([][]float32, len(clients))
				loss := make([]float64, len(clients))
				for j, k := range clients {
					g[j] = vec(uint64(10*r+k), 4, 1)
					loss[j] = float64(k)
					last[k], lastG[k] = r, g[j]
				}
				theta, s = fvRound(t, a, r, theta, s, clients, loss, g)
				from := r - tau + 1
				if external == "current" {
					from++
				}
				want := map[int]int{}
				for k, v := range last {
					if v >= from {
						want[k] = v
					}
				}
				got := seenOf(t, s, 4)
				if !maps.Equal(got, want) {
					t.Errorf("%s τ = %d, after round %d: remembers %v; want %v", external, tau, r, got, want)
				}
				for k := range got {
					sameBits(t, "remembered g of client "+strconv.Itoa(k), s.Vectors["g/"+strconv.Itoa(k)], lastG[k])
				}
				if tau == 2 && r == len(selections) && !maps.Equal(got, final[external]) {
					t.Errorf("%s τ = 2, after round 6: remembers %v; want %v", external, got, final[external])
				}
			}
		}
	}
}

// easyFLFedFV is a direct transcription of FedFV's server loop in the
// authors' easyFL (Server.iterate), over float64 vectors, with the model
// stored as float32 after each round as the engine stores it. Paper is the
// version released with the paper (May 2021): rounds counted from 0 and
// the external loop k = τ … 1; otherwise FLGo's: rounds from 1 and
// k = τ−1 … 0. Both record this round's updates in the history first.
type easyFLFedFV struct {
	alpha   float64
	tau     int
	paper   bool
	last    []int       // client_last_sample_round, −1 before a client's first round
	history [][]float64 // client_grads_history
}

func (e *easyFLFedFV) iterate(round int, model []float32, clients []int, losses []float64, grads [][]float64) []float32 {
	t := round // current_round
	if e.paper {
		t = round - 1
	}
	for i, cid := range clients {
		e.history[cid], e.last[cid] = grads[i], t
	}
	orderGrads := make([][]float64, len(grads))
	for i := range grads {
		orderGrads[i] = slices.Clone(grads[i])
	}
	order := make([]int, len(grads))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(losses[x], losses[y]) })
	var keepOriginal []int
	if e.alpha > 0 {
		keepOriginal = order[int(math.Ceil(float64(len(order)-1)*(1-e.alpha))):]
	}
	for i := range orderGrads {
		if slices.Contains(keepOriginal, i) {
			continue
		}
		for _, j := range order {
			if j == i {
				continue
			}
			dot := dotF(grads[j], orderGrads[i])
			if dot < 0 {
				n := math.Sqrt(dotF(grads[j], grads[j]))
				for x := range orderGrads[i] {
					orderGrads[i][x] -= grads[j][x] * dot / (n * n)
				}
			}
		}
	}
	gt := average(orderGrads)
	if t >= e.tau {
		var ks []int
		for k := range e.tau {
			if e.paper {
				ks = append(ks, e.tau-k)
			} else {
				ks = append(ks, e.tau-1-k)
			}
		}
		for _, k := range ks {
			var gcs [][]float64
			for cid := range e.last {
				if e.last[cid] == t-k && dotF(gt, e.history[cid]) < 0 {
					gcs = append(gcs, e.history[cid])
				}
			}
			if len(gcs) > 0 {
				gcon := make([]float64, len(gt))
				for _, g := range gcs {
					for x, v := range g {
						gcon[x] += v
					}
				}
				dot := dotF(gt, gcon)
				if dot < 0 {
					n := math.Sqrt(dotF(gcon, gcon))
					for x := range gt {
						gt[x] -= gcon[x] * dot / (n * n)
					}
				}
			}
		}
	}
	gnorm := math.Sqrt(dotF(average(grads), average(grads)))
	gtNorm := math.Sqrt(dotF(gt, gt))
	out := make([]float32, len(model))
	for x := range out {
		out[x] = float32(float64(model[x]) - gt[x]/gtNorm*gnorm)
	}
	return out
}

func dotF(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func average(vs [][]float64) []float64 {
	out := make([]float64, len(vs[0]))
	for _, v := range vs {
		for i, x := range v {
			out[i] += x / float64(len(vs))
		}
	}
	return out
}

// TestFedFVMatchesEasyFL runs FedFV and the transcription of easyFL's loop
// side by side for 12 rounds of random updates (8 clients, 4 a round, 7
// parameters, so most pairs conflict) and compares the models after every
// round: "previous" is the version released with the paper, "current"
// FLGo's. The transcription keeps every client's history; FedFV keeps only
// what later windows read, so equal models also check the pruning.
func TestFedFVMatchesEasyFL(t *testing.T) {
	for _, tt := range []struct {
		alpha    float64
		tau      int
		external string
	}{
		{0.25, 3, "previous"}, {0.25, 3, "current"}, {0, 1, "previous"}, {0, 1, "current"},
		{0.5, 0, "previous"}, {1, 2, "current"}, {0.1, 10, "previous"},
	} {
		r := rand.New(rand.NewPCG(uint64(tt.tau), uint64(100*tt.alpha)))
		remembered := matchEasyFL(t, r, 8, 4, 7, 12, tt.alpha, tt.tau, tt.external)
		if tt.tau > 1 && !remembered {
			t.Errorf("α = %v τ = %d %s: the state never remembered an update; the test is vacuous", tt.alpha, tt.tau, tt.external)
		}
	}
}

// matchEasyFL runs FedFV (α, τ, external) and the transcription of
// easyFL's loop side by side for rounds rounds of random updates (m of n
// clients a round, dim parameters, drawn from r), fails on the first model
// that differs, and reports whether the state ever remembered an update.
func matchEasyFL(t *testing.T, r *rand.Rand, n, m, dim, rounds int, alpha float64, tau int, external string) (remembered bool) {
	t.Helper()
	a := fv(t, fl.Options{"alpha": alpha, "tau": tau, "external": external})
	ref := &easyFLFedFV{alpha: alpha, tau: tau, paper: external == "previous", last: make([]int, n), history: make([][]float64, n)}
	for i := range ref.last {
		ref.last[i] = -1
	}
	theta := make([]float32, dim)
	want := slices.Clone(theta)
	var s fl.State
	for round := 1; round <= rounds; round++ {
		clients := r.Perm(n)[:m]
		slices.Sort(clients)
		g32, g64, loss := make([][]float32, m), make([][]float64, m), make([]float64, m)
		for i := range clients {
			g32[i] = vec(r.Uint64(), dim, 1)
			g64[i] = make([]float64, dim)
			for j, v := range g32[i] {
				g64[i][j] = float64(v)
			}
			loss[i] = r.Float64()
		}
		theta, s = fvRound(t, a, round, theta, s, clients, loss, g32)
		want = ref.iterate(round, want, clients, loss, g64)
		for j := range want {
			if d := math.Abs(float64(theta[j]) - float64(want[j])); d > 1e-6*(1+math.Abs(float64(want[j]))) {
				t.Fatalf("m = %d α = %v τ = %d %s round %d: θ[%d] = %v; easyFL's loop gives %v", m, alpha, tau, external, round, j, theta[j], want[j])
			}
		}
		remembered = remembered || len(s.Vectors) > 0
	}
	return remembered
}

// TestFedFVGramForm: the Gram form of the internal projections gives the
// direct form's g within 1e-10 of ‖g‖ (the stated tolerance; measured
// at most 2e-16 of ‖g‖ here) for updates where about half the pairs
// conflict (dimension below, at and above m, random losses, α from none
// to all kept), and it projects: with every pair conflicting the result is
// not the plain mean.
func TestFedFVGramForm(t *testing.T) {
	for _, tt := range []struct {
		m, dim int
		alpha  float64
	}{
		{5, 3, 0.1}, {40, 20, 0.1}, {40, 40, 0}, {64, 500, 0.25}, {33, 2000, 1}, {100, 80, 0.5},
	} {
		r := rand.New(rand.NewPCG(uint64(tt.m), uint64(tt.dim)))
		g, loss := make([][]float32, tt.m), make([]float64, tt.m)
		for i := range g {
			g[i] = vec(r.Uint64(), tt.dim, 1)
			loss[i] = math.Round(4*r.Float64()) / 4 // ties, ordered by client
		}
		direct, gram := algorithm.FedFVInternalForm("direct", tt.alpha, loss, g), algorithm.FedFVInternalForm("gram", tt.alpha, loss, g)
		norm, worst := 0.0, 0.0
		for j := range direct {
			norm += direct[j] * direct[j]
			worst = max(worst, math.Abs(gram[j]-direct[j]))
		}
		norm = math.Sqrt(norm)
		if worst > 1e-10*norm {
			t.Errorf("m = %d dim = %d α = %v: the Gram form differs from the direct form by %.3g (‖g‖ = %.3g)", tt.m, tt.dim, tt.alpha, worst, norm)
		}
		mean := make([]float64, tt.dim)
		for _, gi := range g {
			for j, v := range gi {
				mean[j] += float64(v) / float64(tt.m)
			}
		}
		moved := 0.0
		for j := range mean {
			moved = max(moved, math.Abs(gram[j]-mean[j]))
		}
		if tt.alpha < 1 && moved < 1e-6 {
			t.Errorf("m = %d dim = %d α = %v: the Gram form returned the plain mean; nothing was projected", tt.m, tt.dim, tt.alpha)
		}
		if tt.alpha == 1 && moved > 1e-12 {
			t.Errorf("m = %d dim = %d: with every client kept the Gram form moved the mean by %.3g", tt.m, tt.dim, moved)
		}
	}
}

// TestFedFVMatchesEasyFLGram is TestFedFVMatchesEasyFL with rounds of
// FedFVGramFrom clients and more, which take the Gram form.
func TestFedFVMatchesEasyFLGram(t *testing.T) {
	for _, tt := range []struct {
		m        int
		alpha    float64
		tau      int
		external string
	}{
		{algorithm.FedFVGramFrom, 0.1, 2, "previous"}, {45, 0.25, 3, "current"}, {60, 0, 1, "previous"},
	} {
		matchEasyFL(t, rand.New(rand.NewPCG(uint64(tt.m), uint64(tt.tau))), 90, tt.m, 25, 6, tt.alpha, tt.tau, tt.external)
	}
}

// TestFedFVServerRejects: a client without its loss before training, and a
// state whose metadata and vectors disagree, are ErrInvalid.
func TestFedFVServerRejects(t *testing.T) {
	a := fv(t, nil)
	global := []float32{0, 0}
	r := fvServer(2, global, fl.State{}, []int{0, 1}, []float64{0.1, 0.2})
	r.Clients[1].LossBefore = nil
	_, err := a.Begin(r)
	wantInvalid(t, "Begin without a loss", err, "client 1", "loss before training")

	meta, _ := json.Marshal(map[string]map[int]int{"seen": {3: 1}})
	for name, s := range map[string]fl.State{
		"meta without its vector": {Meta: meta, Vectors: map[string][]float32{"g/4": {1, 2}}},
		"vector without meta":     {Vectors: map[string][]float32{"g/3": {1, 2}}},
		"vector of another model": {Meta: meta, Vectors: map[string][]float32{"g/3": {1, 2, 3}}},
	} {
		_, err := a.Begin(fvServer(2, global, s, []int{0, 1}, []float64{0.1, 0.2}))
		wantInvalid(t, name, err)
	}
}

// BenchmarkFedFVInternal: the internal projections of 100 clients' updates
// of the cross-device MLP (54,410 parameters), directly and in the Gram
// form.
func BenchmarkFedFVInternal(b *testing.B) {
	const m, dim = 100, 54410
	r := rand.New(rand.NewPCG(1, 2))
	g, loss := make([][]float32, m), make([]float64, m)
	for i := range g {
		g[i] = vec(r.Uint64(), dim, 1)
		loss[i] = r.Float64()
	}
	for _, form := range []string{"direct", "gram"} {
		b.Run(form, func(b *testing.B) {
			for b.Loop() {
				algorithm.FedFVInternalForm(form, 0.1, loss, g)
			}
		})
	}
}
