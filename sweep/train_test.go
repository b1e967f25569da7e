package sweep

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/trainer"
)

// TestTrainFieldsOmittedAtZero checks that the model and training fields
// added for the model zoo (issue 4) leave the canonical JSON of a point that
// does not set them unchanged, so the IDs of stored points stay valid
// (TestDemoPointIDsPinned pins examples/demo.yaml's four IDs), and that
// setting any of them changes the ID.
func TestTrainFieldsOmittedAtZero(t *testing.T) {
	c := Defaults()
	c.finish()
	var canon map[string]json.RawMessage
	if err := json.Unmarshal(c.Canonical(), &canon); err != nil {
		t.Fatal(err)
	}
	keys := func(block string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(canon[block], &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, k := range []string{"activation"} {
		if _, ok := keys("model")[k]; ok {
			t.Errorf("canonical model has %q at its zero value", k)
		}
	}
	for _, k := range []string{"nesterov", "beta1", "beta2", "eps", "lr_schedule", "lr_step", "lr_gamma", "lr_min", "lr_decay"} {
		if _, ok := keys("train")[k]; ok {
			t.Errorf("canonical train has %q at its zero value", k)
		}
	}
	base := PointID(c)
	for _, set := range []func(*Config){
		func(c *Config) { c.Model.Activation = "tanh" },
		func(c *Config) { c.Train.Nesterov = true },
		func(c *Config) { c.Train.Beta1 = 0.8 },
		func(c *Config) { c.Train.Beta2 = 0.99 },
		func(c *Config) { c.Train.Eps = 1e-6 },
		func(c *Config) { c.Train.LRSchedule = "cosine" },
		func(c *Config) { c.Train.LRStep = 5 },
		func(c *Config) { c.Train.LRGamma = 0.5 },
		func(c *Config) { c.Train.LRMin = 0.001 },
		func(c *Config) { c.Train.LRDecay = 0.999 },
	} {
		d := c
		set(&d)
		if PointID(d) == base {
			t.Errorf("a set field left the point ID unchanged: %s", d.Canonical())
		}
	}
}

const trainBase = "name: x\nclients_per_round: 5\n"

// TestTrainSpec parses the new model and training fields, checks how they
// reach the trainer, and that bad values are reported by their spec names.
func TestTrainSpec(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		wantHyper trainer.Hyper // checked when wantErr is ""
		wantSpec  trainer.Spec
		wantErr   string
	}{
		{
			name: "adam cosine",
			spec: "model: {arch: lenet, activation: tanh}\ntrain: {optimizer: adam, lr: 0.01, beta1: 0.8, eps: 1.0e-6, batch_size: 32, local_epochs: 2, lr_schedule: cosine, lr_min: 0.001}\n",
			wantHyper: trainer.Hyper{Optimizer: "adam", LR: 0.01, Beta1: 0.8, Eps: 1e-6, BatchSize: 32, LocalEpochs: 2,
				Schedule: "cosine", MinLR: 0.001},
			wantSpec: trainer.Spec{Arch: "lenet", Activation: "tanh"},
		},
		{
			name: "nesterov step decay",
			spec: "model: {arch: cnn-hics-3conv}\ntrain: {optimizer: sgd, lr: 0.1, momentum: 0.9, nesterov: true, weight_decay: 5.0e-4, batch_size: 64, local_steps: 20, lr_schedule: step, lr_step: 10, lr_gamma: 0.5, lr_decay: 0.999}\n",
			wantHyper: trainer.Hyper{Optimizer: "sgd", LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 5e-4, BatchSize: 64,
				LocalSteps: 20, Schedule: "step", StepSize: 10, Gamma: 0.5},
			wantSpec: trainer.Spec{Arch: "cnn-hics-3conv"},
		},
		{name: "unknown arch", spec: "model: {arch: vgg11}\n", wantErr: "model.arch"},
		{name: "activation on a fixed net", spec: "model: {arch: cnn-hics, activation: tanh}\n", wantErr: "model.activation"},
		{name: "unknown schedule", spec: "train: {lr_schedule: linear}\n", wantErr: "train.lr_schedule"},
		{name: "step schedule without step", spec: "train: {lr_schedule: step, lr_gamma: 0.5}\n", wantErr: "train.lr_step"},
		{name: "gamma without schedule", spec: "train: {lr_gamma: 0.5}\n", wantErr: "train.lr_gamma"},
		{name: "nesterov without momentum", spec: "train: {nesterov: true}\n", wantErr: "train.nesterov"},
		{name: "betas with sgd", spec: "train: {beta1: 0.5}\n", wantErr: "train.beta1"},
		{name: "decay above 1", spec: "train: {lr_decay: 1.5}\n", wantErr: "train.lr_decay"},
		{name: "NaN decay", spec: "train: {lr_decay: .nan}\n", wantErr: "train.lr_decay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts, err := parsePoints(t, trainBase+tt.spec)
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("parse = %v; want an error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := pts[0].Config
			if got := c.Hyper(); !reflect.DeepEqual(got, tt.wantHyper) {
				t.Errorf("Hyper() = %+v; want %+v", got, tt.wantHyper)
			}
			if got := c.TrainerSpec(); !reflect.DeepEqual(got, tt.wantSpec) {
				t.Errorf("TrainerSpec() = %+v; want %+v", got, tt.wantSpec)
			}
		})
	}
}

// TestRoundLR checks the per-round decay lr·d^(t−1) on hand-computed values.
func TestRoundLR(t *testing.T) {
	c := Defaults()
	c.Train.LR = 0.1
	if got := c.RoundLR(7); got != 0.1 {
		t.Errorf("RoundLR(7) without decay = %v; want 0.1", got)
	}
	c.Train.LRDecay = 0.5
	for _, tt := range []struct {
		round int
		want  float64
	}{{1, 0.1}, {2, 0.05}, {3, 0.025}} {
		if got := c.RoundLR(tt.round); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("RoundLR(%d) = %v; want %v", tt.round, got, tt.want)
		}
		if got := c.HyperAt(tt.round).LR; math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("HyperAt(%d).LR = %v; want %v", tt.round, got, tt.want)
		}
	}
}
