package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"
)

// idxSet is the uncompressed content of the four IDX files, keyed by file name.
type idxSet map[string][]byte

// makeIDXSet returns a small valid dataset: nTrain and nTest images of rows×cols whose pixels are
// (7·i + j) mod 256 and whose labels are i mod classes, for image i and pixel j.
func makeIDXSet(t testing.TB, classes, nTrain, nTest, rows, cols int) idxSet {
	t.Helper()
	s := idxSet{}
	for _, sp := range []struct {
		images, labels string
		n              int
	}{{fileTrainImages, fileTrainLabels, nTrain}, {fileTestImages, fileTestLabels, nTest}} {
		pix := make([]byte, sp.n*rows*cols)
		y := make([]byte, sp.n)
		for i := range sp.n {
			y[i] = byte(i % classes)
			for j := range rows * cols {
				pix[i*rows*cols+j] = byte(7*i + j)
			}
		}
		var bi, bl bytes.Buffer
		if err := WriteIDXImages(&bi, sp.n, rows, cols, pix); err != nil {
			t.Fatal(err)
		}
		if err := WriteIDXLabels(&bl, y); err != nil {
			t.Fatal(err)
		}
		s[sp.images], s[sp.labels] = bi.Bytes(), bl.Bytes()
	}
	return s
}

// hashes returns the hex SHA-256 of each file.
func (s idxSet) hashes() map[string]string {
	h := map[string]string{}
	for f, data := range s {
		sum := sha256.Sum256(data)
		h[f] = hex.EncodeToString(sum[:])
	}
	return h
}

// write writes the files into dir, gzip-compressed with a ".gz" suffix where gz says so.
func (s idxSet) write(t testing.TB, dir string, gz map[string]bool) {
	t.Helper()
	for f, data := range s {
		name := f
		if gz[f] {
			data, name = gzipBytes(t, data), f+".gz"
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeManifest writes a MANIFEST.json for s into dir.
func (s idxSet) writeManifest(t testing.TB, dir, name string) {
	t.Helper()
	source := "test"
	if pn, ok := pinOf(name); ok {
		source = pn.source // Load requires the source Fetch writes for name
	}
	m := &Manifest{Name: name, Source: source, Classes: 10, Files: s.hashes(), Digest: digestOf(s.hashes())}
	data, err := m.encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRoundTrip(t *testing.T) {
	files := makeIDXSet(t, 10, 23, 9, 4, 3)
	all := map[string]bool{fileTrainImages: true, fileTrainLabels: true, fileTestImages: true, fileTestLabels: true}
	tests := []struct {
		name         string
		giveGzip     map[string]bool
		giveManifest bool
		giveURL      bool
	}{
		{"plain", nil, false, false},
		{"gzip", all, false, false},
		{"mixed with manifest", map[string]bool{fileTrainImages: true, fileTestLabels: true}, true, false},
		{"file URL with manifest", all, true, true},
	}
	wantDigest := digestOf(files.hashes())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files.write(t, dir, tt.giveGzip)
			if tt.giveManifest {
				files.writeManifest(t, dir, "mnist")
			}
			root := dir
			if tt.giveURL {
				root = "file://" + filepath.ToSlash(dir)
			}
			d, err := Load(context.Background(), "mnist", root)
			if err != nil {
				t.Fatalf("Load(mnist, %s) error: %v", root, err)
			}
			if d.Name != "mnist" || d.Classes != 10 || d.Shape != [3]int{1, 4, 3} || d.Dim() != 12 {
				t.Errorf("Load = %q, %d classes, shape %v, dim %d; want \"mnist\", 10, [1 4 3], 12", d.Name, d.Classes, d.Shape, d.Dim())
			}
			if d.Digest != wantDigest {
				t.Errorf("Digest = %s; want %s", d.Digest, wantDigest)
			}
			for _, s := range []struct {
				name  string
				split Split
				n     int
			}{{"train", d.Train, 23}, {"test", d.Test, 9}} {
				if s.split.N != s.n || len(s.split.Y) != s.n || len(s.split.X) != s.n*12 {
					t.Fatalf("%s: N = %d, %d labels, %d values; want %d, %d, %d", s.name, s.split.N, len(s.split.Y), len(s.split.X), s.n, s.n, s.n*12)
				}
				for i := range s.n {
					if s.split.Y[i] != byte(i%10) {
						t.Errorf("%s: Y[%d] = %d; want %d", s.name, i, s.split.Y[i], i%10)
					}
					for j := range 12 {
						if got, want := s.split.X[i*12+j], float32(byte(7*i+j))/255; got != want {
							t.Fatalf("%s: X[%d] = %v; want %v", s.name, i*12+j, got, want)
						}
					}
				}
			}
		})
	}
}

func TestLoadBucket(t *testing.T) {
	ctx := context.Background()
	files := makeIDXSet(t, 10, 5, 3, 2, 2)
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for f, data := range files {
		if err := b.WriteAll(ctx, f, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	d, err := LoadBucket(ctx, "fmnist", b, "mem://test")
	if err != nil {
		t.Fatalf("LoadBucket error: %v", err)
	}
	if d.Train.N != 5 || d.Test.N != 3 || d.Digest != digestOf(files.hashes()) {
		t.Errorf("LoadBucket = %d train, %d test, digest %s; want 5, 3, %s", d.Train.N, d.Test.N, d.Digest, digestOf(files.hashes()))
	}
	if err := b.Delete(ctx, fileTestLabels); err != nil {
		t.Fatal(err)
	}
	_, err = LoadBucket(ctx, "fmnist", b, "mem://test")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "t10k-labels-idx1-ubyte in mem://test") {
		t.Errorf("LoadBucket without %s = %v; want ErrNotFound naming the file and bucket", fileTestLabels, err)
	}
}

func TestLoadMissing(t *testing.T) {
	files := makeIDXSet(t, 10, 5, 3, 2, 2)
	const (
		dirFix = `run "starter data fetch fmnist --dir {dir}"`
		urlFix = `run "starter data fetch fmnist --dir DIR" and copy DIR's files to file://{dir}`
	)
	// In the wanted strings, {dir} stands for the data directory.
	tests := []struct {
		name        string
		giveMissing string // file to leave out; "" leaves out the whole directory
		giveURL     bool
		wantPath    string
		wantFix     string
	}{
		{"no directory", "", false, "{dir}/train-images-idx3-ubyte: not found", dirFix},
		{"train images", fileTrainImages, false, "{dir}/train-images-idx3-ubyte: not found", dirFix},
		{"train labels", fileTrainLabels, false, "{dir}/train-labels-idx1-ubyte: not found", dirFix},
		{"test images", fileTestImages, false, "{dir}/t10k-images-idx3-ubyte: not found", dirFix},
		{"test labels", fileTestLabels, false, "{dir}/t10k-labels-idx1-ubyte: not found", dirFix},
		{"file URL", fileTestImages, true, "t10k-images-idx3-ubyte in file://{dir}: not found", urlFix},
		{"file URL, no directory", "", true, "file://{dir}: not found", urlFix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fmnist")
			if tt.giveMissing != "" {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				files.write(t, dir, nil)
				if err := os.Remove(filepath.Join(dir, tt.giveMissing)); err != nil {
					t.Fatal(err)
				}
			}
			root := map[bool]string{false: dir, true: "file://" + filepath.ToSlash(dir)}[tt.giveURL]
			_, err := Load(context.Background(), "fmnist", root)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Load = %v; want an ErrNotFound error", err)
			}
			for _, want := range []string{tt.wantPath, tt.wantFix} {
				if want = strings.ReplaceAll(want, "{dir}", dir); !strings.Contains(err.Error(), want) {
					t.Errorf("Load error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestLoadInvalid(t *testing.T) {
	good := makeIDXSet(t, 10, 5, 3, 2, 2)
	// with returns good with some files replaced: with(name1, data1, name2, data2, ...).
	with := func(pairs ...any) idxSet {
		s := idxSet{}
		for k, v := range good {
			s[k] = v
		}
		for i := 0; i < len(pairs); i += 2 {
			s[pairs[i].(string)] = pairs[i+1].([]byte)
		}
		return s
	}
	tests := []struct {
		name         string
		giveName     string
		giveFiles    idxSet
		giveManifest string // dataset name in MANIFEST.json; "" writes none
		giveRawMan   string // raw MANIFEST.json content, if not ""
		wantInError  string
	}{
		{"unknown name", "cifar", good, "", "", "known names are fmnist, mnist, mnist-subset, cifar10, synthetic, fedprox-synthetic"},
		{"label out of range", "mnist", with(fileTrainLabels, idxBytes(idxMagicLabels, []uint32{5}, []byte{0, 1, 10, 3, 4})), "", "", "label 10 at index 2"},
		{"fewer labels than images", "mnist", with(fileTestLabels, idxBytes(idxMagicLabels, []uint32{2}, []byte{0, 1})), "", "", "holds 3 images but"},
		{"test images of another size", "mnist", with(fileTestImages, idxBytes(idxMagicImages, []uint32{3, 2, 3}, seq(18))), "", "", "images are 2×2 but"},
		{"empty train split", "mnist", with(fileTrainImages, idxBytes(idxMagicImages, []uint32{0, 2, 2}, nil), fileTrainLabels, idxBytes(idxMagicLabels, []uint32{0}, nil)), "", "", "holds no images"},
		{"truncated images", "mnist", with(fileTrainImages, good[fileTrainImages][:30]), "", "", "truncated"},
		{"label file as images", "mnist", with(fileTrainImages, good[fileTrainLabels]), "", "", "magic number"},
		{"manifest of other dataset", "mnist", good, "fmnist", "", `is for dataset "fmnist"`},
		{"manifest not JSON", "mnist", good, "", "{", "MANIFEST.json"},
		{"manifest missing a file", "mnist", good, "", `{"name":"mnist","files":{}}`, "no entry for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.giveFiles.write(t, dir, nil)
			if tt.giveManifest != "" {
				tt.giveFiles.writeManifest(t, dir, tt.giveManifest)
			}
			if tt.giveRawMan != "" {
				if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte(tt.giveRawMan), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := Load(context.Background(), tt.giveName, dir)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantInError) {
				t.Errorf("Load(%s) = %v, %v; want an ErrInvalid error containing %q", tt.giveName, d, err, tt.wantInError)
			}
		})
	}
}

func TestLoadDetectsCorruption(t *testing.T) {
	files := makeIDXSet(t, 10, 5, 3, 2, 2)
	dir := t.TempDir()
	files.write(t, dir, nil)
	files.writeManifest(t, dir, "fmnist")
	if _, err := Load(context.Background(), "fmnist", dir); err != nil {
		t.Fatalf("Load of intact files: %v", err)
	}
	// Change one pixel: the file stays valid IDX, only its hash betrays it.
	data := bytes.Clone(files[fileTestImages])
	data[len(data)-1] ^= 1
	if err := os.WriteFile(filepath.Join(dir, fileTestImages), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), "fmnist", dir)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "t10k-images-idx3-ubyte has SHA-256") {
		t.Errorf("Load of a changed file = %v; want an ErrInvalid error naming the file's SHA-256", err)
	}
}

func TestLoadNoRoot(t *testing.T) {
	_, err := Load(context.Background(), "fmnist", "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "starter data fetch fmnist") {
		t.Errorf("Load(fmnist, \"\") = %v; want an ErrInvalid error with the fetch command", err)
	}
}
