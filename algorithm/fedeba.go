package algorithm

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// FedEBA, FedEBA+ and Prac-FedEBA+ are entropy-based fair aggregation
// (Wang, Wang, Shi, Karimireddy & Tang, "Entropy-driven Fair and Effective
// Federated Learning", arXiv:2301.12407 v5, ICML 2026).
//
// # EBA: the aggregation weights (§4.1, Prop. 4.1, Eq. (4), Alg. 1 line 15)
//
// The maximum-entropy weights under a loss constraint are a softmax over
// the round's selected clients S_t of their local models' losses after
// local training, at temperature τ:
//
//	p_i = q_i·exp(F_i(x_{t,K}^i)/τ) / Σ_{j∈S_t} q_j·exp(F_j(x_{t,K}^j)/τ)
//
// with q_i = 1, or the data-size prior q_i = n_i/Σ_{S_t} n_j (Eq. (21)–(22),
// option prior). F_i is the mean cross-entropy on the client's own
// training set (fl.ClientSummary.LossAfter). The softmax is computed in
// log-sum-exp, so τ = 0.01 with losses of 50 is finite. τ → ∞ is FedAvg's
// uniform mean; τ → 0 puts all the weight on the largest loss.
//
// Remark M.1's annealing, τ_t = τ_0/(1 + κ(t−1))^e, has e = 1 (linear),
// ½ (concave) or 3 (convex); the paper's tables use a constant τ.
//
// # FedEBA+: alignment (§4.2, Eq. (7)–(11), Algorithm 1)
//
// The server collects the selected clients' losses at the global model,
// L_i = F_i(x_t), and their angle to the all-ones vector,
//
//	φ_t = arccos(Σ_i L_i / (√n·‖L‖₂))  (degrees; tan φ_t = std(L)/mean(L)),
//
// and when φ_t > θ the round is unfair and runs gradient alignment: the
// clients upload ∇F_i(x_t) (full-batch, over their training sets), the
// server broadcasts g̃ = Σ p̃_i ∇F_i(x_t) with p̃ = softmax(L/τ) (the
// losses at the GLOBAL model: the only place they weigh anything), and
// every client descends h = (1 − α)∇F_i(x; ξ) + α·g̃ for its K steps; the
// server aggregates Δ_t = Σ p_i Δ_t^i. Otherwise (model alignment, Eq. (8)–
// (9)) clients run plain local SGD and also upload their first step
// Δ̃^{a,i} = x_{t,1}^i − x_t, and
//
//	Δ_t = (1 − α)·Σ p_i Δ_t^i + α·Σ (n_i/Σn_j)·Δ̃^{a,i}.
//
// The paper mixes a K-step update with a one-step one unscaled;
// model_align_scale: steps multiplies Δ̃^{a,i} by the client's K (our
// option, not the paper's). θ ≥ arccos(1/√n) never aligns; θ = 0 aligns
// every round whose losses are not all equal (the paper's Table 1 row).
// With α = 0 nothing is asked or uploaded beyond FedEBA's, and the model is
// FedEBA's bit for bit.
//
// # The units of g̃ (align_units)
//
// Eq. (10)–(11) and Algorithm 1 line 8 write g̃ as a gradient, and the
// default, align_units: gradient, implements them so (the literal
// reading). Each aligned step of client i is then, for k = 0, …, K−1,
//
//	h_{t,k}^i   = (1 − α)·∇F_i(x_{t,k}^i; ξ) + α·g̃,   g̃ = Σ_j p̃_j ∇F_j(x_t)
//	x_{t,k+1}^i = x_{t,k}^i − η_L·h_{t,k}^i
//
// so a round moves α·η_L·K along the one fixed g̃ (0.9 at Table 1's
// α = 0.9, η_L = 0.1, K = 10). §4.3 says g̃ is "obtained using the global
// model's performance on these clients without local shift (i.e., one
// local update)" and §4.4 that "the server needs to obtain the one local
// update to calculate the aligned gradient"; align_units: update (OURS, a
// reading, not the paper's equation) takes g̃ in those units, the update
// of one full-batch plain-SGD step from x_t at the round's first local
// learning rate η_L (trainer.Hyper.LR after lr_decay; every within-round
// schedule starts there):
//
//	g̃_u         = η_L·Σ_j p̃_j ∇F_j(x_t) = Σ_j p̃_j (x_t − x_{t,1}^j)
//	h_{t,k}^i   = (1 − α)·∇F_i(x_{t,k}^i; ξ) + α·g̃_u
//	x_{t,k+1}^i = x_{t,k}^i − η_L·h_{t,k}^i
//
// (x_{t,1}^j being that full-batch step), and Eq. (11)'s h mixes a
// gradient with an update as written: a round moves α·η_L²·K along
// Σ p̃_j ∇F_j(x_t) (0.09 at Table 1's values). With momentum, weight decay
// or Adam, h is what the optimiser is given as the gradient, under both
// readings. The server broadcasts the same g̃ under both; each client
// scales it by its η_L (float32(η_L·g̃_j)). The one-step update on a
// minibatch ξ (Σ p̃_j (x_t − x_{t,1}^j) with a stochastic first step) is
// not implemented: Algorithm 1 line 8 receives the full gradient ∇F_i(x_t).
// align_units concerns the gradient branch only; the model branch's Δ̃^{a,i}
// is an update in Eq. (8)–(9) already, and its scale is model_align_scale.
//
// # Prac-FedEBA+ (Prop. 4.3, Eq. (12), Algorithm 3)
//
// FedAvg's communication: clients run plain SGD and upload Δ_t^i with their
// losses before and after training. With plain SGD and a constant
// learning rate within the round, (1/K)Σ_k ∇F_i(x_{t,k}^i; ξ) = −Δ_t^i/(η_L K),
// so Algorithm 3's gradient branch (lines 14–16) is, for K_i local steps,
//
//	Δ_t = (1 − α)·Σ p_i Δ_t^i + α·(Σ_i p_i K_i)·Σ_j p̃_j Δ_t^j / K_j,
//
// which is (1 − α)Σ p_i Δ^i + α Σ p̃_i Δ^i when every K_i is equal. The
// model branch (lines 18–19) uses Δ̃_t^i = Δ_t^i/K: line 18's
// (x_{t,K−1} − x_{t,0})/K is read as a typo for x_{t,K} (our reading;
// model_align_scale: steps uses Δ_t^i itself). Prac-FedEBA+ has no
// align_units: Eq. (12) writes its g̃ as a mean gradient,
// (1/K)Σ_k ∇F_i(x_{t,k}^i; ξ), and line 15 turns it into an update
// explicitly, −α·η_L·K·g̃, so the units are stated there.
//
// The server step is x_{t+1} = x_t + η·Δ_t with η the aggregator's
// server_lr (1 in the paper); the sampler's weights ω_k are replaced by p.
// Every round records p (clients.agg_weight, rounds.agg_entropy) and, for
// FedEBA+ and Prac-FedEBA+, φ_t and the branch (rounds.fair_angle,
// rounds.aligned).
type FedEBA struct {
	Base
	EBA
}

// EBA is the entropy-based weighting shared by the FedEBA family.
type EBA struct {
	Tau    float64 `json:"tau"`    // τ_0 > 0; 0.1 in the paper's tables
	Prior  bool    `json:"prior"`  // q_i = n_i/Σn_j (Eq. (21)); equal sizes make it a no-op
	Anneal string  `json:"anneal"` // "" (constant τ), linear, concave or convex (Remark M.1)
	Kappa  float64 `json:"kappa"`  // κ ≥ 0 of the annealing; the paper gives no value
}

// FedEBAPlus is FedEBA+ (Algorithm 1); its defaults are Table 1's row:
// α = 0.9, τ = 0.1, θ = 0°.
type FedEBAPlus struct {
	Base
	EBA
	Alpha           float64 `json:"alpha"`             // α in [0, 1]
	Theta           float64 `json:"theta"`             // the fair angle θ in degrees
	ModelAlignScale string  `json:"model_align_scale"` // paper (one step, unscaled) or steps (×K, ours)
	AlignUnits      string  `json:"align_units"`       // gradient (Eq. (10)–(11), the paper's) or update (η_L·g̃, ours)
}

// PracFedEBAPlus is Prac-FedEBA+ (Algorithm 3); its defaults are α = 0.9,
// τ = 0.1 and θ = 15°, the paper's recommended angle for it.
type PracFedEBAPlus struct {
	Base
	EBA
	Alpha           float64 `json:"alpha"`
	Theta           float64 `json:"theta"`
	ModelAlignScale string  `json:"model_align_scale"` // paper (Δ/K) or steps (Δ, ours)
}

var (
	_ Algorithm   = FedEBA{}
	_ Algorithm   = FedEBAPlus{}
	_ Broadcaster = FedEBAPlus{}
	_ Algorithm   = PracFedEBAPlus{}
	_ LossUser    = FedEBA{}
)

// Annealing schedules of τ (Remark M.1).
const (
	AnnealLinear  = "linear"
	AnnealConcave = "concave"
	AnnealConvex  = "convex"
)

// Scales of the model-alignment term.
const (
	AlignScalePaper = "paper"
	AlignScaleSteps = "steps"
)

// Units of FedEBA+'s fair gradient g̃ in the aligned local step.
const (
	AlignUnitsGradient = "gradient" // Eq. (10)–(11) as written: g̃ = Σ p̃_j ∇F_j(x_t)
	AlignUnitsUpdate   = "update"   // ours: g̃ = η_L·Σ p̃_j ∇F_j(x_t), one local update
)

// NewFedEBA builds FedEBA from {tau, prior, anneal, kappa}.
func NewFedEBA(opts fl.Options) (Algorithm, error) {
	a := FedEBA{EBA: EBA{Tau: 0.1}}
	if err := opts.Decode("algorithm (fedeba)", &a); err != nil {
		return nil, err
	}
	return a, a.EBA.check()
}

// NewFedEBAPlus builds FedEBA+ from {tau, prior, anneal, kappa, alpha,
// theta, model_align_scale, align_units}.
func NewFedEBAPlus(opts fl.Options) (Algorithm, error) {
	a := FedEBAPlus{EBA: EBA{Tau: 0.1}, Alpha: 0.9, Theta: 0, ModelAlignScale: AlignScalePaper, AlignUnits: AlignUnitsGradient}
	if err := opts.Decode("algorithm (fedeba+)", &a); err != nil {
		return nil, err
	}
	if a.AlignUnits != AlignUnitsGradient && a.AlignUnits != AlignUnitsUpdate {
		return nil, fmt.Errorf("algorithm.align_units = %q is unknown; use gradient (Eq. (10)–(11), the paper's) or update (g̃ scaled by η_L, ours): %w", a.AlignUnits, fl.ErrInvalid)
	}
	return a, checkAlign(a.EBA, a.Alpha, a.Theta, a.ModelAlignScale)
}

// NewPracFedEBAPlus builds Prac-FedEBA+ from the options of FedEBA+.
func NewPracFedEBAPlus(opts fl.Options) (Algorithm, error) {
	a := PracFedEBAPlus{EBA: EBA{Tau: 0.1}, Alpha: 0.9, Theta: 15, ModelAlignScale: AlignScalePaper}
	if err := opts.Decode("algorithm (prac-fedeba+)", &a); err != nil {
		return nil, err
	}
	return a, checkAlign(a.EBA, a.Alpha, a.Theta, a.ModelAlignScale)
}

func (e EBA) check() error {
	if err := finite("algorithm.tau", e.Tau, 0, true); err != nil {
		return err
	}
	if err := finite("algorithm.kappa", e.Kappa, 0, false); err != nil {
		return err
	}
	switch e.Anneal {
	case "", AnnealLinear, AnnealConcave, AnnealConvex:
		return nil
	}
	return fmt.Errorf("algorithm.anneal = %q is unknown; use linear, concave or convex (Remark M.1), or leave it out for a constant τ: %w", e.Anneal, fl.ErrInvalid)
}

func checkAlign(e EBA, alpha, theta float64, scale string) error {
	if err := e.check(); err != nil {
		return err
	}
	if !(alpha >= 0 && alpha <= 1) {
		return fmt.Errorf("algorithm.alpha = %v; α must be in [0, 1] (0 is FedEBA, the paper's tables use 0.9): %w", alpha, fl.ErrInvalid)
	}
	if !(theta >= 0 && theta <= 180) {
		return fmt.Errorf("algorithm.theta = %v; θ is an angle in degrees in [0, 180] (0 aligns every round, 15 is Prac-FedEBA+'s): %w", theta, fl.ErrInvalid)
	}
	if scale != AlignScalePaper && scale != AlignScaleSteps {
		return fmt.Errorf("algorithm.model_align_scale = %q is unknown; use paper or steps: %w", scale, fl.ErrInvalid)
	}
	return nil
}

// TauAt returns τ_t, the temperature of round t ≥ 1.
func (e EBA) TauAt(t int) float64 {
	var exp float64
	switch e.Anneal {
	case AnnealLinear:
		exp = 1
	case AnnealConcave:
		exp = 0.5
	case AnnealConvex:
		exp = 3
	default:
		return e.Tau
	}
	return e.Tau / math.Pow(1+e.Kappa*float64(t-1), exp)
}

// Softmax returns p_i = q_i·exp(F_i/τ)/Σ_j q_j·exp(F_j/τ), computed as
// exp(F_i/τ + log q_i − max − log Σ exp(·)); q nil is uniform.
func Softmax(f []float64, tau float64, q []float64) []float64 {
	z := make([]float64, len(f))
	hi := math.Inf(-1)
	for i, v := range f {
		z[i] = v / tau
		if q != nil {
			z[i] += math.Log(q[i])
		}
		hi = max(hi, z[i])
	}
	sum := 0.0
	for _, v := range z {
		sum += math.Exp(v - hi)
	}
	lse := hi + math.Log(sum)
	for i, v := range z {
		z[i] = math.Exp(v - lse)
	}
	return z
}

// FairAngle returns arccos(Σ L_i/(√n·‖L‖₂)) in degrees: the angle between
// the losses and the all-ones vector (§4.2). It is computed as
// atan2(std(L), mean(L)) (population std, two passes), the same angle,
// since cos φ = mean/√(mean² + std²); equal losses give exactly 0, where
// the arccos form rounds to a few 1e-6 degrees. All-zero losses give 0.
func FairAngle(l []float64) float64 {
	mean := 0.0
	for _, v := range l {
		mean += v
	}
	mean /= float64(len(l))
	sq := 0.0
	for _, v := range l {
		sq += (v - mean) * (v - mean)
	}
	return math.Atan2(math.Sqrt(sq/float64(len(l))), mean) * 180 / math.Pi
}

// weights returns round t's EBA weights of losses f over clients of the
// given sizes.
func (e EBA) weights(t int, f []float64, sizes []int) []float64 {
	var q []float64
	if e.Prior {
		q = sizeWeights(sizes)
	}
	return Softmax(f, e.TauAt(t), q)
}

// sizeWeights returns n_i/Σn_j.
func sizeWeights(sizes []int) []float64 {
	total := 0
	for _, n := range sizes {
		total += n
	}
	w := make([]float64, len(sizes))
	for i, n := range sizes {
		w[i] = float64(n) / float64(total)
	}
	return w
}

// sizesOf returns the selected clients' training-set sizes n_i.
func sizesOf(sums []fl.ClientSummary) []int {
	n := make([]int, len(sums))
	for i, s := range sums {
		n[i] = s.NumExamples
	}
	return n
}

// UsesLosses implements LossUser: the weights read F_i(θ_i) after training.
func (FedEBA) UsesLosses() (before, after bool) { return false, true }

// Begin implements Algorithm.
func (a FedEBA) Begin(r Server) (Aggregation, error) {
	return FedEBAPlus{EBA: a.EBA, ModelAlignScale: AlignScalePaper}.begin(r, "fedeba", false)
}

// UsesLosses implements LossUser: the weights read F_i(θ_i) after
// training, the fair angle (α > 0) F_i(x_t) before it.
func (a FedEBAPlus) UsesLosses() (before, after bool) { return a.Alpha > 0, true }

// firstStep names FedEBA+'s model-alignment upload Δ̃^{a,i}.
const firstStep = "first_step"

// Broadcast implements Broadcaster: the losses at x_t first (Alg. 1 line
// 6), then, when φ_t > θ, the gradients, and g̃ = Σ p̃_i ∇F_i(x_t).
func (a FedEBAPlus) Broadcast(b BroadcastRound) (Broadcast, error) {
	if a.Alpha == 0 {
		return Broadcast{}, nil // FedEBA: no angle, no alignment
	}
	sel := b.Selection.Clients
	loss, grad := map[int]fl.Answer{}, map[int]fl.Answer{}
	for _, ans := range b.Answers {
		if _, ok := loss[ans.Client]; !ok {
			loss[ans.Client] = ans
		}
		if ans.Ask == fl.AskGradient {
			grad[ans.Client] = ans
		}
	}
	l := make([]float64, len(sel))
	for i, k := range sel {
		ans, ok := loss[k]
		if !ok {
			return Broadcast{Query: &fl.Query{Ask: fl.AskLoss, Clients: slices.Clone(sel)}}, nil
		}
		l[i] = ans.Loss
	}
	if FairAngle(l) <= a.Theta {
		return Broadcast{}, nil // model alignment: nothing to send
	}
	for _, k := range sel {
		if _, ok := grad[k]; !ok {
			return Broadcast{Query: &fl.Query{Ask: fl.AskGradient, Clients: slices.Clone(sel)}}, nil
		}
	}
	sizes := make([]int, len(sel))
	for i, k := range sel {
		sizes[i] = grad[k].Samples
	}
	pt := a.weights(b.Round, l, sizes)
	sum := make([]float64, len(b.Global))
	for i, k := range sel {
		g, err := b.Vector(grad[k])
		if err != nil {
			return Broadcast{}, err
		}
		for j, v := range g {
			sum[j] += pt[i] * float64(v)
		}
	}
	out := make([]float32, len(sum))
	for j, v := range sum {
		out[j] = float32(v)
	}
	return Broadcast{Vector: out}, nil
}

// Train implements Algorithm: aligned steps when the round broadcast g̃,
// else plain SGD that also uploads its first step.
func (a FedEBAPlus) Train(_ context.Context, c Client, obj trainer.Objective) (Upload, error) {
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	up := Upload{Weights: w, Delta: Delta(w, c.Global), Train: res}
	if obj.FirstStep != nil {
		up.Vectors.Set(firstStep, Delta(obj.FirstStep, c.Global))
	}
	return up, nil
}

// scaled returns float32(s·v_j) for every j: g̃ in update units.
func scaled(v []float32, s float64) []float32 {
	out := make([]float32, len(v))
	for j, x := range v {
		out[j] = float32(s * float64(x))
	}
	return out
}

// Objective implements Algorithm: in an aligned round, every local step
// descends (1 − α)·∇F_i + α·g̃ with the broadcast g̃ (Eq. (10)–(11); in
// update units, ours, g̃·η_L); otherwise the cross-entropy, with the first
// step recorded (FirstStep) for the server's fairness angle when α > 0.
func (a FedEBAPlus) Objective(c Client) (trainer.Objective, error) {
	var obj trainer.Objective
	g, aligned := c.Server.Vectors[BroadcastVector]
	switch {
	case aligned && a.Alpha > 0:
		if len(g) != len(c.Global) {
			return obj, fmt.Errorf("fedeba+: the broadcast g̃ has %d values; the model has %d: %w", len(g), len(c.Global), fl.ErrInvalid)
		}
		if a.AlignUnits == AlignUnitsUpdate {
			g = scaled(g, c.Local.Hyper().LR)
		}
		obj = trainer.Aligned(a.Alpha, g)
	case a.Alpha > 0:
		obj.FirstStep = make([]float32, len(c.Global))
	}
	return obj, nil
}

// Begin implements Algorithm.
func (a FedEBAPlus) Begin(r Server) (Aggregation, error) { return a.begin(r, "fedeba+", a.Alpha > 0) }

// begin starts FedEBA's (angle false) or FedEBA+'s aggregation.
func (a FedEBAPlus) begin(r Server, name string, angle bool) (Aggregation, error) {
	eta, err := serverLR(r.Rule)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	after, err := clientLosses(name, r, true)
	sizes := sizesOf(r.Clients)
	if err != nil {
		return nil, err
	}
	agg := newEBAAgg(r, eta, a.weights(r.Round, after, sizes))
	if !angle {
		return agg, nil
	}
	before, err := clientLosses(name, r, false)
	if err != nil {
		return nil, err
	}
	phi := FairAngle(before)
	aligned := phi > a.Theta
	agg.report.FairAngle, agg.report.Aligned = &phi, &aligned
	if aligned {
		agg.refuse = firstStep // a client that uploaded it trained without g̃
	} else {
		agg.alpha, agg.second = a.Alpha, firstStep
		agg.coef = sizeWeights(sizes)
		if a.ModelAlignScale == AlignScaleSteps {
			for i, s := range r.Clients {
				agg.coef[i] *= float64(s.Steps)
			}
		}
	}
	return agg, nil
}

func (PracFedEBAPlus) Check(_ trainer.Spec, hp trainer.Hyper) error {
	if hp.Optimizer != trainer.OptimizerSGD || hp.Momentum != 0 || hp.WeightDecay != 0 || (hp.Schedule != "" && hp.Schedule != "constant") {
		return fmt.Errorf("prac-fedeba+ recovers the clients' mean gradient from their updates, which needs plain SGD with a constant learning rate within the round (Prop. 4.3); train has optimizer %q, momentum %v, weight_decay %v, schedule %q: use optimizer sgd without momentum, weight decay or schedule: %w",
			hp.Optimizer, hp.Momentum, hp.WeightDecay, hp.Schedule, fl.ErrInvalid)
	}
	return nil
}

// UsesLosses implements LossUser: the weights and the fair angle read
// both losses.
func (PracFedEBAPlus) UsesLosses() (before, after bool) { return true, true }

// Begin implements Algorithm.
func (a PracFedEBAPlus) Begin(r Server) (Aggregation, error) {
	eta, err := serverLR(r.Rule)
	if err != nil {
		return nil, fmt.Errorf("prac-fedeba+: %w", err)
	}
	after, err := clientLosses("prac-fedeba+", r, true)
	sizes := sizesOf(r.Clients)
	if err != nil {
		return nil, err
	}
	before, err := clientLosses("prac-fedeba+", r, false)
	if err != nil {
		return nil, err
	}
	p := a.weights(r.Round, after, sizes)
	agg := newEBAAgg(r, eta, p)
	if a.Alpha == 0 {
		return agg, nil
	}
	phi := FairAngle(before)
	aligned := phi > a.Theta
	agg.report.FairAngle, agg.report.Aligned = &phi, &aligned
	agg.alpha, agg.second = a.Alpha, deltaItself
	agg.coef = make([]float64, len(r.Clients))
	steps, equal := make([]float64, len(r.Clients)), true
	for i, s := range r.Clients {
		if s.Steps <= 0 {
			return nil, fmt.Errorf("prac-fedeba+: client %d took %d local steps: %w", s.Client, s.Steps, fl.ErrInvalid)
		}
		steps[i] = float64(s.Steps)
		equal = equal && s.Steps == r.Clients[0].Steps
	}
	if aligned {
		// Lines 14–16: α·(Σ_i p_i K_i)·Σ_j p̃_j Δ^j/K_j; Σ_j p̃_j Δ^j when
		// every K is equal.
		pt := a.weights(r.Round, before, sizes)
		pk := 0.0
		for i := range p {
			pk += p[i] * steps[i]
		}
		for j := range pt {
			agg.coef[j] = pt[j]
			if !equal {
				agg.coef[j] = pt[j] * pk / steps[j]
			}
		}
		return agg, nil
	}
	// Lines 18–19: α·Σ (n_j/Σn)·Δ̃^j, Δ̃^j = Δ^j/K_j (or Δ^j with steps).
	w := sizeWeights(sizes)
	for j := range w {
		agg.coef[j] = w[j]
		if a.ModelAlignScale == AlignScalePaper {
			agg.coef[j] = w[j] / steps[j]
		}
	}
	return agg, nil
}

// deltaItself names the update Δ^i as the second term's vector.
const deltaItself = ""

// ebaAgg accumulates Δ = Σ p_i Δ^i and, when alpha > 0, the second term
// Σ coef_i v_i, v_i the upload named second (or Δ^i itself), and writes
// x_t + η·((1 − α)·Σ p_i Δ^i + α·Σ coef_i v_i).
type ebaAgg struct {
	global  []float32
	clients []int
	p       []float64
	eta     float64
	alpha   float64
	second  string
	coef    []float64
	refuse  string // an upload no client of this branch sends
	acc     []float64
	acc2    []float64
	next    int
	report  fl.AggReport
}

func newEBAAgg(r Server, eta float64, p []float64) *ebaAgg {
	return &ebaAgg{global: r.Global, clients: r.Selection.Clients, p: p, eta: eta, acc: make([]float64, len(r.Global)),
		report: fl.AggReport{Weights: p}}
}

func (a *ebaAgg) Add(client int, delta []float32, up fl.State) error {
	if a.next >= len(a.clients) || a.clients[a.next] != client {
		return fmt.Errorf("fedeba: got client %d out of order (want %v in order): %w", client, a.clients, fl.ErrInvalid)
	}
	if len(delta) != len(a.acc) {
		return fmt.Errorf("fedeba: client %d's update has %d values; the model has %d: %w", client, len(delta), len(a.acc), fl.ErrInvalid)
	}
	if _, ok := up.Vectors[a.refuse]; ok && a.refuse != "" {
		return fmt.Errorf("fedeba: client %d uploaded %q in a gradient-aligned round: it did not train with the round's g̃: %w", client, a.refuse, fl.ErrInvalid)
	}
	i := a.next
	for j, d := range delta {
		a.acc[j] += a.p[i] * float64(d)
	}
	if a.alpha > 0 {
		v := delta
		if a.second != deltaItself {
			var err error
			if v, err = up.Vector(a.second, len(a.acc)); err != nil {
				return fmt.Errorf("fedeba: client %d: %w", client, err)
			}
		}
		if a.acc2 == nil {
			a.acc2 = make([]float64, len(a.acc))
		}
		for j, d := range v {
			a.acc2[j] += a.coef[i] * float64(d)
		}
	}
	a.next++
	return nil
}

func (a *ebaAgg) Finish(dst []float32) (fl.State, error) {
	if a.next != len(a.clients) {
		return fl.State{}, fmt.Errorf("fedeba: %d of %d updates added: %w", a.next, len(a.clients), fl.ErrInvalid)
	}
	for j, g := range a.global {
		d := a.acc[j]
		if a.alpha > 0 {
			d = (1-a.alpha)*d + a.alpha*a.acc2[j]
		}
		dst[j] = float32(float64(g) + a.eta*d)
	}
	return fl.State{}, nil
}

func (a *ebaAgg) Report() fl.AggReport { return a.report }

// A stepRule is a rule with a server learning rate η_g (aggregate's
// WeightedDelta): algorithms whose server replaces the rule's weights still
// take its step size.
type stepRule interface{ ServerLR() float64 }

// serverLR returns the point's rule's η_g.
func serverLR(r fl.Rule) (float64, error) {
	s, ok := r.(stepRule)
	if !ok {
		return 0, fmt.Errorf("the aggregator %T has no server learning rate; use aggregator fedavg (its server_lr is η): %w", r, fl.ErrInvalid)
	}
	return s.ServerLR(), nil
}
