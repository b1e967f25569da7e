package trainer

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestOptimizers checks the optimisers and schedules against a float64
// re-implementation of PyTorch's update rules on full-batch steps (n ≤ B,
// so the batch is fixed), with the gradients g_t of the float64 graph:
//
//	sgd:   d = g + λw; b = βb + d; d = nesterov ? d + βb : b (b = d when β = 0); w −= η_t·d
//	adam:  g += λw; m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²;
//	       w −= η_t·(m/(1−β1^t)) / (√(v/(1−β2^t)) + ε)
//	adamw: w ·= 1 − η_t·λ, then adam without λw
//
// (torch.optim.SGD, Adam, AdamW). The float32 training differs from the
// float64 reference by rounding only: |Δ| ≤ 1e-5·(1 + |w|) after three
// steps, ~100× float32's unit roundoff accumulated over the dot products.
// Adam normalises each coordinate, so a coordinate with a tiny gradient
// moves by ~η anyway; its float32 rounding is ~1e-7·η per step.
func TestOptimizers(t *testing.T) {
	base := Hyper{BatchSize: 16, LocalSteps: 3}
	with := func(f func(*Hyper)) Hyper {
		h := base
		f(&h)
		return h
	}
	tests := []struct {
		name string
		hp   Hyper
	}{
		{"sgd", with(func(h *Hyper) { h.Optimizer, h.LR = OptimizerSGD, 0.3 })},
		{"sgd weight decay", with(func(h *Hyper) { h.Optimizer, h.LR, h.WeightDecay = OptimizerSGD, 0.3, 0.05 })},
		{"momentum and weight decay", with(func(h *Hyper) { h.Optimizer, h.LR, h.Momentum, h.WeightDecay = OptimizerSGD, 0.3, 0.9, 0.05 })},
		{"nesterov", with(func(h *Hyper) {
			h.Optimizer, h.LR, h.Momentum, h.Nesterov, h.WeightDecay = OptimizerSGD, 0.3, 0.9, true, 0.05
		})},
		{"adam", with(func(h *Hyper) { h.Optimizer, h.LR = OptimizerAdam, 0.01 })},
		{"adam L2 and betas", with(func(h *Hyper) {
			h.Optimizer, h.LR, h.WeightDecay, h.Beta1, h.Beta2, h.Eps = OptimizerAdam, 0.01, 0.1, 0.8, 0.99, 1e-6
		})},
		{"adamw", with(func(h *Hyper) { h.Optimizer, h.LR, h.WeightDecay = OptimizerAdamW, 0.01, 0.1 })},
		{"step schedule", with(func(h *Hyper) {
			h.Optimizer, h.LR, h.Momentum, h.Schedule, h.StepSize, h.Gamma = OptimizerSGD, 0.3, 0.5, ScheduleStep, 2, 0.5
		})},
		{"cosine schedule", with(func(h *Hyper) {
			h.Optimizer, h.LR, h.Schedule, h.MinLR = OptimizerSGD, 0.3, ScheduleCosine, 0.01
		})},
	}
	n := mustNet(t, Spec{Arch: ArchMLP, Hidden: []int{6}}, [3]int{1, 3, 3}, 4)
	ex := uniformData(8, 12, n.Dim(), 4)
	trainable := make([]bool, n.NumParams())
	for _, sp := range trainableSpans(n) {
		for j := sp.lo; j < sp.hi; j++ {
			trainable[j] = true
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.hp.Validate(); err != nil {
				t.Fatal(err)
			}
			w0 := initWeights(t, n, 2)
			got := slices.Clone(w0)
			if _, err := newTrainer().Train(t.Context(), n, got, ex, tt.hp, rand.New(rand.NewPCG(1, 1)), nil); err != nil {
				t.Fatal(err)
			}
			probe := newGradProbe(t, n, ex, 0)
			w := make([]float64, len(w0))
			convertCopy(w, w0)
			b, m, v := make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
			hp := tt.hp
			b1, b2, eps := hp.adam()
			for k := range hp.LocalSteps {
				eta := hp.LR
				switch hp.Schedule {
				case ScheduleStep:
					eta = hp.LR * math.Pow(hp.Gamma, float64(k/hp.StepSize))
				case ScheduleCosine:
					eta = hp.MinLR + (hp.LR-hp.MinLR)*(1+math.Cos(math.Pi*float64(k)/float64(hp.LocalSteps)))/2
				}
				_, g := probe.lossGrad(w)
				step := float64(k + 1)
				for j := range w {
					if !trainable[j] {
						continue
					}
					switch hp.Optimizer {
					case OptimizerSGD:
						d := g[j] + hp.WeightDecay*w[j]
						if hp.Momentum > 0 {
							b[j] = hp.Momentum*b[j] + d
							if hp.Nesterov {
								d += hp.Momentum * b[j]
							} else {
								d = b[j]
							}
						}
						w[j] -= eta * d
					default:
						d := g[j]
						if hp.Optimizer == OptimizerAdamW {
							w[j] *= 1 - eta*hp.WeightDecay
						} else {
							d += hp.WeightDecay * w[j]
						}
						m[j] = b1*m[j] + (1-b1)*d
						v[j] = b2*v[j] + (1-b2)*d*d
						w[j] -= eta * (m[j] / (1 - math.Pow(b1, step))) / (math.Sqrt(v[j]/(1-math.Pow(b2, step))) + eps)
					}
				}
			}
			for j := range w {
				if math.Abs(float64(got[j])-w[j]) > 1e-5*(1+math.Abs(w[j])) {
					t.Errorf("w[%d] = %v after %d steps; want %v", j, got[j], hp.LocalSteps, w[j])
					break
				}
			}
		})
	}
}

// TestLRSchedules checks lrAt against values worked out by hand.
func TestLRSchedules(t *testing.T) {
	step := Hyper{LR: 1, Schedule: ScheduleStep, StepSize: 2, Gamma: 0.5}
	cosine := Hyper{LR: 1, Schedule: ScheduleCosine, MinLR: 0.2}
	tests := []struct {
		name string
		hp   Hyper
		k    int
		want float64
	}{
		{"constant", Hyper{LR: 0.3}, 7, 0.3},
		// η·γ^⌊k/2⌋: steps 0, 1 → 1; 2, 3 → 0.5; 4 → 0.25.
		{"step k=1", step, 1, 1},
		{"step k=2", step, 2, 0.5},
		{"step k=5", step, 5, 0.25},
		// 0.2 + 0.8·(1 + cos(πk/4))/2 with K = 4: k = 0 → 1; k = 2 → 0.6;
		// k = 1 → 0.2 + 0.4·(1 + √2/2) = 0.88284271247...
		{"cosine k=0", cosine, 0, 1},
		{"cosine k=1", cosine, 1, 0.2 + 0.4*(1+math.Sqrt2/2)},
		{"cosine k=2", cosine, 2, 0.6},
	}
	for _, tt := range tests {
		if got := tt.hp.lrAt(tt.k, 4); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%s: lrAt(%d, 4) = %v; want %v", tt.name, tt.k, got, tt.want)
		}
	}
}

func TestHyperValidate(t *testing.T) {
	ok := Hyper{Optimizer: OptimizerSGD, LR: 0.1, BatchSize: 8, LocalSteps: 2}
	tests := []struct {
		name      string
		give      func(h *Hyper)
		wantField string // "" means valid
	}{
		{"sgd", func(*Hyper) {}, ""},
		{"adam", func(h *Hyper) { h.Optimizer = OptimizerAdam }, ""},
		{"adamw with betas", func(h *Hyper) { h.Optimizer, h.Beta1, h.Beta2, h.Eps = OptimizerAdamW, 0.5, 0.9, 1e-6 }, ""},
		{"nesterov", func(h *Hyper) { h.Momentum, h.Nesterov = 0.9, true }, ""},
		{"step", func(h *Hyper) { h.Schedule, h.StepSize, h.Gamma = ScheduleStep, 5, 0.5 }, ""},
		{"cosine", func(h *Hyper) { h.Schedule, h.MinLR = ScheduleCosine, 0.01 }, ""},
		{"nesterov without momentum", func(h *Hyper) { h.Nesterov = true }, "hyper.nesterov"},
		{"adam with momentum", func(h *Hyper) { h.Optimizer, h.Momentum = OptimizerAdam, 0.9 }, "hyper.momentum"},
		{"beta1 = 1", func(h *Hyper) { h.Optimizer, h.Beta1 = OptimizerAdam, 1 }, "hyper.beta1"},
		{"betas with sgd", func(h *Hyper) { h.Beta1 = 0.5 }, "hyper.beta1"},
		{"unknown schedule", func(h *Hyper) { h.Schedule = "linear" }, "hyper.schedule"},
		{"step without size", func(h *Hyper) { h.Schedule, h.Gamma = ScheduleStep, 0.5 }, "step_size"},
		{"gamma without schedule", func(h *Hyper) { h.Gamma = 0.5 }, "without a hyper.schedule"},
		{"cosine min above lr", func(h *Hyper) { h.Schedule, h.MinLR = ScheduleCosine, 1 }, "min_lr"},
	}
	for _, tt := range tests {
		h := ok
		tt.give(&h)
		err := h.Validate()
		if (err == nil) != (tt.wantField == "") || (err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantField))) {
			t.Errorf("%s: Validate = %v; want an error naming %q", tt.name, err, tt.wantField)
		}
	}
}
