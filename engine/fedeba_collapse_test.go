package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// TestFedEBACollapseStep measures why FedEBA+ with Table 1's α = 0.9,
// τ = 0.1, θ = 0 does not train as Eq. (10)–(11) are written
// (experiments/fedeba/README.md, "The units of g̃"). In an aligned round
// every local step carries α·g̃, g̃ = Σ p̃_i ∇F_i(x_t) fixed for the
// round, so the round moves s = α·η_L·K along −g̃ (0.9 at η_L = 0.1,
// K = 10) without re-evaluating it; align_units: update moves
// α·η_L²·K = 0.09. Gradient descent on a quadratic along a fixed direction
// d is stable for steps below 2/(dᵀHd/‖d‖²) ≥ 2/λ_max. At the model of 50
// rounds of FedAvg (the experiment's setting: Fashion-MNIST shards, 100
// clients, 10 per round, K = 10 steps of 50 at η_L = 0.1) and the round-50
// clients, it measures, for the loss g̃ descends, F̃ = Σ p̃_i F_i:
// λ_max (power iteration on central-difference Hessian-vector products of
// full-batch gradients, ε = 1e-3, 30 iterations, shifted when the
// dominant eigenvalue is negative), the curvature along g̃,
// and F̃(x_t − s·g̃) at s = 0.09 and 0.9. It needs the fetched data
// ($FLSWEEP_DATA_DIR/fmnist, or the main checkout's .data/datasets), skips
// without it and in -short; about a minute per seed. Its FedAvg runs key
// their streams by the point (streams: point), as the sweeps of
// experiments/fedeba/README.md's table did.
func TestFedEBACollapseStep(t *testing.T) {
	dir := fmnistDir(t)
	if testing.Short() {
		t.Skip("trains 50 rounds of FedAvg on Fashion-MNIST; not in -short")
	}
	const spec = `
name: collapse
dataset: {name: fmnist}
partition: {scheme: shards, clients: 100, shards_per_client: 2, test: holdout, test_fraction: 0.2}
model: {arch: mlp, hidden: [200, 200]}
train: {optimizer: sgd, lr: 0.1, batch_size: 50, local_steps: 10}
rounds: 50
clients_per_round: 10
importance: uniform
eval_every: 50
checkpoint_every: 50
metrics: {global_train_loss: false}
streams: point
seeds: [1, 2, 3]
`
	ctx := context.Background()
	e := New(store.New(memblob.OpenBucket(nil)), &Options{Workers: 2, DataDir: dir})
	plan, snap := runOn(t, e, spec)
	const alpha, eta, k = 0.9, 0.1, 10
	for _, p := range plan.Points {
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		x := finalModel(t, e, plan.Name, p.ID, 50)
		var sel []int
		for _, c := range snap.Clients {
			if c.Point == p.ID && c.Round == 50 && c.Selected {
				sel = append(sel, int(c.Client))
			}
		}
		n := len(x)
		// grad returns Σ_i w_i ∇F_i(y) and Σ_i w_i F_i(y) over sel.
		grad := func(y []float32, w []float64) ([]float64, float64) {
			g, f := make([]float64, n), 0.0
			gi := make([]float32, n)
			for i, c := range sel {
				loss, err := e.Trainer.Gradient(ctx, env.net, y, env.examples(c), env.hyper.BatchSize, gi)
				if err != nil {
					t.Fatal(err)
				}
				f += w[i] * loss
				for j, v := range gi {
					g[j] += w[i] * float64(v)
				}
			}
			return g, f
		}
		losses := make([]float64, len(sel))
		for i, c := range sel {
			if losses[i], err = e.clientLoss(ctx, env, x, c); err != nil {
				t.Fatal(err)
			}
		}
		for _, tau := range []float64{0.1, 1} {
			pt := algorithm.Softmax(losses, tau, nil)
			gt, f0 := grad(x, pt)
			// hv returns H·v by central differences of the gradients.
			const eps = 1e-3
			hv := func(v []float64) []float64 {
				plus, minus := make([]float32, n), make([]float32, n)
				for j := range x {
					plus[j] = float32(float64(x[j]) + eps*v[j])
					minus[j] = float32(float64(x[j]) - eps*v[j])
				}
				a, _ := grad(plus, pt)
				b, _ := grad(minus, pt)
				for j := range a {
					a[j] = (a[j] - b[j]) / (2 * eps)
				}
				return a
			}
			unit := func(v []float64) float64 {
				s := 0.0
				for _, u := range v {
					s += u * u
				}
				s = math.Sqrt(s)
				for j := range v {
					v[j] /= s
				}
				return s
			}
			dot := func(a, b []float64) float64 {
				s := 0.0
				for j := range a {
					s += a[j] * b[j]
				}
				return s
			}
			d := append([]float64(nil), gt...)
			gnorm := unit(d)
			curv := dot(d, hv(d)) // dᵀHd along ĝ
			// power returns the dominant eigenvalue of H − shift·I (30
			// iterations from a fixed random start).
			power := func(shift float64) float64 {
				v := make([]float64, n)
				r := rand.New(rand.NewPCG(uint64(p.Seed), 51))
				for j := range v {
					v[j] = r.NormFloat64()
				}
				unit(v)
				mu := 0.0
				for range 30 {
					hvv := hv(v)
					for j := range hvv {
						hvv[j] -= shift * v[j]
					}
					mu = dot(v, hvv)
					copy(v, hvv)
					unit(v)
				}
				return mu
			}
			// The dominant eigenvalue may be negative (ReLU nets are not
			// convex); λ_max is then that of H − λ₁I, plus λ₁.
			lam := power(0)
			if lam < 0 {
				lam += power(lam)
			}
			line := func(s float64) float64 {
				y := make([]float32, n)
				for j := range x {
					y[j] = float32(float64(x[j]) - s*gt[j])
				}
				_, f := grad(y, pt)
				return f
			}
			lit, upd := alpha*eta*k, alpha*eta*eta*k
			fl, fu := line(lit), line(upd)
			t.Logf("seed %d τ = %v: F̃ = %.3f, ‖g̃‖ = %.3f, λ_max ≈ %.2f (2/λ_max = %.3f), curvature along g̃ %.2f (2/c = %.3f); "+
				"F̃(x − %.2f·g̃) = %.3f (gradient units, %.1f× 2/λ_max), F̃(x − %.2f·g̃) = %.3f (update units, %.2f× 2/λ_max)",
				p.Seed, tau, f0, gnorm, lam, 2/lam, curv, 2/curv, lit, fl, lit*lam/2, upd, fu, upd*lam/2)
			if !(lit > 2/lam) || !(fl > f0) {
				t.Errorf("seed %d τ = %v: the literal round's step %.2f along g̃ is within 2/λ_max = %.3f or lowers F̃ (%.3f → %.3f): the collapse is not a step-size instability here",
					p.Seed, tau, lit, 2/lam, f0, fl)
			}
			if !(fu < f0) {
				t.Errorf("seed %d τ = %v: the update-units step %.2f along g̃ raises F̃ (%.3f → %.3f)", p.Seed, tau, upd, f0, fu)
			}
		}
	}
}
