package conv

import "github.com/flsweep/flsweep/internal/mem"

// Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", CVPR 2016,
// arXiv:1509.09308) for the 3×3 stride-1 convolutions: each 2×2 block of
// outputs (a tile) of output channel o is
//
//	Y = Aᵀ [ Σ_c (G g_{o,c} Gᵀ) ⊙ (Bᵀ d_c B) ] A
//
// where d_c is the tile's 4×4 receptive field in input channel c and
//
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]
//
// The sum over c at each of the 16 positions ξ of the transformed tile is a
// product M_ξ = U_ξ·V_ξ of the transformed weights U_ξ [cout, cin] and the
// transformed inputs V_ξ [cin, tiles]: 16 products of 4 multiply-adds per
// output and input channel and output, where im2col's one product has 9.
// The backward pass runs in the same domain: with dM = A dY Aᵀ per tile,
//
//	dV_ξ = U_ξᵀ·dM_ξ,  dx = Σ_tiles B dV Bᵀ (overlapping tiles add),
//	dU_ξ = Σ_chunks dM_ξ·V_ξᵀ,  dW = Gᵀ dU G.
//
// The algorithm is exact in real arithmetic; in floating point it rounds
// differently from the direct sum, which is why it is a numerics of its
// own (trainer.KernelChoice.Numerics, "+im2col" when it is off). Its
// transforms' coefficients are 0, ±1 and ±½, so the extra rounding is a
// few ulps of the inputs' magnitude (the trainer's TestWinogradConv
// bounds it).
//
// The transforms work on the even and odd columns of the rows involved
// (their "E" and "O" halves), so that every input of tile j's transform
// is at index j or j+1 of a half-row, and a run of tiles transforms as
// vectors (winograd_avx2.go): a row of tiles of the input, or, for the
// other transforms and for rows shorter than a vector (ResNet-18's 8×8
// and 4×4 stages), all of a channel's tiles in the chunk, laid end to end.
// Each output element is computed by the same expression, in the same
// order, in the portable loops and the vector ones, so both give the same
// bits.
//
// The 5×5 stride-1 convolutions run by F(2×2, 5×5) (winograd5.go) in the
// same layout: 6×6 receptive fields, 36 products, and the drivers below
// take α = k+1 from the geometry (winoAlg). F(4×4, 3×3), for the wide 3×3
// ones, and F(4×4, 5×5) (winograd45.go), for the 5×5 ones with outputs of
// at least 8×8, have tiles of 4×4 outputs and drivers of their own
// (winograd43.go), which these hand over to.

// The 3×3 and 5×5 stride-1 convolutions with at least winoMinCin input
// channels take F(2×2, 3×3) and F(2×2, 5×5), unless
// trainer.KernelChoice.Im2col (FLSWEEP_CONV=im2col) keeps im2col for every
// convolution, the numerics of earlier builds.

// winoMinCin is the fewest input channels a convolution needs for
// Winograd: its products have depth cin, and the transforms cost per input
// channel what the products save per output channel. ResNet-18's stem (3
// channels) trained no faster by Winograd (24.2 and 24.7 samples/s
// against 24.4, BenchmarkTrainResNet18), so it keeps im2col's one product
// of depth 27.
const winoMinCin = 16

// winogradFits reports whether convolutions of geometry g use Winograd
// unless trainer.KernelChoice.Im2col is set.
func (g Geom) winogradFits() bool {
	return (g.K == 3 || g.K == 5) && g.S == 1 && g.Cin >= winoMinCin
}

// Tile geometry: th×tw tiles cover the ho×wo outputs (the last row or
// column of tiles may reach past them); their α×α receptive fields,
// α = tm+k−1, cover the input zero-padded by p on the top and left, to
// tm·th+α−tm rows and tm·tw+α−tm columns.
func (g Geom) th() int    { return (g.Ho + g.tm() - 1) / g.tm() }
func (g Geom) tw() int    { return (g.Wo + g.tm() - 1) / g.tm() }
func (g Geom) alpha() int { return g.tm() + g.K - 1 }

// Tiles is the number of tiles of one sample's output plane, th·tw.
func (g Geom) Tiles() int { return g.th() * g.tw() }

// tm is the side of a tile of outputs: 4 for F(4×4, 3×3) and F(4×4,
// 5×5), else 2.
func (g Geom) tm() int {
	if g.Wino4 {
		return 4
	}
	return 2
}

// Xi is the number of positions ξ of a transformed tile, α², and so of
// products per chunk.
func (g Geom) Xi() int { return g.alpha() * g.alpha() }

// MaxWinoFloats bounds a chunk's transformed inputs or outputs
// (16·channels·tiles); a variable so that tests can make chunks small.
var MaxWinoFloats = 1 << 21

// WinoChunk is the number of samples whose tiles form one chunk of the α²
// products: enough for winoCols() columns, within MaxWinoFloats.
func (g Geom) WinoChunk() int {
	t := g.Tiles()
	c := (g.winoCols() + t - 1) / t
	return max(1, min(c, MaxWinoFloats/(g.Xi()*max(g.Cin, g.Cout)*t)))
}

// winoCols is the number of columns (tiles) a chunk aims for: wino4Cols
// for F(4×4, ·). F(2×2, ·) aims for 192, or four per channel
// where there are more than 48 channels, so that each product reads its
// transformed weights (cout·cin) for at least 4·max(cin, cout) columns:
// a chunk is transformed, multiplied α² times and transformed back, and
// shorter chunks leave more of each pass's planes in cache for the next.
// The CIFAR CNN's second convolution (25 tiles a sample) went from chunks
// of 36 samples (900 columns, MaxWinoFloats's cap) to 8 (200): the best
// of 80 interleaved training calls 12% faster (775 against 866 samples/s,
// and 784 against 868 in a second run; medians 620 against 692 and 487
// against 534 with this VM's drift); the HiCS CNN's best 2% (2,632
// against 2,697). ResNet-18's first stage, the one geometry of F(4×4, 3×3)
// the rule would change (to 3 or 4 samples from 14), was no faster (best
// of 12: 22.2 against 21.4), and its stages under F(2×2, 3×3) keep their
// chunks (the cap binds).
func (g Geom) winoCols() int {
	if g.Wino4 {
		if LongWino4Chunks {
			return gemmCols
		}
		return wino4Cols
	}
	return max(192, 4*max(g.Cin, g.Cout))
}

// wino4Cols is the number of columns a chunk of F(4×4, ·) aims for. It
// was im2col's gemmCols (1,024) until measured on an Intel Xeon with
// AVX-512 and 2 MB of L2 a core, where shorter chunks keep a chunk's
// transformed tiles (α²·channels·columns floats: 7.4 MB for the CIFAR
// CNN's second convolution in one chunk of 50 samples, 4.2 MB in 29) near
// the core between the transforms and the products. make bench-ab
// AB=';longWino4Chunks=1', interleaved calls, speed of 256 against 1,024:
// CIFAR CNN 1.14 with one client and with two, ResNet-18 1.04 and 1.07.
// In a first run, CIFAR CNN (two clients) and ResNet-18 (one): 128 gave
// 1.24 and 1.06, 256 1.17 and 1.07, 384 1.07 and 1.04, 512 1.04 and 1.02.
// The HiCS CNN's chunks (its whole batch of 50, 200 columns) stay as
// they were; the three-convolution CNN's first layer goes from chunks of
// 21 samples to 6.
//
// On the AMD Zen 3 of earlier measurements the CIFAR convolution ran the
// other way (9.5–9.7 ms forward and 14.6–14.8 backward in one chunk of 50
// samples, 10.0–10.4 and 15.6–15.9 in chunks of 29, which 256 gives, 10.9
// and 16.4 in chunks of 15), and ResNet-18's first stage in chunks of 3
// or 4 samples was no faster than in 14. 256 is the compromise: one
// constant for every CPU, so that they all compute the same bits (the
// weight gradients sum their chunks in turn, so chunks decide the bits).
const wino4Cols = 256

// LongWino4Chunks makes F(4×4, ·) aim for gemmCols columns a chunk, as
// before wino4Cols: a switch for timing the two (make bench-ab). The
// weight gradients' bits differ.
var LongWino4Chunks = false

// WinoChunks calls f for each chunk [n0, n1) of a batch, with the chunk's
// columns (tiles) and the distance between the rows of its transformed
// matrices.
func (g Geom) WinoChunks(batch int, f func(n0, n1, cols, ld int)) {
	for n0 := 0; n0 < batch; n0 += g.WinoChunk() {
		n1 := min(n0+g.WinoChunk(), batch)
		cols := (n1 - n0) * g.Tiles()
		f(n0, n1, cols, ColLd(cols))
	}
}

// wBlock is how many filters the F(2×2, ·) weight transforms take at a
// time: each transformed filter's α² entries go to α² planes cout·cin
// floats apart, which for the CIFAR CNN's second convolution (16 KB
// apart) all fall in one L1 set, so that storing them filter by filter
// missed L1 on every store (1.85 ms a step for 4,096 filters). A block's
// entries gather in a small array on the stack and go out as runs of
// wBlock floats; the gradients' transforms read theirs the same way. The
// arithmetic is the same, entry by entry.
const wBlock = 64

// winoWeights writes U_ξ = (G g Gᵀ)_ξ for w ([cout, cin, 3, 3]) into u
// ([16, cout, cin]), wBlock filters at a time.
func winoWeights[T float](w []T, cout, cin int, u []T) { winoWeightsFrom(w, cout, cin, u, 0) }

// winoWeightsFrom is winoWeights for filters [f0, cout·cin).
func winoWeightsFrom[T float](w []T, cout, cin int, u []T, f0 int) {
	oc := cout * cin
	var blk [16][wBlock]T
	for i0 := f0; i0 < oc; i0 += wBlock {
		nb := min(wBlock, oc-i0)
		for b := range nb {
			g := w[(i0+b)*9:][:9]
			var t [4][3]T // G g: rows of G times g's columns
			for v := range 3 {
				g0, g1, g2 := g[v], g[3+v], g[6+v]
				h := (g0 + g2) * 0.5
				t[0][v], t[1][v], t[2][v], t[3][v] = g0, h+g1*0.5, h-g1*0.5, g2
			}
			for k := range 4 {
				g0, g1, g2 := t[k][0], t[k][1], t[k][2]
				h := (g0 + g2) * 0.5
				blk[4*k+0][b] = g0
				blk[4*k+1][b] = h + g1*0.5
				blk[4*k+2][b] = h - g1*0.5
				blk[4*k+3][b] = g2
			}
		}
		for x := range blk {
			copy(u[x*oc+i0:][:nb], blk[x][:nb])
		}
	}
}

// winoWeightsGrad writes dW = Gᵀ dU G for du ([16, cout, cin]) into dw
// ([cout, cin, 3, 3]): the adjoint of winoWeights, wBlock filters at a
// time.
func winoWeightsGrad[T float](du []T, cout, cin int, dw []T) {
	winoWeightsGradFrom(du, cout, cin, dw, 0)
}

// winoWeightsGradFrom is winoWeightsGrad for filters [f0, cout·cin).
func winoWeightsGradFrom[T float](du []T, cout, cin int, dw []T, f0 int) {
	oc := cout * cin
	var blk [16][wBlock]T
	for i0 := f0; i0 < oc; i0 += wBlock {
		nb := min(wBlock, oc-i0)
		for x := range blk {
			copy(blk[x][:nb], du[x*oc+i0:][:nb])
		}
		for b := range nb {
			var t [3][4]T // Gᵀ dU: rows 0..2 over dU's columns l
			for l := range 4 {
				d0, d1, d2, d3 := blk[0+l][b], blk[4+l][b], blk[8+l][b], blk[12+l][b]
				s, m := (d1+d2)*0.5, (d1-d2)*0.5
				t[0][l], t[1][l], t[2][l] = d0+s, m, s+d3
			}
			g := dw[(i0+b)*9:][:9]
			for u := range 3 {
				d0, d1, d2, d3 := t[u][0], t[u][1], t[u][2], t[u][3]
				s, m := (d1+d2)*0.5, (d1-d2)*0.5
				g[3*u], g[3*u+1], g[3*u+2] = d0+s, m, s+d3
			}
		}
	}
}

// winoRows are the transforms of runs of n tiles, on flat slices with
// strides; winoRows32 may be replaced by vector versions that give the
// same bits (winograd_avx2.go).
type winoRows[T float] struct {
	// in: v[ξ·vs + j] = (Bᵀ d B)_ξ, ξ = 4k+l, of tile j < n, where
	// e[a·s + j] and o[a·s + j] are the even and odd columns 2j and 2j+1
	// of the tile's padded input row a, and e1[a·s + j], o1[a·s + j]
	// columns 2j+2 and 2j+3 (e1 = e[1:] and o1 = o[1:] in a row of tiles).
	in func(v []T, vs, n int, e, o, e1, o1 []T, s int)
	// out: y[(2a+b)·n + j] = (Aᵀ M A)[a][b] + bias of tile j < n, for
	// M_ξ = m[ξ·ms + j].
	out func(y []T, n int, m []T, ms int, bias T)
	// dy: dm[ξ·ms + j] = (A dY Aᵀ)_ξ of tile j < n, where e[a·n + j] and
	// o[a·n + j] are the tile's output gradients in row a and columns 0
	// and 1 (zero past the output).
	dy func(dm []T, ms, n int, e, o []T)
	// dx: c[(4a+b)·n + j] = (B dV Bᵀ)[a][b] of tile j < n, for
	// dV_ξ = dv[ξ·vs + j].
	dx func(c []T, n int, dv []T, vs int)
	// add: dst[j] += src[j] for the entries of src.
	add func(dst, src []T)
	// split: ev[i] = src[2i], od[i] = src[2i+1] for the entries of src.
	split func(ev, od, src []T)
	// merge: split's inverse, dst[2i] = ev[i], dst[2i+1] = od[i] for the
	// entries of dst.
	merge func(dst, ev, od []T)
}

var winoRows32 = winoRowsGo[float32]()

func winoRowsGo[T float]() winoRows[T] {
	return winoRows[T]{in: winoInGo[T], out: winoOutGo[T], dy: winoDyGo[T], dx: winoDxGo[T], add: addGo[T], split: splitGo[T], merge: mergeGo[T]}
}

func winoRowsFor[T float]() winoRows[T] {
	if r, ok := any(winoRows32).(winoRows[T]); ok {
		return r
	}
	return winoRowsGo[T]()
}

func splitGo[T float](ev, od, src []T) {
	i := 0
	for ; 2*i+1 < len(src); i++ {
		ev[i], od[i] = src[2*i], src[2*i+1]
	}
	if 2*i < len(src) {
		ev[i] = src[2*i]
	}
}

func mergeGo[T float](dst, ev, od []T) {
	i := 0
	for ; 2*i+1 < len(dst); i++ {
		dst[2*i], dst[2*i+1] = ev[i], od[i]
	}
	if 2*i < len(dst) {
		dst[2*i] = ev[i]
	}
}

// padSplit returns where the even and odd input columns of a padded row
// go: input column x is padded column x+p, so with p even the input's even
// columns are the row's even ones, from p/2 on, and with p odd its odd
// ones, from (p−1)/2 on.
func padSplit[T float](re, ro []T, p int) (ev, od []T) {
	if p%2 == 0 {
		return re[p/2:], ro[p/2:]
	}
	return ro[(p-1)/2:], re[(p+1)/2:]
}

// winoCol is Bᵀ applied down one column of four rows.
func winoCol[T float](d0, d1, d2, d3 T) [4]T {
	return [4]T{d0 - d2, d1 + d2, d2 - d1, d1 - d3}
}

func winoInGo[T float](v []T, vs, n int, e, o, e1, o1 []T, s int) {
	winoInFrom(v, vs, n, e, o, e1, o1, s, 0)
}

// winoInFrom is winoInGo for tiles [j0, n).
func winoInFrom[T float](v []T, vs, n int, e, o, e1, o1 []T, s, j0 int) {
	col := func(x []T, j int) [4]T { return winoCol(x[j], x[s+j], x[2*s+j], x[3*s+j]) }
	for j := j0; j < n; j++ {
		a, b, c, d := col(e, j), col(o, j), col(e1, j), col(o1, j)
		for k := range 4 {
			v[(4*k)*vs+j] = a[k] - c[k]
			v[(4*k+1)*vs+j] = b[k] + c[k]
			v[(4*k+2)*vs+j] = c[k] - b[k]
			v[(4*k+3)*vs+j] = b[k] - d[k]
		}
	}
}

func winoOutGo[T float](y []T, n int, m []T, ms int, bias T) { winoOutFrom(y, n, m, ms, bias, 0) }

// winoOutFrom is winoOutGo for tiles [j0, n).
func winoOutFrom[T float](y []T, n int, m []T, ms int, bias T, j0 int) {
	for j := j0; j < n; j++ {
		var s [2][4]T // Aᵀ M
		for l := range 4 {
			m0, m1, m2, m3 := m[l*ms+j], m[(4+l)*ms+j], m[(8+l)*ms+j], m[(12+l)*ms+j]
			s[0][l], s[1][l] = m0+m1+m2, m1-m2-m3
		}
		for a := range 2 {
			y[(2*a)*n+j] = s[a][0] + s[a][1] + s[a][2] + bias
			y[(2*a+1)*n+j] = s[a][1] - s[a][2] - s[a][3] + bias
		}
	}
}

func winoDyGo[T float](dm []T, ms, n int, e, o []T) { winoDyFrom(dm, ms, n, e, o, 0) }

// winoDyFrom is winoDyGo for tiles [j0, n).
func winoDyFrom[T float](dm []T, ms, n int, e, o []T, j0 int) {
	for j := j0; j < n; j++ {
		e0, e1, o0, o1 := e[j], e[n+j], o[j], o[n+j]
		// A dY: rows e0, e0+e1, e0−e1, −e1 of the tile's two columns.
		re := [4]T{e0, e0 + e1, e0 - e1, 0 - e1}
		ro := [4]T{o0, o0 + o1, o0 - o1, 0 - o1}
		for k := range 4 {
			dm[(4*k)*ms+j] = re[k]
			dm[(4*k+1)*ms+j] = re[k] + ro[k]
			dm[(4*k+2)*ms+j] = re[k] - ro[k]
			dm[(4*k+3)*ms+j] = 0 - ro[k]
		}
	}
}

// winoBCol is B applied down one column of four: (d0, d1−d2+d3, d1+d2−d0,
// −d3).
func winoBCol[T float](d0, d1, d2, d3 T) [4]T {
	return [4]T{d0, d1 - d2 + d3, d1 + d2 - d0, 0 - d3}
}

func winoDxGo[T float](c []T, n int, dv []T, vs int) { winoDxFrom(c, n, dv, vs, 0) }

// winoDxFrom is winoDxGo for tiles [j0, n).
func winoDxFrom[T float](c []T, n int, dv []T, vs, j0 int) {
	for j := j0; j < n; j++ {
		var r [4][4]T // B dV: r[a][l]
		for l := range 4 {
			b := winoBCol(dv[l*vs+j], dv[(4+l)*vs+j], dv[(8+l)*vs+j], dv[(12+l)*vs+j])
			r[0][l], r[1][l], r[2][l], r[3][l] = b[0], b[1], b[2], b[3]
		}
		for a := range 4 {
			b := winoBCol(r[a][0], r[a][1], r[a][2], r[a][3])
			for k := range 4 {
				c[(4*a+k)*n+j] = b[k]
			}
		}
	}
}

func addGo[T float](dst, src []T) {
	dst = dst[:len(src)]
	for j, s := range src {
		dst[j] += s
	}
}

// winoAlg is a geometry's algorithm: F(2×2, 3×3) or F(2×2, 5×5)
// (winograd5.go), as the transforms of runs of tiles.
type winoAlg[T float] struct {
	a int // α = k+1 (tiles of 2×2 outputs): a tile's receptive field is α×α, its transform α² values
	// in: v[ξ·vs + j] = (Bᵀ d B)_ξ, ξ = α·k+l, of tile j < n, where
	// h[q][a·s + j] is column q of row a of tile j's receptive field: the
	// padded row's even (q even) or odd half-row from tile j + q/2.
	in  func(v []T, vs, n int, h [8][]T, s int)
	out func(y []T, n int, m []T, ms int, bias T)
	dy  func(dm []T, ms, n int, e, o []T)
	dx  func(c []T, n int, dv []T, vs int)
}

func winoAlgFor[T float](g Geom) winoAlg[T] {
	if g.K == 5 {
		return wino5For[T]()
	}
	if a, ok := any(wino3Alg32).(winoAlg[T]); ok {
		return a
	}
	return wino3Go[T]()
}

// wino3Alg32 is F(2×2, 3×3) in float32, made once: a generic function's
// value made in a generic function allocates (it carries its dictionary),
// and the training steps allocate nothing.
var wino3Alg32 = wino3Go[float32]()

// wino3Go is F(2×2, 3×3) through winoRowsFor, so with the vector
// transforms once they are installed.
func wino3Go[T float]() winoAlg[T] {
	return winoAlg[T]{a: 4, in: wino3In[T], out: wino3Out[T], dy: wino3Dy[T], dx: wino3Dx[T]}
}

func wino3In[T float](v []T, vs, n int, h [8][]T, s int) {
	winoRowsFor[T]().in(v, vs, n, h[0], h[1], h[2], h[3], s)
}
func wino3Out[T float](y []T, n int, m []T, ms int, bias T) { winoRowsFor[T]().out(y, n, m, ms, bias) }
func wino3Dy[T float](dm []T, ms, n int, e, o []T)          { winoRowsFor[T]().dy(dm, ms, n, e, o) }
func wino3Dx[T float](c []T, n int, dv []T, vs int)         { winoRowsFor[T]().dx(c, n, dv, vs) }

// WinoScratch is the scratch WinoTransformWeights and
// WinoTransformWeightsGrad take: 9·cout·cin floats for F(4×4, 3×3)'s
// vector transforms (filters laid out tap-major), else none (F(4×4,
// 5×5)'s lay out a block of filters at a time on the stack).
func (g Geom) WinoScratch() int {
	if g.Wino4 && g.K == 3 {
		return 9 * g.Cout * g.Cin
	}
	return 0
}

// WinoTransformWeights writes g's transformed weights U ([α², cout, cin])
// for w, with tmp (9·cout·cin floats) as scratch for F(4×4, 3×3).
func WinoTransformWeights[T mem.Float](g Geom, w, u, tmp []T) {
	if g.Wino4 {
		wino4Fns[T](g).w(w, g.Cout, g.Cin, u, tmp)
		return
	}
	if g.K == 5 {
		wino5Weights(w, g.Cout, g.Cin, u)
		return
	}
	if f, ok := any(wino23W32.w).(func([]T, int, int, []T)); ok {
		f(w, g.Cout, g.Cin, u)
		return
	}
	winoWeights(w, g.Cout, g.Cin, u)
}

// WinoTransformWeightsGrad writes dW for dU: WinoTransformWeights' adjoint.
func WinoTransformWeightsGrad[T mem.Float](g Geom, du, dw, tmp []T) {
	if g.Wino4 {
		wino4Fns[T](g).wg(du, g.Cout, g.Cin, dw, tmp)
		return
	}
	if g.K == 5 {
		wino5WeightsGrad(du, g.Cout, g.Cin, dw)
		return
	}
	if f, ok := any(wino23W32.wg).(func([]T, int, int, []T)); ok {
		f(du, g.Cout, g.Cin, dw)
		return
	}
	winoWeightsGrad(du, g.Cout, g.Cin, dw)
}

// WinoDu returns the workspace's dU ([α², cout, cin]) and the scratch
// WinoTransformWeightsGrad takes after it.
func WinoDu[T mem.Float](g Geom, ws *mem.Workspace[T]) (du, scratch []T) {
	oc := g.Xi() * g.Cout * g.Cin
	dut := mem.Grow(&ws.DU, oc+g.WinoScratch())
	return dut[:oc], dut[oc:]
}

// wino23W32 are F(2×2, 3×3)'s weight transforms in float32: winoWeights
// and winoWeightsGrad, or vector versions with their bits
// (winograd_avx2.go).
var wino23W32 = struct {
	w, wg func([]float32, int, int, []float32)
}{winoWeights[float32], winoWeightsGrad[float32]}

// winoPlanes holds a plane's scratch: the even and odd columns of a
// zero-padded plane, 2·th+α−2 rows of tw+α/2−1, and 8 floats more that
// WinoInput's block copies of short rows may read past the last row.
func winoPlanes[T float](g Geom, ws *mem.Workspace[T]) (e, o []T, stride int) {
	stride = g.tw() + g.alpha()/2 - 1
	rows := 2*g.th() + g.alpha() - 2
	n := rows*stride + 8
	buf := mem.Grow(&ws.Pad, 2*n)
	return buf[:n], buf[n:], stride
}

// winoShort reports whether g's rows of tiles are shorter than a vector:
// their transforms then run on copies of the chunk's rows of tiles laid
// end to end, one run per channel.
func (g Geom) winoShort() bool { return g.tw() < 8 }

// winoHalves returns the α half-columns of the tiles whose receptive fields
// start at row 0 of the half-planes e and o: E, O, E₁, O₁, ….
func winoHalves[T float](a int, e, o []T) [8][]T {
	var h [8][]T
	for q := range a {
		if q%2 == 0 {
			h[q] = e[q/2:]
		} else {
			h[q] = o[q/2:]
		}
	}
	return h
}

// WinoInput writes the transformed tiles of samples [n0, n1) of x ([B,
// cin, h, w]) into v ([α², cin, ld]): tile (ti, j) of sample n is column
// (n−n0)·tiles + ti·tw + j.
func WinoInput[T mem.Float](g Geom, ws *mem.Workspace[T], x []T, n0, n1 int, v []T, ld int) {
	if g.Wino4 {
		winoInput4(g, ws, x, n0, n1, v, ld)
		return
	}
	rows, alg := winoRowsFor[T](), winoAlgFor[T](g)
	a := alg.a
	th, tw, tiles := g.th(), g.tw(), g.Tiles()
	L := (n1 - n0) * tiles
	pe, po, s := winoPlanes(g, ws)
	// Short rows: α runs (E, O, E₁, O₁, …) of α rows of L, Ls apart. Each
	// row of tiles is copied as 8 floats, which the next one (or the
	// row's 8 floats of padding) overwrites: one block move where a
	// loop or copy's call cost twice as much for the CIFAR CNN's rows of
	// 5 tiles.
	var st []T
	Ls := L + 8
	stage := stageFor[T]()
	if g.winoShort() {
		st = mem.Grow(&ws.Wino, a*a*Ls)
	}
	for c := range g.Cin {
		for n := n0; n < n1; n++ {
			plane := x[(n*g.Cin+c)*g.H*g.W:][:g.H*g.W]
			clear(pe)
			clear(po)
			for y := range g.H {
				ev, od := padSplit(pe[(y+g.P)*s:][:s], po[(y+g.P)*s:][:s], g.P)
				rows.split(ev, od, plane[y*g.W:][:g.W])
			}
			t0 := (n - n0) * tiles
			for ti := range th {
				h := winoHalves(a, pe[2*ti*s:], po[2*ti*s:])
				if st == nil {
					alg.in(v[c*ld+t0+ti*tw:], g.Cin*ld, tw, h, s)
					continue
				}
				stage(st, Ls, t0+ti*tw, h, s, a)
			}
		}
		if st != nil {
			var h [8][]T
			for q := range a {
				h[q] = st[q*a*Ls:]
			}
			alg.in(v[c*ld:], g.Cin*ld, L, h, Ls)
		}
	}
}

// stage copies a row of tiles' receptive fields, from the α half-columns h
// of rows s apart, to the staging rows of short rows at column t: half q's
// row r to st[(q·α + r)·ls + t:], as blocks of 8 floats.
func stage[T float](st []T, ls, t int, h [8][]T, s, a int) {
	for r := range a {
		for q := range a {
			copy(st[(q*a+r)*ls+t:][:8], h[q][r*s:][:8])
		}
	}
}

// stage32 is stage for float32, replaced by vector moves where the CPU
// has them (winograd_avx2.go): copy's call costs as much as the copied
// floats' transforms, and so does a move of [8]float32 (a call to
// memmove as well).
var stage32 = stage[float32]

// unstage adds a short row of tiles' transformed-back input gradients at
// column t of cb ([α², L]) into the half-planes: for r < α and q < α in
// that order, cb's run (α·r+q)·L + t of tw floats into half q (pe for q
// even, po for q odd) from row0 + r·s + q/2. The same adds as the long
// rows' (rows.add), without a call per run.
func unstage[T float](pe, po []T, s, row0 int, cb []T, L, t, tw, a int) {
	for r := range a {
		row := row0 + r*s
		for q := range a {
			half := pe
			if q%2 == 1 {
				half = po
			}
			dst, src := half[row+q/2:][:tw], cb[(a*r+q)*L+t:][:tw]
			for j, x := range src {
				dst[j] += x
			}
		}
	}
}

// unstage32 is unstage for float32, replaced by vector adds where the CPU
// has them (winograd_avx2.go).
var unstage32 = unstage[float32]

func unstageFor[T float]() func(pe, po []T, s, row0 int, cb []T, L, t, tw, a int) {
	if f, ok := any(unstage32).(func([]T, []T, int, int, []T, int, int, int, int)); ok {
		return f
	}
	return unstage[T]
}

func stageFor[T float]() func(st []T, ls, t int, h [8][]T, s, a int) {
	if f, ok := any(stage32).(func([]T, int, int, [8][]T, int, int)); ok {
		return f
	}
	return stage[T]
}

// WinoOutput writes samples [n0, n1) of y ([B, cout, ho, wo]) from the
// chunk's transformed outputs m ([α², cout, ld]) and the bias b (nil for
// none).
func WinoOutput[T mem.Float](g Geom, ws *mem.Workspace[T], m []T, ld int, y []T, n0, n1 int, b []T) {
	if g.Wino4 {
		winoOutput4(g, ws, m, ld, y, n0, n1, b)
		return
	}
	rows, alg := winoRowsFor[T](), winoAlgFor[T](g)
	th, tw, tiles := g.th(), g.tw(), g.Tiles()
	L := (n1 - n0) * tiles
	out := mem.Grow(&ws.Wino, 4*L)
	for o := range g.Cout {
		var bias T
		if b != nil {
			bias = b[o]
		}
		alg.out(out, L, m[o*ld:], g.Cout*ld, bias)
		for n := n0; n < n1; n++ {
			plane := y[(n*g.Cout+o)*g.HW():][:g.HW()]
			for ti := range th {
				t := (n-n0)*tiles + ti*tw
				for a := range 2 {
					i := 2*ti + a
					if i >= g.Ho {
						break
					}
					rows.merge(plane[i*g.Wo:][:g.Wo], out[2*a*L+t:][:tw], out[(2*a+1)*L+t:][:tw])
				}
			}
		}
	}
}

// WinoGrad writes the transformed output gradients of samples [n0, n1) of
// dy ([B, cout, ho, wo]) into dm ([α², cout, ld]).
func WinoGrad[T mem.Float](g Geom, ws *mem.Workspace[T], dy []T, n0, n1 int, dm []T, ld int) {
	if g.Wino4 {
		winoGrad4(g, ws, dy, n0, n1, dm, ld)
		return
	}
	rows, alg := winoRowsFor[T](), winoAlgFor[T](g)
	th, tw, tiles := g.th(), g.tw(), g.Tiles()
	L := (n1 - n0) * tiles
	buf := mem.Grow(&ws.Wino, 4*L)
	e, o := buf[:2*L], buf[2*L:]
	for oc := range g.Cout {
		if g.Ho%2 == 1 || g.Wo%2 == 1 {
			clear(buf) // the gradient is zero past the output
		}
		for n := n0; n < n1; n++ {
			plane := dy[(n*g.Cout+oc)*g.HW():][:g.HW()]
			for ti := range th {
				t := (n-n0)*tiles + ti*tw
				for a := range 2 {
					if i := 2*ti + a; i < g.Ho {
						rows.split(e[a*L+t:][:tw], o[a*L+t:][:tw], plane[i*g.Wo:][:g.Wo])
					}
				}
			}
		}
		alg.dy(dm[oc*ld:], g.Cout*ld, L, e, o)
	}
}

// WinoInputGrad writes samples [n0, n1) of dx ([B, cin, h, w]) from the
// chunk's transformed input gradients dv ([α², cin, ld]): the adjoint of
// WinoInput. Each row of tiles adds, row by row of its receptive fields,
// its tiles' columns 0 and 1 into the padded plane's even and odd columns
// at j, then their columns 2 and 3 at j+1, and so on; the rows of tiles
// add in order.
func WinoInputGrad[T mem.Float](g Geom, ws *mem.Workspace[T], dv []T, ld int, dx []T, n0, n1 int) {
	if g.Wino4 {
		winoInputGrad4(g, ws, dv, ld, dx, n0, n1)
		return
	}
	rows, alg := winoRowsFor[T](), winoAlgFor[T](g)
	a := alg.a
	th, tw, tiles := g.th(), g.tw(), g.Tiles()
	L := (n1 - n0) * tiles
	pe, po, s := winoPlanes(g, ws)
	cb := mem.Grow(&ws.Wino, a*a*L+8) // 8 more for unstage's vector loads
	short := g.winoShort()
	unst := unstageFor[T]()
	for c := range g.Cin {
		alg.dx(cb, L, dv[c*ld:], g.Cin*ld)
		for n := n0; n < n1; n++ {
			clear(pe)
			clear(po)
			for ti := range th {
				t := (n-n0)*tiles + ti*tw
				if short {
					unst(pe, po, s, 2*ti*s, cb, L, t, tw, a)
					continue
				}
				for r := range a {
					row := (2*ti + r) * s
					for q := range a {
						half := pe
						if q%2 == 1 {
							half = po
						}
						rows.add(half[row+q/2:][:tw], cb[(a*r+q)*L+t:][:tw])
					}
				}
			}
			plane := dx[(n*g.Cin+c)*g.H*g.W:][:g.H*g.W]
			for y := range g.H {
				ev, od := padSplit(pe[(y+g.P)*s:][:s], po[(y+g.P)*s:][:s], g.P)
				rows.merge(plane[y*g.W:][:g.W], ev, od)
			}
		}
	}
}
