package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Heatmap is a partition drawn as clients × classes: each cell is the
// share of the client's train samples in that class (white 0 to dark blue
// 1), with the client's train size as a bar on the right, a colour bar,
// and lines between groups.
type Heatmap struct {
	Title string
	// Counts are each client's train label counts (clients in order).
	Counts [][]int
	// Groups are the clients' groups (HiCS-FL's α-groups); nil or all
	// equal without groups.
	Groups []int
}

// WritePNG writes the heatmap as a PNG image.
func (h Heatmap) WritePNG(w io.Writer) error {
	f, err := h.figure()
	if err != nil {
		return err
	}
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))}
	if err := f.draw(draw.New(c)); err != nil {
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// WriteSVG writes the heatmap as an SVG document.
func (h Heatmap) WriteSVG(w io.Writer) error {
	f, err := h.figure()
	if err != nil {
		return err
	}
	c := vgsvg.New(f.W, f.H)
	if err := f.draw(draw.New(c)); err != nil {
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// shares is the clients × classes grid of a heatmap.
type shares struct {
	z       [][]float64
	classes int
}

func (s shares) Dims() (c, r int)          { return s.classes, len(s.z) }
func (s shares) Z(c, r int) float64        { return s.z[r][c] }
func (s shares) X(c int) float64           { return float64(c) }
func (s shares) Y(r int) float64           { return float64(r) }
func (s shares) Min() float64              { return 0 }
func (s shares) Max() float64              { return 1 }
func (bluesPalette) Colors() []color.Color { return bluesColors }

// bluesPalette is ColorBrewer's sequential "Blues" in 256 steps.
type bluesPalette struct{}

var bluesColors = func() []color.Color {
	cs := make([]color.Color, 256)
	for i := range cs {
		cs[i] = blues(float64(i) / 255)
	}
	return cs
}()

// blues maps v in [0, 1] to a white-to-dark-blue scale (the anchors of
// ColorBrewer's sequential "Blues"), linearly interpolated.
func blues(v float64) color.RGBA {
	anchors := [][3]float64{{247, 251, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107}}
	v = min(max(v, 0), 1) * float64(len(anchors)-1)
	i := min(int(v), len(anchors)-2)
	f := v - float64(i)
	var c [3]uint8
	for j := range c {
		c[j] = uint8(math.Round(anchors[i][j]*(1-f) + anchors[i+1][j]*f))
	}
	return color.RGBA{c[0], c[1], c[2], 255}
}

// colourBar is the heatmap's scale: one column of values 0..1.
type colourBar struct{}

func (colourBar) Dims() (c, r int)   { return 2, 100 }
func (colourBar) Z(c, r int) float64 { return (float64(r) + 0.5) / 100 }
func (colourBar) X(c int) float64    { return float64(c) }
func (colourBar) Y(r int) float64    { return (float64(r) + 0.5) / 100 }
func (colourBar) Min() float64       { return 0 }
func (colourBar) Max() float64       { return 1 }

// figure lays the heatmap out: the grid, the size bars and the colour bar
// side by side under a title, their rows aligned.
func (h Heatmap) figure() (figure, error) {
	n := len(h.Counts)
	classes := 0
	for _, c := range h.Counts {
		classes = max(classes, len(c))
	}
	if n == 0 || classes == 0 {
		return figure{}, errors.New("heatmap: no clients or classes")
	}
	z := make([][]float64, n)
	train := make([]int, n)
	maxTrain := 0
	for k, c := range h.Counts {
		z[k] = make([]float64, classes)
		for _, x := range c {
			train[k] += x
		}
		for j, x := range c {
			if train[k] > 0 {
				z[k][j] = float64(x) / float64(train[k])
			}
		}
		maxTrain = max(maxTrain, train[k])
	}
	grouped := false
	for k := 1; k < len(h.Groups); k++ {
		grouped = grouped || h.Groups[k] != h.Groups[0]
	}
	rowH := min(vg.Points(14), max(vg.Points(3), vg.Inch*7/vg.Length(n)))
	cellW := min(vg.Points(28), max(vg.Points(10), vg.Inch*4.5/vg.Length(classes)))
	const (
		top    = 44 // points: title lines
		bottom = 40 // x axes
	)
	hmW := cellW*vg.Length(classes) + vg.Points(70)
	barsW := vg.Points(150)
	cbW := vg.Points(84)
	f := figure{W: hmW + barsW + cbW + vg.Points(10), H: rowH*vg.Length(n) + vg.Points(top+bottom)}
	f.W = max(f.W, textWidth(h.Title, vg.Points(11))+vg.Points(24))
	f.draw = func(dc draw.Canvas) error {
		title := text.Style{Color: color.Black, Font: plot.New().Title.TextStyle.Font, Handler: plot.New().Title.TextStyle.Handler, XAlign: draw.XLeft, YAlign: draw.YTop}
		title.Font.Size = vg.Points(11)
		dc.FillText(title, vg.Point{X: dc.Min.X + vg.Points(10), Y: dc.Max.Y - vg.Points(6)}, h.Title)
		sub := title
		sub.Font.Size = vg.Points(9)
		sub.Color = color.Gray{Y: 90}
		dc.FillText(sub, vg.Point{X: dc.Min.X + vg.Points(10), Y: dc.Max.Y - vg.Points(22)}, "share of each client's train samples per class; right: train size"+map[bool]string{true: "; lines between groups", false: ""}[grouped])
		body := draw.Crop(dc, 0, 0, 0, -vg.Points(top))

		// Grid.
		hp := plot.New()
		hm := plotter.NewHeatMap(shares{z: z, classes: classes}, bluesPalette{})
		hp.Add(hm)
		hp.X.Label.Text, hp.Y.Label.Text = "class", "client"
		hp.X.Tick.Marker = intTicks{step: niceStep(float64(classes) / 20)}
		hp.Y.Tick.Marker = intTicks{step: niceStep(vg.Points(12).Points() / rowH.Points())}
		hp.Y.Scale = plot.InvertedScale{Normalizer: hp.Y.Scale}
		hp.X.Padding, hp.Y.Padding = 0, 0
		hp.X.Min, hp.X.Max = -0.5, float64(classes)-0.5
		hp.Y.Min, hp.Y.Max = -0.5, float64(n)-0.5

		// Size bars.
		bp := plot.New()
		bp.X.Label.Text = "train size"
		bp.X.Min, bp.X.Max = 0, float64(maxTrain)*1.05
		if grouped {
			bp.X.Max = float64(maxTrain) * 1.4 // room for the group labels
		}
		bp.Y.Min, bp.Y.Max = -0.5, float64(n)-0.5
		bp.Y.Scale = plot.InvertedScale{Normalizer: bp.Y.Scale}
		bp.X.Padding, bp.Y.Padding = 0, 0
		bp.HideY()
		bp.X.Tick.Marker = intTicks{step: niceStep(float64(maxTrain) / 3)}
		for k := range n {
			gap := min(0.1, 0.5*(1-1/rowH.Points()))
			bar, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: float64(k) - 0.5 + gap}, {X: float64(train[k]), Y: float64(k) - 0.5 + gap},
				{X: float64(train[k]), Y: float64(k) + 0.5 - gap}, {X: 0, Y: float64(k) + 0.5 - gap}})
			if err != nil {
				return err
			}
			bar.Color, bar.LineStyle.Width = color.Gray{Y: 160}, 0
			bp.Add(bar)
		}
		if grouped {
			var labels plotter.XYLabels
			for k := range n {
				if k > 0 && h.Groups[k] != h.Groups[k-1] {
					for _, p := range []*plot.Plot{hp, bp} {
						x0, x1 := p.X.Min, p.X.Max
						l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: float64(k) - 0.5}, {X: x1, Y: float64(k) - 0.5}})
						if err != nil {
							return err
						}
						l.Width, l.Color = vg.Points(1.5), color.Black
						p.Add(l)
					}
				}
				if k == 0 || h.Groups[k] != h.Groups[k-1] {
					labels.XYs = append(labels.XYs, plotter.XY{X: float64(maxTrain) * 1.38, Y: float64(k) - 0.5})
					labels.Labels = append(labels.Labels, fmt.Sprintf("group %d", h.Groups[k]))
				}
			}
			gl, err := plotter.NewLabels(labels)
			if err != nil {
				return err
			}
			for i := range gl.TextStyle {
				gl.TextStyle[i].XAlign, gl.TextStyle[i].YAlign = draw.XRight, draw.YTop
				gl.TextStyle[i].Font.Size = vg.Points(8)
			}
			bp.Add(gl)
		}

		// Colour bar, with an x axis of the others' height so rows align.
		cp := plot.New()
		cb := plotter.NewHeatMap(colourBar{}, bluesPalette{})
		cb.Rasterized = true
		cp.Add(cb)
		cp.X.Min, cp.X.Max, cp.Y.Min, cp.Y.Max = -0.5, 1.5, 0, 1
		cp.X.Padding, cp.Y.Padding = 0, 0
		cp.X.Label.Text = " "
		cp.X.Tick.Marker = plot.ConstantTicks{{Value: 0.5, Label: " "}}
		cp.X.Tick.LineStyle.Width, cp.X.LineStyle.Width = 0, 0
		cp.Y.Label.Text = "share"
		cp.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}

		hpW := f.W - barsW - cbW - vg.Points(10)
		hp.Draw(draw.Crop(body, 0, -(f.W - hpW), 0, 0))
		bp.Draw(draw.Crop(body, hpW+vg.Points(10), -cbW, 0, 0))
		cp.Draw(draw.Crop(body, f.W-cbW+vg.Points(4), -vg.Points(8), 0, 0))
		return nil
	}
	return f, nil
}
