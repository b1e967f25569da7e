package wino

import "testing"

// TestRuns checks CopyRuns and AddRuns against loops for runs of 1 to 48
// floats (whole and partial steps of 16).
func TestRuns(t *testing.T) {
	for _, w := range []int{1, 15, 16, 17, 31, 32, 33, 48} {
		runs, ds := 3, w+4
		dst := make([]float32, runs*ds)
		src := make([]float32, runs*w)
		for i := range src {
			src[i] = float32(i + 1)
		}
		want := make([]float32, len(dst))
		for r := range runs {
			for j := range w {
				want[r*ds+j] += src[r*w+j]
			}
		}
		AddRuns(&dst[0], uintptr(ds*4), &src[0], runs, w)
		for i := range dst {
			if dst[i] != want[i] {
				t.Fatalf("w %d: dst[%d] = %v, want %v", w, i, dst[i], want[i])
			}
		}
		cp := make([]float32, runs*w)
		CopyRuns(&cp[0], &want[0], uintptr(ds*4), runs, w)
		for r := range runs {
			for j := range w {
				if cp[r*w+j] != want[r*ds+j] {
					t.Fatalf("copy w %d: [%d][%d] = %v, want %v", w, r, j, cp[r*w+j], want[r*ds+j])
				}
			}
		}
	}
}
