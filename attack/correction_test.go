package attack_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flsweep/flsweep/attack"
	"github.com/flsweep/flsweep/trainer"
)

// table1 returns Chen & Vikalo's closed forms of ρ^(τ) (Table 1; App.
// A.4, A.5, A.7) and ours for weight decay, τ = 1..m.
func table1(kind string, m int, eta, gamma, mu float64) []float64 {
	rho := make([]float64, m)
	for tau := 1; tau <= m; tau++ {
		switch kind {
		case "sgd":
			rho[tau-1] = 1
		case "sgdm": // (1 − γ^{m+1−τ})/(1 − γ)
			rho[tau-1] = (1 - math.Pow(gamma, float64(m+1-tau))) / (1 - gamma)
		case "nag": // (1 − γ^{m+2−τ})/(1 − γ)
			rho[tau-1] = (1 - math.Pow(gamma, float64(m+2-tau))) / (1 - gamma)
		case "prox": // (1 − μη)^{m−τ}; FedDyn and FedDC alike, and weight decay (ours)
			rho[tau-1] = math.Pow(1-mu*eta, float64(m-tau))
		}
	}
	return rho
}

func closeAll(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// TestRhoTable1: Rho equals Table 1's closed forms, and their sums are
// m (SGD), (m − γ(1 − γ^m)/(1 − γ))/(1 − γ) (SGDm) and (1 − (1 − λη)^m)/(λη)
// (FedProx).
func TestRhoTable1(t *testing.T) {
	for _, m := range []int{1, 2, 10, 37} {
		eta, gamma, lambda := 0.05, 0.9, 5.0
		tests := []struct {
			name    string
			give    attack.Local
			prox    float64
			want    []float64
			wantSum float64
		}{
			{"sgd", attack.Local{LR: eta, Steps: m}, 0, table1("sgd", m, eta, 0, 0), float64(m)},
			{"sgdm", attack.Local{LR: eta, Steps: m, Momentum: gamma}, 0, table1("sgdm", m, eta, gamma, 0),
				(float64(m) - gamma*(1-math.Pow(gamma, float64(m)))/(1-gamma)) / (1 - gamma)},
			{"sgdm 0.1", attack.Local{LR: eta, Steps: m, Momentum: 0.1}, 0, table1("sgdm", m, eta, 0.1, 0),
				(float64(m) - 0.1*(1-math.Pow(0.1, float64(m)))/0.9) / 0.9},
			{"nag", attack.Local{LR: eta, Steps: m, Momentum: gamma, Nesterov: true}, 0, table1("nag", m, eta, gamma, 0), math.NaN()},
			{"fedprox", attack.Local{LR: eta, Steps: m}, lambda, table1("prox", m, eta, 0, lambda),
				(1 - math.Pow(1-lambda*eta, float64(m))) / (lambda * eta)},
			{"weight decay (ours)", attack.Local{LR: eta, Steps: m, WeightDecay: 0.3}, 0, table1("prox", m, eta, 0, 0.3), math.NaN()},
			{"fedprox + weight decay", attack.Local{LR: eta, Steps: m, WeightDecay: 0.3}, 1, table1("prox", m, eta, 0, 1.3), math.NaN()},
		}
		for _, tt := range tests {
			got := attack.Rho(tt.give, tt.prox)
			if !closeAll(got, tt.want, 1e-12) {
				t.Errorf("m = %d, %s: Rho = %v; want %v", m, tt.name, got, tt.want)
			}
			if s := sum(got); !math.IsNaN(tt.wantSum) && !near(s, tt.wantSum, 1e-10*tt.wantSum) {
				t.Errorf("m = %d, %s: Σρ = %v; want %v", m, tt.name, s, tt.wantSum)
			}
		}
	}
	if got := attack.Rho(attack.Local{Optimizer: trainer.OptimizerAdam, LR: 0.1, Steps: 3}, 0); got != nil {
		t.Errorf("Rho(adam) = %v; want nil (Adam has no step weights)", got)
	}
}

// TestRhoScalarQuadratic simulates PyTorch's SGD (dampening 0) directly on
// the scalar quadratic f(b) = ½k(b − c)², with momentum, Nesterov, FedProx
// and weight decay as torch.optim.SGD and a proximal loss term apply them,
// and checks that the final update is −η Σ_τ ρ^(τ) f'(b^(τ−1)) − h with
// Rho's ρ and History's h: the gradients here depend on the trajectory, so
// only the right weights reproduce the update.
func TestRhoScalarQuadratic(t *testing.T) {
	const k, c = 0.7, 2.0
	const b0 = float32(0.75)
	tests := []struct {
		name string
		give attack.Local
		prox float64
	}{
		{"sgd", attack.Local{LR: 0.1}, 0},
		{"momentum", attack.Local{LR: 0.1, Momentum: 0.9}, 0},
		{"nesterov", attack.Local{LR: 0.1, Momentum: 0.9, Nesterov: true}, 0},
		{"fedprox", attack.Local{LR: 0.05}, 5},
		{"weight decay", attack.Local{LR: 0.1, WeightDecay: 0.2}, 0},
		{"nesterov + fedprox + weight decay", attack.Local{LR: 0.05, Momentum: 0.5, Nesterov: true, WeightDecay: 0.1}, 2},
	}
	for _, tt := range tests {
		for _, m := range []int{1, 5, 10} {
			l := tt.give
			l.Steps, l.Batch = m, 1
			b, buf := float64(b0), 0.0
			var g []float64
			for tau := range m { // torch.optim.SGD.step with the proximal term in the loss
				grad := k * (b - c)
				g = append(g, grad)
				d := grad + tt.prox*(b-float64(b0)) + l.WeightDecay*b
				if l.Momentum > 0 {
					if tau == 0 {
						buf = d
					} else {
						buf = l.Momentum*buf + d
					}
					if l.Nesterov {
						d += l.Momentum * buf
					} else {
						d = buf
					}
				}
				b -= l.LR * d
			}
			rho := attack.Rho(l, tt.prox)
			h := attack.History(attack.Input{Global: []float32{b0}, Local: l, Scheme: attack.Scheme{Prox: tt.prox}}, []int{0})[0]
			pred := -h
			for tau, v := range g {
				pred -= l.LR * rho[tau] * v
			}
			if got := b - float64(b0); !near(got, pred, 1e-12) {
				t.Errorf("%s, m = %d: update %v; −η Σ ρ g − h = %v", tt.name, m, got, pred)
			}
		}
	}
}

// TestHistoryTable1: h of the schemes' history terms equals Table 1's (and
// our) closed forms, on three coordinates.
func TestHistoryTable1(t *testing.T) {
	const m, eta = 7, 0.05
	global := []float32{0.5, -0.25, 1}
	c := []float32{0.1, -0.2, 0.05}
	ci := []float32{-0.3, 0.1, 0.2}
	past := []float32{0.02, -0.04, 0.01} // Σ_{r<t} Δb^(r), the client's own past updates
	drift := []float32{0.03, 0.01, -0.02}
	last := []float32{0.01, -0.02, 0.005}
	lastGlobal := []float32{0.002, 0.001, -0.003}
	idx := []int{0, 1, 2}
	sgd := attack.Local{LR: eta, Steps: m}
	mom := attack.Local{LR: eta, Steps: m, Momentum: 0.5}
	q := func(coef float64) float64 { return 1 - math.Pow(1-coef*eta, m) } // 1 − (1 − coef·η)^m
	tests := []struct {
		name  string
		giveL attack.Local
		giveS attack.Scheme
		want  func(j int) float64
	}{
		{"fedavg", sgd, attack.Scheme{}, func(int) float64 { return 0 }},
		{"fedprox", sgd, attack.FedProx(5), func(int) float64 { return 0 }},
		{"scaffold: η m (c − c_i)", sgd, attack.Scaffold(c, ci), func(j int) float64 { return eta * m * float64(c[j]-ci[j]) }},
		{"scaffold with momentum: η Σρ (c − c_i)", mom, attack.Scaffold(c, ci), func(j int) float64 { return eta * sum(attack.Rho(mom, 0)) * float64(c[j]-ci[j]) }},
		{"scaffold after_step with momentum: η m (c − c_i)", mom, attack.ScaffoldAfterStep(c, ci), func(j int) float64 { return eta * m * float64(c[j]-ci[j]) }},
		{"feddyn", sgd, attack.FedDyn(2, past), func(j int) float64 { return q(2) * float64(past[j]) }},
		{"feddc", sgd, attack.FedDC(3, global, drift, last, lastGlobal, eta*m), func(j int) float64 {
			return q(3)*float64(drift[j]) + q(3)/(3*eta*m)*(float64(last[j])-float64(lastGlobal[j]))
		}},
		{"weight decay (ours)", attack.Local{LR: eta, Steps: m, WeightDecay: 0.4}, attack.Scheme{}, func(j int) float64 { return q(0.4) * float64(global[j]) }},
	}
	for _, tt := range tests {
		got := attack.History(attack.Input{Global: global, Local: tt.giveL, Scheme: tt.giveS}, idx)
		for j := range idx {
			// The constructors store the scheme's terms in float32, FedDC's
			// anchor θ^t − d_k with a rounding of up to 2⁻²⁴·|θ^t|.
			if want := tt.want(j); !near(got[j], want, 1e-7) {
				t.Errorf("%s: h[%d] = %v; want %v", tt.name, j, got[j], want)
			}
		}
	}
}

// TestCorrectionMatchesTrainer runs trainer's local training on a real net
// step by step (full batches, the optimiser state carried between
// one-step calls) and checks, for the output bias, that the update it
// makes is −η Σ_τ ρ^(τ) g^(τ) − h with g^(τ) the cross-entropy gradient at
// each step's weights (Trainer.Gradient): trainer's momentum, Nesterov,
// weight decay, proximal, linear and after-step terms follow the
// conventions Rho and the history assume.
func TestCorrectionMatchesTrainer(t *testing.T) {
	w := newWorld(t, "")
	global := w.trained(t, 1)
	ex := w.draw(31, []int{4, 3, 2, 2, 1, 1, 1, 1, 1, 0}) // 16 samples: every step sees them all
	n := w.net.NumParams()
	r := rand.New(rand.NewPCG(4, 4))
	vec := func(s float64) []float32 {
		v := make([]float32, n)
		for j := range v {
			v[j] = float32(s * r.NormFloat64())
		}
		return v
	}
	past, drift, last, lastGlobal, c, ci := vec(0.01), vec(0.01), vec(0.01), vec(0.01), vec(0.05), vec(0.05)
	const m = 4
	tests := []struct {
		name   string
		giveHp trainer.Hyper
		giveS  attack.Scheme
	}{
		{"momentum", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.9}, attack.Scheme{}},
		{"nesterov + weight decay", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01}, attack.Scheme{}},
		{"fedprox + momentum", trainer.Hyper{Optimizer: "sgd", LR: 0.05, Momentum: 0.5}, attack.FedProx(2)},
		{"feddyn", trainer.Hyper{Optimizer: "sgd", LR: 0.1}, attack.FedDyn(0.5, past)},
		{"feddc", trainer.Hyper{Optimizer: "sgd", LR: 0.1}, attack.FedDC(0.3, global, drift, last, lastGlobal, 0.1*m)},
		{"scaffold + momentum", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.5}, attack.Scaffold(c, ci)},
		{"scaffold after_step + momentum", trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.5}, attack.ScaffoldAfterStep(c, ci)},
	}
	for _, tt := range tests {
		obj := trainer.Objective{Prox: tt.giveS.Prox, Linear: tt.giveS.Linear, AfterStep: tt.giveS.AfterStep, State: &trainer.OptState{}}
		if obj.Prox > 0 {
			obj.Anchor = tt.giveS.Anchor
			if obj.Anchor == nil {
				obj.Anchor = global // the later one-step calls start elsewhere
			}
		}
		hp := tt.giveHp
		hp.BatchSize, hp.LocalSteps = len(ex.Idx), 1
		p := slices.Clone(global)
		var grads [][]float64
		g := make([]float32, n)
		for range m {
			if _, err := w.tr.Gradient(t.Context(), w.net, p, ex, len(ex.Idx), g); err != nil {
				t.Fatal(err)
			}
			grads = append(grads, w.bias(g))
			if _, err := w.tr.TrainObjective(t.Context(), w.net, p, ex, hp, obj, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatal(err)
			}
		}
		// The chained calls are one m-step call.
		once := slices.Clone(global)
		obj.State = nil
		hp.LocalSteps = m
		if _, err := w.tr.TrainObjective(t.Context(), w.net, once, ex, hp, obj, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
			t.Fatal(err)
		}
		got, whole := w.bias(p), w.bias(once)
		start := w.bias(global)
		l := local(t, hp, len(ex.Idx))
		rho := attack.Rho(l, tt.giveS.Prox)
		_, b := w.net.Output()
		idx := make([]int, classes)
		for j := range idx {
			idx[j] = b.Offset + j
		}
		h := attack.History(attack.Input{Net: w.net, Global: global, Local: l, Scheme: tt.giveS}, idx)
		norm := 0.0
		for j := range got {
			norm = math.Max(norm, math.Abs(got[j]-start[j]))
		}
		for j := range got {
			pred := -h[j]
			for tau := range m {
				pred -= l.LR * rho[tau] * grads[tau][j]
			}
			if d := got[j] - start[j]; !near(d, pred, 1e-5*norm) {
				t.Errorf("%s: Δb[%d] = %v; −η Σ ρ g − h = %v", tt.name, j, d, pred)
			}
			if !near(got[j], whole[j], 1e-6*norm) {
				t.Errorf("%s: b[%d] after %d one-step calls %v; after one %d-step call %v", tt.name, j, m, got[j], m, whole[j])
			}
		}
	}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
