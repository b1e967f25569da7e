package gp

import "math"

// Adam is the optimiser of Kingma & Ba, "Adam: A Method for Stochastic
// Optimization", ICLR 2015, arXiv:1412.6980, Algorithm 1, with PyTorch's
// defaults (β1 = 0.9, β2 = 0.999, ε = 1e−8, no weight decay) and PyTorch's
// arrangement of the bias corrections:
//
//	m ← β1 m + (1−β1) g,   v ← β2 v + (1−β2) g²,
//	θ ← θ − (lr/(1−β1^t)) · m / (√v/√(1−β2^t) + ε).
//
// It minimises. The zero value is not usable; use NewAdam.
type Adam struct {
	LR, Beta1, Beta2, Eps float64

	m, v []float64
	t    int
}

// NewAdam returns Adam with learning rate lr and PyTorch's other defaults
// for n parameters, its moments at zero.
func NewAdam(lr float64, n int) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, m: make([]float64, n), v: make([]float64, n)}
}

// Step moves params against grad, in place.
func (o *Adam) Step(params, grad []float64) {
	if len(params) != len(o.m) || len(grad) != len(o.m) {
		panic("gp: Adam size mismatch")
	}
	o.t++
	bc1 := 1 - math.Pow(o.Beta1, float64(o.t))
	bc2 := math.Sqrt(1 - math.Pow(o.Beta2, float64(o.t)))
	for i, g := range grad {
		o.m[i] = o.Beta1*o.m[i] + (1-o.Beta1)*g
		o.v[i] = o.Beta2*o.v[i] + (1-o.Beta2)*g*g
		params[i] -= o.LR / bc1 * o.m[i] / (math.Sqrt(o.v[i])/bc2 + o.Eps)
	}
}

// Problem is one fit of FedCor's GP: the embeddings are trained to maximise
// the discounted LOO predictive log-probability of the samples with the
// mean and noise fixed (the official code trains the embedding matrix only;
// its kernel's σ_f takes no part in an unnormalised polynomial kernel and
// σ_n is a constant).
type Problem struct {
	N, D  int
	Noise float64     // σ_n
	Mu    []float64   // μ, one per client
	Ys    [][]float64 // samples, one value per client each
	W     []float64   // the discount of each sample
	Terms []int       // the LOO terms; nil: every client
}

// Fit runs iters Adam steps (learning rate lr, fresh moments, as the
// official code makes a new optimiser for every training) on the loss
// −LOO, starting from x (updated in place). It returns the LOO value at the
// last step's starting point, or ErrNotPD if a covariance could not be
// factorised (x then holds the last good iterate). Each step costs
// O(n·d² + E·n·d) for E samples (LOOGrad's Woodbury form, not LOO's n×n
// inverse).
func Fit(p Problem, x []float64, iters int, lr float64) (float64, error) {
	opt := NewAdam(lr, len(x))
	last := math.NaN()
	for range iters {
		l, grad, err := LOOGrad(x, p.N, p.D, p.Noise, p.Mu, p.Ys, p.W, p.Terms)
		if err != nil {
			return last, err
		}
		last = l
		for i := range grad {
			grad[i] = -grad[i]
		}
		opt.Step(x, grad)
	}
	return last, nil
}
