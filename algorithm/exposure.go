package algorithm

import (
	"fmt"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// Expose tells a label-recovery attack (package attack; the engine's
// inspect phase) what an honest-but-curious server knows of client c's
// round beyond θ^t and the upload: the terms of the client's local
// objective, derived from a.Objective(c), and the local update θ_k − θ^t its
// upload reveals. ok is false when the objective holds a term the attacks do
// not model (MOON's contrastive term, FedEBA+'s aligned step, PropFair's
// loss transform): the attacks then treat the update as FedAvg's and the
// engine marks their rows unmodelled. A FedEBA+ round that is not aligned
// trains the plain cross-entropy (its first step is only recorded), so it
// is modelled.
//
// Call it with the Client TrainClient was called with (c.State as the
// client's last round left it, c.Local not trained). Every vector the
// objective reads is one the server can keep itself: what it sent
// (SCAFFOLD's c, FedDC's Δθ^{prev}) or a sum of the client's own earlier
// uploads (SCAFFOLD's c_i = Σ Δc_i; FedDyn's ∇L_k(θ_k^{t−1}) = −α Σ Δ_k;
// FedDC's drift and last update, recovered round by round from its
// uploads). The engine reads them from the client's stored state, which
// holds the same values, instead of tracking them twice.
func Expose(a Algorithm, c Client, upload []float32) (x Exposure, ok bool, err error) {
	obj, err := a.Objective(c)
	if err != nil {
		return Exposure{}, false, err
	}
	if obj.Align != 0 || obj.Contrast != nil || obj.PropFair != nil || obj.FeatureNorm != nil || obj.State != nil {
		return Exposure{}, false, nil
	}
	x.Objective = trainer.Objective{Prox: obj.Prox, Anchor: obj.Anchor, Linear: obj.Linear, AfterStep: obj.AfterStep}
	x.Delta = upload
	if r, isRevealer := a.(updateRevealer); isRevealer {
		if x.Delta, err = r.localUpdate(c, upload); err != nil {
			return Exposure{}, false, err
		}
	}
	return x, true, nil
}

// Exposure is what Expose tells the attacks.
type Exposure struct {
	// Objective holds the local objective's terms: only Prox, Anchor,
	// Linear and AfterStep are set.
	Objective trainer.Objective
	// Delta is θ_k − θ^t, the client's local update.
	Delta []float32
}

// An updateRevealer is an algorithm whose upload is not θ_k − θ^t:
// localUpdate recovers the update from it.
type updateRevealer interface {
	localUpdate(c Client, upload []float32) ([]float32, error)
}

// localUpdate implements updateRevealer. With drift_mean "selected" the
// upload is θ_k − θ^t plus the new drift d_k + (θ_k − θ^t), so the local
// update is (upload − d_k)/2 with the drift d_k the client started the
// round with; otherwise the upload is the update.
func (a FedDC) localUpdate(c Client, up []float32) ([]float32, error) {
	if a.DriftMean != DriftSelected {
		return up, nil
	}
	drift, err := clientVector(c.State, feddcDrift, len(c.Global))
	if err != nil {
		return nil, err
	}
	if len(up) != len(drift) {
		return nil, fmt.Errorf("feddc: an upload of %d values for a model of %d: %w", len(up), len(drift), fl.ErrInvalid)
	}
	d := make([]float32, len(up))
	for j, tr := range trainable(c.Local.Net(), len(up)) {
		d[j] = up[j] // a BatchNorm statistic has no drift: its upload is its update
		if tr {
			d[j] = float32((float64(up[j]) - float64(drift[j])) / 2)
		}
	}
	return d, nil
}
