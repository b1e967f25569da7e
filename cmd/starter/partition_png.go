package main

import (
	"fmt"
	"io"
	"math"

	"github.com/flsweep/flsweep/report"
)

// renderHeatmap draws a partition report as a clients × classes heatmap
// (report.Heatmap, drawn with gonum.org/v1/plot like `starter report`'s
// figures): each cell is the share of the client's train samples in that
// class, with the client's train size as a bar on the right, a colour bar,
// and a line between groups.
func renderHeatmap(w io.Writer, rep partitionReport) error {
	if len(rep.Clients) == 0 || rep.Summary.Classes == 0 {
		return fmt.Errorf("heatmap: no clients or classes")
	}
	h := report.Heatmap{Title: titleLine(rep)}
	for _, c := range rep.Clients {
		h.Counts = append(h.Counts, c.LabelCounts)
		h.Groups = append(h.Groups, c.Group)
	}
	return h.WritePNG(w)
}

func titleLine(rep partitionReport) string {
	s := rep.Summary
	return fmt.Sprintf("%s %s: %s, %s", s.Sweep, s.Point, s.Dataset, s.Scheme)
}

func lnInt(n int) float64 { return math.Log(float64(n)) }
