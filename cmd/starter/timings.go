package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flsweep/flsweep/engine"
	"github.com/flsweep/flsweep/store"
)

// printTimings writes where an in-process run's time went: each step's
// calls and summed wall time, in total and per round of the sweep
// (rounds), the blob store's reads and writes, and the process's peak
// resident memory.
func printTimings(w io.Writer, times []engine.StepTime, tr store.Traffic, rounds int, wall time.Duration) {
	per := func(d time.Duration) string {
		if rounds == 0 {
			return "-"
		}
		return fmtDuration(d / time.Duration(rounds))
	}
	fmt.Fprintf(w, "where the time went (wall %s; a step's calls summed, side-by-side calls each, steps inside RunRound counted in both):\n", wall.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tcalls\ttotal\tper round\t")
	for _, t := range times {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", t.Step, t.Calls, fmtDuration(t.Total), per(t.Total))
	}
	fmt.Fprintf(tw, "blob writes\t%d\t%s\t%s\t\n", tr.Puts, fmtDuration(tr.PutTime), per(tr.PutTime))
	fmt.Fprintf(tw, "blob reads\t%d\t%s\t%s\t\n", tr.Gets, fmtDuration(tr.GetTime), per(tr.GetTime))
	tw.Flush()
	if kb, err := peakKB("/proc/self/status"); err == nil {
		fmt.Fprintf(w, "peak resident memory (VmHWM): %.0f MB\n", float64(kb)/1024)
	} else {
		fmt.Fprintf(w, "peak resident memory: unknown (%v)\n", err)
	}
}

// fmtDuration writes d with three significant figures' worth of unit.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
}

// peakKB reads the VmHWM line (peak resident set, kB) of a Linux
// /proc/<pid>/status file.
func peakKB(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no VmHWM line", path)
}
