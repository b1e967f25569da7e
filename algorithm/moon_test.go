package algorithm_test

import (
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// TestMOONCheck checks that MOON needs a hidden representation: logreg is
// rejected with an error naming model.arch, mlp and a CNN are accepted.
func TestMOONCheck(t *testing.T) {
	hp := sgd()
	m := algorithm.MOON{Mu: 5, Tau: 0.5}
	wantInvalid(t, "Check(logreg)", m.Check(trainer.Spec{Arch: trainer.ArchLogReg}, hp), "model.arch", "logreg")
	for _, s := range []trainer.Spec{{Arch: trainer.ArchMLP, Hidden: []int{8}}, {Arch: trainer.ArchCNNHiCS}} {
		if err := m.Check(s, hp); err != nil {
			t.Errorf("Check(%s) = %v; want nil", s.Arch, err)
		}
	}
}

// TestMOON checks two rounds of one client (Li, He & Song 2021, Alg. 1):
//
//   - round 1 (no state): ℓ_con has no negative and is 0, so the client
//     trains like the trainer's MOON objective without a previous model,
//     and keeps its trained model as "prev" (a copy: the engine may reuse
//     Weights);
//   - round 2, from the same θ^t with that state: it trains with the
//     embeddings of θ^t and of prev (trainer.MOON(μ, τ, Embed(θ^t),
//     Embed(prev))), bit for bit, and gives another model than round 1.
func TestMOON(t *testing.T) {
	m, err := algorithm.NewMOON(nil) // μ = 5, τ = 0.5: the paper's CIFAR-10 values
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, sgd())
	n := len(f.global)
	first := f.train(m, fl.State{}, fl.State{})
	zg, err := f.local().Embed(f.global)
	if err != nil {
		t.Fatal(err)
	}
	w1, _ := f.reference(trainer.MOON(5, 0.5, zg, nil))
	sameBits(t, "round 1 θ_k", first.Weights, w1)
	sameBits(t, "round 1 Δ", first.Delta, algorithm.Delta(w1, f.global))
	prev := vector(t, first.State, "prev", n)
	sameBits(t, "prev", prev, first.Weights)
	if &prev[0] == &first.Weights[0] {
		t.Error("state prev shares its array with Weights; want a copy")
	}

	second := f.train(m, fl.State{}, first.State)
	zp, err := f.local().Embed(prev)
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := f.reference(trainer.MOON(5, 0.5, zg, zp))
	sameBits(t, "round 2 θ_k", second.Weights, w2)
	if equalBits(second.Weights, first.Weights) {
		t.Error("round 2 with a previous model trained exactly like round 1; ℓ_con did nothing")
	}
	sameBits(t, "round 2 prev", vector(t, second.State, "prev", n), second.Weights)
}

// TestMOONStateOfWrongModel checks that a "prev" of another model's size
// is refused with fl.ErrInvalid.
func TestMOONStateOfWrongModel(t *testing.T) {
	f := newFixture(t, sgd())
	_, err := algorithm.TrainClient(t.Context(), algorithm.MOON{Mu: 5, Tau: 0.5}, f.client(fl.State{}, state("prev", make([]float32, 3))))
	wantInvalid(t, "Train with a short prev", err, "prev")
}
