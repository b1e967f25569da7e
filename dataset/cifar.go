package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
)

// CIFAR-10's binary version (Krizhevsky 2009, https://www.cs.toronto.edu/~kriz/cifar.html) is six
// files of records with no header:
//
//	label  1 byte, 0..9
//	pixels 3072 bytes: the 1024 red values of the 32×32 image row by row, then green, then blue
//
// data_batch_1.bin ... data_batch_5.bin hold 10,000 training records each, test_batch.bin the
// 10,000 test records. The pixel order is CHW, the layout Dataset uses.
const (
	cifarPixels = 3 * 32 * 32
	cifarRecord = 1 + cifarPixels
	cifarURL    = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
)

// cifarTrainFiles and cifarTestFile are the files of the binary version, in digest order.
var (
	cifarTrainFiles = [5]string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}
	cifarTestFile   = "test_batch.bin"
)

func cifarFiles() []string { return append(cifarTrainFiles[:], cifarTestFile) }

// cifarHint says how to provide the CIFAR-10 files in dir.
func cifarHint(dir string) string {
	return fmt.Sprintf("download %s, extract it (tar xzf), and put the files of its cifar-10-batches-bin directory (%s) in %s, or set dataset.root to that directory",
		cifarURL, strings.Join(cifarFiles(), ", "), dir)
}

// ReadCIFARBatch reads one CIFAR-10 binary batch file from r: n records of a label byte and 3072
// pixel bytes (CHW). It returns the n labels and the n·3072 pixel bytes.
//
// The stream must hold a whole, non-zero number of records, every label must be below 10, and at
// most maxRecords records are accepted (10,000 if maxRecords <= 0, the size of an official batch).
// The buffer grows with the data actually read, so a long stream is rejected after reading
// maxRecords+1 records' worth, never by a large allocation up front. Malformed input gives an
// error wrapping ErrInvalid; an error of r is returned wrapped as is.
func ReadCIFARBatch(r io.Reader, maxRecords int) (labels, pix []byte, err error) {
	if maxRecords <= 0 {
		maxRecords = 10000
	}
	limit := int64(maxRecords) * cifarRecord
	buf, err := readAtMost(r, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("cifar batch: %w", err)
	}
	switch {
	case len(buf) == 0:
		return nil, nil, fmt.Errorf("cifar batch: empty: %w", ErrInvalid)
	case int64(len(buf)) > limit:
		return nil, nil, fmt.Errorf("cifar batch: more than %d records: %w", maxRecords, ErrInvalid)
	case len(buf)%cifarRecord != 0:
		return nil, nil, fmt.Errorf("cifar batch: %d bytes is not a whole number of %d-byte records (truncated?): %w", len(buf), cifarRecord, ErrInvalid)
	}
	n := len(buf) / cifarRecord
	labels = make([]byte, n)
	pix = make([]byte, n*cifarPixels)
	for i := range n {
		rec := buf[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] >= 10 {
			return nil, nil, fmt.Errorf("cifar batch: record %d has label %d; CIFAR-10 labels are 0..9: %w", i, rec[0], ErrInvalid)
		}
		labels[i] = rec[0]
		copy(pix[i*cifarPixels:], rec[1:])
	}
	return labels, pix, nil
}

// readAtMost reads r to its end, or until it has read limit+1 bytes. Its buffer starts at
// growChunk and doubles, so memory follows the data present.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(limit+1, growChunk))
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit+1))
			copy(grown, buf)
			buf = grown
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, readError("data", err)
		}
	}
	return buf, nil
}

// WriteCIFARBatch writes records in the CIFAR-10 binary format: for each i, labels[i] then
// pix[i·3072:(i+1)·3072]. len(pix) must be 3072·len(labels) and every label below 10.
func WriteCIFARBatch(w io.Writer, labels, pix []byte) error {
	if len(pix) != cifarPixels*len(labels) {
		return fmt.Errorf("write cifar batch: %d labels need %d pixel bytes, got %d: %w", len(labels), cifarPixels*len(labels), len(pix), ErrInvalid)
	}
	rec := make([]byte, cifarRecord)
	for i, y := range labels {
		if y >= 10 {
			return fmt.Errorf("write cifar batch: label %d at %d; CIFAR-10 labels are 0..9: %w", y, i, ErrInvalid)
		}
		rec[0] = y
		copy(rec[1:], pix[i*cifarPixels:(i+1)*cifarPixels])
		if _, err := w.Write(rec); err != nil {
			return fmt.Errorf("write cifar batch: %w", err)
		}
	}
	return nil
}

// WriteCIFARFixture writes a small CIFAR-10 dataset in the exact binary format into dir, for
// tests: five training batches of perBatch records and a test batch of testN records. Labels
// cycle through 0..9 (so every class appears when perBatch >= 10) and pixels are uniform bytes,
// drawn from a ChaCha8 stream keyed by seed. The same arguments write the same bytes.
func WriteCIFARFixture(dir string, perBatch, testN int, seed uint64) error {
	if perBatch < 1 || testN < 1 {
		return fmt.Errorf("cifar fixture: %d records per batch and %d test records; both must be >= 1: %w", perBatch, testN, ErrInvalid)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	src := newStream(fmt.Sprintf("flsweep/cifar-fixture/%d", seed))
	for i, name := range cifarFiles() {
		n := perBatch
		if i == len(cifarTrainFiles) {
			n = testN
		}
		labels := make([]byte, n)
		pix := make([]byte, n*cifarPixels)
		for j := range labels {
			labels[j] = byte(j % 10)
		}
		fill(pix, src)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := WriteCIFARBatch(f, labels, pix); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// fill sets p to uniform bytes from src.
func fill(p []byte, src *rand.ChaCha8) {
	for i := 0; i < len(p); i += 8 {
		x := src.Uint64()
		for j := i; j < min(i+8, len(p)); j++ {
			p[j] = byte(x)
			x >>= 8
		}
	}
}

// loadCIFAR reads and converts the six CIFAR-10 batch files from src; dir names where they
// belong in messages. The pixel bytes of all batches are read first and converted once, so the
// peak memory is the float32 data (614 MB for the full train split) plus the bytes (154 MB).
func loadCIFAR(ctx context.Context, src source, dir string) (*Dataset, error) {
	const name = "cifar10"
	hashes := make([]string, 0, 6)
	read := func(file string) (labels, pix []byte, err error) {
		f, err := src.open(ctx, file)
		if errors.Is(err, ErrNotFound) {
			return nil, nil, fmt.Errorf("dataset %s: %s: %w; %s", name, src.path(file), ErrNotFound, cifarHint(dir))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("dataset %s: open %s: %w", name, src.path(file), err)
		}
		defer f.Close()
		h := sha256.New()
		labels, pix, err = ReadCIFARBatch(io.TeeReader(f, h), 0)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset %s: %s: %w", name, src.path(file), err)
		}
		hashes = append(hashes, hex.EncodeToString(h.Sum(nil)))
		return labels, pix, nil
	}
	split := func(files []string) (Split, error) {
		var ys, ps [][]byte
		n := 0
		for _, file := range files {
			y, p, err := read(file)
			if err != nil {
				return Split{}, err
			}
			ys, ps = append(ys, y), append(ps, p)
			n += len(y)
		}
		s := Split{X: make([]float32, 0, n*cifarPixels), Y: make([]uint8, 0, n), N: n}
		for i := range ys {
			s.Y = append(s.Y, ys[i]...)
			for _, v := range ps[i] {
				s.X = append(s.X, float32(v)/255)
			}
		}
		return s, nil
	}
	d := &Dataset{Name: name, Classes: 10, Shape: [3]int{3, 32, 32}}
	var err error
	if d.Train, err = split(cifarTrainFiles[:]); err != nil {
		return nil, err
	}
	if d.Test, err = split([]string{cifarTestFile}); err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, file := range cifarFiles() {
		fmt.Fprintf(&b, "%s  %s\n", hashes[i], file)
	}
	sum := sha256.Sum256([]byte(b.String()))
	d.Digest = hex.EncodeToString(sum[:])
	return d, nil
}

// loadCIFARRoot opens root (a directory or blob URL) and loads CIFAR-10 from it.
func loadCIFARRoot(ctx context.Context, root string) (*Dataset, error) {
	const name = "cifar10"
	if root == "" {
		return nil, fmt.Errorf("dataset %s: no data directory given; %s: %w", name, cifarHint("a directory DIR"), ErrInvalid)
	}
	if !strings.Contains(root, "://") {
		return loadCIFAR(ctx, dirSource{dir: root}, root)
	}
	b, err := blob.OpenBucket(ctx, root)
	if errors.Is(err, fs.ErrNotExist) { // fileblob's directory is missing
		return nil, fmt.Errorf("dataset %s: %s: %w; %s", name, root, ErrNotFound, cifarHint(root))
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: open %s: %w", name, root, err)
	}
	defer b.Close()
	return loadCIFAR(ctx, bucketSource{b: b, url: root}, root)
}
