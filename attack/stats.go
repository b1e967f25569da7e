package attack

import (
	"context"
	"fmt"
	"math"

	"github.com/flsweep/flsweep/trainer"
)

// pass is the auxiliary set run through one model: per sample its label,
// its logits, and (when asked) the sum of its embedding's entries.
type pass struct {
	classes int
	labels  []int
	logits  [][]float64
	embSum  []float64
}

// forward runs aux through the model w (Trainer.Forward: eval mode, so
// BatchNorm uses its running statistics and dropout is off; the official
// code forwards in train mode, which differs only for nets with dropout or
// BatchNorm).
func forward(ctx context.Context, tr *trainer.Trainer, n *trainer.Net, w []float32, aux trainer.Examples, withEmb bool) (pass, error) {
	c, l := n.Classes(), n.Embedding()
	logits := make([]float32, len(aux.Idx)*c)
	var emb []float32
	if withEmb {
		emb = make([]float32, len(aux.Idx)*l)
	}
	if err := tr.Forward(ctx, n, w, aux, emb, logits); err != nil {
		return pass{}, fmt.Errorf("attack: %w", err)
	}
	p := pass{classes: c, labels: make([]int, len(aux.Idx)), logits: make([][]float64, len(aux.Idx))}
	for i, k := range aux.Idx {
		p.labels[i] = int(aux.Y[k])
		q := make([]float64, c)
		for j := range q {
			q[j] = float64(logits[i*c+j])
		}
		p.logits[i] = q
	}
	if withEmb {
		p.embSum = make([]float64, len(aux.Idx))
		for i := range p.embSum {
			s := 0.0
			for _, v := range emb[i*l : (i+1)*l] {
				s += float64(v)
			}
			p.embSum[i] = s
		}
	}
	return p, nil
}

// softmax returns softmax(q), computed stably.
func softmax(q []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range q {
		mx = math.Max(mx, v)
	}
	s := make([]float64, len(q))
	z := 0.0
	for j, v := range q {
		s[j] = math.Exp(v - mx)
		z += s[j]
	}
	for j := range s {
		s[j] /= z
	}
	return s
}

// confidences returns S[n][j], the mean of softmax_j over the samples of
// true class n; rows of classes without samples are nil.
func (p pass) confidences() [][]float64 {
	S := make([][]float64, p.classes)
	cnt := make([]int, p.classes)
	for i, y := range p.labels {
		if S[y] == nil {
			S[y] = make([]float64, p.classes)
		}
		for j, v := range softmax(p.logits[i]) {
			S[y][j] += v
		}
		cnt[y]++
	}
	for n, row := range S {
		for j := range row {
			row[j] /= float64(cnt[n])
		}
	}
	return S
}

// Confidences returns the erroneous-confidence matrix of the model w on
// the labelled examples ex (Chen & Vikalo, Eq. (6), estimated on the
// auxiliary set):
//
//	S[n][j] = mean over the samples x of true class n of softmax_j(f_w(x))
//
// row n = true class, column j = predicted class; rows are on the simplex.
// The paper draws M logit vectors from a Gaussian fitted per class and
// averages their softmax (Eq. (7)–(8)); the empirical mean used here is
// the same quantity without the Gaussian assumption (the posterior search,
// which shifts the Gaussian's mean, uses the Gaussian). ex must hold every
// class.
func Confidences(ctx context.Context, tr *trainer.Trainer, n *trainer.Net, w []float32, ex trainer.Examples) ([][]float64, error) {
	if err := checkAux(n, ex); err != nil {
		return nil, err
	}
	p, err := forward(ctx, tr, n, w, ex, false)
	if err != nil {
		return nil, err
	}
	return p.confidences(), nil
}

// meanMatrix returns (a + b)/2 entrywise.
func meanMatrix(a, b [][]float64) [][]float64 {
	m := make([][]float64, len(a))
	for i := range a {
		m[i] = make([]float64, len(a[i]))
		for j := range a[i] {
			m[i][j] = (a[i][j] + b[i][j]) / 2
		}
	}
	return m
}
