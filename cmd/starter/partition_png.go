package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
)

// renderHeatmap draws a partition report as a clients × classes heatmap:
// each cell is the share of the client's train samples in that class, on a
// white (0) to dark blue (1) scale, with the client's train size as a bar on
// the right, a colour bar, and a line between groups. Standard library only:
// text is drawn with a built-in 5×7 bitmap font.
func renderHeatmap(w io.Writer, rep partitionReport) error {
	s := rep.Summary
	n, classes := len(rep.Clients), s.Classes
	if n == 0 || classes == 0 {
		return fmt.Errorf("heatmap: no clients or classes")
	}
	const (
		scale  = 2            // font scale: glyphs are 10×14 pixels
		adv    = 6 * scale    // horizontal advance per character
		lineH  = 9 * scale    // line height
		top    = 3*lineH + 12 // title lines and the axis title
		bottom = 2*lineH + 12 // class labels and the axis title
		sizeW  = 140          // size-bar panel
		barW   = 18           // colour bar
		gap    = 16           // between panels
		right  = 5*adv + gap  // colour-bar labels
		minH   = 10 * lineH   // the heatmap is at least this tall
		maxH   = 1600         // and at most this, unless clients need 1 pixel each
		groupW = 6 * adv      // group labels
		idW    = 6 * adv      // client labels
		pad    = 12           // outer margin
		titleX = pad
	)
	cw := max(8, min(48, 640/classes))
	ch := max(1, min(16, maxH/n))
	if n*ch < minH {
		ch = max(ch, (minH+n-1)/n)
	}
	left := pad + groupW + idW
	hmW, hmH := classes*cw, n*ch
	width := left + hmW + gap + sizeW + gap + barW + right + pad
	width = max(width, pad+adv*len(titleLine(rep))+pad)
	height := top + hmH + bottom + pad
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fillRect(img, img.Bounds(), color.RGBA{255, 255, 255, 255})
	ink := color.RGBA{30, 30, 30, 255}
	grey := color.RGBA{120, 120, 120, 255}

	drawText(img, titleX, pad, titleLine(rep), scale, ink)
	drawText(img, titleX, pad+lineH, "share of each client's train samples per class (white 0, dark 1)", scale, grey)
	grouped := len(s.Groups) > 1
	if grouped {
		drawText(img, pad, top-lineH, "group", scale, grey)
	}
	drawText(img, left-6-adv*6, top-lineH, "client", scale, grey)
	x0, y0 := left, top

	// Cells.
	maxSize := 0
	for _, c := range rep.Clients {
		maxSize = max(maxSize, c.Train)
	}
	for k, c := range rep.Clients {
		for j, x := range c.LabelCounts {
			share := 0.0
			if c.Train > 0 {
				share = float64(x) / float64(c.Train)
			}
			fillRect(img, image.Rect(x0+j*cw, y0+k*ch, x0+(j+1)*cw, y0+(k+1)*ch), blues(share))
		}
		if maxSize > 0 {
			bw := int(math.Round(float64(sizeW) * float64(c.Train) / float64(maxSize)))
			fillRect(img, image.Rect(x0+hmW+gap, y0+k*ch, x0+hmW+gap+bw, y0+(k+1)*ch-min(1, ch-1)), color.RGBA{150, 150, 150, 255})
		}
	}
	// Frames: the heatmap and the size panel.
	frame(img, image.Rect(x0-1, y0-1, x0+hmW+1, y0+hmH+1), ink)
	frame(img, image.Rect(x0+hmW+gap-1, y0-1, x0+hmW+gap+sizeW+1, y0+hmH+1), grey)

	// Client labels: every step-th client, step a 1-2-5 multiple so labels
	// are at least one line apart; and group boundaries with their labels.
	step := niceStep(float64(lineH) / float64(ch))
	for k := 0; k < n; k += step {
		label := fmt.Sprint(k)
		y := y0 + k*ch + ch/2 - 7*scale/2
		drawText(img, x0-6-adv*len(label), max(y, y0-2), label, scale, ink)
		hline(img, x0-4, x0-1, y0+k*ch+ch/2, ink)
	}
	for k, c := range rep.Clients {
		if k == 0 || c.Group != rep.Clients[k-1].Group {
			if k > 0 {
				for t := -1; t <= 0; t++ {
					hline(img, pad, x0+hmW+gap+sizeW+1, y0+k*ch+t, ink)
				}
			}
			if grouped {
				drawText(img, pad, y0+k*ch+2, fmt.Sprintf("g%d", c.Group), scale, ink)
			}
		}
	}
	// Class labels and axis titles.
	cstep := niceStep(float64(adv*len(fmt.Sprint(classes-1))+4) / float64(cw))
	for j := 0; j < classes; j += cstep {
		label := fmt.Sprint(j)
		drawText(img, x0+j*cw+cw/2-adv*len(label)/2+scale/2, y0+hmH+6, label, scale, ink)
	}
	drawText(img, x0+hmW/2-adv*5/2, y0+hmH+6+lineH, "class", scale, grey)
	drawText(img, x0+hmW+gap, y0-lineH, "train size", scale, grey)
	sizeLabel := fmt.Sprint(maxSize)
	drawText(img, x0+hmW+gap+sizeW-adv*len(sizeLabel), y0+hmH+6, sizeLabel, scale, ink)
	drawText(img, x0+hmW+gap, y0+hmH+6, "0", scale, ink)

	// Colour bar with ticks at 0, 0.5 and 1.
	bx := x0 + hmW + gap + sizeW + gap
	for y := 0; y < hmH; y++ {
		v := 1 - float64(y)/float64(max(hmH-1, 1))
		fillRect(img, image.Rect(bx, y0+y, bx+barW, y0+y+1), blues(v))
	}
	frame(img, image.Rect(bx-1, y0-1, bx+barW+1, y0+hmH+1), ink)
	for _, t := range []struct {
		v     float64
		label string
	}{{1, "1"}, {0.5, "0.5"}, {0, "0"}} {
		y := y0 + int(math.Round((1-t.v)*float64(hmH-1)))
		hline(img, bx+barW, bx+barW+4, y, ink)
		drawText(img, bx+barW+7, min(max(y-7*scale/2, y0-2), y0+hmH-7*scale), t.label, scale, ink)
	}
	drawText(img, bx-adv, y0-lineH, "share", scale, grey)
	return png.Encode(w, img)
}

func titleLine(rep partitionReport) string {
	s := rep.Summary
	return fmt.Sprintf("%s %s: %s, %s", s.Sweep, s.Point, s.Dataset, s.Scheme)
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

func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

func hline(img *image.RGBA, x1, x2, y int, c color.RGBA) {
	fillRect(img, image.Rect(x1, y, x2, y+1), c)
}

func frame(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	fillRect(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	fillRect(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	fillRect(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	fillRect(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// drawText draws s (lowercased; unknown characters as a box) with its top
// left corner at (x, y), each font pixel scale×scale.
func drawText(img *image.RGBA, x, y int, s string, scale int, c color.RGBA) {
	for _, r := range strings.ToLower(s) {
		g, ok := font5x7[r]
		if !ok {
			g = font5x7['?']
		}
		for row := range 7 {
			for col := range 5 {
				if g[row*5+col] == '#' {
					fillRect(img, image.Rect(x+col*scale, y+row*scale, x+(col+1)*scale, y+(row+1)*scale), c)
				}
			}
		}
		x += 6 * scale
	}
}

func lnInt(n int) float64 { return math.Log(float64(n)) }

// font5x7 holds 5×7 glyphs, row by row, '#' for ink.
var font5x7 = map[rune]string{
	' ':  "...................................",
	'0':  ".###.#...##..###.#.###..##...#.###.",
	'1':  "..#...##....#....#....#....#...###.",
	'2':  ".###.#...#....#...#...#...#...#####",
	'3':  "#####...#...#.....#.....##...#.###.",
	'4':  "...#...##..#.#.#..#.#####...#....#.",
	'5':  "######....####.....#....##...#.###.",
	'6':  "..##..#...#....####.#...##...#.###.",
	'7':  "#####....#...#...#...#....#....#...",
	'8':  ".###.#...##...#.###.#...##...#.###.",
	'9':  ".###.#...##...#.####....#...#..##..",
	'a':  "...........###.....#.#####...#.####",
	'b':  "#....#....#.##.##..##...##...#####.",
	'c':  "...........###.#....#....#...#.###.",
	'd':  "....#....#.##.##..###...##...#.####",
	'e':  "...........###.#...#######.....###.",
	'f':  "..##..#..#.#...###...#....#....#...",
	'g':  "...........#####...#.####....#.###.",
	'h':  "#....#....#.##.##..##...##...##...#",
	'i':  "..#........##....#....#....#...###.",
	'j':  "...#........##....#....#.#..#..##..",
	'k':  "#....#....#..#.#.#..##...#.#..#..#.",
	'l':  ".##....#....#....#....#....#...###.",
	'm':  "..........##.#.#.#.##.#.##...##...#",
	'n':  "..........#.##.##..##...##...##...#",
	'o':  "...........###.#...##...##...#.###.",
	'p':  "..........####.#...#####.#....#....",
	'q':  "...........##.##..##.####....#....#",
	'r':  "..........#.##.##..##....#....#....",
	's':  "...........###.#.....###.....#####.",
	't':  ".#....#...###...#....#....#..#..##.",
	'u':  "..........#...##...##...##..##.##.#",
	'v':  "..........#...##...##...#.#.#...#..",
	'w':  "..........#...##...##.#.##.#.#.#.#.",
	'x':  "..........#...#.#.#...#...#.#.#...#",
	'y':  "..........#...##...#.####....#.###.",
	'z':  "..........#####...#...#...#...#####",
	'.':  "..........................##...##..",
	',':  ".....................##....#...#...",
	':':  "......##...##........##...##.......",
	'-':  "...............#####...............",
	'+':  ".......#....#..#####..#....#.......",
	'(':  "...#...#...#....#....#.....#.....#.",
	')':  ".#.....#.....#....#....#...#...#...",
	'[':  ".###..#....#....#....#....#....###.",
	']':  ".###....#....#....#....#....#..###.",
	'=':  "..........#####.....#####..........",
	'/':  ".........#...#...#...#...#.........",
	'%':  "##...##..#...#...#...#...#..##...##",
	'\'': "..#....#...#.......................",
	'_':  "..............................#####",
	'?':  ".###.#...#....#...#...#.........#..",
}
