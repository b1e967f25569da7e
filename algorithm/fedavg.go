package algorithm

import (
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// FedAvg is local SGD on the cross-entropy (McMahan et al., AISTATS 2017,
// arXiv:1602.05629, Algorithm 1): each client trains θ^t for its local steps
// and uploads Δ_k = θ_k − θ^t; the server is the point's rule.
type FedAvg struct{ Base }

// FedProx (Li et al., MLSys 2020, arXiv:1812.06127, Eq. (2)) adds the
// proximal term μ/2·‖w − θ^t‖² over the trainable parameters to FedAvg's
// local objective; its server is FedAvg's. With μ = 0 it is FedAvg bit for
// bit.
type FedProx struct {
	Base
	Mu float64 `json:"mu"` // μ ≥ 0
}

var (
	_ Algorithm = FedAvg{}
	_ Algorithm = FedProx{}
)

// NewFedAvg builds FedAvg; it takes no options.
func NewFedAvg(opts fl.Options) (Algorithm, error) {
	if err := opts.Decode("algorithm (fedavg)", &struct{}{}); err != nil {
		return nil, err
	}
	return FedAvg{}, nil
}

// NewFedProx builds FedProx from {mu}. μ has no default: the paper tunes it
// over {0.001, 0.01, 0.1, 1} and NIID-Bench reports 0.01 best most often
// (specs/fnrfl.md §3).
func NewFedProx(opts fl.Options) (Algorithm, error) {
	var o struct {
		Mu *float64 `json:"mu"`
	}
	if err := opts.Decode("algorithm (fedprox)", &o); err != nil {
		return nil, err
	}
	if o.Mu == nil {
		return nil, fmt.Errorf("algorithm.mu is required for fedprox (the paper tunes μ over 0.001, 0.01, 0.1, 1; NIID-Bench's best is most often 0.01): write {name: fedprox, mu: 0.01}: %w", fl.ErrInvalid)
	}
	if err := finite("algorithm.mu", *o.Mu, 0, false); err != nil {
		return nil, err
	}
	return FedProx{Mu: *o.Mu}, nil
}

// Objective implements Algorithm: the cross-entropy plus μ/2·‖w − θ^t‖².
func (a FedProx) Objective(Client) (trainer.Objective, error) { return trainer.Proximal(a.Mu), nil }
