// Command entropyplot draws experiments/hicsfl's estimator figure: HiCS-FL's
// entropy estimate per α-group after each round of one run, under the
// paper's estimator Ĥ = H(softmax(Δb/T)) (left) and our scale-free one Ĥ′ =
// H(softmax(Δb/‖Δb‖₂/T′)) (right), each group's true mean label entropy
// dashed. It reads the CSV of sql/estimator.sql (`starter sweep query
// --format csv`) on stdin and writes OUT.png and OUT.svg:
//
//	starter sweep query --format csv -- hicsfl-estimator "$(cat sql/estimator.sql)" |
//		go run ./experiments/hicsfl/entropyplot -sampler 'hics(rounds=200)' -o results/estimator
//
// -labels names the groups in order (default: group 0, group 1, …).
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"io"
	"log"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// tab10's first five colours (matplotlib), one per group.
var colours = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// series is one group's curves.
type series struct {
	truth           float64
	x, paper, scale []float64
}

func main() {
	sampler := flag.String("sampler", "", "the run to draw: the query's sampler column (required)")
	out := flag.String("o", "estimator", "output path without extension")
	labels := flag.String("labels", "", "comma-separated group names, in group order")
	flag.Parse()
	if *sampler == "" {
		log.Fatal("entropyplot: -sampler is required (a value of the query's sampler column)")
	}
	groups, err := read(os.Stdin, *sampler)
	if err != nil {
		log.Fatalf("entropyplot: %v", err)
	}
	names := strings.Split(*labels, ",")
	name := func(g int) string {
		if g < len(names) && names[g] != "" {
			return names[g]
		}
		return fmt.Sprintf("group %d", g)
	}
	left, err := panel("paper: H(softmax(Δb/T)), T = 0.0025", groups, name, func(s series) []float64 { return s.paper })
	if err != nil {
		log.Fatalf("entropyplot: %v", err)
	}
	right, err := panel("ours: H(softmax(Δb/‖Δb‖/T′)), T′ = 0.19", groups, name, func(s series) []float64 { return s.scale })
	if err != nil {
		log.Fatalf("entropyplot: %v", err)
	}
	w, h := 11*vg.Inch, 4.2*vg.Inch
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(12), PadY: vg.Points(6), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	drawTo := func(dc draw.Canvas) {
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		cs := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
		left.Draw(cs[0][0])
		right.Draw(cs[0][1])
	}
	png := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144))}
	drawTo(draw.New(png))
	svg := vgsvg.New(w, h)
	drawTo(draw.New(svg))
	for _, f := range []struct {
		path string
		w    io.WriterTo
	}{{*out + ".png", png}, {*out + ".svg", svg}} {
		if err := write(f.path, f.w); err != nil {
			log.Fatalf("entropyplot: %v", err)
		}
	}
}

// read returns the run's series by group from the query's CSV.
func read(r io.Reader, sampler string) ([]series, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no CSV on stdin")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, c := range []string{"sampler", "after_round", "alpha_group", "true_entropy", "h_paper", "h_scale_free"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("the CSV has no column %q; pipe sql/estimator.sql's output", c)
		}
	}
	var groups []series
	for _, row := range rows[1:] {
		if row[col["sampler"]] != sampler {
			continue
		}
		var v [5]float64
		for i, c := range []string{"after_round", "alpha_group", "true_entropy", "h_paper", "h_scale_free"} {
			if v[i], err = strconv.ParseFloat(row[col[c]], 64); err != nil {
				return nil, fmt.Errorf("%s = %q: %w", c, row[col[c]], err)
			}
		}
		g := int(v[1])
		if g < 0 || g >= len(colours) {
			return nil, fmt.Errorf("alpha_group %d; at most %d groups", g, len(colours))
		}
		for len(groups) <= g {
			groups = append(groups, series{})
		}
		s := &groups[g]
		s.truth = v[2]
		s.x, s.paper, s.scale = append(s.x, v[0]), append(s.paper, v[3]), append(s.scale, v[4])
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no rows of sampler %q", sampler)
	}
	return groups, nil
}

// panel draws each group's estimate against the round, and its truth dashed.
func panel(title string, groups []series, name func(int) string, y func(series) []float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "after round (warm-up 1–10); dashed: true mean entropy"
	p.Y.Label.Text = "mean per group (nats)"
	p.Y.Min, p.Y.Max = 0, 3.3 // ln 10 = 2.30, and room for the legend above it
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range groups {
		for _, x := range s.x {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	lnC, err := plotter.NewLine(plotter.XYs{{X: lo, Y: math.Log(10)}, {X: hi, Y: math.Log(10)}}) // Fashion-MNIST's C = 10
	if err != nil {
		return nil, err
	}
	lnC.Color, lnC.Dashes = color.Gray{Y: 128}, []vg.Length{vg.Points(1), vg.Points(2)}
	p.Add(lnC)
	p.Legend.Add("ln 10", lnC)
	p.Legend.Top, p.Legend.Left = true, false
	for g, s := range groups {
		if len(s.x) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(s.x))
		for i := range s.x {
			pts[i] = plotter.XY{X: s.x[i], Y: y(s)[i]}
		}
		ln, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = colours[g], vg.Points(1.8)
		truth, err := plotter.NewLine(plotter.XYs{{X: s.x[0], Y: s.truth}, {X: s.x[len(s.x)-1], Y: s.truth}})
		if err != nil {
			return nil, err
		}
		truth.Color, truth.Width, truth.Dashes = colours[g], vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(ln, truth)
		p.Legend.Add(fmt.Sprintf("%s (true %.2f)", name(g), s.truth), ln)
	}
	return p, nil
}

func write(path string, w io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
