package algorithm_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// factories are the algorithm constructors by registry name
// (methods.Builtin).
var factories = map[string]func(fl.Options) (algorithm.Algorithm, error){
	"fedavg":   algorithm.NewFedAvg,
	"fedprox":  algorithm.NewFedProx,
	"scaffold": algorithm.NewSCAFFOLD,
	"feddyn":   algorithm.NewFedDyn,
	"moon":     algorithm.NewMOON,
	"fednova":  algorithm.NewFedNova,
	"feddc":    algorithm.NewFedDC,
	"propfair": algorithm.NewPropFair,
	"fedfv":    algorithm.NewFedFV,
	"qffl":     algorithm.NewQFFL,
	"term":     algorithm.NewTERM,
	"afl":      algorithm.NewAFL,
	"fedmgda+": algorithm.NewFedMGDAPlus,
}

// TestOptionsRejected checks that every constructor rejects unknown
// options, values of the wrong type and values out of range with
// fl.ErrInvalid, naming the option.
func TestOptionsRejected(t *testing.T) {
	tests := []struct {
		name      string
		giveAlg   string
		giveOpts  fl.Options
		wantField string
	}{
		{"fedavg unknown", "fedavg", fl.Options{"mu": 0.01}, "mu"}, // μ belongs to fedprox
		{"fedprox unknown", "fedprox", fl.Options{"mu": 0.01, "alpha": 1}, "alpha"},
		{"fedprox without mu", "fedprox", nil, "algorithm.mu is required"},
		{"fedprox negative mu", "fedprox", fl.Options{"mu": -0.1}, "algorithm.mu"},
		{"fedprox mu string", "fedprox", fl.Options{"mu": "small"}, "mu"},
		{"fedprox mu Inf", "fedprox", fl.Options{"mu": math.Inf(1)}, "fedprox"},
		{"scaffold unknown", "scaffold", fl.Options{"option": "II"}, "option"},
		{"scaffold correction", "scaffold", fl.Options{"correction": "both"}, "algorithm.correction"},
		{"scaffold lr_sum", "scaffold", fl.Options{"lr_sum": "adam"}, "algorithm.lr_sum"},
		{"scaffold lr_sum after_step", "scaffold", fl.Options{"correction": "after_step", "lr_sum": "plain"}, "algorithm.lr_sum"},
		{"feddyn unknown", "feddyn", fl.Options{"mu": 0.1}, "mu"},
		{"feddyn alpha 0", "feddyn", fl.Options{"alpha": 0}, "algorithm.alpha"},
		{"feddyn negative alpha", "feddyn", fl.Options{"alpha": -0.01}, "algorithm.alpha"},
		{"feddyn adaptive string", "feddyn", fl.Options{"adaptive_alpha": "yes"}, "adaptive_alpha"},
		{"moon unknown", "moon", fl.Options{"projection": 256}, "projection"},
		{"moon negative mu", "moon", fl.Options{"mu": -1}, "algorithm.mu"},
		{"moon tau 0", "moon", fl.Options{"tau": 0}, "algorithm.tau"},
		{"moon negative tau", "moon", fl.Options{"tau": -0.5}, "algorithm.tau"},
		{"fednova unknown", "fednova", fl.Options{"rho": 0.9}, "rho"}, // ρ is train.momentum
		{"feddc unknown", "feddc", fl.Options{"alpha": 0.01}, "alpha"},
		{"feddc negative lambda", "feddc", fl.Options{"lambda": -0.01}, "algorithm.lambda"},
		{"feddc drift_mean", "feddc", fl.Options{"drift_mean": "some"}, "algorithm.drift_mean"},
		{"feddc correction", "feddc", fl.Options{"correction": "gradient"}, "algorithm.correction"},
		{"feddc lr_sum", "feddc", fl.Options{"lr_sum": "effective"}, "algorithm.lr_sum"},
		{"feddc size_scaled string", "feddc", fl.Options{"size_scaled": "yes"}, "size_scaled"},
		{"propfair unknown", "propfair", fl.Options{"base": 2}, "base"},
		{"propfair m 0", "propfair", fl.Options{"m": 0}, "algorithm.m"},
		{"propfair negative M", "propfair", fl.Options{"M": -0.2}, "algorithm.m"},
		{"propfair negative thres", "propfair", fl.Options{"thres": -0.1}, "algorithm.thres"},
		{"propfair huber thres 0", "propfair", fl.Options{"thres": 0, "huber": true}, "algorithm.thres"},
		{"fedfv unknown", "fedfv", fl.Options{"tau_fv": 10}, "tau_fv"},
		{"fedfv negative alpha", "fedfv", fl.Options{"alpha": -0.1}, "algorithm.alpha"},
		{"fedfv alpha > 1", "fedfv", fl.Options{"alpha": 1.5}, "algorithm.alpha"},
		{"fedfv negative tau", "fedfv", fl.Options{"tau": -1}, "algorithm.tau"},
		{"fedfv fractional tau", "fedfv", fl.Options{"tau": 1.5}, "tau"},
		{"fedfv external", "fedfv", fl.Options{"external": "both"}, "algorithm.external"},
		{"qffl unknown", "qffl", fl.Options{"server_lr": 1}, "server_lr"}, // q-FedAvg has no server lr
		{"qffl negative q", "qffl", fl.Options{"q": -0.5}, "algorithm.q"},
		{"qffl offset 0", "qffl", fl.Options{"loss_offset": 0}, "algorithm.loss_offset"},
		{"term unknown", "term", fl.Options{"tau": 10}, "tau"},
		{"term t string", "term", fl.Options{"t": "high"}, "t"},
		{"afl unknown", "afl", fl.Options{"lambda": 0.7}, "lambda"}, // γ_λ is lambda_lr
		{"afl negative lambda_lr", "afl", fl.Options{"lambda_lr": -0.1}, "algorithm.lambda_lr"},
		{"afl report", "afl", fl.Options{"report": "best"}, "algorithm.report"},
		{"afl partial", "afl", fl.Options{"partial": "full"}, "algorithm.partial"},
		{"fedmgda+ unknown", "fedmgda+", fl.Options{"server_lr": 1}, "server_lr"}, // η_g is aggregator.server_lr
		{"fedmgda+ negative epsilon", "fedmgda+", fl.Options{"epsilon": -0.03}, "algorithm.epsilon"},
		{"fedmgda+ negative offset", "fedmgda+", fl.Options{"norm_offset": -1e-8}, "algorithm.norm_offset"},
	}
	for _, tt := range tests {
		a, err := factories[tt.giveAlg](tt.giveOpts)
		if a != nil {
			t.Errorf("%s: built %+v; want nil", tt.name, a)
		}
		wantInvalid(t, tt.name, err, tt.wantField)
	}
}

// TestOptionsResolved checks the values the constructors resolve, defaults
// included (each from the doc of its constructor), and that json.Marshal of
// the built algorithm records them, as the engine does.
func TestOptionsResolved(t *testing.T) {
	tests := []struct {
		name     string
		giveAlg  string
		giveOpts fl.Options
		want     algorithm.Algorithm
		wantJSON string
	}{
		{"fedavg", "fedavg", nil, algorithm.FedAvg{}, `{}`},
		{"fedprox", "fedprox", fl.Options{"mu": 0.01}, algorithm.FedProx{Mu: 0.01}, `{"mu":0.01}`},
		// lr_sum "momentum" is ours: the paper's K·η bit for bit without momentum.
		{"scaffold default", "scaffold", nil, algorithm.SCAFFOLD{Correction: "gradient", LRSum: "momentum"}, `{"correction":"gradient","lr_sum":"momentum"}`},
		{"scaffold plain", "scaffold", fl.Options{"lr_sum": "plain"}, algorithm.SCAFFOLD{Correction: "gradient", LRSum: "plain"}, `{"correction":"gradient","lr_sum":"plain"}`},
		{"scaffold after_step", "scaffold", fl.Options{"correction": "after_step"}, algorithm.SCAFFOLD{Correction: "after_step"}, `{"correction":"after_step"}`},
		// α = 0.01: the official example's alpha_coef.
		{"feddyn default", "feddyn", nil, algorithm.FedDyn{Alpha: 0.01}, `{"alpha":0.01}`},
		{"feddyn adaptive", "feddyn", fl.Options{"alpha": 0.1, "adaptive_alpha": true}, algorithm.FedDyn{Alpha: 0.1, AdaptiveAlpha: true}, `{"alpha":0.1,"adaptive_alpha":true}`},
		// μ = 5, τ = 0.5: MOON's CIFAR-10 values.
		{"moon default", "moon", nil, algorithm.MOON{Mu: 5, Tau: 0.5}, `{"mu":5,"tau":0.5}`},
		{"moon mu 0", "moon", fl.Options{"mu": 0, "tau": 1}, algorithm.MOON{Mu: 0, Tau: 1}, `{"mu":0,"tau":1}`},
		{"fednova", "fednova", nil, algorithm.FedNova{}, `{}`},
		// λ = 0.01: the official example's alpha_coef; "selected" is the paper.
		{"feddc default", "feddc", nil, algorithm.FedDC{Lambda: 0.01, DriftMean: "selected", Correction: "update", LRSum: "momentum"},
			`{"lambda":0.01,"drift_mean":"selected","correction":"update","lr_sum":"momentum","size_scaled":false}`},
		{"feddc all", "feddc", fl.Options{"lambda": 0, "drift_mean": "all"}, algorithm.FedDC{Lambda: 0, DriftMean: "all", Correction: "update", LRSum: "momentum"},
			`{"lambda":0,"drift_mean":"all","correction":"update","lr_sum":"momentum","size_scaled":false}`},
		// The official code: its server, control variates and size scaling.
		{"feddc official", "feddc", fl.Options{"drift_mean": "all", "correction": "control_variate", "size_scaled": true, "lr_sum": "plain"},
			algorithm.FedDC{Lambda: 0.01, DriftMean: "all", Correction: "control_variate", LRSum: "plain", SizeScaled: true},
			`{"lambda":0.01,"drift_mean":"all","correction":"control_variate","lr_sum":"plain","size_scaled":true}`},
		// M = 0.2: the FedEBA+ paper's Table 1 pick; thres = 0.2: the official code's ε.
		{"propfair default", "propfair", nil, algorithm.PropFair{M: 0.2, Thres: 0.2}, `{"m":0.2,"thres":0.2,"huber":false}`},
		{"propfair M", "propfair", fl.Options{"M": 5, "huber": true}, algorithm.PropFair{M: 5, Thres: 0.2, Huber: true}, `{"m":5,"thres":0.2,"huber":true}`},
		{"propfair thres 0", "propfair", fl.Options{"m": 2, "thres": 0}, algorithm.PropFair{M: 2}, `{"m":2,"thres":0,"huber":false}`},
		// α = 0.1, τ = 10: the FedEBA+ paper's Tables 8 and 19; "previous" is the code released with the paper.
		{"fedfv default", "fedfv", nil, algorithm.FedFV{Alpha: 0.1, Tau: 10, External: "previous"}, `{"alpha":0.1,"tau":10,"external":"previous"}`},
		{"fedfv current", "fedfv", fl.Options{"alpha": 0, "tau": 0, "external": "current"}, algorithm.FedFV{External: "current"}, `{"alpha":0,"tau":0,"external":"current"}`},
		// q = 0.5, t = 0.1, ε = 0.03: FedEBA+'s Table 1 picks; 1e−10 is the
		// official q-FFL code's offset, 1e−8 easyFL's FedMGDA+ norm offset;
		// γ_λ = 0.7 is FedEBA+'s Table 8 pick for AFL.
		{"qffl default", "qffl", nil, algorithm.QFFL{Q: 0.5, LossOffset: 1e-10}, `{"q":0.5,"loss_offset":1e-10}`},
		{"qffl q 0", "qffl", fl.Options{"q": 0}, algorithm.QFFL{Q: 0, LossOffset: 1e-10}, `{"q":0,"loss_offset":1e-10}`},
		{"term default", "term", nil, algorithm.TERM{T: 0.1}, `{"t":0.1}`},
		{"term negative", "term", fl.Options{"t": -1}, algorithm.TERM{T: -1}, `{"t":-1}`},
		{"afl default", "afl", nil, algorithm.AFL{LambdaLR: 0.7, Report: "average", Partial: "renormalize"}, `{"lambda_lr":0.7,"report":"average","partial":"renormalize"}`},
		{"afl last", "afl", fl.Options{"lambda_lr": 0.01, "report": "last"}, algorithm.AFL{LambdaLR: 0.01, Report: "last", Partial: "renormalize"}, `{"lambda_lr":0.01,"report":"last","partial":"renormalize"}`},
		{"fedmgda+ default", "fedmgda+", nil, algorithm.FedMGDAPlus{Epsilon: 0.03, NormOffset: 1e-8}, `{"epsilon":0.03,"norm_offset":1e-8}`},
		{"fedmgda+ epsilon 1", "fedmgda+", fl.Options{"epsilon": 1, "norm_offset": 0}, algorithm.FedMGDAPlus{Epsilon: 1, NormOffset: 0}, `{"epsilon":1,"norm_offset":0}`},
	}
	for _, tt := range tests {
		got, err := factories[tt.giveAlg](tt.giveOpts)
		if err != nil {
			t.Errorf("%s: New(%v) error = %v", tt.name, tt.giveOpts, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: New(%v) = %#v; want %#v", tt.name, tt.giveOpts, got, tt.want)
		}
		b, err := json.Marshal(got)
		if err != nil || string(b) != tt.wantJSON {
			t.Errorf("%s: json.Marshal = %s, %v; want %s", tt.name, b, err, tt.wantJSON)
		}
	}
}

// TestCheckOptimizer: the algorithms whose server reads a local update as
// a multiple of the step sizes (SCAFFOLD's and FedDC's gradient
// corrections, FedNova's a_k) refuse Adam and AdamW, and q-FFL (L = 1/η_L)
// refuses momentum too,
// naming the optimiser; SGD with momentum is accepted; SCAFFOLD's
// after_step correction accepts Adam.
func TestCheckOptimizer(t *testing.T) {
	sgdMomentum := trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.01, Momentum: 0.9, BatchSize: 4, LocalSteps: 5}
	spec := trainer.Spec{Arch: trainer.ArchMLP, Hidden: []int{8}}
	// q-FFL's L = 1/η_L holds for plain SGD only.
	wantInvalid(t, "qffl Check(momentum)", algorithm.QFFL{Q: 0.5}.Check(spec, sgdMomentum), "qffl", "momentum")
	wantInvalid(t, "qffl Check(adam)", algorithm.QFFL{Q: 0.5}.Check(spec, trainer.Hyper{Optimizer: trainer.OptimizerAdam, LR: 0.001, BatchSize: 4, LocalSteps: 5}), "qffl", "adam")
	if err := (algorithm.QFFL{Q: 0.5}).Check(spec, trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.1, BatchSize: 4, LocalSteps: 5}); err != nil {
		t.Errorf("qffl Check(plain sgd) = %v; want nil", err)
	}
	for _, tt := range []struct {
		name     string
		give     algorithm.Algorithm
		wantAdam bool // accepted under Adam
	}{
		{"scaffold", algorithm.SCAFFOLD{Correction: algorithm.CorrectGradient}, false},
		{"scaffold after_step", algorithm.SCAFFOLD{Correction: algorithm.CorrectAfterStep}, true},
		{"feddc", algorithm.FedDC{Lambda: 0.01}, false},
		{"fednova", algorithm.FedNova{}, false},
		{"fedavg", algorithm.FedAvg{}, true},
	} {
		if err := tt.give.Check(spec, sgdMomentum); err != nil {
			t.Errorf("%s: Check(sgd, momentum 0.9) = %v; want nil", tt.name, err)
		}
		for _, opt := range []string{trainer.OptimizerAdam, trainer.OptimizerAdamW} {
			err := tt.give.Check(spec, trainer.Hyper{Optimizer: opt, LR: 0.001, BatchSize: 4, LocalSteps: 5})
			if tt.wantAdam {
				if err != nil {
					t.Errorf("%s: Check(%s) = %v; want nil", tt.name, opt, err)
				}
				continue
			}
			wantInvalid(t, tt.name+" Check("+opt+")", err, opt)
		}
	}
}
