package conv

// Winograd's F(4×4, 5×5) for the 5×5 stride-1 convolutions: tiles of 4×4
// outputs from 8×8 receptive fields, 64 products per chunk and 64
// multiply-adds per 16 outputs where F(2×2, 5×5) has 144 (and im2col
// 400). Its Toom–Cook points are 0, ±1, ±2, ±½ and ∞, those of F(6×6,
// 3×3) (Lavin and Gray 2016), so its input transform is F(6×6, 3×3)'s:
//
//	Bᵀ = [1 0 −21/4 0 21/4 0 −1 0;
//	      0 1 1 −17/4 −17/4 1 1 0;     0 −1 1 17/4 −17/4 −1 1 0;
//	      0 ½ ¼ −5/2 −5/4 2 1 0;       0 −½ ¼ 5/2 −5/4 −2 1 0;
//	      0 2 4 −5/2 −5 ½ 1 0;         0 −2 4 5/2 −5 −½ 1 0;
//	      0 −1 0 21/4 0 −21/4 0 1]
//	G  = [1 0 0 0 0;
//	      −2/9 −2/9 −2/9 −2/9 −2/9;    −2/9 2/9 −2/9 2/9 −2/9;
//	      1/90 1/45 2/45 4/45 8/45;    1/90 −1/45 2/45 −4/45 8/45;
//	      32/45 16/45 8/45 4/45 2/45;  32/45 −16/45 8/45 −4/45 2/45;
//	      0 0 0 0 1]
//	Aᵀ = [1 1 1 1 1 1 1 0; 0 1 −1 2 −2 ½ −½ 0;
//	      0 1 1 4 4 ¼ ¼ 0; 0 1 −1 8 −8 ⅛ −⅛ 1]
//
// (rows of Bᵀ and G, columns of Aᵀ, in the order of the points 0, 1, −1,
// 2, −2, ½, −½, ∞; G solved from Bᵀ and Aᵀ so that Aᵀ[(G g)⊙(Bᵀ d)] is
// the correlation of g and d, which TestWinograd45Transforms checks
// exactly). The coefficients reach 21/4 and 32/45, so the transforms round
// more than F(2×2, 5×5)'s: the trainer's TestWinogradConv bounds the
// float32 error.
//
// The drivers are F(4×4, 3×3)'s (winograd43.go): the padded rows split
// four ways, and the receptive field of tile j is phases 0–3 at j and at
// j+1 in each of its eight rows.

// The 5×5 convolutions that take Winograd take F(4×4, 5×5) rather than
// F(2×2, 5×5), unless trainer.KernelChoice.NoF45 (FLSWEEP_WINO45=0) keeps
// F(2×2, 5×5), the numerics of earlier builds ("+wino45off" in
// trainer.KernelChoice.Numerics).

// wino45Fits reports whether F(4×4, 5×5) takes g's Winograd convolution:
// outputs of at least 8×8, so at least four tiles a sample. The paper
// models' two such convolutions trained faster by it than by F(2×2, 5×5)
// (medians of 16 interleaved training calls, make bench-ab
// AB=';useWino45=0'): the CIFAR CNN's second (10×10 outputs, its 3×3
// tiles overhanging them) 1,021 against 876 samples/s on one client and
// 1,864 against 1,614 with two; the HiCS CNN's second (8×8) 3,497
// against 2,986 and 6,604 against 5,792.
func (g Geom) wino45Fits() bool { return g.Wo >= 8 && g.Ho >= 8 }

// bt8 is Bᵀ applied to eight values down a column or across a row.
func bt8[T float](d0, d1, d2, d3, d4, d5, d6, d7 T) [8]T {
	a, b := d2+d6-4.25*d4, d1+d5-4.25*d3
	c, e := 0.25*d2-1.25*d4+d6, 0.5*d1-2.5*d3+2*d5
	f, h := 4*d2-5*d4+d6, 2*d1-2.5*d3+0.5*d5
	return [8]T{d0 - d6 + 5.25*(d4-d2), a + b, a - b, c + e, c - e, f + h, f - h, d7 - d1 + 5.25*(d3-d5)}
}

// b8 is B, the adjoint of bt8.
func b8[T float](v0, v1, v2, v3, v4, v5, v6, v7 T) [8]T {
	d1, s1 := v1-v2, v1+v2
	d2, s2 := v3-v4, v3+v4
	d3, s3 := v5-v6, v5+v6
	return [8]T{
		v0,
		d1 + 0.5*d2 + 2*d3 - v7,
		s1 + 0.25*s2 + 4*s3 - 5.25*v0,
		5.25*v7 - 4.25*d1 - 2.5*(d2+d3),
		5.25*v0 - 4.25*s1 - 1.25*s2 - 5*s3,
		d1 + 2*d2 + 0.5*d3 - 5.25*v7,
		s1 + s2 + s3 - v0,
		v7,
	}
}

// at48 is Aᵀ: a row or column of a tile's four outputs from eight
// transformed values.
func at48[T float](m0, m1, m2, m3, m4, m5, m6, m7 T) [4]T {
	s1, d1 := m1+m2, m1-m2
	s2, d2 := m3+m4, m3-m4
	s3, d3 := m5+m6, m5-m6
	return [4]T{m0 + s1 + s2 + s3, d1 + 2*d2 + 0.5*d3, s1 + 4*s2 + 0.25*s3, d1 + 8*d2 + 0.125*d3 + m7}
}

// a8 is A, the adjoint of at48.
func a8[T float](y0, y1, y2, y3 T) [8]T {
	e1, o1 := y0+y2, y1+y3
	e2, o2 := y0+4*y2, 2*y1+8*y3
	e3, o3 := y0+0.25*y2, 0.5*y1+0.125*y3
	return [8]T{y0, e1 + o1, e1 - o1, e2 + o2, e2 - o2, e3 + o3, e3 - o3, y3}
}

// g8 is G applied to five filter taps (its rows −2/9, 1/90 and 1/45 as
// divisions by −4.5, 90 and 45, rounded once).
func g8[T float](g0, g1, g2, g3, g4 T) [8]T {
	se, so := g0+g2+g4, g1+g3
	te, to := g0+4*g2+16*g4, 2*g1+8*g3
	pe, po := 32*g0+8*g2+2*g4, 16*g1+4*g3
	return [8]T{g0, (se + so) / -4.5, (se - so) / -4.5, (te + to) / 90, (te - to) / 90, (pe + po) / 45, (pe - po) / 45, g4}
}

// gt8 is Gᵀ, the adjoint of g8.
func gt8[T float](d0, d1, d2, d3, d4, d5, d6, d7 T) [5]T {
	p, q := (d1+d2)/-4.5, (d1-d2)/-4.5
	r, t := (d3+d4)/90, (d3-d4)/90
	w, z := (d5+d6)/45, (d5-d6)/45
	return [5]T{d0 + p + r + 32*w, q + 2*t + 16*z, p + 4*r + 8*w, q + 8*t + 4*z, p + 16*r + 2*w + d7}
}

// wino45Weights writes U_ξ = (G g Gᵀ)_ξ, ξ = 8k+l, for w ([cout, cin, 5,
// 5]) into u ([64, cout, cin]), wBlock filters at a time (see wBlock).
func wino45Weights[T float](w []T, cout, cin int, u, _ []T) { wino45WeightsFrom(w, cout, cin, u, 0) }

// wino45WeightsFrom is wino45Weights for filters [from, cout·cin).
func wino45WeightsFrom[T float](w []T, cout, cin int, u []T, from int) {
	oc := cout * cin
	var blk [64][wBlock]T
	for i0 := from; i0 < oc; i0 += wBlock {
		nb := min(wBlock, oc-i0)
		for b := range nb {
			g := w[(i0+b)*25:][:25]
			var t [8][5]T // G g: t[k][v]
			for v := range 5 {
				c := g8(g[v], g[5+v], g[10+v], g[15+v], g[20+v])
				for k := range 8 {
					t[k][v] = c[k]
				}
			}
			for k := range 8 {
				r := g8(t[k][0], t[k][1], t[k][2], t[k][3], t[k][4])
				for l := range 8 {
					blk[8*k+l][b] = r[l]
				}
			}
		}
		for x := range blk {
			copy(u[x*oc+i0:][:nb], blk[x][:nb])
		}
	}
}

// wino45WeightsGrad writes dW = Gᵀ dU G for du ([64, cout, cin]) into dw
// ([cout, cin, 5, 5]): the adjoint of wino45Weights, wBlock filters at a
// time.
func wino45WeightsGrad[T float](du []T, cout, cin int, dw, _ []T) {
	wino45WeightsGradFrom(du, cout, cin, dw, 0)
}

// wino45WeightsGradFrom is wino45WeightsGrad for filters [from, cout·cin).
func wino45WeightsGradFrom[T float](du []T, cout, cin int, dw []T, from int) {
	oc := cout * cin
	var blk [64][wBlock]T
	for i0 := from; i0 < oc; i0 += wBlock {
		nb := min(wBlock, oc-i0)
		for x := range blk {
			copy(blk[x][:nb], du[x*oc+i0:][:nb])
		}
		for b := range nb {
			var t [5][8]T // Gᵀ dU: t[u][l]
			for l := range 8 {
				c := gt8(blk[l][b], blk[8+l][b], blk[16+l][b], blk[24+l][b], blk[32+l][b], blk[40+l][b], blk[48+l][b], blk[56+l][b])
				for u := range 5 {
					t[u][l] = c[u]
				}
			}
			g := dw[(i0+b)*25:][:25]
			for u := range 5 {
				r := gt8(t[u][0], t[u][1], t[u][2], t[u][3], t[u][4], t[u][5], t[u][6], t[u][7])
				copy(g[5*u:], r[:])
			}
		}
	}
}

// wino45In writes v[ξ·vs + j] = (Bᵀ d B)_ξ, ξ = 8k+l, of tiles j < n,
// where h[q][a·s + j] is column q of row a of tile j's receptive field.
func wino45In[T float](v []T, vs, n int, h [8][]T, s int) { wino45InFrom(v, vs, n, h, s, 0) }

// wino45InFrom is wino45In for tiles [j0, n).
func wino45InFrom[T float](v []T, vs, n int, h [8][]T, s, j0 int) {
	for j := j0; j < n; j++ {
		var c [8][8]T // c[q]: Bᵀ down column q
		for q := range 8 {
			x := h[q]
			c[q] = bt8(x[j], x[s+j], x[2*s+j], x[3*s+j], x[4*s+j], x[5*s+j], x[6*s+j], x[7*s+j])
		}
		for k := range 8 {
			r := bt8(c[0][k], c[1][k], c[2][k], c[3][k], c[4][k], c[5][k], c[6][k], c[7][k])
			for l := range 8 {
				v[(8*k+l)*vs+j] = r[l]
			}
		}
	}
}

// wino45Out writes y[(4a+b)·n + j] = (Aᵀ M A)[a][b] + bias of tiles j <
// n, for M_ξ = m[ξ·ms + j].
func wino45Out[T float](y []T, n int, m []T, ms int, bias T) { wino45OutFrom(y, n, m, ms, bias, 0) }

// wino45OutFrom is wino45Out for tiles [j0, n).
func wino45OutFrom[T float](y []T, n int, m []T, ms int, bias T, j0 int) {
	for j := j0; j < n; j++ {
		var s [4][8]T // Aᵀ M
		for l := range 8 {
			c := at48(m[l*ms+j], m[(8+l)*ms+j], m[(16+l)*ms+j], m[(24+l)*ms+j], m[(32+l)*ms+j], m[(40+l)*ms+j], m[(48+l)*ms+j], m[(56+l)*ms+j])
			for a := range 4 {
				s[a][l] = c[a]
			}
		}
		for a := range 4 {
			r := at48(s[a][0], s[a][1], s[a][2], s[a][3], s[a][4], s[a][5], s[a][6], s[a][7])
			for b := range 4 {
				y[(4*a+b)*n+j] = r[b] + bias
			}
		}
	}
}

// wino45Dy writes dm[ξ·ms + j] = (A dY Aᵀ)_ξ of tiles j < n, where
// d[(4a+b)·n + j] is the tile's output gradient in row a and column b.
func wino45Dy[T float](dm []T, ms, n int, d []T) { wino45DyFrom(dm, ms, n, d, 0) }

// wino45DyFrom is wino45Dy for tiles [j0, n).
func wino45DyFrom[T float](dm []T, ms, n int, d []T, j0 int) {
	for j := j0; j < n; j++ {
		var c [4][8]T // A down column b: c[b][k]
		for b := range 4 {
			c[b] = a8(d[b*n+j], d[(4+b)*n+j], d[(8+b)*n+j], d[(12+b)*n+j])
		}
		for k := range 8 {
			r := a8(c[0][k], c[1][k], c[2][k], c[3][k])
			for l := range 8 {
				dm[(8*k+l)*ms+j] = r[l]
			}
		}
	}
}

// wino45Dx writes c[(8a+b)·n + j] = (B dV Bᵀ)[a][b] of tiles j < n, for
// dV_ξ = dv[ξ·vs + j].
func wino45Dx[T float](c []T, n int, dv []T, vs int) { wino45DxFrom(c, n, dv, vs, 0) }

// wino45DxFrom is wino45Dx for tiles [j0, n).
func wino45DxFrom[T float](c []T, n int, dv []T, vs, j0 int) {
	for j := j0; j < n; j++ {
		var r [8][8]T // B dV: r[a][l]
		for l := range 8 {
			b := b8(dv[l*vs+j], dv[(8+l)*vs+j], dv[(16+l)*vs+j], dv[(24+l)*vs+j], dv[(32+l)*vs+j], dv[(40+l)*vs+j], dv[(48+l)*vs+j], dv[(56+l)*vs+j])
			for a := range 8 {
				r[a][l] = b[a]
			}
		}
		for a := range 8 {
			b := b8(r[a][0], r[a][1], r[a][2], r[a][3], r[a][4], r[a][5], r[a][6], r[a][7])
			for k := range 8 {
				c[(8*a+k)*n+j] = b[k]
			}
		}
	}
}

// wino45Alg32 is F(4×4, 5×5)'s input transform and its adjoint in float32
// (the α = 8 transforms the F(4×4, ·) drivers take from a winoAlg), and
// wino45Fns32 its output and output-gradient transforms and weight
// transforms; both may be replaced by vector versions with the same bits
// (winograd45_avx2.go).
var (
	wino45Alg32 = wino45AlgGo[float32]()
	wino45Fns32 = wino45Go[float32]()
)

// wino45AlgGo and wino45Go are F(4×4, 5×5)'s portable transforms.
func wino45AlgGo[T float]() winoAlg[T] {
	return winoAlg[T]{a: 8, in: wino45In[T], dx: wino45Dx[T]}
}

func wino45Go[T float]() wino43Fns[T] {
	return wino43Fns[T]{out: wino45Out[T], dy: wino45Dy[T], w: wino45Weights[T], wg: wino45WeightsGrad[T], split4: phaseSplit[T], merge4: phaseMerge[T],
		stagePlane: wino4Stage[T], unstagePlane: wino4Unstage[T], tilesShort: wino4TilesShort[T]}
}

// wino4Alg returns the input transform of g's F(4×4, ·): F(2×2, 5×5)'s
// Bᵀ for F(4×4, 3×3) (α = 6), F(4×4, 5×5)'s for α = 8.
func wino4Alg[T float](g Geom) winoAlg[T] {
	if g.K == 3 {
		return wino5For[T]()
	}
	if a, ok := any(wino45Alg32).(winoAlg[T]); ok {
		return a
	}
	return wino45AlgGo[T]()
}

// wino4Fns returns the output, output-gradient and weight transforms of
// g's F(4×4, ·).
func wino4Fns[T float](g Geom) wino43Fns[T] {
	if g.K == 3 {
		return wino43For[T]()
	}
	if f, ok := any(wino45Fns32).(wino43Fns[T]); ok {
		return f
	}
	return wino45Go[T]()
}
