package workflows

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flsweep/flsweep/steps"
)

// TestAnswer: the status answer counts every point, filters by status and
// pages from the offset, whatever the page size asked.
func TestAnswer(t *testing.T) {
	codes := strings.Repeat("d", 50) + strings.Repeat("r", 3) + "f" + strings.Repeat(".", 46) // 100 points
	line := func(i int) PointStatus {
		return PointStatus{PointInfo: steps.PointInfo{Index: i}, Status: StatusOfCode(codes[i])}
	}
	st := answer(SweepStatus{Name: "s"}, codes, StatusRequest{}, line)
	want := map[string]int{"done": 50, "running": 3, "failed": 1, "pending": 46, "diverged": 0, "stopped": 0}
	if fmt.Sprint(st.Counts) != fmt.Sprint(want) || st.Total != 100 || st.Matched != 100 || len(st.Points) != DefaultStatusLimit {
		t.Errorf("zero request: counts %v, total %d, matched %d, %d points", st.Counts, st.Total, st.Matched, len(st.Points))
	}
	st = answer(SweepStatus{}, codes, StatusRequest{Status: []string{steps.StatusRunning, steps.StatusFailed}, Offset: 1, Limit: 2}, line)
	if st.Matched != 4 || len(st.Points) != 2 || st.Points[0].Index != 51 || st.Points[1].Index != 52 {
		t.Errorf("running and failed from 1, 2 of them: matched %d, points %+v; want 4 matched, points 51 and 52", st.Matched, st.Points)
	}
	st = answer(SweepStatus{}, codes, StatusRequest{Offset: 95, Limit: 10}, line)
	if len(st.Points) != 5 || st.Points[0].Index != 95 {
		t.Errorf("from 95: %d points from %d; want 5 from 95", len(st.Points), st.Points[0].Index)
	}
	st = answer(SweepStatus{}, strings.Repeat(".", 5000), StatusRequest{Limit: 1 << 20}, func(i int) PointStatus { return PointStatus{} })
	if len(st.Points) != MaxStatusLimit {
		t.Errorf("limit 2^20: %d points; want at most %d", len(st.Points), MaxStatusLimit)
	}
	for _, s := range []string{steps.StatusPending, steps.StatusRunning, steps.StatusDone, steps.StatusDiverged, steps.StatusStopped, steps.StatusFailed} {
		if got := StatusOfCode(StatusCode(s)); got != s {
			t.Errorf("StatusOfCode(StatusCode(%q)) = %q", s, got)
		}
	}
}

// BenchmarkStatusAnswer measures the status query's handler (counts over
// every point, the default page of running and failed points) at 1,000,
// 10,000 and 20,000 points; the query's round trip through the server is
// measured by integration.TestScaleSweep.
func BenchmarkStatusAnswer(b *testing.B) {
	for _, n := range []int{1000, 10000, 20000} {
		b.Run(fmt.Sprintf("points=%d", n), func(b *testing.B) {
			codes := []byte(strings.Repeat("d", n/2) + strings.Repeat("r", 8) + strings.Repeat(".", n-n/2-8))
			req := StatusRequest{Status: []string{steps.StatusRunning, steps.StatusFailed}, Limit: MaxStatusLimit}
			for range b.N {
				st := answer(SweepStatus{}, string(codes), req, func(i int) PointStatus {
					return PointStatus{PointInfo: steps.PointInfo{Index: i}, Status: StatusOfCode(codes[i])}
				})
				if st.Matched != 8 {
					b.Fatal(st.Matched)
				}
			}
		})
	}
}
