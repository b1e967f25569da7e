package dataset

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Manifest is MANIFEST.json, which Fetch writes last into a data directory and Load checks.
type Manifest struct {
	Name string `json:"name"` // dataset name: "fmnist", "mnist" or "mnist-subset"
	// Source is where the data came from: "npm:<package>@<version>" or "go:<module>@<version>".
	Source string `json:"source"`
	// Integrity is the source's own hash: the npm (Subresource Integrity) hash of the tarball, or
	// the Go module's go.sum hash ("h1:...").
	Integrity string `json:"integrity"`
	Classes   int    `json:"classes"`
	Train     int    `json:"train"` // train samples
	Test      int    `json:"test"`  // test samples
	// Files maps each IDX file name (without ".gz") to the hex SHA-256 of its uncompressed bytes.
	Files  map[string]string `json:"files"`
	Digest string            `json:"digest"` // Dataset.Digest of the files
}

// parseManifest decodes and checks the form of a MANIFEST.json.
func parseManifest(data []byte) (*Manifest, error) {
	if len(data) > manifestMaxBytes {
		return nil, fmt.Errorf("larger than %d bytes: %w", manifestMaxBytes, ErrInvalid)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	for _, f := range idxFiles() {
		h, ok := m.Files[f]
		if !ok {
			return nil, fmt.Errorf("files has no entry for %s: %w", f, ErrInvalid)
		}
		if b, err := hex.DecodeString(h); err != nil || len(b) != 32 {
			return nil, fmt.Errorf("files[%q] = %q is not a hex SHA-256: %w", f, h, ErrInvalid)
		}
	}
	if want := digestOf(m.Files); m.Digest != want {
		return nil, fmt.Errorf("digest = %q; the files' digest is %q: %w", m.Digest, want, ErrInvalid)
	}
	return &m, nil
}

// check compares the SHA-256 of each file, as read, with the manifest.
func (m *Manifest) check(hashes map[string]string) error {
	for _, f := range idxFiles() {
		if got, want := hashes[f], m.Files[f]; got != want {
			return fmt.Errorf("%s has SHA-256 %s but the manifest records %s; the file is corrupt or was replaced: %w",
				f, got, want, ErrInvalid)
		}
	}
	return nil
}

// encode returns the manifest as indented JSON with a final newline; the bytes are deterministic.
func (m *Manifest) encode() ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
