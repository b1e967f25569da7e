package trainer

import "math"

// span is a range [lo, hi) of trainable entries of the flat vector.
type span struct{ lo, hi int }

// trainableSpans returns the trainable ranges of n's flat vector, merged.
func trainableSpans(n *Net) []span {
	var out []span
	for _, p := range n.params {
		if !p.Trainable {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].hi == p.Offset {
			out[k].hi += p.Len
			continue
		}
		out = append(out, span{p.Offset, p.Offset + p.Len})
	}
	return out
}

// optState is the optimiser state of a session: SGD's momentum buffer in m,
// Adam's moments in m and v, Adam's step count.
type optState[T float] struct {
	m, v  []T
	steps int
}

// reset zeroes the state, or loads it from a carried OptState, allocating
// the buffers the optimiser needs.
func (o *optState[T]) reset(n int, hp Hyper, from *OptState) {
	needM := hp.Momentum > 0 || hp.Optimizer != OptimizerSGD
	needV := hp.Optimizer != OptimizerSGD
	load := func(buf *[]T, need bool, src []float32) {
		if !need {
			*buf = nil
			return
		}
		if len(*buf) != n {
			*buf = make([]T, n)
		}
		if src != nil {
			convertCopy(*buf, src)
		} else {
			clear(*buf)
		}
	}
	var m, v []float32
	o.steps = 0
	if from != nil {
		m, v, o.steps = from.M, from.V, from.Steps
	}
	load(&o.m, needM, m)
	load(&o.v, needV, v)
}

// save writes the state into a carried OptState.
func (o *optState[T]) save(to *OptState) {
	to.Steps = o.steps
	put := func(dst *[]float32, src []T) {
		if src == nil {
			*dst = nil
			return
		}
		if len(*dst) != len(src) {
			*dst = make([]float32, len(src))
		}
		convertCopy(*dst, src)
	}
	put(&to.M, o.m)
	put(&to.V, o.v)
}

// copyFrom copies src's state (another session of the same net).
func (o *optState[T]) copyFrom(src *optState[T]) {
	cp := func(dst *[]T, s []T) {
		if s == nil {
			*dst = nil
			return
		}
		if len(*dst) != len(s) {
			*dst = make([]T, len(s))
		}
		copy(*dst, s)
	}
	cp(&o.m, src.m)
	cp(&o.v, src.v)
	o.steps = src.steps
}

// applyObjective adds the Objective's parameter-space terms to the gradient
// g at weights w over the trainable spans (see Objective):
//
//	g ← g + μ·(w − a) + v + α·g̃
//
// The (1 − α) factor and MOON's term are already in g: the graph computed
// them (xentOp.scale, embedOp).
func applyObjective[T float](spans []span, w, g []T, o *Objective, anchor []float32) {
	mu, alpha := T(o.Prox), T(o.Align)
	lin, gt := o.Linear, o.AlignGrad
	for _, sp := range spans {
		for j := sp.lo; j < sp.hi; j++ {
			d := g[j]
			if mu != 0 {
				d += mu * (w[j] - T(anchor[j]))
			}
			if lin != nil {
				d += T(lin[j])
			}
			if alpha != 0 {
				d += alpha * T(gt[j])
			}
			g[j] = d
		}
	}
}

// afterStep applies Objective.AfterStep after an optimiser step with learning
// rate lr: w ← w − lr·c over every entry, buffers included. It returns
// whether every entry is finite.
func afterStep[T float](w []T, c []float32, lr float64) bool {
	eta := T(lr)
	var check T
	for j, cj := range c {
		v := w[j] - eta*T(cj)
		w[j] = v
		check += v - v
	}
	return check == 0
}

// optimize applies one optimiser step with learning rate lr to the trainable
// spans of w, in PyTorch's form:
//
//	sgd:    d = g + λ·w;  if β > 0: b ← β·b + d, d = nesterov ? d + β·b : b;  w ← w − η·d
//	adam:   g ← g + λ·w;  m ← m + (1−β1)·(g − m);  v ← β2·v + (1−β2)·g²;  t ← t + 1
//	        w ← w − (η/(1−β1^t))·m/(√v/√(1−β2^t) + ε)
//	adamw:  w ← w·(1 − η·λ), then adam without the λ·w term
//
// (torch.optim.SGD with dampening 0; torch.optim.Adam/AdamW's
// single-tensor path, whose moment update is a lerp). It returns whether
// every updated weight is finite.
func optimize[T float](spans []span, w, g []T, st *optState[T], hp Hyper, lr float64) bool {
	eta, lambda := T(lr), T(hp.WeightDecay)
	var check T
	switch hp.Optimizer {
	case OptimizerSGD:
		beta := T(hp.Momentum)
		for _, sp := range spans {
			ws, gs := w[sp.lo:sp.hi], g[sp.lo:sp.hi]
			switch {
			case st.m != nil:
				bs := st.m[sp.lo:sp.hi]
				for j, wj := range ws {
					d := gs[j] + lambda*wj
					b := beta*bs[j] + d
					bs[j] = b
					if hp.Nesterov {
						d += beta * b
					} else {
						d = b
					}
					wj -= eta * d
					ws[j] = wj
					check += wj - wj
				}
			case lambda != 0:
				for j, wj := range ws {
					wj -= eta * (gs[j] + lambda*wj)
					ws[j] = wj
					check += wj - wj
				}
			default:
				check += sgdPlain(ws, gs, eta)
			}
		}
	default:
		b1, b2, eps := hp.adam()
		st.steps++
		t := float64(st.steps)
		stepSize := T(lr / (1 - math.Pow(b1, t)))
		bc2 := T(math.Sqrt(1 - math.Pow(b2, t)))
		c1, b2t, c2, epsT := T(1-b1), T(b2), T(1-b2), T(eps)
		decay := T(1)
		if hp.Optimizer == OptimizerAdamW {
			decay = 1 - eta*lambda
			lambda = 0
		}
		for _, sp := range spans {
			ws, gs := w[sp.lo:sp.hi], g[sp.lo:sp.hi]
			ms, vs := st.m[sp.lo:sp.hi], st.v[sp.lo:sp.hi]
			for j, wj := range ws {
				wj *= decay
				d := gs[j] + lambda*wj
				m := ms[j] + c1*(d-ms[j])
				v := vs[j]*b2t + c2*d*d
				ms[j], vs[j] = m, v
				wj -= stepSize * m / (T(math.Sqrt(float64(v)))/bc2 + epsT)
				ws[j] = wj
				check += wj - wj
			}
		}
	}
	// w − w is 0 for finite w and NaN for NaN or ±Inf.
	return check == 0
}

// sgdPlain is w ← w − η·g, four independent lanes at a time; it returns
// Σ (w − w), which is 0 exactly when every new weight is finite. (One
// running sum would make every element wait for the previous addition.)
func sgdPlain[T float](w, g []T, eta T) T {
	g = g[:len(w)]
	var c0, c1, c2, c3 T
	j := 0
	for ; j+4 <= len(w); j += 4 {
		w0 := w[j] - eta*g[j]
		w1 := w[j+1] - eta*g[j+1]
		w2 := w[j+2] - eta*g[j+2]
		w3 := w[j+3] - eta*g[j+3]
		w[j], w[j+1], w[j+2], w[j+3] = w0, w1, w2, w3
		c0 += w0 - w0
		c1 += w1 - w1
		c2 += w2 - w2
		c3 += w3 - w3
	}
	for ; j < len(w); j++ {
		wj := w[j] - eta*g[j]
		w[j] = wj
		c0 += wj - wj
	}
	return c0 + c1 + c2 + c3
}

// allFinite reports whether every entry of w in spans is finite.
func allFinite[T float](spans []span, w []T) bool {
	var c0, c1 T
	for _, sp := range spans {
		ws := w[sp.lo:sp.hi]
		j := 0
		for ; j+2 <= len(ws); j += 2 {
			c0 += ws[j] - ws[j]
			c1 += ws[j+1] - ws[j+1]
		}
		for ; j < len(ws); j++ {
			c0 += ws[j] - ws[j]
		}
	}
	return c0+c1 == 0
}
