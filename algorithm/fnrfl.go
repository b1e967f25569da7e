package algorithm

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// FNRFL is FNR-FL, feature-norm regularised FL (Hu, Qiu & Tang,
// "Feature Norm Regularized Federated Learning: Transforming Skewed
// Distributions into Global Insights", arXiv:2312.06951, Algorithms 1–3),
// with the official code's departures and our corrected regulariser as
// named variants.
//
// Every round the clients train as FedAvg's do. Then, in the refine phase,
// each trained client's local model w_i is scored on the server's public
// set D_public (partition.public_per_class: drawn from the training split
// before the clients' split, held by no client): its class-average feature
// norms (Eq. (6)–(7), Algorithm 1: the mean over the public samples of
// class k of ‖z(x)‖₂, z the embedding that feeds the output layer; absent
// classes have none) and its accuracy A_i. The ⌊n·p⌋ clients with the
// lowest A_i (ties by client ID) are refined: E_re epochs over D_public in
// its fixed order, batches of 32, from their own w_i with a fresh
// optimiser, on the objective Φ = CE + λ·J (Eq. (9)), where
//
//	Δ_j[l] = Σ_{m ∈ S∖S_re} (F_m[l] − F_j[l])          (Algorithm 2)
//	J(B)   = Σ_{l ∈ labels(B)} (n_l/|B|)·Δ_j[l].
//
// J is built from numbers fixed before refinement, so ∇J = 0: as published
// (variant paper) the regulariser changes no weight, λ only changes the
// logged penalty, and FNR-FL is "fine-tune the worst clients on D_public,
// then FedAvg" (specs' §0). The refined models replace the uploaded ones
// in the point's aggregation rule (the paper: FedAvg by |D_i|, i.e.
// importance size with aggregator normalize).
//
// Variant code is the official code's departures that change results: Δ
// over all other clients, selection by balanced accuracy (the mean of the
// per-class accuracies), and refinement with Adam (its cc_optimizer
// default) at the local rate with weight decay 1e-5. The code's train-mode
// passes over the public set differ from eval mode only for models with
// BatchNorm, which the variant refuses. Its use of the test split as
// D_public is option leak, not part of the variant.
//
// Variant corrected is this project's extension, not the paper's: a
// differentiable penalty λ·Σ_{l∈B} ρ_l·(Ū_{B,l}(w) − F̄_{−j}[l])² that pulls
// the refined model's batch class-mean feature norms toward the mean of the
// non-refined clients' (trainer.FeatureNormPenalty), with selection and
// optimiser as in paper.
//
// Leak sets D_public to the whole test split, as the official code does:
// the same data the point's test accuracy is measured on. It exists only
// to reproduce the paper's 0.99-style accuracies and show where they come
// from; every rounds row it touches says public_leak.
type FNRFL struct {
	Base
	Variant string  `json:"variant"` // paper | code | corrected
	P       float64 `json:"p"`       // share of the trained clients refined: ⌊n·p⌋
	Epochs  int     `json:"epochs"`  // E_re
	Lambda  float64 `json:"lambda"`  // λ
	Batch   int     `json:"batch"`   // public batch size
	Leak    bool    `json:"leak,omitempty"`
}

// FNR-FL's variants.
const (
	FNRPaper     = "paper"
	FNRCode      = "code"
	FNRCorrected = "corrected"
)

// NewFNRFL returns FNR-FL with the paper's defaults where it gives them
// (E_re 5, batch 32) and the official code's otherwise (p 0.5, λ 1).
func NewFNRFL(opts fl.Options) (Algorithm, error) {
	a := FNRFL{Variant: FNRPaper, P: 0.5, Epochs: 5, Lambda: 1, Batch: 32}
	if err := opts.Decode("algorithm (fnrfl)", &a); err != nil {
		return nil, err
	}
	switch {
	case a.Variant != FNRPaper && a.Variant != FNRCode && a.Variant != FNRCorrected:
		return nil, fmt.Errorf("algorithm.variant = %q is unknown; use %s (as published), %s (the official code's departures) or %s (our differentiable penalty): %w",
			a.Variant, FNRPaper, FNRCode, FNRCorrected, fl.ErrInvalid)
	case !(a.P >= 0 && a.P <= 1):
		return nil, fmt.Errorf("algorithm.p = %v; the share of clients refined must be in [0, 1] (the code: 0.5): %w", a.P, fl.ErrInvalid)
	case a.Epochs < 0:
		return nil, fmt.Errorf("algorithm.epochs = %d; E_re must be ≥ 0 (the paper: 5): %w", a.Epochs, fl.ErrInvalid)
	case a.Batch < 1:
		return nil, fmt.Errorf("algorithm.batch = %d; the public batch size must be ≥ 1 (the paper: 32): %w", a.Batch, fl.ErrInvalid)
	}
	if err := finite("algorithm.lambda", a.Lambda, 0, false); err != nil {
		return nil, err
	}
	return a, nil
}

// PublicFrom implements Refiner.
func (a FNRFL) PublicFrom() string {
	if a.Leak {
		return PublicTest
	}
	return PublicTrain
}

// Refine implements Refiner: Algorithm 3 lines 5–15.
func (a FNRFL) Refine(ctx context.Context, r Refinement) (Refined, error) {
	n, classes, pub := len(r.Clients), r.Public.Classes(), r.Public.Len()
	labels := r.Public.Labels()
	out := Refined{Weights: map[int][]float32{}, PublicAcc: make([]float64, n)}
	if a.Variant == FNRCode && hasBuffers(r.Net) {
		return out, fmt.Errorf("fnrfl: variant code passes the public set in train mode, which updates BatchNorm statistics; that is not built, and net %s has BatchNorm: use variant paper: %w", r.Net.Key(), fl.ErrInvalid)
	}
	norms := make([][]float64, n)
	for i, w := range r.Local {
		emb, correct, err := r.Public.Forward(w)
		if err != nil {
			return out, fmt.Errorf("fnrfl: client %d on the public set: %w", r.Clients[i], err)
		}
		norms[i] = ClassNorms(emb, labels, r.Net.Embedding(), classes)
		out.PublicAcc[i] = PublicAccuracy(correct, labels, classes, a.Variant == FNRCode)
	}
	out.Samples = int64(n * pub)
	// Two-phase protocol (specs' §1.4): every client uploads F_i and A_i;
	// the refined ones receive Δ_j.
	out.Up = int64(n * (classes + 1))
	nre := int(math.Floor(float64(n) * a.P))
	if a.Epochs == 0 || nre == 0 {
		return out, nil
	}
	chosen := Lowest(out.PublicAcc, r.Clients, nre)
	refined := make([]bool, n)
	for _, i := range chosen {
		refined[i] = true
	}
	out.Down = int64(nre * classes)
	hp := a.refineHyper(r.Hyper)
	for _, j := range chosen {
		others := make([]int, 0, n)
		for m := range n {
			if m != j && (a.Variant == FNRCode || !refined[m]) {
				others = append(others, m)
			}
		}
		delta := NormDiff(norms, j, others)
		w := slices.Clone(r.Local[j])
		var obj trainer.Objective
		var pen float64
		if a.Variant == FNRCorrected {
			obj.FeatureNorm = &trainer.FeatureNormPenalty{Lambda: a.Lambda, Targets: MeanNorms(norms, others, classes), Loss: &pen}
		} else {
			pen = a.Lambda * InertPenalty(labels, a.Batch, a.Epochs, delta)
		}
		if _, err := r.Public.Train(r.Clients[j], w, hp, obj); err != nil {
			return out, fmt.Errorf("fnrfl: refining client %d: %w", r.Clients[j], err)
		}
		out.Penalty += pen
		out.Weights[r.Clients[j]] = w
		out.Samples += int64(a.Epochs * pub)
	}
	return out, nil
}

// refineHyper is the refinement's training: E_re epochs over the public set
// in its order, batches of a.Batch, with the local optimiser (paper,
// corrected) or Adam with weight decay 1e-5 (code), from a fresh state.
func (a FNRFL) refineHyper(local trainer.Hyper) trainer.Hyper {
	hp := local
	hp.LocalSteps, hp.LocalEpochs, hp.BatchSize, hp.InOrder = 0, a.Epochs, a.Batch, true
	hp.Schedule = ""
	if a.Variant == FNRCode {
		hp.Optimizer, hp.Momentum, hp.Nesterov, hp.WeightDecay = trainer.OptimizerAdam, 0, false, 1e-5
	}
	return hp
}

// ClassNorms returns Algorithm 1's class-average feature norms: for every
// class k, the mean over the samples labelled k of ‖z‖₂, z their rows of
// emb (l values each); NaN for a class without samples. Sums in float64,
// in sample order.
func ClassNorms(emb []float32, labels []uint8, l, classes int) []float64 {
	sum := make([]float64, classes)
	count := make([]int, classes)
	for i, y := range labels {
		var s float64
		for _, v := range emb[i*l : (i+1)*l] {
			s += float64(v) * float64(v)
		}
		sum[y] += math.Sqrt(s)
		count[y]++
	}
	for k := range sum {
		if count[k] == 0 {
			sum[k] = math.NaN()
		} else {
			sum[k] /= float64(count[k])
		}
	}
	return sum
}

// PublicAccuracy returns the share of correct predictions, or with
// balanced the mean over the classes present of each class's accuracy
// (the official code's compute_accuracy_class, whose division by a fixed
// 10 is this mean when all 10 classes are present).
func PublicAccuracy(correct []bool, labels []uint8, classes int, balanced bool) float64 {
	hit, count := make([]int, classes), make([]int, classes)
	total := 0
	for i, ok := range correct {
		count[labels[i]]++
		if ok {
			hit[labels[i]]++
			total++
		}
	}
	if !balanced {
		return float64(total) / float64(len(correct))
	}
	var s float64
	present := 0
	for k := range classes {
		if count[k] > 0 {
			s += float64(hit[k]) / float64(count[k])
			present++
		}
	}
	return s / float64(present)
}

// Lowest returns the positions of the k lowest accuracies, ties by client
// ID, in that order.
func Lowest(acc []float64, clients []int, k int) []int {
	pos := make([]int, len(acc))
	for i := range pos {
		pos[i] = i
	}
	slices.SortStableFunc(pos, func(a, b int) int {
		return cmp.Or(cmp.Compare(acc[a], acc[b]), cmp.Compare(clients[a], clients[b]))
	})
	return pos[:k]
}

// NormDiff returns Algorithm 2's Δ_j[l] = Σ_{m ∈ others} (F_m[l] − F_j[l])
// over the others that have class l; NaN where client j has no norm for l
// or no other client has one.
func NormDiff(norms [][]float64, j int, others []int) []float64 {
	d := make([]float64, len(norms[j]))
	for l, fj := range norms[j] {
		d[l] = math.NaN()
		if math.IsNaN(fj) {
			continue
		}
		for _, m := range others {
			if fm := norms[m][l]; !math.IsNaN(fm) {
				if math.IsNaN(d[l]) {
					d[l] = 0
				}
				d[l] += fm - fj
			}
		}
	}
	return d
}

// MeanNorms returns the mean over others of their class norms, NaN where
// none has the class: the corrected variant's targets F̄_{−j}.
func MeanNorms(norms [][]float64, others []int, classes int) []float64 {
	t := make([]float64, classes)
	for l := range t {
		var s float64
		c := 0
		for _, m := range others {
			if v := norms[m][l]; !math.IsNaN(v) {
				s += v
				c++
			}
		}
		t[l] = math.NaN()
		if c > 0 {
			t[l] = s / float64(c)
		}
	}
	return t
}

// InertPenalty returns Σ over the refinement's batches of J(B) =
// Σ_{l ∈ labels(B)} (n_l/|B|)·Δ[l] (classes with Δ[l] NaN, absent from
// Algorithm 2's keys, add nothing), for epochs passes over labels in order
// in batches of batch: the paper's regulariser, a constant per batch that
// moves no weight.
func InertPenalty(labels []uint8, batch, epochs int, delta []float64) float64 {
	var per float64
	for lo := 0; lo < len(labels); lo += batch {
		b := labels[lo:min(lo+batch, len(labels))]
		for _, y := range b {
			if d := delta[y]; !math.IsNaN(d) {
				per += d / float64(len(b))
			}
		}
	}
	return float64(epochs) * per
}

// hasBuffers reports whether n has BatchNorm running statistics.
func hasBuffers(n *trainer.Net) bool {
	for _, t := range trainable(n, n.NumParams()) {
		if !t {
			return true
		}
	}
	return false
}
