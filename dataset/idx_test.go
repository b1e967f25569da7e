package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
)

// idxBytes returns an IDX file with the given magic and dims followed by data, written by hand so
// the tests do not depend on the writer under test.
func idxBytes(magic uint32, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	binary.Write(&b, binary.BigEndian, dims)
	b.Write(data)
	return b.Bytes()
}

// gzipBytes compresses data.
func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// seq returns n bytes 0, 1, 2, ... (mod 256).
func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestIDXImagesRoundTrip(t *testing.T) {
	tests := []struct {
		name             string
		giveN, giveRows  int
		giveCols         int
		giveGzip         bool
		wantHeaderPrefix []byte
	}{
		{"one pixel", 1, 1, 1, false, []byte{0, 0, 8, 3, 0, 0, 0, 1}},
		{"three 2x3", 3, 2, 3, false, []byte{0, 0, 8, 3, 0, 0, 0, 3}},
		{"no images", 0, 28, 28, false, []byte{0, 0, 8, 3, 0, 0, 0, 0}},
		{"mnist size gzip", 5, 28, 28, true, []byte{0, 0, 8, 3, 0, 0, 0, 5}},
		{"larger than one growth chunk", 2, 1024, 700, true, []byte{0, 0, 8, 3, 0, 0, 0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pix := seq(tt.giveN * tt.giveRows * tt.giveCols)
			var b bytes.Buffer
			if err := WriteIDXImages(&b, tt.giveN, tt.giveRows, tt.giveCols, pix); err != nil {
				t.Fatalf("WriteIDXImages: %v", err)
			}
			file := b.Bytes()
			if !bytes.HasPrefix(file, tt.wantHeaderPrefix) {
				t.Errorf("header = % x; want prefix % x", file[:8], tt.wantHeaderPrefix)
			}
			if got, want := len(file), 16+len(pix); got != want {
				t.Errorf("file length = %d; want %d", got, want)
			}
			if tt.giveGzip {
				file = gzipBytes(t, file)
			}
			n, rows, cols, got, err := ReadIDXImages(bytes.NewReader(file), 0)
			if err != nil {
				t.Fatalf("ReadIDXImages: %v", err)
			}
			if n != tt.giveN || rows != tt.giveRows || cols != tt.giveCols {
				t.Errorf("ReadIDXImages dims = %d, %d, %d; want %d, %d, %d", n, rows, cols, tt.giveN, tt.giveRows, tt.giveCols)
			}
			if !bytes.Equal(got, pix) {
				t.Errorf("ReadIDXImages pixels differ from the written ones (%d vs %d bytes)", len(got), len(pix))
			}
		})
	}
}

func TestIDXLabelsRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		give     []byte
		giveGzip bool
	}{
		{"empty", []byte{}, false},
		{"ten", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false},
		{"ten gzip", []byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, true},
		{"large", seq(3 << 20), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteIDXLabels(&b, tt.give); err != nil {
				t.Fatalf("WriteIDXLabels: %v", err)
			}
			file := b.Bytes()
			if want := idxBytes(idxMagicLabels, []uint32{uint32(len(tt.give))}, tt.give); !bytes.Equal(file, want) {
				t.Errorf("WriteIDXLabels wrote % x...; want % x...", file[:min(len(file), 12)], want[:min(len(want), 12)])
			}
			if tt.giveGzip {
				file = gzipBytes(t, file)
			}
			got, err := ReadIDXLabels(bytes.NewReader(file), 0)
			if err != nil {
				t.Fatalf("ReadIDXLabels: %v", err)
			}
			if !bytes.Equal(got, tt.give) {
				t.Errorf("ReadIDXLabels = %d labels differing from the %d written", len(got), len(tt.give))
			}
		})
	}
}

func TestWriteIDXRejectsBadArguments(t *testing.T) {
	tests := []struct {
		name                string
		giveN, giveR, giveC int
		givePix             int
	}{
		{"pixel count too small", 2, 2, 2, 7},
		{"pixel count too large", 2, 2, 2, 9},
		{"negative n", -1, 2, 2, 0},
		{"zero rows", 1, 0, 2, 0},
		{"zero cols", 1, 2, 0, 0},
		{"rows beyond uint32", 1, 1 << 33, 1, 0},
		{"overflowing product", 1 << 31, 1 << 31, 1 << 31, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteIDXImages(io.Discard, tt.giveN, tt.giveR, tt.giveC, make([]byte, tt.givePix))
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("WriteIDXImages(%d, %d, %d, %d bytes) = %v; want an ErrInvalid error", tt.giveN, tt.giveR, tt.giveC, tt.givePix, err)
			}
		})
	}
}

// hostileCase is a malformed file and the maxBytes to read it with (0: the default).
type hostileCase struct {
	name         string
	give         []byte
	giveMaxBytes int64
}

// hostileImages are malformed image files; each must give an ErrInvalid error without a large
// allocation. They double as fuzz seeds (see testdata/fuzz).
func hostileImages(t testing.TB) []hostileCase {
	valid := idxBytes(idxMagicImages, []uint32{2, 2, 2}, seq(8))
	return []hostileCase{
		{"empty file", nil, 0},
		{"one byte", []byte{0}, 0},
		{"truncated magic", []byte{0, 0, 8}, 0},
		{"truncated dims", valid[:10], 0},
		{"header only", valid[:16], 0},
		{"truncated data", valid[:len(valid)-1], 0},
		{"trailing byte", append(append([]byte{}, valid...), 0), 0},
		{"label magic", idxBytes(idxMagicLabels, []uint32{2}, []byte{0, 1}), 0},
		{"float type", idxBytes(0x00000d03, []uint32{1, 1, 1}, make([]byte, 4)), 0},
		{"two dims", idxBytes(0x00000802, []uint32{1, 1}, []byte{0}), 0},
		{"zero rows", idxBytes(idxMagicImages, []uint32{5, 0, 28}, nil), 0},
		{"huge dims, no data", idxBytes(idxMagicImages, []uint32{0xffffffff, 0xffffffff, 0xffffffff}, nil), 0},
		{"product overflows uint64", idxBytes(idxMagicImages, []uint32{1 << 31, 1 << 31, 1 << 31}, nil), 0},
		{"over maxBytes, no data", idxBytes(idxMagicImages, []uint32{1 << 20, 28, 28}, seq(100)), 1 << 20},
		{"claims 1 GiB, holds 10 bytes", idxBytes(idxMagicImages, []uint32{1 << 10, 1 << 10, 1 << 10}, seq(10)), 0},
		{"gzip truncated", gzipBytes(t, valid)[:20], 0},
		{"gzip bad checksum", func() []byte {
			z := gzipBytes(t, valid)
			z[len(z)-8] ^= 0xff // CRC-32 in the gzip trailer
			return z
		}(), 0},
		{"gzip garbage after member", append(gzipBytes(t, valid), 1, 2, 3), 0},
		{"gzip of truncated file", gzipBytes(t, valid[:len(valid)-3]), 0},
		{"gzip magic only", []byte{0x1f, 0x8b}, 0},
	}
}

func TestReadIDXImagesHostile(t *testing.T) {
	for _, tt := range hostileImages(t) {
		t.Run(tt.name, func(t *testing.T) {
			n, rows, cols, pix, err := ReadIDXImages(bytes.NewReader(tt.give), tt.giveMaxBytes)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ReadIDXImages = %d, %d, %d, %d bytes, %v; want an ErrInvalid error", n, rows, cols, len(pix), err)
			}
			if pix != nil {
				t.Errorf("ReadIDXImages returned %d pixel bytes with an error; want none", len(pix))
			}
		})
	}
}

func TestReadIDXLabelsHostile(t *testing.T) {
	valid := idxBytes(idxMagicLabels, []uint32{4}, []byte{1, 2, 3, 4})
	tests := []struct {
		name         string
		give         []byte
		giveMaxBytes int64
	}{
		{"empty file", nil, 0},
		{"truncated header", valid[:6], 0},
		{"truncated data", valid[:10], 0},
		{"trailing bytes", append(append([]byte{}, valid...), 9, 9), 0},
		{"image magic", idxBytes(idxMagicImages, []uint32{1, 1, 1}, []byte{0}), 0},
		{"huge count, no data", idxBytes(idxMagicLabels, []uint32{0xffffffff}, nil), 0},
		{"over maxBytes", valid, 3},
		{"gzip truncated", gzipBytes(t, valid)[:15], 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadIDXLabels(bytes.NewReader(tt.give), tt.giveMaxBytes)
			if !errors.Is(err, ErrInvalid) || got != nil {
				t.Errorf("ReadIDXLabels = %v, %v; want nil and an ErrInvalid error", got, err)
			}
		})
	}
}

// errReader fails every read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadIDXPassesReaderErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	valid := idxBytes(idxMagicImages, []uint32{1, 2, 2}, seq(4))
	tests := []struct {
		name string
		give io.Reader
	}{
		{"at start", errReader{boom}},
		{"in the data", io.MultiReader(bytes.NewReader(valid[:18]), errReader{boom})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, _, err := ReadIDXImages(tt.give, 0)
			if !errors.Is(err, boom) || errors.Is(err, ErrInvalid) {
				t.Errorf("ReadIDXImages = %v; want an error wrapping %v and not ErrInvalid", err, boom)
			}
		})
	}
}

func TestReadIDXImagesAllocatesByData(t *testing.T) {
	// A header claiming 1 GiB of pixels, followed by 10 bytes of data, must fail after allocating
	// about one growth chunk, not the claimed size.
	file := idxBytes(idxMagicImages, []uint32{1 << 10, 1 << 10, 1 << 10}, seq(10))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _, _, err := ReadIDXImages(bytes.NewReader(file), 1<<30)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadIDXImages = %v; want an ErrInvalid error", err)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(2*growChunk); got > limit {
		t.Errorf("ReadIDXImages of a truncated 1 GiB claim allocated %d bytes; want at most %d", got, limit)
	}
}

func FuzzReadIDXImages(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		n, rows, cols, pix, err := ReadIDXImages(bytes.NewReader(data), 1<<20)
		if err != nil {
			if pix != nil {
				t.Errorf("ReadIDXImages returned %d bytes with error %v", len(pix), err)
			}
			return
		}
		if len(pix) != n*rows*cols {
			t.Fatalf("ReadIDXImages = %d×%d×%d with %d bytes", n, rows, cols, len(pix))
		}
		var b bytes.Buffer
		if err := WriteIDXImages(&b, n, rows, cols, pix); err != nil {
			t.Fatalf("WriteIDXImages of what ReadIDXImages accepted: %v", err)
		}
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return // compressed input: the re-encoding is uncompressed
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Errorf("re-encoding differs from the accepted input")
		}
	})
}

func FuzzReadIDXLabels(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, err := ReadIDXLabels(bytes.NewReader(data), 1<<20)
		if err != nil {
			if labels != nil {
				t.Errorf("ReadIDXLabels returned %d labels with error %v", len(labels), err)
			}
			return
		}
		var b bytes.Buffer
		if err := WriteIDXLabels(&b, labels); err != nil {
			t.Fatalf("WriteIDXLabels of what ReadIDXLabels accepted: %v", err)
		}
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Errorf("re-encoding differs from the accepted input")
		}
	})
}
