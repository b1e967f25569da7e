package algorithm

import (
	"context"
	"fmt"
	"slices"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// MOON is model-contrastive federated learning (Li, He & Song, CVPR 2021,
// arXiv:2103.16257, Eq. (3) and Algorithm 1). Client k minimises
//
//	CE + μ·ℓ_con,   ℓ_con = −log( e^{cos(z, z_glob)/τ} / (e^{cos(z, z_glob)/τ} + e^{cos(z, z_prev)/τ}) )
//
// where z is a sample's representation under the model being trained,
// z_glob under θ^t and z_prev under the client's own model after its
// previous round (a pool of size 1; the client keeps that model as its
// state). In a client's first round there is no negative and ℓ_con = 0. The
// representation is the embedding that feeds the output layer
// (trainer.Net.Embedding); the paper's optional projection head is not
// used, as in NIID-Bench's default. The server is the point's rule.
//
// Defaults are the paper's CIFAR-10 values: μ = 5, τ = 0.5 (μ = 1 for
// CIFAR-100).
type MOON struct {
	Base
	Mu  float64 `json:"mu"`
	Tau float64 `json:"tau"`
}

// NewMOON builds MOON from {mu, tau}.
func NewMOON(opts fl.Options) (Algorithm, error) {
	m := MOON{Mu: 5, Tau: 0.5}
	if err := opts.Decode("algorithm (moon)", &m); err != nil {
		return nil, err
	}
	if err := finite("algorithm.mu", m.Mu, 0, false); err != nil {
		return nil, err
	}
	if err := finite("algorithm.tau", m.Tau, 0, true); err != nil {
		return nil, err
	}
	return m, nil
}

const moonPrev = "prev"

// Check implements Algorithm: MOON needs a hidden representation.
func (MOON) Check(spec trainer.Spec, _ trainer.Hyper) error {
	if !spec.HiddenEmbedding() {
		return fmt.Errorf("algorithm.name = moon contrasts the representation that feeds the output layer, but model.arch = %s has no hidden layer; use mlp or a CNN: %w", spec.Arch, fl.ErrInvalid)
	}
	return nil
}

// Train implements Algorithm.
func (m MOON) Train(_ context.Context, c Client, obj trainer.Objective) (Upload, error) {
	w := slices.Clone(c.Global)
	res, err := c.Local.Train(w, obj)
	if err != nil {
		return Upload{}, err
	}
	up := Upload{Weights: w, Delta: Delta(w, c.Global), Train: res}
	up.State.Set(moonPrev, slices.Clone(w))
	return up, nil
}

// Objective implements Algorithm: the model-contrastive term μ·ℓ_con on the
// embeddings of the client's samples under θ^t and under its previous local
// model (none in its first round).
func (m MOON) Objective(c Client) (trainer.Objective, error) {
	zg, err := c.Local.Embed(c.Global)
	if err != nil {
		return trainer.Objective{}, err
	}
	var zp []float32
	if !c.State.Empty() {
		prev, err := c.State.Vector(moonPrev, len(c.Global))
		if err != nil {
			return trainer.Objective{}, err
		}
		if zp, err = c.Local.Embed(prev); err != nil {
			return trainer.Objective{}, err
		}
	}
	return trainer.MOON(m.Mu, m.Tau, zg, zp), nil
}
