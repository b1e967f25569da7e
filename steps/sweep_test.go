package steps

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPointsFailed checks the message a sweep ends with (the sweep
// workflow's before it was shared, so histories and users see the same
// words), its bound on the points named, and that it wraps the first
// failure.
func TestPointsFailed(t *testing.T) {
	first := errors.New("boom")
	e := &PointsFailed{Sweep: "s", Failed: 2, Total: 5, Resume: "`starter sweep resume s`", Err: first,
		First: []FailedPoint{{ID: "p1", Label: "seed=1", Error: "boom"}, {ID: "p2", Label: "seed=2", Error: "bang"}}}
	want := "2 of 5 points failed; fix the cause and run `starter sweep resume s`; the first: [p1 (seed=1): boom p2 (seed=2): bang]"
	if e.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), want)
	}
	if !errors.Is(e, first) {
		t.Error("PointsFailed does not wrap the first point's error")
	}
	for i := range 12 {
		e.First = append(e.First, FailedPoint{ID: fmt.Sprintf("q%d", i)})
	}
	if n := strings.Count(e.Error(), "(): "); n != MaxFailuresNamed-2 {
		t.Errorf("names %d of the 12 added points; want %d (MaxFailuresNamed in all)", n, MaxFailuresNamed-2)
	}
}
