package trainer

import (
	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/packed"
	"github.com/flsweep/flsweep/internal/wino"
)

// Channel-lane im2col: the 3×3 convolutions that do not take Winograd
// (ResNet-18's three of stride 2), with the column matrix laid out
// position-major, colᵀ [positions][cin·9] (rows clLd(cin·9) apart),
// built from 16-channel vectors (wino.Col33) instead of run by run from
// half-planes: im2col copied ResNet-18's runs of 4 to 16 floats one call
// at a time, 8 ms for a stride-2 convolution's batch, and col2im added
// them back the same way. The products run with their operands exchanged,
//
//	Yᵀ = colᵀ·Wᵀ,  dcolᵀ = dYᵀ·W,  dW = (dYᵀ)ᵀ·colᵀ,
//
// each entry the same multiply-adds in the same order along k on the
// packed gemm's main kernel (cliFits keeps to shapes where im2col's
// products take it too), and wino.Uncol33 adds each input position's
// contributions in col2im's order: the bits of the im2col path
// (TestChannelLaneIm2col).

// cliFits reports whether g's convolution takes the channel-lane im2col:
// a 3×3 convolution without Winograd, channels in whole vectors, and at
// least packed.TransMinN output channels and column rows, so that every
// product of both layouts takes the packed gemm's main kernel.
func (g convGeom) cliFits() bool {
	return !g.wino && g.k == 3 && g.cin%16 == 0 && g.cout%16 == 0 &&
		g.cout >= packed.TransMinN && g.kdim() >= packed.TransMinN
}

// cliPlane returns the workspace's buffer for one sample's 16 padded
// input planes as positions (16 floats each), and its row length in
// floats.
func cliPlane(g convGeom, ws *mem.Workspace[float32]) (buf []float32, row int) {
	W := g.w + 2*g.p
	return mem.Grow(&ws.Pad, (g.h+2*g.p)*W*16), W * 16
}

// cliCols writes the chunk [n0, n1)'s colᵀ (rows ldc apart).
func cliCols(g convGeom, ws *mem.Workspace[float32], x []float32, n0, n1 int, colt []float32, ldc int) {
	buf, brow := cliPlane(g, ws)
	clear(buf) // the zero border; Fill16 overwrites the inside
	hw, ohw := g.h*g.w, g.ho*g.wo
	_ = x[n1*g.cin*hw-1]
	_ = colt[((n1-n0)*ohw-1)*ldc+g.kdim()-1]
	for n := n0; n < n1; n++ {
		for c0 := 0; c0 < g.cin; c0 += 16 {
			wino.Fill16(&buf[g.p*brow+g.p*16], uintptr(brow*4), &x[(n*g.cin+c0)*hw], uintptr(hw*4), uintptr(g.w*4), g.w, g.h, 64)
			wino.Col33(&buf[0], uintptr(brow*4), g.ho, g.wo, g.s, &colt[(n-n0)*ohw*ldc+c0*9], uintptr(ldc*4))
		}
	}
}

// cliGrads writes the chunk's output gradients dYᵀ ([positions][cout],
// rows ldy apart).
func cliGrads(g convGeom, dy []float32, n0, n1 int, dyt []float32, ldy int) {
	ohw := g.ho * g.wo
	_ = dy[n1*g.cout*ohw-1]
	_ = dyt[((n1-n0)*ohw-1)*ldy+g.cout-1]
	for n := n0; n < n1; n++ {
		for o0 := 0; o0 < g.cout; o0 += 16 {
			wino.Fill16(&dyt[(n-n0)*ohw*ldy+o0], uintptr(g.wo*ldy*4), &dy[(n*g.cout+o0)*ohw], uintptr(ohw*4), uintptr(g.wo*4), g.wo, g.ho, uintptr(ldy*4))
		}
	}
}

// cliForward is the im2col forward pass on the channel-lane path.
func cliForward(op *convOp[float32], x, w, b, y []float32, batch int) {
	g, ws := op.g, op.ws
	ldc, ldy, ohw := clLd(g.kdim()), clLd(g.cout), g.ho*g.wo
	wt := mem.Grow(&ws.DU, g.kdim()*g.cout)
	packed.Transpose(wt, w, g.cout, g.kdim(), g.kdim())
	op.cached = false
	for n0 := 0; n0 < batch; n0 += g.chunk() {
		n1 := min(n0+g.chunk(), batch)
		cols := (n1 - n0) * ohw
		colt, yt := mem.Grow(&ws.Col, cols*ldc), mem.Grow(&ws.Aux, cols*ldy)
		cliCols(g, ws, x, n0, n1, colt, ldc)
		ws.Gemm(false, false, cols, g.cout, g.kdim(), 1, colt, ldc, wt, g.cout, 0, yt, ldy)
		for n := n0; n < n1; n++ {
			for o0 := 0; o0 < g.cout; o0 += 16 {
				wino.Drain16(&y[(n*g.cout+o0)*ohw], uintptr(ohw*4), uintptr(g.wo*4), &yt[(n-n0)*ohw*ldy+o0], uintptr(g.wo*ldy*4), g.wo, g.ho, uintptr(ldy*4))
			}
			for o := 0; b != nil && o < g.cout; o++ {
				p := y[(n*g.cout+o)*ohw:][:ohw]
				addBias(p, p, b[o:o+1])
			}
		}
	}
}

// cliInputGrad is the im2col input gradient on the channel-lane path.
func cliInputGrad(g convGeom, ws *mem.Workspace[float32], dy, w, dx []float32, batch int) {
	ldc, ldy, ohw, hw := clLd(g.kdim()), clLd(g.cout), g.ho*g.wo, g.h*g.w
	buf, brow := cliPlane(g, ws)
	_ = dx[batch*g.cin*hw-1]
	for n0 := 0; n0 < batch; n0 += g.chunk() {
		n1 := min(n0+g.chunk(), batch)
		cols := (n1 - n0) * ohw
		dcolt, dyt := mem.Grow(&ws.Col, cols*ldc), mem.Grow(&ws.Aux, cols*ldy)
		cliGrads(g, dy, n0, n1, dyt, ldy)
		ws.Gemm(false, false, cols, g.kdim(), g.cout, 1, dyt, ldy, w, g.kdim(), 0, dcolt, ldc)
		for n := n0; n < n1; n++ {
			for c0 := 0; c0 < g.cin; c0 += 16 {
				clear(buf)
				wino.Uncol33(&dcolt[(n-n0)*ohw*ldc+c0*9], uintptr(ldc*4), g.ho, g.wo, g.s, &buf[0], uintptr(brow*4))
				wino.Drain16(&dx[(n*g.cin+c0)*hw], uintptr(hw*4), uintptr(g.w*4), &buf[g.p*brow+g.p*16], uintptr(brow*4), g.w, g.h, 64)
			}
		}
	}
}

// cliWeightGrad is the im2col weight gradient on the channel-lane path:
// dW = Σ_chunks (dYᵀ)ᵀ·colᵀ, in im2col's chunks.
func cliWeightGrad(g convGeom, ws *mem.Workspace[float32], dy, x, dw []float32, batch int) {
	ldc, ldy, ohw := clLd(g.kdim()), clLd(g.cout), g.ho*g.wo
	for n0 := 0; n0 < batch; n0 += g.chunk() {
		n1 := min(n0+g.chunk(), batch)
		cols := (n1 - n0) * ohw
		colt, dyt := mem.Grow(&ws.Col, cols*ldc), mem.Grow(&ws.Aux, cols*ldy)
		cliCols(g, ws, x, n0, n1, colt, ldc)
		cliGrads(g, dy, n0, n1, dyt, ldy)
		beta := float32(1)
		if n0 == 0 {
			beta = 0
		}
		ws.Gemm(true, false, g.cout, g.kdim(), cols, 1, dyt, ldy, colt, ldc, beta, dw, g.kdim())
	}
}
