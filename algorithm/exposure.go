package algorithm

import (
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// An Exposed algorithm tells a label-recovery attack (package attack; the
// engine's inspect phase) what an honest-but-curious server knows of a
// client's round beyond θ^t and the upload: the terms the client's local
// objective added to the cross-entropy, and the client's local update
// θ_k − θ^t that its upload reveals.
//
// Exposure is called with the Client its Train was called with (c.State
// as the client's last round left it, c.Local not trained). Every vector
// it reads is one the server can keep itself: what it sent (SCAFFOLD's c,
// FedDC's Δθ^{prev}) or a sum of the client's own earlier uploads
// (SCAFFOLD's c_i = Σ Δc_i; FedDyn's ∇L_k(θ_k^{t−1}) = −α Σ Δ_k; FedDC's
// drift and last update, recovered round by round from its uploads). The
// engine reads them from the client's stored state, which holds the same
// values, instead of tracking them twice.
//
// Algorithms whose local training the attacks do not model (MOON's
// contrastive term, FedEBA+'s alignment, PropFair's loss transform) do not
// implement it: the attacks then treat the update as FedAvg's and the
// engine marks their rows unmodelled.
type Exposed interface {
	Exposure(c Client, upload []float32) (Exposure, error)
}

// Exposure is an Exposed algorithm's answer.
type Exposure struct {
	// Objective holds the local objective's terms: only Prox, Anchor,
	// Linear and AfterStep are set.
	Objective trainer.Objective
	// Delta is θ_k − θ^t, the client's local update.
	Delta []float32
}

// plainExposure is the exposure of local SGD on the cross-entropy (with
// FedProx's μ), whose upload is θ_k − θ^t: FedAvg's, FedProx's, FedNova's
// and the fairness methods whose clients train as FedAvg's do.
func plainExposure(mu float64, upload []float32) Exposure {
	return Exposure{Objective: trainer.Proximal(mu), Delta: upload}
}

var (
	_ Exposed = FedAvg{}
	_ Exposed = FedProx{}
	_ Exposed = FedNova{}
	_ Exposed = SCAFFOLD{}
	_ Exposed = FedDyn{}
	_ Exposed = FedDC{}
	_ Exposed = FedEBA{}
	_ Exposed = QFFL{}
	_ Exposed = TERM{}
	_ Exposed = AFL{}
	_ Exposed = FedMGDAPlus{}
	_ Exposed = FedFV{}
)

func (FedAvg) Exposure(_ Client, up []float32) (Exposure, error) { return plainExposure(0, up), nil }
func (a FedProx) Exposure(_ Client, up []float32) (Exposure, error) {
	return plainExposure(a.Mu, up), nil
}
func (FedNova) Exposure(_ Client, up []float32) (Exposure, error) { return plainExposure(0, up), nil }
func (FedEBA) Exposure(_ Client, up []float32) (Exposure, error)  { return plainExposure(0, up), nil }
func (QFFL) Exposure(_ Client, up []float32) (Exposure, error)    { return plainExposure(0, up), nil }
func (TERM) Exposure(_ Client, up []float32) (Exposure, error)    { return plainExposure(0, up), nil }
func (AFL) Exposure(_ Client, up []float32) (Exposure, error)     { return plainExposure(0, up), nil }
func (FedMGDAPlus) Exposure(_ Client, up []float32) (Exposure, error) {
	return plainExposure(0, up), nil
}
func (FedFV) Exposure(_ Client, up []float32) (Exposure, error) { return plainExposure(0, up), nil }

// Exposure implements Exposed: the correction c − c_i, in the gradient or
// after every step as the point's correction says.
func (s SCAFFOLD) Exposure(c Client, up []float32) (Exposure, error) {
	obj, err := s.objective(c)
	return Exposure{Objective: obj, Delta: up}, err
}

// Exposure implements Exposed.
func (a FedDyn) Exposure(c Client, up []float32) (Exposure, error) {
	obj, err := a.objective(c)
	return Exposure{Objective: obj, Delta: up}, err
}

// Exposure implements Exposed. With drift_mean "selected" the upload is
// θ_k − θ^t plus the new drift d_k + (θ_k − θ^t), so the local update is
// (upload − d_k)/2 with the drift d_k the client started the round with.
func (a FedDC) Exposure(c Client, up []float32) (Exposure, error) {
	obj, drift, err := a.objective(c)
	if err != nil {
		return Exposure{}, err
	}
	if a.DriftMean != DriftSelected {
		return Exposure{Objective: obj, Delta: up}, nil
	}
	if len(up) != len(drift) {
		return Exposure{}, fmt.Errorf("feddc: an upload of %d values for a model of %d: %w", len(up), len(drift), fl.ErrInvalid)
	}
	d := make([]float32, len(up))
	for j, tr := range trainable(c.Local.Net(), len(up)) {
		d[j] = up[j] // a BatchNorm statistic has no drift: its upload is its update
		if tr {
			d[j] = float32((float64(up[j]) - float64(drift[j])) / 2)
		}
	}
	return Exposure{Objective: obj, Delta: d}, nil
}
