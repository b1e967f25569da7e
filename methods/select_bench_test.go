package methods_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/methods"
)

// BenchmarkSelect measures one round's selection by every built-in sampler
// after its warm-up: every Plan call of the round (with the answers of its
// queries, which are the clients' work and not timed) and nothing else.
// Populations of N = 50, 1,000 and 10,000 clients select m = N/10 per round
// (the HiCS-FL paper's fraction on Fashion-MNIST). Clients' vectors (their
// gradients and updates) have P = min(200,000, 2·10⁷/N) values, so the
// simulation fits in memory: 200,000 at N = 50 (the 784-200-200-10 MLP),
// 20,000 at N = 1,000, 2,000 at N = 10,000; C = 10 classes.
//
//	go test -run '^$' -bench Select -benchtime 3x ./methods/
func BenchmarkSelect(b *testing.B) {
	reg := methods.Builtin()
	for _, name := range reg.Samplers() {
		for _, n := range []int{50, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/N=%d", name, n), func(b *testing.B) {
				if skip := selectSkip[name]; skip > 0 && n >= skip {
					b.Skipf("%s at N = %d: see selectSkip", name, n)
				}
				m := max(1, n/10)
				p, err := reg.Sampler(name, m, nil)
				if err != nil {
					b.Skipf("%s with default options: %v", name, err)
				}
				if s, ok := p.(fl.Scheduled); ok { // as the engine does: a 200-round point
					p = s.WithRounds(200)
				}
				sim := newSelectSim(n, min(200_000, 20_000_000/n), 10)
				for t := 1; t <= sim.warmUp(name, n, m); t++ {
					if _, err := sim.round(p, t, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				t := sim.warmUp(name, n, m) + 1
				for range b.N {
					if _, err := sim.round(p, t, b); err != nil {
						b.Fatal(err)
					}
					t++
				}
			})
		}
	}
}

// selectSkip lists, per sampler, the smallest N it is not benchmarked at
// because one selection there takes minutes or more memory than the
// machine has.
var selectSkip = map[string]int{
	"divfl":                10000, // N² distances over |θ|: about 3.6 h and 8 GB of gradients
	"hics":                 10000, // Ward on N rows of N distances: 561 s per selection (sampling's BenchmarkHiCS10000)
	"clustered-similarity": 10000, // the same N³ row distances after N² update distances
}

// selectSim is a synthetic federation: fixed per-client vectors and losses,
// and a sampler's memory carried from round to round as the engine carries
// it.
type selectSim struct {
	pop     fl.Population
	out     fl.OutputLayer
	vec     [][]float32 // client k's gradient and update
	loss    []float64
	state   fl.State
	init    bool
	memory  map[int][]float32
	seed    uint64
	answers []fl.Answer
}

func newSelectSim(n, size, classes int) *selectSim {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	sizes := make([]int, n)
	for k := range sizes {
		sizes[k] = 200 + r.IntN(2000)
	}
	pop, _ := fl.NewPopulation(sizes, fl.ImportanceSize)
	pop.Entropy = make([]float64, n)
	pop.Classes = classes
	emb := min(200, (size-classes)/classes)
	s := &selectSim{pop: pop, vec: make([][]float32, n), loss: make([]float64, n), memory: map[int][]float32{},
		out: fl.OutputLayer{W: size - classes*emb - classes, B: size - classes, Classes: classes, Embedding: emb}}
	for k := range n {
		v := make([]float32, size)
		for j := range v {
			v[j] = float32(r.NormFloat64() * 0.01)
		}
		// a client holds one class (most) or all of them: its bias update
		// and entropy say which, as in HiCS-FL's partitions.
		b := s.out.Bias(v)
		if k%5 == 4 {
			pop.Entropy[k] = math.Log(float64(classes))
		} else {
			c := r.IntN(classes)
			for j := range b {
				b[j] = -0.003
			}
			b[c] = 0.027
		}
		s.vec[k], s.loss[k] = v, 0.5+r.Float64()
		s.memory[k] = v // every client has trained once (clustered sampling's representative update)
	}
	return s
}

// warmUp returns the rounds after which the named sampler has left its
// warm-up: HiCS-FL visits every client once (⌈N/m⌉ rounds); FedCor fits its
// GP after 25 rounds and selects by it from round 27. (Clustered sampling's
// memory of every client is set up front.)
func (s *selectSim) warmUp(name string, n, m int) int {
	switch name {
	case "fedcor":
		return 26
	case "hics":
		return (n+m-1)/m + 1
	}
	return 1
}

// round runs round t: the sampler plans, asking queries as it likes, then
// learns from synthetic updates of the selected clients. Only planning is
// timed when b is not nil.
func (s *selectSim) round(p fl.Planner, t int, b *testing.B) (fl.Selection, error) {
	if l, ok := p.(fl.Learner); ok && !s.init {
		st, err := l.Init(s.pop)
		if err != nil {
			return fl.Selection{}, err
		}
		s.state, s.init = st, true
	}
	var answers []fl.Answer
	in := fl.PlanInput{Round: t, Pop: s.pop, State: s.state,
		Vector: func(a fl.Answer) ([]float32, error) { return s.vec[a.Client], nil },
		Recall: func(k int) ([]float32, error) { return s.memory[k], nil },
	}
	var sel fl.Selection
	for q := 0; ; q++ {
		in.Answers = answers
		plan, err := p.Plan(in, rand.New(rand.NewPCG(s.seed, uint64(t))))
		if err != nil {
			return sel, err
		}
		if plan.Selection != nil {
			sel = *plan.Selection
			break
		}
		if q == 8 {
			return sel, fmt.Errorf("round %d: more than 8 queries", t)
		}
		if b != nil {
			b.StopTimer()
		}
		for _, k := range plan.Query.Clients {
			// the loss drifts with the round, so loss changes are not zero
			answers = append(answers, fl.Answer{Query: q + 1, Ask: plan.Query.Ask, Client: k, Samples: s.pop.Sizes[k],
				Loss: s.loss[k] * math.Pow(0.99, float64(t)) * (1 + 0.01*math.Sin(float64(t*k)))})
		}
		if b != nil {
			b.StartTimer()
		}
	}
	if b != nil {
		b.StopTimer()
		defer b.StartTimer()
	}
	l, ok := p.(fl.Learner)
	if !ok {
		return sel, nil
	}
	sums := make([]fl.ClientSummary, len(sel.Clients))
	for i, k := range sel.Clients {
		bd := s.out.Bias(s.vec[k])
		sums[i] = fl.ClientSummary{Client: k, NumExamples: s.pop.Sizes[k], BiasDelta: make([]float64, len(bd))}
		for j, v := range bd {
			sums[i].BiasDelta[j] = float64(v)
		}
	}
	st, err := l.Observe(fl.ObserveInput{Round: t, Pop: s.pop, State: s.state, Selection: sel, Answers: answers, Clients: sums, Output: s.out,
		Rand:     rand.New(rand.NewPCG(s.seed, uint64(t))),
		Delta:    func(k int) ([]float32, error) { return s.vec[k], nil },
		Remember: func(k int, v []float32) { s.memory[k] = v },
	})
	s.state = st
	return sel, err
}
