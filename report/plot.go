package report

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// dpi is the PNG figures' resolution: 1.5 × a screen's 96, sharp on most
// displays at a moderate file size.
const dpi = 144

// figure is one drawing of the page, written as Name.png and Name.svg.
type figure struct {
	Name    string
	Alt     string
	Caption string
	W, H    vg.Length
	draw    func(dc draw.Canvas) error
}

// PNG and SVG are the figure's file names.
func (f figure) PNG() string { return f.Name + ".png" }
func (f figure) SVG() string { return f.Name + ".svg" }

// WidthPx is the figure's width on the page in CSS pixels (96 per inch).
func (f figure) WidthPx() int { return int(math.Round(float64(f.W / vg.Inch * 96))) }

// write draws the figure twice, as PNG and as SVG, into dir.
func (f figure) write(dir string) error {
	png := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))}
	if err := f.draw(draw.New(png)); err != nil {
		return fmt.Errorf("figure %s: %w", f.Name, err)
	}
	if err := writeTo(filepath.Join(dir, f.PNG()), png); err != nil {
		return err
	}
	svg := vgsvg.New(f.W, f.H)
	dc := draw.New(svg)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if err := f.draw(dc); err != nil {
		return fmt.Errorf("figure %s: %w", f.Name, err)
	}
	return writeTo(filepath.Join(dir, f.SVG()), svg)
}

func writeTo(path string, w io.WriterTo) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	b := bufio.NewWriter(out)
	if _, err := w.WriteTo(b); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := b.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tab10 are matplotlib's default categorical colours; methods beyond ten
// reuse them with a dashed line.
var tab10 = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

func colorOf(i int) color.RGBA { return tab10[i%len(tab10)] }

func dashesOf(i int) []vg.Length {
	switch (i / len(tab10)) % 3 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	}
	return nil
}

func withAlpha(c color.RGBA, a uint8) color.NRGBA { return color.NRGBA{c.R, c.G, c.B, a} }

// newPlot returns a plot with the page's fonts and a grid.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.Title.Padding = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p
}

// newLegend returns a legend for the column beside a plot.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font.Size = vg.Points(9)
	l.Padding = vg.Points(4)
	l.Top, l.Left = true, true
	l.XOffs, l.YOffs = vg.Points(8), -vg.Points(24)
	return l
}

// wrap breaks s into lines of at most n characters at spaces or commas.
func wrap(s string, n int) string {
	var lines []string
	for len(s) > n {
		cut := strings.LastIndexAny(s[:n], " ,")
		if cut <= 0 {
			cut = n - 1
		}
		lines = append(lines, s[:cut+1])
		s = strings.TrimLeft(s[cut+1:], " ")
	}
	return strings.Join(append(lines, s), "\n")
}

// legendWidth is the width the legend's entries need beside a plot.
func legendWidth(names []string, size vg.Length) vg.Length {
	st := plot.New().Legend.TextStyle
	st.Font.Size = size
	var w vg.Length
	for _, n := range names {
		w = max(w, st.Width(n))
	}
	return w + vg.Points(48)
}

// drawWithLegend draws p in dc with the legend l (of the given entries)
// in a column on the right, so the legend never covers the data.
func drawWithLegend(dc draw.Canvas, p *plot.Plot, l plot.Legend, names []string) {
	if len(names) == 0 {
		p.Draw(dc)
		return
	}
	lw := legendWidth(names, l.TextStyle.Font.Size)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	l.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, 0))
}

// legendHeight is the height a legend of n entries needs.
func legendHeight(n int) vg.Length { return vg.Length(n)*vg.Points(15) + vg.Points(48) }

// line is one method's curve: its mean over seeds and a band.
type line struct {
	name         string
	x, y, lo, hi []float64
	index        int // the method's index, for its colour
}

// linesPlot draws lines with their bands and a legend.
func linesPlot(title, x, y string, lines []line, band bool) func(dc draw.Canvas) error {
	return func(dc draw.Canvas) error {
		p := newPlot(title, x, y)
		leg := newLegend()
		var names []string
		for _, l := range lines {
			c := colorOf(l.index)
			if band && len(l.x) > 1 {
				pts := make(plotter.XYs, 0, 2*len(l.x))
				for i := range l.x {
					pts = append(pts, plotter.XY{X: l.x[i], Y: l.hi[i]})
				}
				for i := len(l.x) - 1; i >= 0; i-- {
					pts = append(pts, plotter.XY{X: l.x[i], Y: l.lo[i]})
				}
				poly, err := plotter.NewPolygon(pts)
				if err != nil {
					return err
				}
				poly.Color = withAlpha(c, 50)
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
			xy := make(plotter.XYs, len(l.x))
			for i := range l.x {
				xy[i] = plotter.XY{X: l.x[i], Y: l.y[i]}
			}
			ln, pt, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			ln.Color, ln.Width, ln.Dashes = c, vg.Points(1.5), dashesOf(l.index)
			pt.Color, pt.Shape, pt.Radius = c, draw.CircleGlyph{}, vg.Points(2)
			p.Add(ln, pt)
			leg.Add(l.name, ln, pt)
			names = append(names, l.name)
		}
		drawWithLegend(dc, p, leg, names)
		return nil
	}
}

// intTicks marks integers that are multiples of step.
type intTicks struct{ step int }

func (t intTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := int(math.Ceil(lo/float64(t.step))) * t.step; float64(v) <= hi; v += t.step {
		ts = append(ts, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	return ts
}

// niceStep returns the smallest of 1, 2, 5, 10, 20, 50, ... that is >= x.
func niceStep(x float64) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if float64(m*p) >= x {
				return m * p
			}
		}
	}
}

// textWidth is the width of s in the default font at size.
func textWidth(s string, size vg.Length) vg.Length {
	st := plot.New().X.Tick.Label
	st.Font = font.Font{Typeface: st.Font.Typeface, Variant: st.Font.Variant, Size: size}
	return st.Width(s)
}
