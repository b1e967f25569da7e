package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound marks a missing data file. Callers classify it as a non-retryable bad-input error.
var ErrNotFound = errors.New("not found")

// ErrInvalid marks malformed or corrupt data, a checksum mismatch or an unknown dataset name.
// Callers classify it as a non-retryable bad-input error.
var ErrInvalid = errors.New("invalid input")

// Split is one split of a dataset held in memory.
type Split struct {
	X []float32 // N*Dim values, row-major; sample i is X[i*Dim:(i+1)*Dim], pixels scaled to [0,1] (byte/255)
	Y []uint8   // N labels in [0, Classes)
	N int
}

// Dataset is a train and a test split of one classification dataset. It is read-only once loaded.
type Dataset struct {
	Name    string // "fmnist", "mnist", "cifar10", "synthetic", "fedprox-synthetic"
	Classes int
	Shape   [3]int // C, H, W of one sample (fmnist/mnist: 1,28,28); Dim() = C*H*W; sample layout is CHW
	Train   Split
	Test    Split
	// Digest is the hex SHA-256 identifying the exact data (see the package doc, "Files"), so a run can
	// record which data it used and workers holding different data can be detected.
	Digest string
	// Natural is the dataset's own division into clients, for data generated per client
	// (fedprox-synthetic); nil for the others.
	Natural *NaturalSplit
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
const knownNames = "fmnist, mnist, cifar10, synthetic, fedprox-synthetic"

// Names are the dataset names Load accepts.
var Names = []string{"fmnist", "mnist", "cifar10", "synthetic", "fedprox-synthetic"}

// Spec says which dataset to load and, for generated data, how to generate it. It is
// comparable, so it keys Cache.
type Spec struct {
	Name string // one of Names
	Root string // directory or blob URL of the files (fmnist, mnist, cifar10); see Load
	// FedProx holds the options of fedprox-synthetic; it must be zero for other names.
	FedProx FedProxOptions
}

// idxDataset describes a dataset stored as IDX files.
type idxDataset struct {
	name    string
	classes int
}

// lookupIDX returns the IDX dataset called name.
func lookupIDX(name string) (idxDataset, bool) {
	switch name {
	case "fmnist", "mnist":
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
