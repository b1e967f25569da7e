package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// metricNames are the curves' axis labels.
var metricNames = map[string]string{
	MetricAcc:       "test accuracy",
	MetricLoss:      "test loss",
	MetricTrainLoss: "global train loss Σ p_k L_k(θ)",
}

// plotW is the width of a plot's data and axes, without its legend.
const plotW = 5.2 * vg.Inch

// colourIndex is a method's colour: the index of its method-axis value
// (Short) among the sweep's, so a method has one colour in every setting.
func (r *Report) colourIndex(name string) int {
	var shorts []string
	for _, m := range r.Methods {
		if !slices.Contains(shorts, m.Short) {
			shorts = append(shorts, m.Short)
		}
	}
	return slices.Index(shorts, r.method(name).Short)
}

// curveFigures draws one figure per setting of metric: each method's mean
// over seeds, with a min–max band over seeds.
func (r *Report) curveFigures(metric string) []figure {
	var figs []figure
	for si, s := range r.Settings() {
		var lines []line
		var names []string
		for _, m := range r.Methods {
			if m.Setting != s {
				continue
			}
			l := line{name: m.Short, index: r.colourIndex(m.Name)}
			for _, c := range r.Curves[metric] {
				if c.Method == m.Name {
					l.x, l.y, l.lo, l.hi = append(l.x, float64(c.Round)), append(l.y, c.Mean), append(l.lo, c.Min), append(l.hi, c.Max)
				}
			}
			if len(l.x) > 0 {
				lines = append(lines, l)
				names = append(names, l.name)
			}
		}
		if len(lines) == 0 {
			continue
		}
		title := metricNames[metric]
		if s != "" {
			title += "\n" + wrap(s, 70)
		}
		figs = append(figs, figure{
			Name: fmt.Sprintf("%s-%02d", metric, si), Alt: metricNames[metric] + " vs round, " + displaySetting(s),
			Caption: fmt.Sprintf("%s vs round, %s: mean over seeds (line) and min–max over seeds (band)", metricNames[metric], displaySetting(s)),
			W:       plotW + legendWidth(names, vg.Points(9)), H: max(3.4*vg.Inch, legendHeight(len(names))),
			draw: linesPlot(title, "round", metricNames[metric], lines, true),
		})
	}
	return figs
}

// clientFigures draws one box plot per setting of the clients' final
// accuracies per method.
func (r *Report) clientFigures() ([]figure, error) {
	var figs []figure
	for si, s := range r.Settings() {
		var ds []ClientDist
		var names []string
		for _, d := range r.Clients {
			if m := r.method(d.Method); m.Setting == s && d.N > 0 {
				ds = append(ds, d)
				names = append(names, m.Short)
			}
		}
		if len(ds) == 0 {
			continue
		}
		longest := vg.Length(0)
		for _, n := range names {
			longest = max(longest, textWidth(n, vg.Points(9)))
		}
		rotate := vg.Length(len(names))*longest > plotW*0.8
		h := 3.4 * vg.Inch
		if rotate {
			h += longest * 0.7
		}
		title := "clients' test accuracy at the last evaluated round"
		if s != "" {
			title += "\n" + wrap(s, 70)
		}
		figs = append(figs, figure{
			Name: fmt.Sprintf("clients-%02d", si), Alt: "client accuracy distributions, " + displaySetting(s),
			Caption: fmt.Sprintf("Local test accuracy of every client at each point's last evaluated round, pooled over seeds, %s: "+
				"box from the first to the third quartile (linear interpolation) with the median, whiskers to the furthest value within 1.5 IQR, points beyond", displaySetting(s)),
			W: max(plotW, vg.Length(len(ds))*vg.Points(44)+vg.Inch), H: h,
			draw: func(dc draw.Canvas) error {
				p := newPlot(title, "", "client test accuracy")
				for i, d := range ds {
					b, err := boxPlot(d, float64(i), colorOf(r.colourIndex(d.Method)))
					if err != nil {
						return err
					}
					p.Add(b)
				}
				p.NominalX(names...)
				p.X.Tick.Label.Font.Size = vg.Points(9)
				if rotate {
					p.X.Tick.Label.Rotation = math.Pi / 5
					p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
				}
				p.Draw(dc)
				return nil
			},
		})
	}
	return figs, nil
}

// boxPlot is gonum's box plot with the quartiles of the table (linear
// interpolation) in place of its own (medians of halves).
func boxPlot(d ClientDist, loc float64, c color.RGBA) (*plotter.BoxPlot, error) {
	b, err := plotter.NewBoxPlot(vg.Points(22), loc, plotter.Values(d.Values))
	if err != nil {
		return nil, err
	}
	b.Median, b.Quartile1, b.Quartile3 = d.Median, d.Q1, d.Q3
	lo, hi := d.Q1-1.5*(d.Q3-d.Q1), d.Q3+1.5*(d.Q3-d.Q1)
	b.AdjLow, b.AdjHigh, b.Outside = math.Inf(1), math.Inf(-1), nil
	for i, v := range b.Values {
		if v < lo || v > hi {
			b.Outside = append(b.Outside, i)
			continue
		}
		b.AdjLow, b.AdjHigh = min(b.AdjLow, v), max(b.AdjHigh, v)
	}
	b.FillColor = withAlpha(c, 90)
	b.GlyphStyle.Radius = vg.Points(1.5)
	return b, nil
}

// compositionFigures draws, per method, the groups' (or clusters') shares
// of the selected clients per round as stacked areas.
func (r *Report) compositionFigures() []figure {
	var figs []figure
	for mi, m := range r.Methods {
		var ss []Share
		var groups []int
		for _, s := range r.Composition {
			if s.Method == m.Name {
				ss = append(ss, s)
				if !slices.Contains(groups, s.Group) {
					groups = append(groups, s.Group)
				}
			}
		}
		if len(ss) == 0 {
			continue
		}
		slices.Sort(groups)
		var rounds []int
		share := map[[2]int]float64{}
		for _, s := range ss {
			if !slices.Contains(rounds, s.Round) {
				rounds = append(rounds, s.Round)
			}
			share[[2]int{s.Round, s.Group}] = s.Share
		}
		slices.Sort(rounds)
		var names []string
		for _, g := range groups {
			names = append(names, fmt.Sprintf("%s %d", r.GroupKind, g))
		}
		figs = append(figs, figure{
			Name: fmt.Sprintf("composition-%02d", mi), Alt: r.GroupKind + " composition, " + m.Name,
			Caption: fmt.Sprintf("Share of each %s among the selected clients per round, %s (distinct selected clients per point and round, pooled over seeds)", r.GroupKind, m.Name),
			W:       plotW + legendWidth(names, vg.Points(9)), H: max(3*vg.Inch, legendHeight(len(names))),
			draw: func(dc draw.Canvas) error {
				p := newPlot(wrap(m.Name, 70), "round", "share of the selected clients")
				p.Y.Min, p.Y.Max = 0, 1
				leg := newLegend()
				below := make([]float64, len(rounds))
				for gi, g := range groups {
					var pts plotter.XYs
					above := make([]float64, len(rounds))
					for i, rd := range rounds {
						above[i] = below[i] + share[[2]int{rd, g}]
						pts = append(pts, plotter.XY{X: float64(rd), Y: above[i]})
					}
					for i := len(rounds) - 1; i >= 0; i-- {
						pts = append(pts, plotter.XY{X: float64(rounds[i]), Y: below[i]})
					}
					if len(rounds) == 1 { // one round: a bar of width 1
						pts = plotter.XYs{{X: pts[0].X - 0.4, Y: below[0]}, {X: pts[0].X + 0.4, Y: below[0]}, {X: pts[0].X + 0.4, Y: above[0]}, {X: pts[0].X - 0.4, Y: above[0]}}
					}
					poly, err := plotter.NewPolygon(pts)
					if err != nil {
						return err
					}
					poly.Color = colorOf(gi)
					poly.LineStyle.Width = 0
					p.Add(poly)
					leg.Add(names[gi], poly)
					below = above
				}
				drawWithLegend(dc, p, leg, names)
				return nil
			},
		})
	}
	return figs
}

// attackFigures draws, per FL method, the attacks' mean iAcc and cAcc per
// attacked round.
func (r *Report) attackFigures() []figure {
	var figs []figure
	for mi, m := range r.Methods {
		var as []AttackMean
		var attacks []string
		for _, a := range r.Attacks {
			if a.Method == m.Name {
				as = append(as, a)
				if !slices.Contains(attacks, a.Attack) {
					attacks = append(attacks, a.Attack)
				}
			}
		}
		if len(as) == 0 {
			continue
		}
		figs = append(figs, figure{
			Name: fmt.Sprintf("attacks-%02d", mi), Alt: "attack accuracy, " + m.Name,
			Caption: fmt.Sprintf("Label-recovery attacks on %s's updates: mean instance-level (iAcc) and class-level (cAcc) accuracy over the attacked clients and seeds, per attacked round", m.Name),
			W:       2*plotW*0.75 + legendWidth(attacks, vg.Points(9)), H: max(3*vg.Inch, legendHeight(len(attacks))),
			draw: func(dc draw.Canvas) error {
				lw := legendWidth(attacks, vg.Points(9))
				half := (dc.Max.X - dc.Min.X - lw) / 2
				leg := newLegend()
				for k, score := range []string{"iAcc", "cAcc"} {
					p := newPlot(wrap(m.Name, 45)+": "+score, "round", score)
					p.Y.Min, p.Y.Max = 0, 1
					for ai, name := range attacks {
						var xy plotter.XYs
						for _, a := range as {
							v := a.IAcc
							if k == 1 {
								v = a.CAcc
							}
							if a.Attack == name && !math.IsNaN(v) {
								xy = append(xy, plotter.XY{X: float64(a.Round), Y: v})
							}
						}
						if len(xy) == 0 {
							continue
						}
						ln, pt, err := plotter.NewLinePoints(xy)
						if err != nil {
							return err
						}
						ln.Color, ln.Width, ln.Dashes = colorOf(ai), vg.Points(1.5), dashesOf(ai)
						pt.Color, pt.Shape, pt.Radius = colorOf(ai), draw.CircleGlyph{}, vg.Points(2.5)
						p.Add(ln, pt)
						if k == 0 {
							leg.Add(name, ln, pt)
						}
					}
					p.Draw(draw.Crop(dc, vg.Length(k)*half, -(dc.Max.X - dc.Min.X - vg.Length(k+1)*half), 0, 0))
				}
				leg.Draw(draw.Crop(dc, 2*half, 0, 0, 0))
				return nil
			},
		})
	}
	return figs
}

// partitionFigures draws each distinct partition's heatmap.
func (r *Report) partitionFigures() ([]figure, error) {
	var figs []figure
	for i, p := range r.Partitions {
		h := Heatmap{Title: fmt.Sprintf("partition %d: %s, seed %d, %d clients", i+1, p.Scheme, p.Seed, len(p.Clients))}
		for _, c := range p.Clients {
			h.Counts = append(h.Counts, c.LabelCounts)
			h.Groups = append(h.Groups, c.Group)
		}
		f, err := h.figure()
		if err != nil {
			return nil, fmt.Errorf("partition of seed %d: %w", p.Seed, err)
		}
		f.Name = fmt.Sprintf("partition-%02d", i+1)
		f.Alt = h.Title
		f.Caption = fmt.Sprintf("Partition %d (seed %d), used by %d points: %s", i+1, p.Seed, len(p.Points), joinMax(p.Methods, 6))
		figs = append(figs, f)
	}
	return figs, nil
}

// joinMax joins up to n strings and says how many more there are.
func joinMax(s []string, n int) string {
	if len(s) <= n {
		return fmt.Sprint(quoteAll(s))
	}
	return fmt.Sprintf("%s and %d more", quoteAll(s[:n]), len(s)-n)
}

func quoteAll(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
