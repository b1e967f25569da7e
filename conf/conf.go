// Package conf holds the settings the starter and the worker share, with
// their embedded defaults and the environment variables that override them.
// A flag, when given, overrides both.
package conf

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables.
const (
	EnvAddress   = "TEMPORAL_ADDRESS"   // host:port of the Temporal frontend
	EnvNamespace = "TEMPORAL_NAMESPACE" // Temporal namespace
	EnvQueue     = "FLSWEEP_QUEUE"      // task queue of workflows and activities
	EnvBlob      = "FLSWEEP_BLOB"       // blob bucket URL (file://, s3://, mem://)
	EnvDataDir   = "FLSWEEP_DATA_DIR"   // directory holding <dataset>/ IDX files
)

// Embedded defaults: a local dev server and directories under ./.data.
const (
	DefaultAddress   = "localhost:7233"
	DefaultNamespace = "default"
	DefaultQueue     = "fl"
	DataRoot         = ".data"
)

// Version identifies the build (git describe), set at link time by the
// Makefile: -ldflags "-X github.com/flsweep/flsweep/conf.Version=...". Every
// committed round records the version that computed it, because a different
// build may compute different numbers (a resumed sweep shows where).
var Version = "dev"

// Address returns the Temporal address from the environment or the default.
func Address() string { return or(os.Getenv(EnvAddress), DefaultAddress) }

// Namespace returns the Temporal namespace from the environment or the default.
func Namespace() string { return or(os.Getenv(EnvNamespace), DefaultNamespace) }

// Queue returns the task queue from the environment or the default.
func Queue() string { return or(os.Getenv(EnvQueue), DefaultQueue) }

// BlobURL returns the blob URL from the environment, or a local directory
// bucket at ./.data/blob.
func BlobURL() string {
	if v := os.Getenv(EnvBlob); v != "" {
		return v
	}
	return DirURL(filepath.Join(DataRoot, "blob"))
}

// DataDir returns the dataset directory from the environment, or ./.data/datasets.
func DataDir() string {
	if v := os.Getenv(EnvDataDir); v != "" {
		return v
	}
	abs, err := filepath.Abs(filepath.Join(DataRoot, "datasets"))
	if err != nil {
		return filepath.Join(DataRoot, "datasets")
	}
	return abs
}

// DirURL turns a directory into a fileblob bucket URL that creates the
// directory and writes no metadata sidecar files, so the directory holds
// exactly the project's files (and DuckDB globs see only Parquet).
func DirURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "create_dir=1&metadata=skip"}
	return u.String()
}

// LocalDir returns the directory of a file:// bucket URL, or "" for other
// schemes.
func LocalDir(blobURL string) string {
	u, err := url.Parse(blobURL)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(strings.TrimSuffix(u.Path, "/"))
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
