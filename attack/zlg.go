package attack

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/flsweep/flsweep/trainer"
)

// ZLG is ZLG+ (Geng, Mou, Li, Li, Beyan, Decker & Rong, "Towards General
// Deep Leakage in Federated Learning", arXiv:2110.09074, 2021) with the
// server's auxiliary set. With O_i = Σ_l e_il the embedding sum of sample
// i, the row sums of the mean weight gradient over T samples are
//
//	r_j = (1/T) Σ_i (s_ij − y_ij)·O_i ≈ (p̄_j − N_j/T)·Ō
//
// so N_j = T·(p̄_j − r_j/Ō), clipped at 0 and rescaled to T, with p̄_j the
// mean softmax probability of class j and Ō the mean embedding sum,
// estimated on the auxiliary set (all its samples: the original; Chen &
// Vikalo's code averages p_j over the aux samples of class j only) at θ^t,
// averaged with θ^t + Δ when m > 1 (the original interpolates over the
// steps). r comes from ḡ_W = −ΔW/(η·m) like every baseline's, and the
// counts are rounded by largest remainders. It assumes non-negative
// embeddings; Ō = 0 is ErrNotApplicable.
type ZLG struct{}

// Name returns "zlg+".
func (ZLG) Name() string { return "zlg+" }

// Recover implements Attack.
func (a ZLG) Recover(ctx context.Context, tr *trainer.Trainer, in Input, _ *rand.Rand) (Result, error) {
	if err := in.check(); err != nil {
		return Result{}, err
	}
	n, total := in.Net.Classes(), in.Local.Total()
	pbar, obar, err := zlgStats(ctx, tr, in.Net, in.Global, in.Aux)
	if err != nil {
		return Result{}, err
	}
	if in.Local.Steps > 1 {
		p1, o1, err := zlgStats(ctx, tr, in.Net, in.local(), in.Aux)
		if err != nil {
			return Result{}, err
		}
		obar = (obar + o1) / 2
		for j := range pbar {
			pbar[j] = (pbar[j] + p1[j]) / 2
		}
	}
	if obar == 0 {
		return Result{}, fmt.Errorf("zlg: the aux embeddings sum to 0 on average: %w", ErrNotApplicable)
	}
	gW, _ := in.naive()
	r := rowSums(gW)
	est := make([]float64, n)
	for j := range est {
		est[j] = float64(total) * (pbar[j] - r[j]/obar)
	}
	counts := LargestRemainder(est, total)
	return Result{Method: a.Name(), Counts: histogram(counts, n, total), Heuristic: in.Local.adam()}, nil
}

// zlgStats returns p̄ (the mean softmax over the aux samples) and Ō (their
// mean embedding sum) at the model w.
func zlgStats(ctx context.Context, tr *trainer.Trainer, net *trainer.Net, w []float32, aux trainer.Examples) ([]float64, float64, error) {
	p, err := forward(ctx, tr, net, w, aux, true)
	if err != nil {
		return nil, 0, err
	}
	pbar := make([]float64, net.Classes())
	obar := 0.0
	for i, q := range p.logits {
		for j, v := range softmax(q) {
			pbar[j] += v / float64(len(p.logits))
		}
		obar += p.embSum[i] / float64(len(p.logits))
	}
	return pbar, obar, nil
}
