package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLimitsAllowRealSpecs: the limits refuse nothing a real spec writes:
// anchors and merges used once, a spec just under the size limit, a grid of
// exactly MaxPoints points, the largest rounds and clients.
func TestLimitsAllowRealSpecs(t *testing.T) {
	tests := []struct{ name, give string }{
		{"anchor and merge", "name: a\nsampler: &s {name: uniform}\naggregator: {<<: *s, name: fedavg}\n"},
		{"just under the size limit", "name: b\ndescription: " + strings.Repeat("x", MaxSpecBytes-40) + "\n"},
		{"MaxPoints points", "name: c\nseeds: [1, 2, 3, 4]\ngrid:\n  rounds: [" + strings.TrimSuffix(strings.Repeat("1,", MaxPoints/4), ",") + "]\n"},
		{"largest rounds and clients", "name: d\nrounds: 999999\npartition: {clients: 999999}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.give) > MaxSpecBytes {
				t.Fatalf("test spec is %d bytes", len(tt.give))
			}
			// The grid of MaxPoints repeats a value: Parse gets past the
			// limits and stops at the duplicate points, which is fine.
			_, err := Parse("x.yaml", []byte(tt.give))
			if err != nil && !strings.Contains(err.Error(), "same experiment") {
				t.Fatalf("Parse: %v", err)
			}
		})
	}
	sw, err := Parse("d.yaml", []byte("name: d\nrounds: 999999\npartition: {clients: 999999}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := sw.Points[0].Config.validateLimits(); len(errs) != 0 {
		t.Errorf("validateLimits at the limits = %v; want none", errs)
	}
}

// TestDataRoot: a root inside the data directory, directly or through a
// symbolic link that stays inside, resolves; one that leaves it does not.
func TestDataRoot(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(data, "fmnist"), filepath.Join(data, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(data, "real"), filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "out")); err != nil {
		t.Fatal(err)
	}
	linkedData := filepath.Join(base, "data-link") // the data directory itself through a link
	if err := os.Symlink(data, linkedData); err != nil {
		t.Fatal(err)
	}
	ok := []struct{ dir, root, want string }{
		{data, "", filepath.Join(data, "fmnist")},
		{data, "fmnist", filepath.Join(data, "fmnist")},
		{data, filepath.Join(data, "fmnist"), filepath.Join(data, "fmnist")},
		{data, "link/x", filepath.Join(data, "real", "x")},
		{data, "not/yet/there", filepath.Join(data, "not", "yet", "there")},
		{linkedData, "fmnist", filepath.Join(data, "fmnist")},
		{data, "file://" + filepath.Join(data, "fmnist"), "file://" + filepath.Join(data, "fmnist")},
		{data, "s3://bucket?prefix=fmnist/", "s3://bucket?prefix=fmnist/"},
		{data, "mem://", "mem://"},
		{"", "/anywhere", "/anywhere"}, // no data directory: nothing to confine to
	}
	for _, tt := range ok {
		got, err := DataRoot(tt.dir, DatasetConfig{Name: "fmnist", Root: tt.root})
		if err != nil || got != tt.want {
			t.Errorf("DataRoot(%q, root %q) = %q, %v; want %q", tt.dir, tt.root, got, err, tt.want)
		}
	}
	bad := []string{"/", outside, "..", "../outside", "fmnist/../../outside", "out", "out/fmnist", "link/../../outside",
		"file://" + outside, "file:///", "gopher://x", "fmnist\n", "file://" + data + "?prefix=/etc/"}
	for _, root := range bad {
		if got, err := DataRoot(data, DatasetConfig{Name: "fmnist", Root: root}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "dataset.root") {
			t.Errorf("DataRoot(root %q) = %q, %v; want an error naming dataset.root", root, got, err)
		}
	}
	if got, err := DataRoot(data, DatasetConfig{Name: "synthetic", Root: "/etc"}); got != "" || err != nil {
		t.Errorf("DataRoot of a generated dataset = %q, %v; want \"\" (it reads nothing)", got, err)
	}
}
