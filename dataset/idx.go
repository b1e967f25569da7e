package dataset

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// IDX is the file format of the MNIST distribution (LeCun et al., http://yann.lecun.com/exdb/mnist/):
// a big-endian header, then the data as unsigned bytes.
//
//	magic uint32    0x00000803 images (3 dimensions), 0x00000801 labels (1 dimension)
//	dims  [k]uint32 images: n, rows, cols; labels: n
//	data  [n·rows·cols]byte or [n]byte
const (
	idxMagicLabels = 0x00000801
	idxMagicImages = 0x00000803
)

// DefaultMaxBytes is the payload limit ReadIDXImages and ReadIDXLabels use when maxBytes <= 0.
const DefaultMaxBytes = 1 << 30

// growChunk is the first allocation for a payload; the buffer then doubles as data arrives, so a
// header that claims more data than the stream holds never causes a large allocation.
const growChunk = 1 << 20

// ReadIDXImages reads an IDX image file (magic 0x00000803) from r, gzip-compressed or not.
// It returns the image count n, the image size rows×cols and the n·rows·cols pixel bytes.
//
// The file must be exactly header plus payload: a truncated payload or trailing bytes are errors.
// A payload larger than maxBytes (DefaultMaxBytes if maxBytes <= 0) is rejected before it is read.
// Malformed input gives an error wrapping ErrInvalid; an error of r is returned wrapped as is.
func ReadIDXImages(r io.Reader, maxBytes int64) (n, rows, cols int, pix []byte, err error) {
	dr, err := decompress(r)
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("idx images: %w", err)
	}
	dims, err := readIDXHeader(dr, idxMagicImages)
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("idx images: %w", err)
	}
	if dims[1] == 0 || dims[2] == 0 {
		return 0, 0, 0, nil, fmt.Errorf("idx images: image size %d×%d is empty: %w", dims[1], dims[2], ErrInvalid)
	}
	need, err := payloadSize(dims, maxBytes)
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("idx images: %w", err)
	}
	pix, err = readPayload(dr, need)
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("idx images (%d×%d×%d): %w", dims[0], dims[1], dims[2], err)
	}
	return int(dims[0]), int(dims[1]), int(dims[2]), pix, nil
}

// ReadIDXLabels reads an IDX label file (magic 0x00000801) from r, gzip-compressed or not, and
// returns its labels. Limits and errors are as for ReadIDXImages.
func ReadIDXLabels(r io.Reader, maxBytes int64) ([]byte, error) {
	dr, err := decompress(r)
	if err != nil {
		return nil, fmt.Errorf("idx labels: %w", err)
	}
	dims, err := readIDXHeader(dr, idxMagicLabels)
	if err != nil {
		return nil, fmt.Errorf("idx labels: %w", err)
	}
	need, err := payloadSize(dims, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("idx labels: %w", err)
	}
	labels, err := readPayload(dr, need)
	if err != nil {
		return nil, fmt.Errorf("idx labels (%d): %w", dims[0], err)
	}
	return labels, nil
}

// WriteIDXImages writes n images of rows×cols bytes as an uncompressed IDX image file.
// len(pix) must be n·rows·cols, rows and cols at least 1, and every dimension at most 2³²−1.
func WriteIDXImages(w io.Writer, n, rows, cols int, pix []byte) error {
	if n < 0 || rows < 1 || cols < 1 || uint64(n) > math.MaxUint32 || uint64(rows) > math.MaxUint32 || uint64(cols) > math.MaxUint32 {
		return fmt.Errorf("write idx images: dimensions %d×%d×%d out of range: %w", n, rows, cols, ErrInvalid)
	}
	if size, ok := mulCap(uint64(n), uint64(rows), uint64(cols), uint64(len(pix))); !ok || size != uint64(len(pix)) {
		return fmt.Errorf("write idx images: %d×%d×%d dimensions but %d pixel bytes: %w", n, rows, cols, len(pix), ErrInvalid)
	}
	if err := writeIDXHeader(w, idxMagicImages, uint32(n), uint32(rows), uint32(cols)); err != nil {
		return fmt.Errorf("write idx images: %w", err)
	}
	if _, err := w.Write(pix); err != nil {
		return fmt.Errorf("write idx images: %w", err)
	}
	return nil
}

// WriteIDXLabels writes labels as an uncompressed IDX label file. len(labels) must be at most 2³²−1.
func WriteIDXLabels(w io.Writer, labels []byte) error {
	if uint64(len(labels)) > math.MaxUint32 {
		return fmt.Errorf("write idx labels: %d labels exceed the format's limit: %w", len(labels), ErrInvalid)
	}
	if err := writeIDXHeader(w, idxMagicLabels, uint32(len(labels))); err != nil {
		return fmt.Errorf("write idx labels: %w", err)
	}
	if _, err := w.Write(labels); err != nil {
		return fmt.Errorf("write idx labels: %w", err)
	}
	return nil
}

// writeIDXHeader writes the magic number and dims, big-endian.
func writeIDXHeader(w io.Writer, magic uint32, dims ...uint32) error {
	hdr := make([]byte, 4+4*len(dims))
	binary.BigEndian.PutUint32(hdr, magic)
	for i, d := range dims {
		binary.BigEndian.PutUint32(hdr[4+4*i:], d)
	}
	_, err := w.Write(hdr)
	return err
}

// decompress returns r, transparently gunzipped if it starts with the gzip magic bytes 1f 8b.
// IDX files start with 00 00, so the two cannot be confused.
func decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(head) < 2 || head[0] != 0x1f || head[1] != 0x8b {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, readError("gzip header", err)
	}
	return zr, nil
}

// readIDXHeader reads the magic number and dims of an unsigned-byte IDX file and checks the magic.
func readIDXHeader(r io.Reader, magic uint32) ([]uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, readError("header", err)
	}
	got := binary.BigEndian.Uint32(b[:])
	if got != magic {
		kind := "images"
		if magic == idxMagicLabels {
			kind = "labels"
		}
		return nil, fmt.Errorf("magic number 0x%08x; want 0x%08x (unsigned-byte %s): %w", got, magic, kind, ErrInvalid)
	}
	dims := make([]uint32, magic&0xff)
	for i := range dims {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, readError("header", err)
		}
		dims[i] = binary.BigEndian.Uint32(b[:])
	}
	return dims, nil
}

// payloadSize returns the product of dims, or an ErrInvalid error if it exceeds maxBytes
// (DefaultMaxBytes if maxBytes <= 0) or the platform's int.
func payloadSize(dims []uint32, maxBytes int64) (int, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	limit := uint64(maxBytes)
	if limit > math.MaxInt {
		limit = math.MaxInt
	}
	ds := make([]uint64, len(dims))
	for i, d := range dims {
		ds[i] = uint64(d)
	}
	size, ok := mulCap(append(ds, limit)...)
	if !ok {
		return 0, fmt.Errorf("dimensions %v need more than %d bytes: %w", dims, limit, ErrInvalid)
	}
	return int(size), nil
}

// mulCap returns the product of xs[:len(xs)-1] and true if it is at most the last element, the cap;
// otherwise false. It never overflows.
func mulCap(xs ...uint64) (uint64, bool) {
	limit := xs[len(xs)-1]
	p := uint64(1)
	for _, x := range xs[:len(xs)-1] {
		if x == 0 {
			return 0, true
		}
		if p > limit/x {
			return 0, false
		}
		p *= x
	}
	return p, p <= limit
}

// readPayload reads exactly need bytes and then requires the end of the stream. Its buffer starts
// at growChunk and doubles, so memory follows the data actually present, not the header's claim.
func readPayload(r io.Reader, need int) ([]byte, error) {
	buf := make([]byte, 0, min(need, growChunk))
	for len(buf) < need {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*cap(buf), need))
			copy(grown, buf)
			buf = grown
		}
		m, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("truncated: %d of %d data bytes: %w", len(buf), need, ErrInvalid)
			}
			return nil, readError("data", err)
		}
	}
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return nil, fmt.Errorf("trailing bytes after %d data bytes: %w", need, ErrInvalid)
	case errors.Is(err, io.EOF):
		return buf, nil
	default:
		// A gzip stream reports a bad checksum or a damaged trailer only here, at its end.
		return nil, readError("end of data", err)
	}
}

// readError wraps err from reading part what; truncation and gzip corruption also wrap ErrInvalid.
func readError(what string, err error) error {
	var corrupt flate.CorruptInputError
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated %s: %w", what, ErrInvalid)
	}
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &corrupt) {
		return fmt.Errorf("read %s: %w: %w", what, err, ErrInvalid)
	}
	return fmt.Errorf("read %s: %w", what, err)
}
