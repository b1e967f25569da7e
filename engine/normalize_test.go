package engine

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/dataset"
	"github.com/flsweep/flsweep/steps"
)

// TestNormalizeReachesTheClients runs points that differ only in
// dataset.normalize, with feature noise, on the CIFAR-10 fixture in one
// engine: each trains and records its normalisation in the points table;
// the engine's dataset cache keeps the plain and the normalised copies
// apart; every client sees the normalised values; and a noisy client's
// values are the plain run's noisy pixels normalised afterwards (the noise
// goes in before the normalisation, as in NIID-Bench, partition.Noise).
func TestNormalizeReachesTheClients(t *testing.T) {
	ctx := context.Background()
	cifar := t.TempDir()
	if err := dataset.WriteCIFARFixture(cifar, 20, 20, 1); err != nil {
		t.Fatal(err)
	}
	spec := "name: nm\ndataset: {name: cifar10, root: " + filepath.ToSlash(cifar) + "}\n" +
		"partition: {scheme: iid, clients: 4, noise: 0.3}\nmodel: {arch: mlp, hidden: [8]}\n" +
		"train: {lr: 0.05, batch_size: 10, local_steps: 2}\nclients_per_round: 2\nrounds: 2\nseeds: [1]\n" +
		"grid:\n  dataset.normalize: [unit, half, meanstd]\n"
	e := newEngine(t)
	in := steps.PlanSweepInput{File: "nm.yaml", Spec: []byte(spec)}
	if _, err := e.RunSweep(ctx, in, nil); err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanSweep(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	s := take(t, e, plan)
	if len(s.Results) != 3 || len(s.Points) != 3 {
		t.Fatalf("%d results, %d point rows; want 3 each", len(s.Results), len(s.Points))
	}
	if strings.Contains(s.Points[0].Config, "normalize") {
		t.Errorf("the unit point's config_json %s names a normalisation; unit is the zero value", s.Points[0].Config)
	}
	for i, want := range []string{`"dataset":{"name":"cifar10"`, `"normalize":"half","mean":[0.5,0.5,0.5],"std":[0.5,0.5,0.5]`, `"normalize":"meanstd","mean":[0.4914,0.4822,0.4465],"std":[0.247,0.243,0.261]`} {
		if !strings.Contains(s.Points[i].Config, want) {
			t.Errorf("point %d config_json %s; want it to contain %s", i, s.Points[i].Config, want)
		}
		for j := range i {
			if s.Results[i].ModelSHA256 == s.Results[j].ModelSHA256 {
				t.Errorf("points %d and %d end with the same model; their inputs differ", j, i)
			}
		}
	}

	var envs []*pointEnv
	for _, p := range plan.Points {
		env, err := e.env(ctx, steps.PointRef{Sweep: plan.Name, Point: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	unit := envs[0]
	if unit.data.Norm.Active() || unit.data.Train.X[0] < 0 {
		t.Fatalf("the unit point's data is normalised (%+v)", unit.data.Norm)
	}
	dim, plane := unit.data.Dim(), 32*32
	const noisy = 3 // σ_3 = 0.3
	plainNoisy := unit.examples(noisy)
	for _, env := range envs[1:] {
		n := env.data.Norm
		if env.data == unit.data || !n.Active() || n.Mode != env.cfg.Dataset.Normalize {
			t.Fatalf("point %s: data %p with %+v; want its own %s copy (unit's is %p)", env.point.ID, env.data, n, env.cfg.Dataset.Normalize, unit.data)
		}
		norm := func(x float32, c int) float32 { return float32(x-float32(n.Mean[c])) / float32(n.Std[c]) }
		for i, x := range unit.data.Train.X {
			if got, want := env.data.Train.X[i], norm(x, (i%dim)/plane); got != want {
				t.Fatalf("%s: train value %d = %v; want %v", n.Mode, i, got, want)
			}
		}
		clean, i0 := env.examples(0), env.part.Train[0][0]
		if !slices.Equal(clean.X[clean.Idx[0]*dim:(clean.Idx[0]+1)*dim], env.data.Train.X[i0*dim:(i0+1)*dim]) {
			t.Errorf("%s: client 0's first sample differs from the normalised data; client 0 is clean", n.Mode)
		}
		ex := env.examples(noisy)
		if !slices.Equal(ex.Idx, plainNoisy.Idx) || len(ex.X) != len(plainNoisy.X) {
			t.Fatalf("%s: client %d's examples have another layout than the unit point's", n.Mode, noisy)
		}
		for j, x := range plainNoisy.X {
			c := (j % dim) / plane
			want := (float64(x) - n.Mean[c]) / n.Std[c]
			if math.Abs(float64(ex.X[j])-want) > 1e-5 {
				t.Fatalf("%s: client %d value %d = %v; want its noisy pixel normalised, (%v − %v)/%v = %v", n.Mode, noisy, j, ex.X[j], x, n.Mean[c], n.Std[c], want)
			}
		}
	}
}
