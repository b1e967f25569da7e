package conv

import "github.com/flsweep/flsweep/internal/mem"

// Winograd's F(4×4, 3×3) for the 3×3 stride-1 convolutions (Lavin and
// Gray 2016): tiles of 4×4 outputs from 6×6 receptive fields, 36 products
// per chunk and 36 multiply-adds per 16 outputs where F(2×2, 3×3) has 64
// (and im2col 144). Its points are F(2×2, 5×5)'s (0, ±1, ±2, ∞), so its
// input transform Bᵀ and that transform's adjoint are F(2×2, 5×5)'s
// (wino5In, wino5Dx and their vector versions), and
//
//	G  = [¼ 0 0; ⅙ ⅙ ⅙; ⅙ −⅙ ⅙; 1/24 1/12 ⅙; 1/24 −1/12 ⅙; 0 0 1]
//	Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 0; 0 1 1 4 4 0; 0 1 −1 8 −8 1]
//
// The rows of the padded input and of the outputs are split four ways
// (column x mod 4, the "phases"), so that the receptive field of tile j
// is phases 0–3 at j and phases 0–1 at j+1 in each of its rows.

// The 3×3 convolutions that take Winograd, with outputs wide enough
// (wino4Fits), take F(4×4, 3×3) rather than F(2×2, 3×3), unless
// trainer.KernelChoice.NoF43 (FLSWEEP_WINO43=0) keeps F(2×2, 3×3), the
// numerics of earlier builds ("+wino2" in trainer.KernelChoice.Numerics).

// wino43MinW is the narrowest output F(4×4, 3×3) takes, and
// wino43MinWhole the narrowest it takes when its 4×4 tiles cover the
// output exactly (wino4Fits). Narrower outputs have few tiles (one per
// sample for ResNet-18's 4×4 stage), so their 36 products multiply the
// transformed weights (up to 512×512) by few columns, and outputs that
// the tiles overhang waste more of their products than F(2×2, 3×3)'s.
// ResNet-18 trained at 23.1 samples/s with F(4×4, 3×3) from 16 columns
// (its first two stages) and from 8, 21.6 and 23.9 from 4, 20.8 from 32
// only, and 19.1–19.3 with F(2×2, 3×3) throughout (one thread, two
// alternated runs, 8e166d3). After the packed A·Bᵀ (e9f3796), its third
// stage (8×8) joined: medians of 20 and 24 interleaved training calls
// 29.3 and 30.1 samples/s from 8 columns against 28.1 and 29.1 from 16,
// 28.1 from 4. The HiCS CIFAR CNN's second convolution (13 wide, tiles
// over 16×16) trained 9% slower under F(4×4, 3×3) and the
// three-convolution CNN's third (14 wide) 3% slower (medians of 30), so
// outputs from 8 to 15 wide take it only when the tiles cover them.
const (
	wino43MinW     = 16
	wino43MinWhole = 8
)

// wino4Fits reports whether F(4×4, 3×3) takes g's Winograd convolution
// (wino43MinW).
func (g Geom) wino4Fits() bool {
	return g.Wo >= wino43MinW || g.Wo >= wino43MinWhole && g.Wo%4 == 0 && g.Ho%4 == 0
}

// g3 is G applied to three filter taps.
func g3[T float](g0, g1, g2 T) [6]T {
	se := g0 + g2
	te, to := g0+4*g2, 2*g1
	return [6]T{g0 / 4, (se + g1) / 6, (se - g1) / 6, (te + to) / 24, (te - to) / 24, g2}
}

// gt3 is Gᵀ, the adjoint of g3.
func gt3[T float](d0, d1, d2, d3, d4, d5 T) [3]T {
	p, q := (d1+d2)/6, (d1-d2)/6
	r, t := (d3+d4)/24, (d3-d4)/24
	return [3]T{d0/4 + p + r, q + 2*t, p + 4*r + d5}
}

// at4 is Aᵀ: a row or column of a tile's four outputs from six
// transformed values.
func at4[T float](m0, m1, m2, m3, m4, m5 T) [4]T {
	d, s := m1-m2, m1+m2
	d2, s2 := m3-m4, m3+m4
	return [4]T{m0 + s + s2, d + 2*d2, s + 4*s2, d + 8*d2 + m5}
}

// a4 is A, the adjoint of at4.
func a4[T float](y0, y1, y2, y3 T) [6]T {
	e, o := y0+y2, y1+y3
	e4, o4 := y0+4*y2, 2*y1+8*y3
	return [6]T{y0, e + o, e - o, e4 + o4, e4 - o4, y3}
}

// wino43Weights writes U_ξ = (G g Gᵀ)_ξ, ξ = 6k+l, for w ([cout, cin, 3,
// 3]) into u ([36, cout, cin]).
func wino43Weights[T float](w []T, cout, cin int, u, tmp []T) {
	wino43WeightsFrom(w, cout, cin, u, 0)
}

// wino43WeightsFrom is wino43Weights for filters [i0, cout·cin).
func wino43WeightsFrom[T float](w []T, cout, cin int, u []T, i0 int) {
	oc := cout * cin
	for i := i0; i < oc; i++ {
		g := w[i*9:][:9]
		var t [6][3]T // G g
		for v := range 3 {
			c := g3(g[v], g[3+v], g[6+v])
			for k := range 6 {
				t[k][v] = c[k]
			}
		}
		for k := range 6 {
			r := g3(t[k][0], t[k][1], t[k][2])
			for l := range 6 {
				u[(6*k+l)*oc+i] = r[l]
			}
		}
	}
}

// wino43WeightsGrad writes dW = Gᵀ dU G for du ([36, cout, cin]) into dw
// ([cout, cin, 3, 3]): the adjoint of wino43Weights.
func wino43WeightsGrad[T float](du []T, cout, cin int, dw, tmp []T) {
	wino43WeightsGradFrom(du, cout, cin, dw, 0)
}

// wino43WeightsGradFrom is wino43WeightsGrad for filters [i0, cout·cin).
func wino43WeightsGradFrom[T float](du []T, cout, cin int, dw []T, i0 int) {
	oc := cout * cin
	for i := i0; i < oc; i++ {
		var t [3][6]T // Gᵀ dU
		for l := range 6 {
			c := gt3(du[l*oc+i], du[(6+l)*oc+i], du[(12+l)*oc+i], du[(18+l)*oc+i], du[(24+l)*oc+i], du[(30+l)*oc+i])
			for u := range 3 {
				t[u][l] = c[u]
			}
		}
		g := dw[i*9:][:9]
		for u := range 3 {
			r := gt3(t[u][0], t[u][1], t[u][2], t[u][3], t[u][4], t[u][5])
			copy(g[3*u:], r[:])
		}
	}
}

// wino43Out writes y[(4a+b)·n + j] = (Aᵀ M A)[a][b] + bias of tiles j <
// n, for M_ξ = m[ξ·ms + j].
func wino43Out[T float](y []T, n int, m []T, ms int, bias T) { wino43OutFrom(y, n, m, ms, bias, 0) }

// wino43OutFrom is wino43Out for tiles [j0, n).
func wino43OutFrom[T float](y []T, n int, m []T, ms int, bias T, j0 int) {
	for j := j0; j < n; j++ {
		var s [4][6]T // Aᵀ M
		for l := range 6 {
			c := at4(m[l*ms+j], m[(6+l)*ms+j], m[(12+l)*ms+j], m[(18+l)*ms+j], m[(24+l)*ms+j], m[(30+l)*ms+j])
			for a := range 4 {
				s[a][l] = c[a]
			}
		}
		for a := range 4 {
			r := at4(s[a][0], s[a][1], s[a][2], s[a][3], s[a][4], s[a][5])
			for b := range 4 {
				y[(4*a+b)*n+j] = r[b] + bias
			}
		}
	}
}

// wino43Dy writes dm[ξ·ms + j] = (A dY Aᵀ)_ξ of tiles j < n, where
// d[(4a+b)·n + j] is the tile's output gradient in row a and column b.
func wino43Dy[T float](dm []T, ms, n int, d []T) { wino43DyFrom(dm, ms, n, d, 0) }

// wino43DyFrom is wino43Dy for tiles [j0, n).
func wino43DyFrom[T float](dm []T, ms, n int, d []T, j0 int) {
	for j := j0; j < n; j++ {
		var c [4][6]T // A down column b: c[b][k]
		for b := range 4 {
			c[b] = a4(d[b*n+j], d[(4+b)*n+j], d[(8+b)*n+j], d[(12+b)*n+j])
		}
		for k := range 6 {
			r := a4(c[0][k], c[1][k], c[2][k], c[3][k])
			for l := range 6 {
				dm[(6*k+l)*ms+j] = r[l]
			}
		}
	}
}

// wino43Fns are F(4×4, 3×3)'s output and output-gradient transforms; the
// float32 ones may be replaced by vector versions with the same bits.
type wino43Fns[T float] struct {
	out func(y []T, n int, m []T, ms int, bias T)
	dy  func(dm []T, ms, n int, d []T)
	// w and wg are wino43Weights and wino43WeightsGrad, with tmp
	// (9·cout·cin floats) for the vector versions' transposed filters.
	w  func(w []T, cout, cin int, u, tmp []T)
	wg func(du []T, cout, cin int, dw, tmp []T)
	// split4 and merge4 deal a row into four phases and back
	// (phaseSplit, phaseMerge).
	split4 func(ph [4][]T, src []T)
	merge4 func(dst []T, ph [4][]T)
	// stagePlane and unstagePlane are wino4Stage and wino4Unstage, the
	// short rows' way into and out of the transforms.
	stagePlane   func(g Geom, ws *mem.Workspace[T], plane, st []T, ls, t0 int)
	unstagePlane func(g Geom, ws *mem.Workspace[T], cb []T, L, t0 int, plane []T)
	// tilesShort is wino4TilesShort, the short rows' wino4Tiles.
	tilesShort func(g Geom, plane, d []T, L, t0 int, split bool)
}

var wino43Fns32 = wino43Go[float32]()

func wino43Go[T float]() wino43Fns[T] {
	return wino43Fns[T]{out: wino43Out[T], dy: wino43Dy[T], w: wino43Weights[T], wg: wino43WeightsGrad[T], split4: phaseSplit[T], merge4: phaseMerge[T],
		stagePlane: wino4Stage[T], unstagePlane: wino4Unstage[T], tilesShort: wino4TilesShort[T]}
}

func wino43For[T float]() wino43Fns[T] {
	if f, ok := any(wino43Fns32).(wino43Fns[T]); ok {
		return f
	}
	return wino43Go[T]()
}

// wino4Planes holds a plane's scratch for F(4×4, ·) (all of it, and by
// phase): the four phases of the zero-padded plane, 4·th+α−4 rows of tw+1
// each, 8 floats apart for the block copies of short rows.
func wino4Planes[T float](g Geom, ws *mem.Workspace[T]) (ph [4][]T, all []T, stride int) {
	stride = g.tw() + 1
	n := (4*g.th()+g.alpha()-4)*stride + 8
	all = mem.Grow(&ws.Pad, 4*n)
	for f := range 4 {
		ph[f] = all[f*n:][:n]
	}
	return ph, all, stride
}

// phaseSplit deals src into four phases: src[i] goes to ph[i mod 4][i/4].
func phaseSplit[T float](ph [4][]T, src []T) {
	for i, v := range src {
		ph[i&3][i>>2] = v
	}
}

// phaseMerge is phaseSplit's inverse: dst[i] = ph[i mod 4][i/4].
func phaseMerge[T float](dst []T, ph [4][]T) {
	for i := range dst {
		dst[i] = ph[i&3][i>>2]
	}
}

// phaseAdds adds the input gradients of the tiles t…t+tw−1 of a row
// (cb: α² rows L apart) into the phases from row row0 (rows s apart): row
// r, column q of each tile's receptive field at phase q mod 4, index
// q/4 on from the tile's, in the order of r and then of q.
func phaseAdds[T float](ph [4][]T, row0, s int, cb []T, L, t, tw, a int) {
	for r := range a {
		row := row0 + r*s
		for q := range a {
			dst, src := ph[q&3][row+q>>2:][:tw], cb[(a*r+q)*L+t:][:tw]
			for j, x := range src {
				dst[j] += x
			}
		}
	}
}

// wino4At returns the phases of the zero-padded plane (stride s) seen from
// the unpadded row y, column 0: padded column X = x+p is phase X mod 4,
// index X/4, so column x is the returned phase x mod 4, index x/4 (p ≤ 4).
func wino4At[T float](g Geom, ph *[4][]T, s, y int) [4][]T {
	base := (y + g.P) * s
	var at [4][]T
	for q := range 4 {
		at[q] = ph[(q+g.P)&3][base+(q+g.P)>>2:]
	}
	return at
}

// wino4Rows returns the four rows of d (16 rows L apart) that hold phases
// 0–3 of row a of the tiles from tile t on: column X of the tiles' row a
// is row 4a + X mod 4, index t + X/4.
func wino4Rows[T float](d []T, L, t, a int) [4][]T {
	return [4][]T{d[4*a*L+t:], d[(4*a+1)*L+t:], d[(4*a+2)*L+t:], d[(4*a+3)*L+t:]}
}

// wino4Halves returns the half-columns of the tiles whose receptive
// fields start at row r0 of the phases: phases 0–3 at j and at j+1 (α = 6
// takes the first six, α = 8 all eight).
func wino4Halves[T float](ph *[4][]T, r0 int) [8][]T {
	return [8][]T{ph[0][r0:], ph[1][r0:], ph[2][r0:], ph[3][r0:], ph[0][r0+1:], ph[1][r0+1:], ph[2][r0+1:], ph[3][r0+1:]}
}

// winoInput4 is WinoInput for F(4×4, 3×3) and F(4×4, 5×5).
func winoInput4[T float](g Geom, ws *mem.Workspace[T], x []T, n0, n1 int, v []T, ld int) {
	in, a := wino4Alg[T](g).in, g.alpha()
	fns := wino4Fns[T](g)
	th, tw, tiles := g.th(), g.tw(), g.Tiles()
	L := (n1 - n0) * tiles
	var st []T
	Ls := L + 8
	if g.winoShort() {
		st = mem.Grow(&ws.Wino, a*a*Ls)
	}
	for c := range g.Cin {
		for n := n0; n < n1; n++ {
			plane := x[(n*g.Cin+c)*g.H*g.W:][:g.H*g.W]
			t0 := (n - n0) * tiles
			if st != nil {
				fns.stagePlane(g, ws, plane, st, Ls, t0)
				continue
			}
			ph, s := wino4Split(g, ws, fns.split4, plane)
			for ti := range th {
				in(v[c*ld+t0+ti*tw:], g.Cin*ld, tw, wino4Halves(&ph, 4*ti*s), s)
			}
		}
		if st != nil {
			var h [8][]T
			for q := range a {
				h[q] = st[q*a*Ls:]
			}
			in(v[c*ld:], g.Cin*ld, L, h, Ls)
		}
	}
}

// wino4Split deals an input plane (h×w) into the phases of its zero-padded
// plane by split4 (nil for phaseSplit), and returns them with their row
// stride.
func wino4Split[T float](g Geom, ws *mem.Workspace[T], split4 func([4][]T, []T), plane []T) (ph [4][]T, s int) {
	ph, all, s := wino4Planes(g, ws)
	clear(all)
	for y := range g.H {
		at := wino4At(g, &ph, s, y)
		if split4 == nil {
			phaseSplit(at, plane[y*g.W:][:g.W])
			continue
		}
		split4(at, plane[y*g.W:][:g.W])
	}
	return ph, s
}

// wino4Stage writes the receptive fields of an input plane's short rows of
// tiles to the staging rows st (α² rows ls apart, the plane's tiles from
// t0 on): padded row 4·ti+r, column 4·j+q of tile (ti, j) at st[(q·α +
// r)·ls + t0 + ti·tw + j]. Each row of tiles is copied as 8 floats, which
// the next (or the staging rows' 8 floats of padding) overwrites.
func wino4Stage[T float](g Geom, ws *mem.Workspace[T], plane, st []T, ls, t0 int) {
	ph, s := wino4Split(g, ws, nil, plane)
	stage := stageFor[T]()
	for ti := range g.th() {
		stage(st, ls, t0+ti*g.tw(), wino4Halves(&ph, 4*ti*s), s, g.alpha())
	}
}

// wino4Unstage is wino4Stage's adjoint: it writes an input-gradient plane
// (h×w) from its tiles' transformed-back gradients in cb (α² rows L apart,
// the plane's tiles from t0 on), adding the tiles' contributions to each
// float from +0, tile row by tile row, in the order of phaseAdds.
func wino4Unstage[T float](g Geom, ws *mem.Workspace[T], cb []T, L, t0 int, plane []T) {
	wino4Unsplit(g, ws, cb, L, t0, plane, nil)
}

// wino4Unsplit is wino4Unstage for rows of tiles of any length, merging
// the phases back into the plane's rows by merge4 (nil for phaseMerge).
func wino4Unsplit[T float](g Geom, ws *mem.Workspace[T], cb []T, L, t0 int, plane []T, merge4 func([]T, [4][]T)) {
	ph, all, s := wino4Planes(g, ws)
	clear(all)
	for ti := range g.th() {
		phaseAdds(ph, 4*ti*s, s, cb, L, t0+ti*g.tw(), g.tw(), g.alpha())
	}
	for y := range g.H {
		at := wino4At(g, &ph, s, y)
		if merge4 == nil {
			phaseMerge(plane[y*g.W:][:g.W], at)
			continue
		}
		merge4(plane[y*g.W:][:g.W], at)
	}
}

// wino4Tiles moves one output plane (ho×wo) between its rows and the
// tiles' phase rows in d (16 rows L apart, the plane's tiles from t0 on):
// row a of tile row ti is rows 4a…4a+3 of d (wino4Rows). split deals the
// plane into d (the output gradient); else d is merged into the plane (the
// output).
func wino4Tiles[T float](g Geom, fns *wino43Fns[T], plane, d []T, L, t0 int, split bool) {
	for ti := range g.th() {
		for a := range min(4, g.Ho-4*ti) {
			at, row := wino4Rows(d, L, t0+ti*g.tw(), a), plane[(4*ti+a)*g.Wo:][:g.Wo]
			switch {
			case fns == nil && split:
				phaseSplit(at, row)
			case fns == nil:
				phaseMerge(row, at)
			case split:
				fns.split4(at, row)
			default:
				fns.merge4(row, at)
			}
		}
	}
}

// wino4TilesShort is wino4Tiles for short rows of tiles, by phaseSplit and
// phaseMerge.
func wino4TilesShort[T float](g Geom, plane, d []T, L, t0 int, split bool) {
	wino4Tiles(g, nil, plane, d, L, t0, split)
}

// winoOutput4 is WinoOutput for F(4×4, 3×3) and F(4×4, 5×5).
func winoOutput4[T float](g Geom, ws *mem.Workspace[T], m []T, ld int, y []T, n0, n1 int, b []T) {
	fns := wino4Fns[T](g)
	L := (n1 - n0) * g.Tiles()
	out := mem.Grow(&ws.Wino, 16*L+8) // 8 more for the vector tilesShort's loads
	for o := range g.Cout {
		var bias T
		if b != nil {
			bias = b[o]
		}
		fns.out(out, L, m[o*ld:], g.Cout*ld, bias)
		for n := n0; n < n1; n++ {
			plane := y[(n*g.Cout+o)*g.HW():][:g.HW()]
			if g.winoShort() {
				fns.tilesShort(g, plane, out, L, (n-n0)*g.Tiles(), false)
				continue
			}
			wino4Tiles(g, &fns, plane, out, L, (n-n0)*g.Tiles(), false)
		}
	}
}

// winoGrad4 is WinoGrad for F(4×4, 3×3) and F(4×4, 5×5).
func winoGrad4[T float](g Geom, ws *mem.Workspace[T], dy []T, n0, n1 int, dm []T, ld int) {
	fns := wino4Fns[T](g)
	L := (n1 - n0) * g.Tiles()
	d := mem.Grow(&ws.Wino, 16*L)
	for oc := range g.Cout {
		if g.Ho%4 != 0 || g.Wo%4 != 0 {
			clear(d) // the gradient is zero past the output
		}
		for n := n0; n < n1; n++ {
			plane := dy[(n*g.Cout+oc)*g.HW():][:g.HW()]
			if g.winoShort() {
				fns.tilesShort(g, plane, d, L, (n-n0)*g.Tiles(), true)
				continue
			}
			wino4Tiles(g, &fns, plane, d, L, (n-n0)*g.Tiles(), true)
		}
		fns.dy(dm[oc*ld:], g.Cout*ld, L, d)
	}
}

// winoInputGrad4 is WinoInputGrad for F(4×4, 3×3) and F(4×4, 5×5): each
// row of tiles adds, row by row of its receptive fields, its tiles'
// columns 0–3 into the phases at j and columns 4 to α−1 into phases 0 to
// α−5 at j+1.
func winoInputGrad4[T float](g Geom, ws *mem.Workspace[T], dv []T, ld int, dx []T, n0, n1 int) {
	bdx, a := wino4Alg[T](g).dx, g.alpha()
	fns := wino4Fns[T](g)
	L := (n1 - n0) * g.Tiles()
	cb := mem.Grow(&ws.Wino, a*a*L+8) // 8 more for the vector unstage's loads
	for c := range g.Cin {
		bdx(cb, L, dv[c*ld:], g.Cin*ld)
		for n := n0; n < n1; n++ {
			plane, t0 := dx[(n*g.Cin+c)*g.H*g.W:][:g.H*g.W], (n-n0)*g.Tiles()
			if g.winoShort() {
				fns.unstagePlane(g, ws, cb, L, t0, plane)
				continue
			}
			wino4Unsplit(g, ws, cb, L, t0, plane, fns.merge4)
		}
	}
}
