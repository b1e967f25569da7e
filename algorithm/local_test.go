package algorithm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/algorithm"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/trainer"
)

// tr is shared by every test: a Trainer is safe for concurrent use and
// keeps its compiled graphs between calls.
var tr = trainer.New(nil)

// testLocal is algorithm.Local over the real trainer, for one client of a
// small task: what engine/train.go's clientLocal does, without the engine.
// Train draws from a fresh fl.Stream of key on every instance, so two fresh
// testLocals with equal fields train bit for bit alike, and a reference run
// of the trainer with fl.Stream(key) (fixture.reference) is what the
// algorithm's Train call saw.
type testLocal struct {
	ctx     context.Context
	net     *trainer.Net
	ex      trainer.Examples
	hp      trainer.Hyper
	key     fl.Key
	ratio   float64
	trained bool
}

var _ algorithm.Local = (*testLocal)(nil)

// Train runs the trainer once, like clientLocal: a second call is an error,
// so no algorithm can draw the client's minibatches twice.
func (l *testLocal) Train(w []float32, obj trainer.Objective) (trainer.TrainResult, error) {
	if l.trained {
		return trainer.TrainResult{}, fmt.Errorf("local training ran twice in one round: %w", fl.ErrInvalid)
	}
	l.trained = true
	return tr.TrainObjective(l.ctx, l.net, w, l.ex, l.hp, obj, fl.Stream(l.key), nil)
}

func (l *testLocal) Embed(w []float32) ([]float32, error) {
	emb := make([]float32, len(l.ex.Idx)*l.net.Embedding())
	if err := tr.Forward(l.ctx, l.net, w, l.ex, emb, nil); err != nil {
		return nil, err
	}
	return emb, nil
}

func (l *testLocal) Hyper() trainer.Hyper { return l.hp }
func (l *testLocal) Steps() int           { return trainer.NumSteps(len(l.ex.Idx), l.hp) }
func (l *testLocal) Net() *trainer.Net    { return l.net }
func (l *testLocal) SizeRatio() float64   { return l.ratio }

// fixture is one client of a small task: an mlp 4-8-3 on 24 samples of a
// 1×2×2 input with 3 classes, and a global model θ^t.
type fixture struct {
	t      *testing.T
	net    *trainer.Net
	ex     trainer.Examples
	hp     trainer.Hyper
	key    fl.Key
	ratio  float64
	global []float32
}

// sgd is the local training of most tests: plain SGD, η = 0.1, K = 5 steps
// of batches of 4 (n = 24 > B, so the batches come from the stream).
func sgd() trainer.Hyper {
	return trainer.Hyper{Optimizer: trainer.OptimizerSGD, LR: 0.1, BatchSize: 4, LocalSteps: 5}
}

// newFixture builds the task. The samples are 3 Gaussian clusters (centres
// uniform in [0, 1]^4, noise σ = 0.3) drawn from PCG(1, 2); θ^t is
// Net.Init's model for PCG(3, 4). ratio is the client's SizeRatio.
func newFixture(t *testing.T, hp trainer.Hyper) *fixture {
	t.Helper()
	net, err := trainer.NewNet(trainer.Spec{Arch: trainer.ArchMLP, Hidden: []int{8}}, [3]int{1, 2, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	const count, classes = 24, 3
	dim := net.Dim()
	r := rand.New(rand.NewPCG(1, 2))
	centres := make([]float64, classes*dim)
	for i := range centres {
		centres[i] = r.Float64()
	}
	ex := trainer.Examples{X: make([]float32, count*dim), Y: make([]uint8, count), Dim: dim, Idx: make([]int, count)}
	for i := range count {
		c := i % classes
		ex.Y[i], ex.Idx[i] = uint8(c), i
		for j := range dim {
			ex.X[i*dim+j] = float32(centres[c*dim+j] + 0.3*r.NormFloat64())
		}
	}
	global := make([]float32, net.NumParams())
	if err := net.Init(global, rand.New(rand.NewPCG(3, 4))); err != nil {
		t.Fatal(err)
	}
	return &fixture{
		t: t, net: net, ex: ex, hp: hp, ratio: 1, global: global,
		key: fl.Key{Seed: 7, Point: "algorithm-test", Round: 3, Client: 2, Purpose: fl.PurposeTrain},
	}
}

// local returns a fresh Local for the client.
func (f *fixture) local() *testLocal {
	return &testLocal{ctx: f.t.Context(), net: f.net, ex: f.ex, hp: f.hp, key: f.key, ratio: f.ratio}
}

// client returns the client's round with a fresh Local.
func (f *fixture) client(server, state fl.State) algorithm.Client {
	return algorithm.Client{Round: f.key.Round, ID: f.key.Client, Global: f.global, Server: server, State: state, Local: f.local()}
}

// train runs a's client half.
func (f *fixture) train(a algorithm.Algorithm, server, state fl.State) algorithm.Upload {
	f.t.Helper()
	up, err := algorithm.TrainClient(f.t.Context(), a, f.client(server, state))
	if err != nil {
		f.t.Fatalf("%T.Train: %v", a, err)
	}
	return up
}

// reference trains θ^t with obj by calling the trainer directly, with the
// client's stream: what an algorithm that trains with obj must upload.
func (f *fixture) reference(obj trainer.Objective) ([]float32, trainer.TrainResult) {
	f.t.Helper()
	w := slices.Clone(f.global)
	res, err := tr.TrainObjective(f.t.Context(), f.net, w, f.ex, f.hp, obj, fl.Stream(f.key), nil)
	if err != nil {
		f.t.Fatalf("TrainObjective: %v", err)
	}
	return w, res
}

// vec returns n values N(0, σ²) from PCG(seed, 0).
func vec(seed uint64, n int, sigma float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(sigma * r.NormFloat64())
	}
	return v
}

// state returns a State holding the named vectors (name, vector, name, ...).
func state(kv ...any) fl.State {
	var s fl.State
	for i := 0; i < len(kv); i += 2 {
		s.Set(kv[i].(string), kv[i+1].([]float32))
	}
	return s
}

// equalBits reports whether a and b hold the same float32 bit patterns.
func equalBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// firstDiff returns the first index where a and b differ bitwise, or −1.
func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for j := range a {
		if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
			return j
		}
	}
	return -1
}

// sameBits reports the first bitwise difference between got and want.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s has %d values; want %d", what, len(got), len(want))
		return
	}
	if j := firstDiff(got, want); j >= 0 {
		t.Errorf("%s[%d] = %v; want %v (bit for bit)", what, j, got[j], want[j])
	}
}

// closeTo reports entries of got farther than tol from want.
func closeTo(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %v; want %v", what, got, want)
		return
	}
	for j := range got {
		if math.Abs(float64(got[j])-want[j]) > tol {
			t.Errorf("%s[%d] = %v; want %v ± %g", what, j, got[j], want[j], tol)
		}
	}
}

// vector returns the named vector of s, failing the test if it is missing.
func vector(t *testing.T, s fl.State, name string, n int) []float32 {
	t.Helper()
	v, err := s.Vector(name, n)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// serve runs a's server half over the deltas and uploaded vectors of
// the selected clients and returns θ^{t+1} and the server's new memory.
func serve(t *testing.T, a algorithm.Algorithm, r algorithm.Server, deltas [][]float32, ups []fl.State) ([]float32, fl.State) {
	t.Helper()
	agg, err := a.Begin(r)
	if err != nil {
		t.Fatalf("%T.Begin: %v", a, err)
	}
	for i, k := range r.Selection.Clients {
		var up fl.State
		if ups != nil {
			up = ups[i]
		}
		if err := agg.Add(k, deltas[i], up); err != nil {
			t.Fatalf("%T Add(%d): %v", a, k, err)
		}
	}
	dst := make([]float32, len(r.Global))
	s, err := agg.Finish(dst)
	if err != nil {
		t.Fatalf("%T Finish: %v", a, err)
	}
	return dst, s
}

// summaries returns the client summaries of a selection, with the given
// scalars per client (nil: none).
func summaries(sel fl.Selection, scalars []map[string]float64) []fl.ClientSummary {
	out := make([]fl.ClientSummary, len(sel.Clients))
	for i, k := range sel.Clients {
		out[i] = fl.ClientSummary{Client: k, NumExamples: 10}
		if scalars != nil {
			out[i].Scalars = scalars[i]
		}
	}
	return out
}

// wantInvalid checks that err wraps fl.ErrInvalid and names every field.
func wantInvalid(t *testing.T, what string, err error, fields ...string) {
	t.Helper()
	if !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("%s error = %v; want fl.ErrInvalid", what, err)
		return
	}
	for _, f := range fields {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s error = %q; want it to name %q", what, err, f)
		}
	}
}

// TestLocalHarness checks the harness itself: two fresh Locals train bit
// for bit alike and like the reference, a second Train is refused, and
// Steps is the trainer's NumSteps (5 local steps).
func TestLocalHarness(t *testing.T) {
	f := newFixture(t, sgd())
	a, b := slices.Clone(f.global), slices.Clone(f.global)
	la, lb := f.local(), f.local()
	resA, err := la.Train(a, trainer.Objective{})
	if err != nil {
		t.Fatal(err)
	}
	resB, err := lb.Train(b, trainer.Objective{})
	if err != nil {
		t.Fatal(err)
	}
	ref, resRef := f.reference(trainer.Objective{})
	sameBits(t, "second fresh Local's weights", b, a)
	sameBits(t, "reference weights", ref, a)
	if !reflect.DeepEqual(resA, resB) || !reflect.DeepEqual(resA, resRef) {
		t.Errorf("TrainResults %+v, %+v, %+v; want equal", resA, resB, resRef)
	}
	if equalBits(a, f.global) {
		t.Error("training left θ^t unchanged; the harness is vacuous")
	}
	if _, err := la.Train(a, trainer.Objective{}); !errors.Is(err, fl.ErrInvalid) {
		t.Errorf("second Train error = %v; want fl.ErrInvalid", err)
	}
	if got := la.Steps(); got != 5 || resA.Steps != got {
		t.Errorf("Steps() = %d, TrainResult.Steps = %d; want 5 and 5", got, resA.Steps)
	}
}
