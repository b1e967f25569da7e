package dataset

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// TestFedProxSyntheticShape checks the structure FedProx's generator gives: 30 users by default,
// n_k >= 50 samples each split int(0.9·n_k) / rest into train and test, the natural split
// covering both splits exactly once in client order, 60 features and labels below 10.
func TestFedProxSyntheticShape(t *testing.T) {
	d, err := FedProxSynthetic(FedProxOptions{Alpha: 1, Beta: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "fedprox-synthetic" || d.Classes != 10 || d.Shape != [3]int{1, 1, 60} || d.Dim() != 60 {
		t.Errorf("dataset = %s, %d classes, shape %v; want fedprox-synthetic, 10, [1 1 60]", d.Name, d.Classes, d.Shape)
	}
	if d.Natural == nil || len(d.Natural.Train) != FedProxDefaultUsers || len(d.Natural.Test) != FedProxDefaultUsers {
		t.Fatalf("natural split = %+v; want %d users", d.Natural, FedProxDefaultUsers)
	}
	nextTrain, nextTest := 0, 0
	for k := range FedProxDefaultUsers {
		tr, te := d.Natural.Train[k], d.Natural.Test[k]
		n := len(tr) + len(te)
		if n < 50 || len(tr) != int(0.9*float64(n)) {
			t.Errorf("user %d: %d train + %d test; want n >= 50 and int(0.9·n) train", k, len(tr), len(te))
		}
		for _, i := range tr {
			if i != nextTrain {
				t.Fatalf("user %d: train index %d; want %d (users in order, no gaps)", k, i, nextTrain)
			}
			nextTrain++
		}
		for _, i := range te {
			if i != nextTest {
				t.Fatalf("user %d: test index %d; want %d", k, i, nextTest)
			}
			nextTest++
		}
	}
	if nextTrain != d.Train.N || nextTest != d.Test.N || len(d.Train.X) != 60*d.Train.N || len(d.Test.Y) != d.Test.N {
		t.Errorf("natural split covers %d/%d of %d/%d samples; want all", nextTrain, nextTest, d.Train.N, d.Test.N)
	}
	for _, y := range slices.Concat(d.Train.Y, d.Test.Y) {
		if y >= 10 {
			t.Fatalf("label %d; want < 10", y)
		}
	}
}

func TestFedProxSyntheticDeterministic(t *testing.T) {
	a, _ := FedProxSynthetic(FedProxOptions{Alpha: 0.5, Beta: 0.5, Users: 5, Seed: 3})
	b, _ := FedProxSynthetic(FedProxOptions{Alpha: 0.5, Beta: 0.5, Users: 5, Seed: 3})
	if a.Digest != b.Digest || !slices.Equal(a.Train.X, b.Train.X) {
		t.Error("equal options give different data")
	}
	for _, o := range []FedProxOptions{
		{Alpha: 0.5, Beta: 0.5, Users: 5, Seed: 4},
		{Alpha: 0.5, Beta: 1, Users: 5, Seed: 3},
		{Alpha: 0.5, Beta: 0.5, Users: 5, Seed: 3, IID: true},
	} {
		c, err := FedProxSynthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		if c.Digest == a.Digest {
			t.Errorf("options %+v give the digest of %+v", o, FedProxOptions{Alpha: 0.5, Beta: 0.5, Users: 5, Seed: 3})
		}
	}
}

// TestFedProxSyntheticFeatures checks the input distribution of the IID variant, where every
// user's inputs are N(0, Σ) with Σ_jj = j^-1.2 (j = 1..60): the per-feature variance over all
// samples must match within 5 standard errors (the variance estimate of a normal sample has
// standard error about Σ_jj·sqrt(2/N)).
func TestFedProxSyntheticFeatures(t *testing.T) {
	d, err := FedProxSynthetic(FedProxOptions{IID: true, Users: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := float64(d.Train.N)
	for _, j := range []int{0, 1, 9, 59} {
		var sum, ss float64
		for i := range d.Train.N {
			v := float64(d.Train.X[i*60+j])
			sum += v
			ss += v * v
		}
		mean := sum / n
		variance := ss/n - mean*mean
		want := math.Pow(float64(j+1), -1.2)
		if tol := 5 * want * math.Sqrt(2/n); math.Abs(variance-want) > tol {
			t.Errorf("feature %d: variance %.5f; want %.5f ± %.5f", j, variance, want, tol)
		}
	}
}

// TestFedProxSyntheticHeterogeneity checks the point of α and β: with (1, 1) users' label
// distributions differ far more than in the IID variant, where one model labels every user's
// inputs. The statistic is the mean total-variation distance between each user's label
// distribution and the pooled one; over 30 users it is well separated (IID about 0.1 from
// sampling noise, (1, 1) above 0.4 in FedProx's sense of "highly heterogeneous").
func TestFedProxSyntheticHeterogeneity(t *testing.T) {
	tv := func(o FedProxOptions) float64 {
		d, err := FedProxSynthetic(o)
		if err != nil {
			t.Fatal(err)
		}
		pooled := make([]float64, 10)
		for _, y := range d.Train.Y {
			pooled[y] += 1 / float64(d.Train.N)
		}
		var sum float64
		for _, idx := range d.Natural.Train {
			local := make([]float64, 10)
			for _, i := range idx {
				local[d.Train.Y[i]] += 1 / float64(len(idx))
			}
			for c := range local {
				sum += math.Abs(local[c]-pooled[c]) / 2
			}
		}
		return sum / float64(len(d.Natural.Train))
	}
	iid, het := tv(FedProxOptions{IID: true, Seed: 2}), tv(FedProxOptions{Alpha: 1, Beta: 1, Seed: 2})
	t.Logf("mean TV to the pooled label mix: iid %.3f, (1, 1) %.3f", iid, het)
	if !(het > 0.4 && iid < 0.2) {
		t.Errorf("mean TV to the pooled label mix: iid %.3f, (1, 1) %.3f; want iid < 0.2 < 0.4 < (1, 1)", iid, het)
	}
}

func TestFedProxOptionsValidate(t *testing.T) {
	for _, o := range []FedProxOptions{{Alpha: -1}, {Beta: math.NaN()}, {Alpha: math.Inf(1)}, {Users: -1}, {Users: fedProxMaxUsers + 1},
		{Samples: 1}, {Samples: -3}, {Users: fedProxMaxUsers, Samples: FedProxMaxSamples(fedProxMaxUsers) + 1}} {
		if _, err := FedProxSynthetic(o); !errors.Is(err, ErrInvalid) {
			t.Errorf("FedProxSynthetic(%+v) = %v; want ErrInvalid", o, err)
		}
	}
}

// TestFedProxSyntheticSamples: with Samples every client holds that many samples, int(0.9·n) of
// them for training, and the data differ from FedProx's lognormal sizes (digest included).
func TestFedProxSyntheticSamples(t *testing.T) {
	o := FedProxOptions{Alpha: 1, Beta: 1, Users: 7, Seed: 2}
	lognormal, err := FedProxSynthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Samples = 12
	d, err := FedProxSynthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	for k := range o.Users {
		if tr, te := len(d.Natural.Train[k]), len(d.Natural.Test[k]); tr != 10 || te != 2 {
			t.Errorf("client %d: %d train and %d test samples; want 10 and 2 (int(0.9·12) = 10)", k, tr, te)
		}
	}
	if d.Train.N != 70 || d.Test.N != 14 || len(d.Train.X) != 70*fedProxDim {
		t.Errorf("splits of %d and %d samples (%d train values); want 70 and 14", d.Train.N, d.Test.N, len(d.Train.X))
	}
	if d.Digest == lognormal.Digest {
		t.Error("fixed sizes give the digest of FedProx's lognormal sizes")
	}
	if err := (FedProxOptions{Users: fedProxMaxUsers, Samples: FedProxMaxSamples(fedProxMaxUsers)}).Validate(); err != nil {
		t.Errorf("the largest fixed size at the most users: %v", err)
	}
}

// TestLoadSpec checks that generator options reach the generator and are refused for other
// datasets, and that the cache keys on them.
func TestLoadSpec(t *testing.T) {
	ctx := context.Background()
	s := Spec{Name: "fedprox-synthetic", FedProx: FedProxOptions{Alpha: 1, Beta: 1, Users: 4}}
	d, err := LoadSpec(ctx, s)
	if err != nil || len(d.Natural.Train) != 4 {
		t.Fatalf("LoadSpec(%+v) = %v; want 4 users", s, err)
	}
	if _, err := LoadSpec(ctx, Spec{Name: "synthetic", FedProx: FedProxOptions{Users: 4}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("LoadSpec(synthetic with generator options) = %v; want ErrInvalid", err)
	}
	c := NewCache()
	a, _ := c.GetSpec(ctx, s)
	b, _ := c.GetSpec(ctx, Spec{Name: "fedprox-synthetic", FedProx: FedProxOptions{Alpha: 1, Beta: 1, Users: 5}})
	again, _ := c.GetSpec(ctx, s)
	if a == b || a != again {
		t.Error("the cache does not key on the generator options")
	}
}

// TestFedProxSyntheticKnownDigest: the data of two settings, pinned by
// their digests (computed when the splits were still grown by append: the
// preallocation changed no value), and the splits allocated at their final
// sizes, which keeps the peak memory near the data's (1.1 GB at 10,000
// users, 4.2 GB before).
func TestFedProxSyntheticKnownDigest(t *testing.T) {
	for _, tt := range []struct {
		iid  bool
		want string
	}{
		{false, "8aebe1ebfaaa77a71cdc9f36afaa59e6649e4e8c034d47d0f146e1089e9e08cb"},
		{true, "7e173557a233a6ee419c6cf170dc6f25354066905aa78e24a79f223e136aa7d7"},
	} {
		d, err := FedProxSynthetic(FedProxOptions{Alpha: 1, Beta: 1, Users: 30, IID: tt.iid})
		if err != nil {
			t.Fatal(err)
		}
		if d.Digest != tt.want {
			t.Errorf("iid %t: digest %s; want %s", tt.iid, d.Digest, tt.want)
		}
		for _, s := range []Split{d.Train, d.Test} {
			if cap(s.X) != len(s.X) || cap(s.Y) != len(s.Y) {
				t.Errorf("iid %t: a split has %d of %d values, %d of %d labels allocated; want them allocated at their final size", tt.iid, len(s.X), cap(s.X), len(s.Y), cap(s.Y))
			}
		}
	}
}
