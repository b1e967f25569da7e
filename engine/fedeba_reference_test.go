package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/trainer"
)

// An independent re-implementation of FedEBA+ and Prac-FedEBA+ (Wang et
// al., arXiv:2301.12407 v5: Algorithm 1, Eq. (8)–(11); Algorithm 3,
// Eq. (12)), written from the paper for one model whose full-batch loss
// and gradient have a closed form: multinomial logistic regression,
//
//	z_n = W·x_n + b,   F_i(W, b) = (1/n_i) Σ_n [log Σ_c exp(z_{n,c}) − z_{n,y_n}]
//	∇_W F_i = (1/n_i) Σ_n (softmax(z_n) − e_{y_n})·x_nᵀ,   ∇_b F_i = (1/n_i) Σ_n (softmax(z_n) − e_{y_n})
//
// in float64, with every local step full-batch (the batch size exceeds
// every client's data, so the trainer draws nothing and ξ is the whole
// set). It shares with the pipeline only the inputs: the client data, the
// initial model and the clients each round selected (read from the run).
// Nothing of package algorithm is called: the angle is the arccos of
// Algorithm 1 line 7, the weights are the exponentials of Eq. (4) and (10).

// refModel is W (classes × dim, row-major) followed by b, the order of the
// logreg net's parameters out.w, out.b.
type refModel []float64

// refClient is one client's training set.
type refClient struct {
	x   [][]float64
	y   []int
	dim int
	c   int
}

// lossGrad returns F_i(w) and ∇F_i(w).
func (cl refClient) lossGrad(w refModel) (float64, refModel) {
	g := make(refModel, len(w))
	loss := 0.0
	z := make([]float64, cl.c)
	for n, x := range cl.x {
		hi := math.Inf(-1)
		for c := range z {
			s := w[cl.c*cl.dim+c]
			for j, v := range x {
				s += w[c*cl.dim+j] * v
			}
			z[c], hi = s, max(hi, s)
		}
		sum := 0.0
		for _, v := range z {
			sum += math.Exp(v - hi)
		}
		loss += hi + math.Log(sum) - z[cl.y[n]]
		for c, v := range z {
			r := math.Exp(v-hi) / sum
			if c == cl.y[n] {
				r--
			}
			for j, xj := range x {
				g[c*cl.dim+j] += r * xj
			}
			g[cl.c*cl.dim+c] += r
		}
	}
	m := float64(len(cl.x))
	for j := range g {
		g[j] /= m
	}
	return loss / m, g
}

// expWeights returns exp(l_i/τ)/Σ_j exp(l_j/τ) (Eq. (4); Eq. (10)'s p̃).
func expWeights(l []float64, tau float64) []float64 {
	p := make([]float64, len(l))
	sum := 0.0
	for i, v := range l {
		p[i] = math.Exp(v / tau)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// arccosAngle is Algorithm 1 line 7: arccos(⟨L, r⟩/(‖L‖·‖r‖)), r all
// ones, in degrees.
func arccosAngle(l []float64) float64 {
	dot, sq := 0.0, 0.0
	for _, v := range l {
		dot += v
		sq += v * v
	}
	return math.Acos(min(1, dot/(math.Sqrt(sq)*math.Sqrt(float64(len(l)))))) * 180 / math.Pi
}

// refAlg is one method and its options.
type refAlg struct {
	prac       bool
	alpha, tau float64
	theta      float64
	update     bool // g̃ in update units (align_units: update)
}

// round returns θ^{t+1} and whether the round aligned gradients, for the
// selected clients cls, local rate eta, K local steps and server rate 1.
func (a refAlg) round(theta refModel, cls []refClient, eta float64, k int) (refModel, bool) {
	m := len(cls)
	before := make([]float64, m)
	grads := make([]refModel, m)
	for i, cl := range cls {
		before[i], grads[i] = cl.lossGrad(theta)
	}
	aligned := arccosAngle(before) > a.theta
	pt := expWeights(before, a.tau)
	// Algorithm 1 line 8: g̃ = Σ p̃_i ∇F_i(x_t) (FedEBA+'s aligned rounds).
	gt := make(refModel, len(theta))
	if aligned && !a.prac {
		for i := range cls {
			for j, v := range grads[i] {
				gt[j] += pt[i] * v
			}
		}
		if a.update { // one local update: η_L·g̃
			for j := range gt {
				gt[j] *= eta
			}
		}
	}
	after := make([]float64, m)
	delta := make([]refModel, m)
	first := make([]refModel, m)
	meanGrad := make([]refModel, m) // (1/K) Σ_k ∇F_i(x_{t,k}) (Eq. (12))
	for i, cl := range cls {
		x := append(refModel(nil), theta...)
		meanGrad[i] = make(refModel, len(theta))
		for step := range k {
			_, g := cl.lossGrad(x)
			for j := range x {
				meanGrad[i][j] += g[j] / float64(k)
				h := g[j]
				if aligned && !a.prac { // Eq. (11): (1 − α)∇F_i(x_{t,k}; ξ) + α g̃
					h = (1-a.alpha)*g[j] + a.alpha*gt[j]
				}
				x[j] -= eta * h
			}
			if step == 0 {
				first[i] = make(refModel, len(x))
				for j := range x {
					first[i][j] = x[j] - theta[j] // Δ̃^{a,i} = x_{t,1} − x_{t,0}
				}
			}
		}
		after[i], _ = cl.lossGrad(x)
		delta[i] = make(refModel, len(x))
		for j := range x {
			delta[i][j] = x[j] - theta[j]
		}
	}
	p := expWeights(after, a.tau) // Algorithm 1 line 15, Algorithm 3 line 16
	total := 0.0
	for _, cl := range cls {
		total += float64(len(cl.x))
	}
	next := append(refModel(nil), theta...)
	for j := range next {
		d := 0.0
		switch {
		case aligned && a.prac:
			// Algorithm 3 lines 14–16: g̃ = Σ p̃_i (1/K)Σ_k ∇F_i,
			// Δ̂_i = (1 − α)Δ_i − α η_L K g̃, Δ = Σ p_i Δ̂_i.
			g := 0.0
			for i := range cls {
				g += pt[i] * meanGrad[i][j]
			}
			for i := range cls {
				d += p[i] * ((1-a.alpha)*delta[i][j] - a.alpha*eta*float64(k)*g)
			}
		case aligned:
			for i := range cls {
				d += p[i] * delta[i][j]
			}
		default:
			// Eq. (8)–(9) with n_i-weights: (1 − α)Σ p_i Δ_i + α Σ (n_i/Σn) Δ̃_i,
			// Δ̃_i the first step (FedEBA+) or Δ_i/K (Prac-FedEBA+, line
			// 18's x_{t,K−1} read as x_{t,K}).
			for i, cl := range cls {
				tilde := first[i][j]
				if a.prac {
					tilde = delta[i][j] / float64(k)
				}
				d += (1-a.alpha)*p[i]*delta[i][j] + a.alpha*float64(len(cl.x))/total*tilde
			}
		}
		next[j] += d
	}
	return next, aligned
}

// refSpec is logistic regression on the synthetic data (64 inputs, 10
// classes) over 8 Dirichlet clients of about 250 samples; batch 2,000
// exceeds every client's set, so each of the K = 3 steps is full-batch.
// τ = 1 keeps every client's weight away from 0 and 1; lr 0.3 makes the
// two units of g̃ differ by far more than float32 rounding. θ = 180 never
// aligns (the model branch).
const refSpec = `
name: ebaref
dataset: {name: synthetic}
partition: {scheme: dirichlet, clients: 8, alpha: 0.3}
model: {arch: logreg}
train: {lr: 0.3, batch_size: 2000, local_steps: 3}
importance: uniform
rounds: 2
clients_per_round: 4
eval_every: 1
checkpoint_every: 1
seeds: [5]
grid:
  algorithm:
    - {name: fedeba+, alpha: 0.9, tau: 1, theta: 0}
    - {name: fedeba+, alpha: 0.9, tau: 1, theta: 0, align_units: update}
    - {name: fedeba+, alpha: 0.5, tau: 1, theta: 180}
    - {name: prac-fedeba+, alpha: 0.5, tau: 1, theta: 0}
    - {name: prac-fedeba+, alpha: 0.5, tau: 1, theta: 180}
`

// TestFedEBAReference: the pipeline's θ^1 and θ^2 (FedEBA+ under both
// units of g̃ and in its model branch, Prac-FedEBA+ in both branches)
// agree with the re-implementation to 1e-6 per parameter (float32 against
// float64, over parameters of order 0.1–1; the runs agree to 4e-8), each reference round starting
// from the reference's own θ^t. In FedEBA+'s aligned rounds the other
// reading of g̃'s units, from the same θ^t and clients, is more than 100×
// that far (the test would catch one computed as the other).
func TestFedEBAReference(t *testing.T) {
	const tol = 1e-6
	e, plan, snap := runSpec(t, refSpec, nil)
	cases := []struct {
		label []string
		alg   refAlg
	}{
		{[]string{"fedeba+(alpha=0.9,tau=1,theta=0)"}, refAlg{alpha: 0.9, tau: 1}},
		{[]string{"align_units=update"}, refAlg{alpha: 0.9, tau: 1, update: true}},
		{[]string{"fedeba+(alpha=0.5,tau=1,theta=180)"}, refAlg{alpha: 0.5, tau: 1, theta: 180}},
		{[]string{"prac-fedeba+(alpha=0.5,tau=1,theta=0)"}, refAlg{prac: true, alpha: 0.5, tau: 1}},
		{[]string{"prac-fedeba+(alpha=0.5,tau=1,theta=180)"}, refAlg{prac: true, alpha: 0.5, tau: 1, theta: 180}},
	}
	for _, tc := range cases {
		point := pointByLabel(t, plan, tc.label...)
		env, err := e.env(t.Context(), steps.PointRef{Sweep: plan.Name, Point: point})
		if err != nil {
			t.Fatal(err)
		}
		params := env.net.Params()
		if env.net.Spec().Arch != trainer.ArchLogReg || len(params) != 2 || params[0].Name != "out.w" || params[1].Offset != params[0].Len {
			t.Fatalf("want logreg's out.w then out.b; the net has %+v", params)
		}
		classes, dim := params[0].Shape[0], params[0].Shape[1]
		clients := func(r int) []refClient {
			var out []refClient
			for _, c := range snap.Clients {
				if c.Point != point || int(c.Round) != r || !c.Selected {
					continue
				}
				ex := env.examples(int(c.Client))
				cl := refClient{dim: dim, c: classes}
				for _, i := range ex.Idx {
					x := make([]float64, dim)
					for j := range x {
						x[j] = float64(ex.X[i*dim+j])
					}
					cl.x, cl.y = append(cl.x, x), append(cl.y, int(ex.Y[i]))
				}
				if len(cl.x) > env.hyper.BatchSize {
					t.Fatalf("client %d has %d samples > batch %d: its steps would not be full-batch", c.Client, len(cl.x), env.hyper.BatchSize)
				}
				out = append(out, cl)
			}
			return out
		}
		w0 := finalModel(t, e, plan.Name, point, 0)
		theta := make(refModel, len(w0))
		for j, v := range w0 {
			theta[j] = float64(v)
		}
		branches := map[bool]int{}
		for r := 1; r <= 2; r++ {
			cls := clients(r)
			if len(cls) != 4 {
				t.Fatalf("%v round %d: %d selected clients; want 4", tc.label, r, len(cls))
			}
			// The other reading of g̃'s units from the same θ^t: the
			// pipeline must be far from it (FedEBA+'s aligned rounds).
			other := tc.alg
			other.update = !other.update
			wrong, _ := other.round(theta, cls, env.hyper.LR, env.hyper.LocalSteps)
			var aligned bool
			theta, aligned = tc.alg.round(theta, cls, env.hyper.LR, env.hyper.LocalSteps)
			branches[aligned]++
			for _, row := range snap.Rounds {
				if row.Point == point && int(row.Round) == r && (row.Aligned == nil || *row.Aligned != aligned) {
					t.Errorf("%v round %d: the pipeline's aligned = %v; the reference's %v", tc.label, r, row.Aligned, aligned)
				}
			}
			got := finalModel(t, e, plan.Name, point, r)
			worst, at := 0.0, 0
			for j, v := range got {
				if d := math.Abs(float64(v) - theta[j]); d > worst || math.IsNaN(d) {
					worst, at = d, j
				}
			}
			t.Logf("%s round %d: max |θ_ours − θ_ref| = %.3g (parameter %d of %d)", strings.Join(tc.label, " "), r, worst, at, len(got))
			if !(worst <= tol) {
				t.Errorf("%v round %d: θ[%d] = %v; the reference has %v (|diff| %.3g > %g)", tc.label, r, at, got[at], theta[at], worst, tol)
			}
			if aligned && !tc.alg.prac {
				sep := 0.0
				for j, v := range got {
					sep = max(sep, math.Abs(float64(v)-wrong[j]))
				}
				t.Logf("%s round %d: the other units' θ^{t+1} is %.3g away", strings.Join(tc.label, " "), r, sep)
				if !(sep > 100*tol) {
					t.Errorf("%v round %d: the pipeline is within %.3g of the other units' θ^{t+1}; the test cannot tell them apart", tc.label, r, sep)
				}
			}
		}
		if branches[tc.alg.theta == 0] != 2 {
			t.Errorf("%v: branches %v; want every round aligned iff θ = 0", tc.label, branches)
		}
	}
}
