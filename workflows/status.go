package workflows

import (
	"slices"

	"github.com/flsweep/flsweep/steps"
)

// answer builds the status query's answer from a sweep's state (base: its
// name, hash and flags), its status letters and a function that returns
// point i's line: the counts over every point and the page req asks for.
// It costs O(points) for the counts and the filter, and O(page) lines.
func answer(base SweepStatus, codes string, req StatusRequest, line func(i int) PointStatus) SweepStatus {
	st := SweepStatus{
		Name: base.Name, Hash: base.Hash, Total: len(codes), Codes: codes,
		Done: base.Done, Paused: base.Paused, Stopping: base.Stopping, Run: base.Run,
		Counts: Counts(codes), Points: []PointStatus{},
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultStatusLimit
	}
	limit = min(limit, MaxStatusLimit)
	offset := max(req.Offset, 0)
	st.Offset = offset
	var want []byte
	for _, s := range req.Status {
		want = append(want, StatusCode(s))
	}
	for i := range len(codes) {
		if len(want) > 0 && !slices.Contains(want, codes[i]) {
			continue
		}
		if st.Matched >= offset && len(st.Points) < limit {
			st.Points = append(st.Points, line(i))
		}
		st.Matched++
	}
	return st
}

// Counts returns the number of points by status of a string of status
// letters (SweepStatus.Codes); every status is present, zero or not.
func Counts(codes string) map[string]int {
	var n [256]int
	for i := range len(codes) {
		n[codes[i]]++
	}
	m := map[string]int{}
	for _, s := range []string{steps.StatusPending, steps.StatusRunning, steps.StatusDone, steps.StatusDiverged, steps.StatusStopped, steps.StatusFailed} {
		m[s] = n[StatusCode(s)]
	}
	return m
}
