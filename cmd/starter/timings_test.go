package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/store"
)

// TestPrintTimings: the table gives each step's calls, total and share per
// round, the blob store's reads and writes, and the peak memory.
func TestPrintTimings(t *testing.T) {
	var b strings.Builder
	printTimings(&b, []engine.StepTime{
		{Step: "TrainClients", Calls: 20, Total: 3 * time.Second},
		{Step: "SelectClients", Calls: 10, Total: 25 * time.Millisecond},
	}, store.Traffic{Puts: 40, Gets: 30, PutTime: 500 * time.Millisecond, GetTime: 80 * time.Microsecond}, 10, 4*time.Second)
	out := b.String()
	rows := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		rows[strings.Join(strings.Fields(line), " ")] = true
	}
	for _, want := range []string{
		"step calls total per round",
		"TrainClients 20 3.00 s 300.0 ms",
		"SelectClients 10 25.0 ms 2.5 ms",
		"blob writes 40 500.0 ms 50.0 ms",
		"blob reads 30 80 µs 8 µs",
	} {
		if !rows[want] {
			t.Errorf("the table lacks the row %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"wall 4s", "peak resident memory"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

func TestPeakKB(t *testing.T) {
	dir := t.TempDir()
	status := filepath.Join(dir, "status")
	if err := os.WriteFile(status, []byte("Name:\tstarter\nVmPeak:\t 2000 kB\nVmHWM:\t   123456 kB\nVmRSS:\t 100 kB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if kb, err := peakKB(status); err != nil || kb != 123456 {
		t.Errorf("peakKB = %d, %v; want 123456", kb, err)
	}
	if err := os.WriteFile(status, []byte("Name:\tstarter\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := peakKB(status); err == nil || !strings.Contains(err.Error(), "VmHWM") {
		t.Errorf("peakKB without a VmHWM line: %v; want an error naming it", err)
	}
}
