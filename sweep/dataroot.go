package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
)

// RemoteDataSchemes are the blob URL schemes dataset.root may use besides
// file:// (confined like a directory) and mem://: buckets the worker reads
// with its own credentials.
var RemoteDataSchemes = []string{"s3", "gs", "azblob"}

// DataRoot returns where a worker whose data directory is dataDir reads the
// data d names: dataDir/<name> when d.Root is empty; d.Root when it is a
// directory or file:// URL inside dataDir (a relative directory is taken
// under dataDir), with symbolic links resolved; d.Root unchanged when it is a
// mem:// or remote bucket URL (RemoteDataSchemes). Anything else, a path that
// leads outside dataDir included, is an error naming dataset.root and the fix.
// Generated datasets (synthetic, fedprox-synthetic) read nothing: "".
//
// An empty dataDir confines nothing: d.Root is used as written. The worker
// and the starter always pass their --data-dir.
func DataRoot(dataDir string, d DatasetConfig) (string, error) {
	if d.Name == "synthetic" || d.Name == "fedprox-synthetic" {
		return "", nil
	}
	if !contains(Datasets, d.Name) {
		return "", fmt.Errorf("dataset.name = %q is unknown; use one of %s: %w", d.Name, strings.Join(Datasets, ", "), ErrInvalid)
	}
	root := d.Root
	if strings.ContainsFunc(root, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("dataset.root = %q contains control characters; name a directory under the worker's data directory: %w", root, ErrInvalid)
	}
	if root == "" {
		return filepath.Join(dataDir, d.Name), nil
	}
	if strings.Contains(root, "://") {
		u, err := url.Parse(root)
		if err != nil {
			return "", fmt.Errorf("dataset.root = %q is not a valid URL (%v); use a directory under the worker's data directory or an s3://, gs:// or azblob:// URL: %w", root, err, ErrInvalid)
		}
		switch {
		case u.Scheme == "mem" || contains(RemoteDataSchemes, u.Scheme):
			return root, nil
		case u.Scheme != "file":
			return "", fmt.Errorf("dataset.root = %q: scheme %q is not supported; use a directory under the worker's data directory, or a file://, s3://, gs:// or azblob:// URL: %w",
				root, u.Scheme, ErrInvalid)
		}
		if p := u.Query().Get("prefix"); p != "" && (strings.Contains(p, "..") || strings.HasPrefix(p, "/")) {
			return "", fmt.Errorf("dataset.root = %q: prefix %q leaves the directory; name the directory itself in the URL's path: %w", root, p, ErrInvalid)
		}
		if dataDir != "" {
			if _, err := confine(dataDir, u.Path, root); err != nil {
				return "", err
			}
		}
		return root, nil
	}
	if dataDir == "" {
		return root, nil
	}
	p := root
	if !filepath.IsAbs(p) {
		p = filepath.Join(dataDir, p)
	}
	return confine(dataDir, p, root)
}

// confine returns p resolved (absolute, clean, symbolic links of its
// existing part followed) if it lies within dir (resolved the same way).
func confine(dir, p, written string) (string, error) {
	rdir, err := resolve(dir)
	if err != nil {
		return "", fmt.Errorf("the worker's data directory %s: %v; fix --data-dir: %w", dir, err, ErrInvalid)
	}
	rp, err := resolve(p)
	if err != nil {
		return "", fmt.Errorf("dataset.root = %q: %v; name a directory under the worker's data directory: %w", written, err, ErrInvalid)
	}
	if rel, err := filepath.Rel(rdir, rp); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("dataset.root = %q leads to %s, outside the worker's data directory %s; put the data under %s (`starter data fetch` does), "+
			"or start the workers with --data-dir set to a directory that holds it: %w", written, rp, rdir, rdir, ErrInvalid)
	}
	return rp, nil
}

// resolve makes p absolute and clean and follows the symbolic links of its
// longest existing prefix (the rest does not exist yet, so has none).
func resolve(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
