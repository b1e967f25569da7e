package sweep

import "github.com/flsweep/flsweep/dataset"

// Norm returns the dataset block's input normalisation (dataset.normalize,
// dataset.mean, dataset.std) for package dataset.
func (d DatasetConfig) Norm() dataset.Norm {
	return dataset.Norm{Mode: d.Normalize, Mean: d.Mean, Std: d.Std}
}

// finishNorm resolves the normalisation before the point's ID is computed,
// as finishPartition resolves the partition presets: "unit" becomes the
// zero value (omitted from the canonical JSON, so `normalize: unit` is the
// same point as no normalize, and every point written before the option
// existed keeps its ID), and half and meanstd are recorded with the
// per-channel mean and std they apply (dataset.Norm.Resolve: 0.5, or the
// dataset's constants where the spec gives none).
//
// The numbers are part of the canonical JSON, not only the mode: the ID
// identifies what a point computes, so meanstd and the same constants
// written out are one point, and a change to a dataset's constants gives
// new IDs instead of new results under old ones. A normalisation that does
// not resolve is left as written for validateNorm to report.
func (c *Config) finishNorm() {
	d := &c.Dataset
	if n, err := d.Norm().Resolve(d.Name); err == nil {
		d.Normalize, d.Mean, d.Std = n.Mode, n.Mean, n.Std
	}
}

// validateNorm checks the normalisation against the dataset; the errors name
// dataset.normalize, dataset.mean or dataset.std and wrap both ErrInvalid
// and dataset.ErrInvalid. An unknown dataset name is validateData's to report.
func (c Config) validateNorm() []error {
	d := c.Dataset
	if !contains(Datasets, d.Name) {
		return nil
	}
	if _, err := d.Norm().Resolve(d.Name); err != nil {
		return []error{&blockError{msg: err.Error(), errs: []error{ErrInvalid, err}}}
	}
	return nil
}
