package conv

import (
	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/packed"
	"github.com/flsweep/flsweep/internal/wino"
)

// Channel-lane Winograd: F(4×4, 3×3), F(2×2, 3×3) and F(4×4, 5×5) with
// the transforms' vectors across 16 channels instead of across tiles
// (AVX-512 only, package wino).
//
// The transforms of winograd43.go hold 8 tiles of one channel in a vector,
// which needs the input's rows dealt into phases (column mod 4), the
// output's merged back, and, for rows of fewer than 8 tiles, the tiles
// staged one by one; with Go's vector code that cost ResNet-18's
// convolutions more than their products (its first stage: 10 ms for the
// input transform of a batch, 12 for the output transform, 9.6 for the
// 36 products). Here a vector holds one position of 16 channels: a block
// of 16 planes is transposed once into positions (wino.Fill16), every
// tile's transform is plain vertical arithmetic on whole vectors
// (wino.In43, Out43, Dy43, Dx43; In23… for F(2×2, 3×3), In45… for F(4×4,
// 5×5)), and the results go back by the inverse transpose (wino.Drain16).
//
// The transformed tiles are laid out tile-major: V_ξ as [tiles][cin]
// (rows ldv apart) rather than [cin][tiles], so the products run with
// their operands' roles exchanged,
//
//	Mᵀ_ξ = V_ξᵀ·U_ξᵀ,  dV_ξᵀ = dM_ξᵀ·U_ξ,  dU_ξ = Σ_chunks (dM_ξᵀ)ᵀ·V_ξᵀ,
//
// each entry the same multiply-adds in the same order along k as in
// winograd43.go's products (the packed gemm's main kernel sums along k in
// one order whichever operand is A; clFits keeps to the shapes where both
// layouts' products take that kernel), and each transformed value the same
// expression in the same order as the portable loops. So the bits are
// those of the tile-lane path; the trainer's TestChannelLaneWinograd
// checks it, and trainer.KernelChoice.NoChannelLane (FLSWEEP_WINO_CL=0)
// turns this path off.

// clFits reports whether g's convolution takes the channel-lane path:
// Winograd for 3×3 (F(4×4, ·) or F(2×2, ·)) or F(4×4, 5×5), with channels
// in whole vectors, and at least transMinM
// output and transMinN input channels, so that the tile-lane path's
// weight-gradient products (dM·Vᵀ, C of cout×cin) take the packed gemm's
// main kernel rather than its dot-product kernel, as the channel-lane
// ones always do. trainer.KernelChoice.NoChannelLane, or a CPU without
// AVX-512, keeps every convolution off it (NewGeom).
func (g Geom) clFits() bool {
	return g.Wino && (g.K == 3 || g.K == 5 && g.Wino4) && g.Cin%16 == 0 && g.Cout%16 == 0 &&
		g.Cout >= packed.TransMinM && g.Cin >= packed.TransMinN
}

// clKernels are one algorithm's channel-lane transforms (package wino),
// with the scratch F(4×4, 5×5)'s take (the others ignore it).
type clKernels struct {
	in  func(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, scratch *float32)
	out func(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, scratch *float32)
	dy  func(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, scratch *float32)
	dx  func(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, scratch *float32)
}

var (
	cl43 = clKernels{in: wino.In43, out: wino.Out43, dy: wino.Dy43, dx: wino.Dx43}
	cl23 = clKernels{in: wino.In23, out: wino.Out23, dy: wino.Dy23, dx: wino.Dx23}
	cl45 = clKernels{in: wino.In45, out: wino.Out45, dy: wino.Dy45, dx: wino.Dx45}
)

// clKern returns g's kernels: F(4×4, 3×3)'s, F(2×2, 3×3)'s or F(4×4,
// 5×5)'s.
func (g Geom) clKern() *clKernels {
	switch {
	case g.K == 5:
		return &cl45
	case g.Wino4:
		return &cl43
	}
	return &cl23
}

// clScratch is the workspace's scratch for F(4×4, 5×5)'s first stage (64
// vectors).
func clScratch(ws *mem.Workspace[float32]) *float32 { return &mem.Grow(&ws.CLScratch, 64*16)[0] }

// ClLd is the distance between a tile's rows of c channels in the
// channel-lane layout: c plus 16 floats, so that the 14 rows the AVX-512
// kernel reads in place are never a power of two floats apart (which
// folds them into a few L1 sets).
func ClLd(c int) int { return c + 16 }

// clBuf returns the workspace's position buffer for the padded plane the
// tiles' receptive fields cover: tm·th+α−tm rows of tm·tw+α−tm positions
// (16 floats each).
func clBuf(g Geom, ws *mem.Workspace[float32]) (buf []float32, row int) {
	TW := g.tm()*g.tw() + g.alpha() - g.tm()
	return mem.Grow(&ws.Pad, (g.tm()*g.th()+g.alpha()-g.tm())*TW*16), TW * 16
}

// ClInput writes the chunk [n0, n1)'s transformed inputs in the
// channel-lane layout into vt ([α²][cols][ldv]).
func ClInput(g Geom, ws *mem.Workspace[float32], x []float32, n0, n1 int, vt []float32) {
	th, tw, ldv := g.th(), g.tw(), ClLd(g.Cin)
	cols := (n1 - n0) * g.Tiles()
	xs := cols * ldv
	buf, brow := clBuf(g, ws)
	clear(buf) // the zero border; Fill16 overwrites the inside
	rows := min(g.H, g.tm()*th+g.alpha()-g.tm()-g.P)
	hw := g.H * g.W
	in, sc := g.clKern().in, clScratch(ws)
	_ = vt[(g.Xi()-1)*xs+(cols-1)*ldv+g.Cin-1]
	_ = x[n1*g.Cin*hw-1]
	for n := n0; n < n1; n++ {
		for c0 := 0; c0 < g.Cin; c0 += 16 {
			wino.Fill16(&buf[g.P*brow+g.P*16], uintptr(brow*4), &x[(n*g.Cin+c0)*hw], uintptr(hw*4), uintptr(g.W*4), g.W, rows, 64)
			in(&buf[0], uintptr(brow*4), th, tw, &vt[(n-n0)*g.Tiles()*ldv+c0], uintptr(xs*4), uintptr(ldv*4), sc)
		}
	}
}

// ClOutput writes the chunk's outputs (plus bias) into y from its
// transformed outputs mt ([α²][cols][ldm]).
func ClOutput(g Geom, ws *mem.Workspace[float32], mt []float32, y []float32, n0, n1 int, b []float32) {
	th, tw, ldm := g.th(), g.tw(), ClLd(g.Cout)
	cols := (n1 - n0) * g.Tiles()
	xs := cols * ldm
	orow := g.tm() * tw * 16
	obuf := mem.Grow(&ws.Wino, g.tm()*th*orow)
	hw := g.Ho * g.Wo
	out, sc := g.clKern().out, clScratch(ws)
	_ = y[n1*g.Cout*hw-1]
	for n := n0; n < n1; n++ {
		for o0 := 0; o0 < g.Cout; o0 += 16 {
			bias := &clNoBias[0]
			if b != nil {
				bias = &b[o0:][:16][0]
			}
			out(&mt[(n-n0)*g.Tiles()*ldm+o0], uintptr(xs*4), uintptr(ldm*4), bias, th, tw, &obuf[0], uintptr(orow*4), sc)
			wino.Drain16(&y[(n*g.Cout+o0)*hw], uintptr(hw*4), uintptr(g.Wo*4), &obuf[0], uintptr(orow*4), g.Wo, g.Ho, 64)
		}
	}
}

// clNoBias is the 16 zero biases of a convolution without bias (a
// package variable: a local one would escape through the kernels' function
// values and be allocated at every call).
var clNoBias [16]float32

// clGrad writes the chunk's transformed output gradients dmt
// ([α²][cols][ldm]) for dy.
func clGrad(g Geom, ws *mem.Workspace[float32], dy []float32, n0, n1 int, dmt []float32) {
	th, tw, ldm := g.th(), g.tw(), ClLd(g.Cout)
	cols := (n1 - n0) * g.Tiles()
	xs := cols * ldm
	drow := g.tm() * tw * 16
	dbuf := mem.Grow(&ws.Wino, g.tm()*th*drow)
	clear(dbuf) // zeros past the output; Fill16 overwrites the rest
	hw := g.Ho * g.Wo
	tdy, sc := g.clKern().dy, clScratch(ws)
	_ = dy[n1*g.Cout*hw-1]
	_ = dmt[(g.Xi()-1)*xs+(cols-1)*ldm+g.Cout-1]
	for n := n0; n < n1; n++ {
		for o0 := 0; o0 < g.Cout; o0 += 16 {
			wino.Fill16(&dbuf[0], uintptr(drow*4), &dy[(n*g.Cout+o0)*hw], uintptr(hw*4), uintptr(g.Wo*4), g.Wo, g.Ho, 64)
			tdy(&dbuf[0], uintptr(drow*4), th, tw, &dmt[(n-n0)*g.Tiles()*ldm+o0], uintptr(xs*4), uintptr(ldm*4), sc)
		}
	}
}

// clInputGrad writes the chunk's samples of dx from their transformed
// input gradients dvt ([α²][cols][ldv]).
func clInputGrad(g Geom, ws *mem.Workspace[float32], dvt []float32, dx []float32, n0, n1 int) {
	th, tw, ldv := g.th(), g.tw(), ClLd(g.Cin)
	cols := (n1 - n0) * g.Tiles()
	xs := cols * ldv
	buf, brow := clBuf(g, ws)
	hw := g.H * g.W
	rows := min(g.H, g.tm()*th+g.alpha()-g.tm()-g.P)
	tdx, sc := g.clKern().dx, clScratch(ws)
	_ = dx[n1*g.Cin*hw-1]
	for n := n0; n < n1; n++ {
		for c0 := 0; c0 < g.Cin; c0 += 16 {
			clear(buf)
			tdx(&dvt[(n-n0)*g.Tiles()*ldv+c0], uintptr(xs*4), uintptr(ldv*4), th, tw, &buf[0], uintptr(brow*4), sc)
			wino.Drain16(&dx[(n*g.Cin+c0)*hw], uintptr(hw*4), uintptr(g.W*4), &buf[g.P*brow+g.P*16], uintptr(brow*4), g.W, rows, 64)
		}
	}
}

// ClTransposeWeights writes U_ξᵀ ([α²][cin][cout]) for the forward
// products.
func ClTransposeWeights(g Geom, u, ut []float32) {
	oc := g.Cout * g.Cin
	for xi := range g.Xi() {
		packed.Transpose(ut[xi*oc:][:oc], u[xi*oc:][:oc], g.Cout, g.Cin, g.Cin)
	}
}

// ClBackward is the trainer's winoBackward, winoDx and winoDw on the
// channel-lane path: dx unless it is nil and dW unless it is nil, chunk by
// chunk, with the forward pass's U (u, WinoTransformWeights' output).
func ClBackward(g Geom, ws *mem.Workspace[float32], u, dy, x, dx, dw []float32, batch int) {
	oc := g.Cout * g.Cin
	u = u[:g.Xi()*oc]
	du, scratch := WinoDu(g, ws)
	ldv, ldm := ClLd(g.Cin), ClLd(g.Cout)
	g.WinoChunks(batch, func(n0, n1, cols, _ int) {
		dmt := mem.Grow(&ws.Aux, g.Xi()*cols*ldm)
		clGrad(g, ws, dy, n0, n1, dmt)
		if dx != nil {
			dvt := mem.Grow(&ws.Col, g.Xi()*cols*ldv)
			for xi := range g.Xi() {
				ws.Gemm(false, false, cols, g.Cin, g.Cout, 1, dmt[xi*cols*ldm:], ldm, u[xi*oc:], g.Cin, 0, dvt[xi*cols*ldv:], ldv)
			}
			clInputGrad(g, ws, dvt, dx, n0, n1)
		}
		if dw == nil {
			return
		}
		vt := mem.Grow(&ws.Col, g.Xi()*cols*ldv)
		ClInput(g, ws, x, n0, n1, vt)
		beta := float32(1)
		if n0 == 0 {
			beta = 0
		}
		for xi := range g.Xi() {
			ws.Gemm(true, false, g.Cout, g.Cin, cols, 1, dmt[xi*cols*ldm:], ldm, vt[xi*cols*ldv:], ldv, beta, du[xi*oc:], g.Cin)
		}
	})
	if dw != nil {
		WinoTransformWeightsGrad(g, du, dw, scratch)
	}
}
