package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// cifarBytes returns n records in the CIFAR-10 binary format, built by hand so the tests do not
// depend on the writer under test: record i has label labels[i] and pixel j = byte(i+j).
func cifarBytes(labels ...byte) []byte {
	var b bytes.Buffer
	for i, y := range labels {
		b.WriteByte(y)
		for j := range cifarPixels {
			b.WriteByte(byte(i + j))
		}
	}
	return b.Bytes()
}

func TestReadCIFARBatch(t *testing.T) {
	file := cifarBytes(3, 9, 0)
	labels, pix, err := ReadCIFARBatch(bytes.NewReader(file), 0)
	if err != nil {
		t.Fatalf("ReadCIFARBatch: %v", err)
	}
	if !bytes.Equal(labels, []byte{3, 9, 0}) || len(pix) != 3*cifarPixels {
		t.Fatalf("ReadCIFARBatch = labels %v, %d pixel bytes; want [3 9 0], %d", labels, len(pix), 3*cifarPixels)
	}
	for i := range 3 {
		// Red channel first: byte 0 of the record's pixels is red (0, 0),
		// byte 1024 green (0, 0), byte 2048 blue (0, 0).
		for _, j := range []int{0, 1023, 1024, 2048, 3071} {
			if got, want := pix[i*cifarPixels+j], byte(i+j); got != want {
				t.Errorf("record %d pixel %d = %d; want %d", i, j, got, want)
			}
		}
	}
	var b bytes.Buffer
	if err := WriteCIFARBatch(&b, labels, pix); err != nil || !bytes.Equal(b.Bytes(), file) {
		t.Errorf("WriteCIFARBatch(ReadCIFARBatch(file)) = %d bytes, %v; want the file back", b.Len(), err)
	}
}

func TestReadCIFARBatchHostile(t *testing.T) {
	valid := cifarBytes(1, 2)
	tests := []struct {
		name       string
		give       []byte
		giveMax    int
		wantSubstr string
	}{
		{"empty", nil, 0, "empty"},
		{"truncated record", valid[:len(valid)-1], 0, "not a whole number"},
		{"one byte extra", append(append([]byte{}, valid...), 7), 0, "not a whole number"},
		{"label 10", cifarBytes(1, 10), 0, "label 10"},
		{"label 255", cifarBytes(255), 0, "label 255"},
		{"more records than allowed", cifarBytes(1, 2, 3), 2, "more than 2 records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels, pix, err := ReadCIFARBatch(bytes.NewReader(tt.give), tt.giveMax)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantSubstr) {
				t.Errorf("ReadCIFARBatch = %v; want an ErrInvalid error containing %q", err, tt.wantSubstr)
			}
			if labels != nil || pix != nil {
				t.Errorf("ReadCIFARBatch returned data with its error")
			}
		})
	}
}

// endless is an infinite stream of zero bytes.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestReadCIFARBatchAllocatesByLimit feeds an endless stream: the reader must stop after
// maxRecords+1 records' worth of bytes, allocating about twice that, not read forever.
func TestReadCIFARBatchAllocatesByLimit(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := ReadCIFARBatch(endless{}, 100)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadCIFARBatch(endless) = %v; want an ErrInvalid error", err)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(4*101*cifarRecord+growChunk); got > limit {
		t.Errorf("ReadCIFARBatch(endless, 100 records) allocated %d bytes; want at most %d", got, limit)
	}
}

func TestReadCIFARBatchPassesReaderErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	_, _, err := ReadCIFARBatch(io.MultiReader(bytes.NewReader(cifarBytes(1)[:100]), errReader{boom}), 0)
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalid) {
		t.Errorf("ReadCIFARBatch = %v; want an error wrapping %v and not ErrInvalid", err, boom)
	}
}

func TestWriteCIFARBatchRejects(t *testing.T) {
	if err := WriteCIFARBatch(io.Discard, []byte{1}, make([]byte, 10)); !errors.Is(err, ErrInvalid) {
		t.Errorf("WriteCIFARBatch(short pixels) = %v; want ErrInvalid", err)
	}
	if err := WriteCIFARBatch(io.Discard, []byte{10}, make([]byte, cifarPixels)); !errors.Is(err, ErrInvalid) {
		t.Errorf("WriteCIFARBatch(label 10) = %v; want ErrInvalid", err)
	}
}

// TestLoadCIFAR loads a generated fixture in the exact format from a directory and from a
// file:// blob URL: sizes, shape, pixel scaling and layout, and the digest, computed here from
// the files as `sha256sum data_batch_1.bin ... test_batch.bin | sha256sum` would.
func TestLoadCIFAR(t *testing.T) {
	dir := t.TempDir()
	if err := WriteCIFARFixture(dir, 20, 12, 1); err != nil {
		t.Fatal(err)
	}
	var listing strings.Builder
	raw := map[string][]byte{}
	for _, f := range cifarFiles() {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		raw[f] = b
		sum := sha256.Sum256(b)
		fmt.Fprintf(&listing, "%s  %s\n", hex.EncodeToString(sum[:]), f)
	}
	sum := sha256.Sum256([]byte(listing.String()))
	wantDigest := hex.EncodeToString(sum[:])
	for _, root := range []string{dir, "file://" + filepath.ToSlash(dir) + "?metadata=skip"} {
		d, err := Load(context.Background(), "cifar10", root)
		if err != nil {
			t.Fatalf("Load(cifar10, %s): %v", root, err)
		}
		if d.Name != "cifar10" || d.Classes != 10 || d.Shape != [3]int{3, 32, 32} || d.Train.N != 100 || d.Test.N != 12 {
			t.Errorf("Load(%s) = %s, %d classes, shape %v, %d/%d samples; want cifar10, 10, [3 32 32], 100/12", root, d.Name, d.Classes, d.Shape, d.Train.N, d.Test.N)
		}
		if len(d.Train.X) != 100*3072 || len(d.Test.X) != 12*3072 {
			t.Errorf("pixel values: %d/%d; want %d/%d", len(d.Train.X), len(d.Test.X), 100*3072, 12*3072)
		}
		// Train sample 20 is data_batch_2.bin's first record.
		rec := raw["data_batch_2.bin"][:cifarRecord]
		if d.Train.Y[20] != rec[0] || d.Train.X[20*3072+1024] != float32(rec[1+1024])/255 {
			t.Errorf("train sample 20 = label %d, green(0,0) %v; want %d, %v", d.Train.Y[20], d.Train.X[20*3072+1024], rec[0], float32(rec[1+1024])/255)
		}
		if d.Digest != wantDigest {
			t.Errorf("Digest = %s; want %s", d.Digest, wantDigest)
		}
	}
	dir2 := t.TempDir()
	if err := WriteCIFARFixture(dir2, 20, 12, 1); err != nil {
		t.Fatal(err)
	}
	if d2, err := Load(context.Background(), "cifar10", dir2); err != nil || d2.Digest != wantDigest {
		t.Errorf("a second fixture with the same arguments has digest %v (%v); want %s", d2, err, wantDigest)
	}
}

func TestLoadCIFARMissing(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, root, wantFile string
	}{
		{"no directory", filepath.Join(dir, "nope"), "data_batch_1.bin"},
		{"no bucket directory", "file://" + filepath.ToSlash(filepath.Join(dir, "nope")), "nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), "cifar10", tt.root)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Load = %v; want ErrNotFound", err)
			}
			for _, want := range []string{tt.wantFile, cifarURL, "cifar-10-batches-bin"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Load error = %q; want it to name %q", err, want)
				}
			}
		})
	}
	t.Run("one file missing", func(t *testing.T) {
		if err := WriteCIFARFixture(dir, 2, 2, 1); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "test_batch.bin"))
		_, err := Load(context.Background(), "cifar10", dir)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "test_batch.bin") {
			t.Errorf("Load = %v; want ErrNotFound naming test_batch.bin", err)
		}
	})
	t.Run("corrupt file", func(t *testing.T) {
		if err := WriteCIFARFixture(dir, 2, 2, 1); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "data_batch_3.bin"), []byte{1, 2, 3}, 0o644)
		_, err := Load(context.Background(), "cifar10", dir)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "data_batch_3.bin") {
			t.Errorf("Load = %v; want ErrInvalid naming data_batch_3.bin", err)
		}
	})
	t.Run("no root", func(t *testing.T) {
		_, err := Load(context.Background(), "cifar10", "")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), cifarURL) {
			t.Errorf("Load(no root) = %v; want ErrInvalid naming %s", err, cifarURL)
		}
	})
}

// FuzzReadCIFARBatch: any input gives records or an error, never a panic, and what is accepted
// re-encodes to the same bytes. The limit of 4 records bounds memory per input.
func FuzzReadCIFARBatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		labels, pix, err := ReadCIFARBatch(bytes.NewReader(data), 4)
		if err != nil {
			if labels != nil || pix != nil {
				t.Errorf("ReadCIFARBatch returned data with error %v", err)
			}
			return
		}
		if len(labels) == 0 || len(labels) > 4 || len(pix) != len(labels)*cifarPixels {
			t.Fatalf("ReadCIFARBatch = %d labels, %d pixel bytes", len(labels), len(pix))
		}
		var b bytes.Buffer
		if err := WriteCIFARBatch(&b, labels, pix); err != nil {
			t.Fatalf("WriteCIFARBatch of what ReadCIFARBatch accepted: %v", err)
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Errorf("re-encoding differs from the accepted input")
		}
	})
}
