package conv

// Winograd's F(2×2, 5×5) for the 5×5 stride-1 convolutions: the same
// scheme as F(2×2, 3×3) (winograd.go) with 6×6 transformed tiles, from the
// Toom–Cook points 0, ±1, ±2 and ∞ (the points of F(4×4, 3×3), whose input
// transform Bᵀ this shares; Lavin and Gray 2016, §4):
//
//	Bᵀ = [4 0 −5 0 1 0; 0 4 4 −1 −1 0; 0 −4 4 1 −1 0;
//	      0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1]
//	G  = [¼ 0 0 0 0; ⅙ ⅙ ⅙ ⅙ ⅙; ⅙ −⅙ ⅙ −⅙ ⅙;
//	      1/24 1/12 ⅙ ⅓ ⅔; 1/24 −1/12 ⅙ −⅓ ⅔; 0 0 0 0 1]
//	Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 1]
//
// (Bᵀ is the transposed inverse of the points' Vandermonde matrix, its
// rows scaled to integers and G's by the inverse scales.) Each output takes
// 36 products per 4 outputs, against im2col's 25 per output: 2.78 times
// fewer multiply-adds. The coefficients are no longer powers of two, so
// the transforms round more than F(2×2, 3×3)'s (the trainer's
// TestWinogradConv bounds the error in float32).
//
// A tile's receptive field is 6 rows of the padded input's even and odd
// half-rows at tiles j, j+1 and j+2: the six half-columns h[q] below are
// E, O, E₁, O₁, E₂, O₂ (half q mod 2, shifted by q/2).

// wino5Alg32 is F(2×2, 5×5) in float32: vector transforms where the CPU
// has them (winograd5_avx2.go), which give the portable loops' bits.
var wino5Alg32 = wino5Go[float32]()

// wino5For is F(2×2, 5×5) in T: wino5Alg32 for float32.
func wino5For[T float]() winoAlg[T] {
	if a, ok := any(wino5Alg32).(winoAlg[T]); ok {
		return a
	}
	return wino5Go[T]()
}

func wino5Go[T float]() winoAlg[T] {
	return winoAlg[T]{a: 6, in: wino5In[T], out: wino5Out[T], dy: wino5Dy[T], dx: wino5Dx[T]}
}

// bt6 is Bᵀ applied to six values down a column or across a row.
func bt6[T float](d0, d1, d2, d3, d4, d5 T) [6]T {
	return [6]T{
		4*d0 - 5*d2 + d4,
		4*(d1+d2) - (d3 + d4),
		4*(d2-d1) + (d3 - d4),
		2*(d3-d1) + (d4 - d2),
		2*(d1-d3) + (d4 - d2),
		4*d1 - 5*d3 + d5,
	}
}

// b6 is B, the adjoint of bt6.
func b6[T float](v0, v1, v2, v3, v4, v5 T) [6]T {
	return [6]T{
		4 * v0,
		4*(v1-v2+v5) + 2*(v4-v3),
		4*(v1+v2) - 5*v0 - (v3 + v4),
		(v2 - v1) + 2*(v3-v4) - 5*v5,
		v0 - (v1 + v2) + (v3 + v4),
		v5,
	}
}

// at6 is Aᵀ: a tile's two outputs from six transformed values.
func at6[T float](m0, m1, m2, m3, m4, m5 T) [2]T {
	return [2]T{m0 + m1 + m2 + m3 + m4, (m1 - m2) + 2*(m3-m4) + m5}
}

// a6 is A, the adjoint of at6.
func a6[T float](y0, y1 T) [6]T {
	return [6]T{y0, y0 + y1, y0 - y1, y0 + 2*y1, y0 - 2*y1, y1}
}

// g5 is G applied to five filter taps.
func g5[T float](g0, g1, g2, g3, g4 T) [6]T {
	se, so := g0+g2+g4, g1+g3
	te, to := g0+4*g2+16*g4, 2*g1+8*g3
	return [6]T{g0 / 4, (se + so) / 6, (se - so) / 6, (te + to) / 24, (te - to) / 24, g4}
}

// gt5 is Gᵀ, the adjoint of g5.
func gt5[T float](d0, d1, d2, d3, d4, d5 T) [5]T {
	p, q := (d1+d2)/6, (d1-d2)/6
	r, t := (d3+d4)/24, (d3-d4)/24
	return [5]T{d0/4 + p + r, q + 2*t, p + 4*r, q + 8*t, p + 16*r + d5}
}

// wino5Weights writes U_ξ = (G g Gᵀ)_ξ, ξ = 6k+l, for w ([cout, cin, 5,
// 5]) into u ([36, cout, cin]), wBlock filters at a time (see wBlock).
func wino5Weights[T float](w []T, cout, cin int, u []T) {
	oc := cout * cin
	var blk [36][wBlock]T
	for i0 := 0; i0 < oc; i0 += wBlock {
		nb := min(wBlock, oc-i0)
		for b := range nb {
			g := w[(i0+b)*25:][:25]
			var t [6][5]T // G g: t[k][v]
			for v := range 5 {
				c := g5(g[v], g[5+v], g[10+v], g[15+v], g[20+v])
				for k := range 6 {
					t[k][v] = c[k]
				}
			}
			for k := range 6 {
				r := g5(t[k][0], t[k][1], t[k][2], t[k][3], t[k][4])
				for l := range 6 {
					blk[6*k+l][b] = r[l]
				}
			}
		}
		for x := range blk {
			copy(u[x*oc+i0:][:nb], blk[x][:nb])
		}
	}
}

// wino5WeightsGrad writes dW = Gᵀ dU G for du ([36, cout, cin]) into dw
// ([cout, cin, 5, 5]): the adjoint of wino5Weights, wBlock filters at a
// time.
func wino5WeightsGrad[T float](du []T, cout, cin int, dw []T) {
	oc := cout * cin
	var blk [36][wBlock]T
	for i0 := 0; i0 < oc; i0 += wBlock {
		nb := min(wBlock, oc-i0)
		for x := range blk {
			copy(blk[x][:nb], du[x*oc+i0:][:nb])
		}
		for b := range nb {
			var t [5][6]T // Gᵀ dU: t[u][l]
			for l := range 6 {
				c := gt5(blk[l][b], blk[6+l][b], blk[12+l][b], blk[18+l][b], blk[24+l][b], blk[30+l][b])
				for u := range 5 {
					t[u][l] = c[u]
				}
			}
			g := dw[(i0+b)*25:][:25]
			for u := range 5 {
				r := gt5(t[u][0], t[u][1], t[u][2], t[u][3], t[u][4], t[u][5])
				copy(g[5*u:], r[:])
			}
		}
	}
}

// wino5In writes v[ξ·vs + j] = (Bᵀ d B)_ξ, ξ = 6k+l, of tiles j < n, where
// h[q][a·s + j] is column q of row a of tile j's receptive field.
func wino5In[T float](v []T, vs, n int, h [8][]T, s int) { wino5InFrom(v, vs, n, h, s, 0) }

// wino5InFrom is wino5In for tiles [j0, n).
func wino5InFrom[T float](v []T, vs, n int, h [8][]T, s, j0 int) {
	for j := j0; j < n; j++ {
		var c [6][6]T // c[q]: Bᵀ down column q
		for q := range 6 {
			x := h[q]
			c[q] = bt6(x[j], x[s+j], x[2*s+j], x[3*s+j], x[4*s+j], x[5*s+j])
		}
		for k := range 6 {
			r := bt6(c[0][k], c[1][k], c[2][k], c[3][k], c[4][k], c[5][k])
			for l := range 6 {
				v[(6*k+l)*vs+j] = r[l]
			}
		}
	}
}

// wino5Out writes y[(2a+b)·n + j] = (Aᵀ M A)[a][b] + bias of tiles j < n,
// for M_ξ = m[ξ·ms + j].
func wino5Out[T float](y []T, n int, m []T, ms int, bias T) { wino5OutFrom(y, n, m, ms, bias, 0) }

// wino5OutFrom is wino5Out for tiles [j0, n).
func wino5OutFrom[T float](y []T, n int, m []T, ms int, bias T, j0 int) {
	for j := j0; j < n; j++ {
		var s [2][6]T // Aᵀ M
		for l := range 6 {
			c := at6(m[l*ms+j], m[(6+l)*ms+j], m[(12+l)*ms+j], m[(18+l)*ms+j], m[(24+l)*ms+j], m[(30+l)*ms+j])
			s[0][l], s[1][l] = c[0], c[1]
		}
		for a := range 2 {
			r := at6(s[a][0], s[a][1], s[a][2], s[a][3], s[a][4], s[a][5])
			y[(2*a)*n+j] = r[0] + bias
			y[(2*a+1)*n+j] = r[1] + bias
		}
	}
}

// wino5Dy writes dm[ξ·ms + j] = (A dY Aᵀ)_ξ of tiles j < n, where e[a·n +
// j] and o[a·n + j] are the tile's output gradients in row a and columns 0
// and 1.
func wino5Dy[T float](dm []T, ms, n int, e, o []T) { wino5DyFrom(dm, ms, n, e, o, 0) }

// wino5DyFrom is wino5Dy for tiles [j0, n).
func wino5DyFrom[T float](dm []T, ms, n int, e, o []T, j0 int) {
	for j := j0; j < n; j++ {
		re, ro := a6(e[j], e[n+j]), a6(o[j], o[n+j])
		for k := range 6 {
			r := a6(re[k], ro[k])
			for l := range 6 {
				dm[(6*k+l)*ms+j] = r[l]
			}
		}
	}
}

// wino5Dx writes c[(6a+b)·n + j] = (B dV Bᵀ)[a][b] of tiles j < n, for
// dV_ξ = dv[ξ·vs + j].
func wino5Dx[T float](c []T, n int, dv []T, vs int) { wino5DxFrom(c, n, dv, vs, 0) }

// wino5DxFrom is wino5Dx for tiles [j0, n).
func wino5DxFrom[T float](c []T, n int, dv []T, vs, j0 int) {
	for j := j0; j < n; j++ {
		var r [6][6]T // B dV: r[a][l]
		for l := range 6 {
			b := b6(dv[l*vs+j], dv[(6+l)*vs+j], dv[(12+l)*vs+j], dv[(18+l)*vs+j], dv[(24+l)*vs+j], dv[(30+l)*vs+j])
			for a := range 6 {
				r[a][l] = b[a]
			}
		}
		for a := range 6 {
			b := b6(r[a][0], r[a][1], r[a][2], r[a][3], r[a][4], r[a][5])
			for k := range 6 {
				c[(6*a+k)*n+j] = b[k]
			}
		}
	}
}
