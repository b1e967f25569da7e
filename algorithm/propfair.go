package algorithm

import (
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// PropFair is proportionally fair federated learning (Zhang,
// Malekmohammadi, Chen & Yu, "Proportional Fairness in Federated Learning",
// TMLR 2023, arXiv:2202.01666): the clients minimise Σ_i −log(M − F_i(θ)),
// the Nash bargaining objective with baseline M, by local SGD on a
// transformed minibatch loss φ(ℓ) (trainer.PropFairLoss):
//
//	φ(ℓ) = −log(1 − ℓ/M)   if M − ℓ ≥ thres
//	φ(ℓ) = ℓ/M             otherwise          (huber: ℓ/thres)
//
// and the server is the point's rule (FedAvg's average). The default is
// the authors' official code's default, which the AAggFF authors' code
// copies; Huber is the official code's huber flag, the linear extension
// with the log branch's slope 1/thres at the switch. The two agree when
// M = thres.
//
// With M ≤ thres and ℓ > 0 the log branch never fires (M − ℓ < M ≤ thres):
// every step scales the cross-entropy's gradient by 1/M, so PropFair with
// the FedEBA+ paper's Table 1 setting M = thres = 0.2 is FedAvg with the
// local learning rate multiplied by 5 (0.5 at lr 0.1), for plain SGD.
type PropFair struct {
	Base
	M     float64 `json:"m"`
	Thres float64 `json:"thres"`
	Huber bool    `json:"huber"`
}

var _ Algorithm = PropFair{}

// NewPropFair builds PropFair from {m, thres, huber}. M defaults to 0.2,
// the pick of the FedEBA+ paper's Table 1 (the PropFair paper tries 0.2, 2
// and 5), thres to 0.2, the official code's ε, and huber to false. Option
// names match case-insensitively, so the paper's M may be written m or M.
func NewPropFair(opts fl.Options) (Algorithm, error) {
	a := PropFair{M: 0.2, Thres: 0.2}
	if err := opts.Decode("algorithm (propfair)", &a); err != nil {
		return nil, err
	}
	if err := finite("algorithm.m", a.M, 0, true); err != nil {
		return nil, err
	}
	if err := finite("algorithm.thres", a.Thres, 0, false); err != nil {
		return nil, err
	}
	if a.Huber && a.Thres == 0 {
		return nil, fmt.Errorf("algorithm.thres = 0 with huber: true; the linear branch's slope 1/thres is infinite: set thres > 0 (0.2 in the official code): %w", fl.ErrInvalid)
	}
	return a, nil
}

// Objective implements Algorithm: PropFair's loss transform of the
// cross-entropy.
func (a PropFair) Objective(Client) (trainer.Objective, error) {
	return trainer.Objective{PropFair: &trainer.PropFairLoss{M: a.M, Thres: a.Thres, Huber: a.Huber}}, nil
}
