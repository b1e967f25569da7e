package sweep

import (
	"fmt"
	"strings"
	"testing"
)

// gridSpec is a spec of n points: a grid of n learning rates.
func gridSpec(n int) []byte {
	lrs := make([]string, n)
	for i := range lrs {
		lrs[i] = fmt.Sprintf("%g", float64(i+1)/float64(10*n))
	}
	return []byte("name: b\ngrid:\n  train.lr: [" + strings.Join(lrs, ", ") + "]\n")
}

// benchmarkParse measures Parse (limits, expansion, 128-bit IDs with the
// full-configuration comparison) of a spec of n points.
func benchmarkParse(b *testing.B, n int) {
	data := gridSpec(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Parse("b.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse1000(b *testing.B)  { benchmarkParse(b, 1000) }
func BenchmarkParse10000(b *testing.B) { benchmarkParse(b, 10000) }

// BenchmarkCheckTreeBomb measures the refusal of an alias bomb of 10^9
// values: the check counts without expanding.
func BenchmarkCheckTreeBomb(b *testing.B) {
	var s strings.Builder
	s.WriteString("name: bomb\nsampler:\n  name: uniform\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&s, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	data := []byte(s.String())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Parse("bomb.yaml", data); err == nil {
			b.Fatal("the bomb parsed")
		}
	}
}
