package conv

import (
	"github.com/flsweep/flsweep/internal/mem"
	"github.com/flsweep/flsweep/internal/packed"
	"github.com/flsweep/flsweep/internal/wino"
)

// Channel-lane im2col: the 3×3 convolutions that do not take Winograd
// (ResNet-18's three of stride 2), with the column matrix laid out
// position-major, colᵀ [positions][cin·9] (rows ClLd(cin·9) apart),
// built from 16-channel vectors (wino.Col33) instead of run by run from
// half-planes: im2col copied ResNet-18's runs of 4 to 16 floats one call
// at a time, 8 ms for a stride-2 convolution's batch, and col2im added
// them back the same way. The products run with their operands exchanged,
//
//	Yᵀ = colᵀ·Wᵀ,  dcolᵀ = dYᵀ·W,  dW = (dYᵀ)ᵀ·colᵀ,
//
// each entry the same multiply-adds in the same order along k on the
// packed gemm's main kernel (CliFits keeps to shapes where im2col's
// products take it too), and wino.Uncol33 adds each input position's
// contributions in col2im's order: the bits of the im2col path (the
// trainer's TestChannelLaneIm2col).

// CliFits reports whether g's convolution takes the channel-lane im2col:
// a 3×3 convolution without Winograd, channels in whole vectors, and at
// least packed.TransMinN output channels and column rows, so that every
// product of both layouts takes the packed gemm's main kernel.
func (g Geom) CliFits() bool {
	return !g.Wino && g.K == 3 && g.Cin%16 == 0 && g.Cout%16 == 0 &&
		g.Cout >= packed.TransMinN && g.KDim() >= packed.TransMinN
}

// cliPlane returns the workspace's buffer for one sample's 16 padded
// input planes as positions (16 floats each), and its row length in
// floats.
func cliPlane(g Geom, ws *mem.Workspace[float32]) (buf []float32, row int) {
	W := g.W + 2*g.P
	return mem.Grow(&ws.Pad, (g.H+2*g.P)*W*16), W * 16
}

// CliCols writes the chunk [n0, n1)'s colᵀ (rows ldc apart).
func CliCols(g Geom, ws *mem.Workspace[float32], x []float32, n0, n1 int, colt []float32, ldc int) {
	buf, brow := cliPlane(g, ws)
	clear(buf) // the zero border; Fill16 overwrites the inside
	hw, ohw := g.H*g.W, g.Ho*g.Wo
	_ = x[n1*g.Cin*hw-1]
	_ = colt[((n1-n0)*ohw-1)*ldc+g.KDim()-1]
	for n := n0; n < n1; n++ {
		for c0 := 0; c0 < g.Cin; c0 += 16 {
			wino.Fill16(&buf[g.P*brow+g.P*16], uintptr(brow*4), &x[(n*g.Cin+c0)*hw], uintptr(hw*4), uintptr(g.W*4), g.W, g.H, 64)
			wino.Col33(&buf[0], uintptr(brow*4), g.Ho, g.Wo, g.S, &colt[(n-n0)*ohw*ldc+c0*9], uintptr(ldc*4))
		}
	}
}

// cliGrads writes the chunk's output gradients dYᵀ ([positions][cout],
// rows ldy apart).
func cliGrads(g Geom, dy []float32, n0, n1 int, dyt []float32, ldy int) {
	ohw := g.Ho * g.Wo
	_ = dy[n1*g.Cout*ohw-1]
	_ = dyt[((n1-n0)*ohw-1)*ldy+g.Cout-1]
	for n := n0; n < n1; n++ {
		for o0 := 0; o0 < g.Cout; o0 += 16 {
			wino.Fill16(&dyt[(n-n0)*ohw*ldy+o0], uintptr(g.Wo*ldy*4), &dy[(n*g.Cout+o0)*ohw], uintptr(ohw*4), uintptr(g.Wo*4), g.Wo, g.Ho, uintptr(ldy*4))
		}
	}
}

// CliInputGrad is the im2col input gradient on the channel-lane path.
func CliInputGrad(g Geom, ws *mem.Workspace[float32], dy, w, dx []float32, batch int) {
	ldc, ldy, ohw, hw := ClLd(g.KDim()), ClLd(g.Cout), g.Ho*g.Wo, g.H*g.W
	buf, brow := cliPlane(g, ws)
	_ = dx[batch*g.Cin*hw-1]
	for n0 := 0; n0 < batch; n0 += g.Chunk() {
		n1 := min(n0+g.Chunk(), batch)
		cols := (n1 - n0) * ohw
		dcolt, dyt := mem.Grow(&ws.Col, cols*ldc), mem.Grow(&ws.Aux, cols*ldy)
		cliGrads(g, dy, n0, n1, dyt, ldy)
		ws.Gemm(false, false, cols, g.KDim(), g.Cout, 1, dyt, ldy, w, g.KDim(), 0, dcolt, ldc)
		for n := n0; n < n1; n++ {
			for c0 := 0; c0 < g.Cin; c0 += 16 {
				clear(buf)
				wino.Uncol33(&dcolt[(n-n0)*ohw*ldc+c0*9], uintptr(ldc*4), g.Ho, g.Wo, g.S, &buf[0], uintptr(brow*4))
				wino.Drain16(&dx[(n*g.Cin+c0)*hw], uintptr(hw*4), uintptr(g.W*4), &buf[g.P*brow+g.P*16], uintptr(brow*4), g.W, g.H, 64)
			}
		}
	}
}

// CliWeightGrad is the im2col weight gradient on the channel-lane path:
// dW = Σ_chunks (dYᵀ)ᵀ·colᵀ, in im2col's chunks.
func CliWeightGrad(g Geom, ws *mem.Workspace[float32], dy, x, dw []float32, batch int) {
	ldc, ldy, ohw := ClLd(g.KDim()), ClLd(g.Cout), g.Ho*g.Wo
	for n0 := 0; n0 < batch; n0 += g.Chunk() {
		n1 := min(n0+g.Chunk(), batch)
		cols := (n1 - n0) * ohw
		colt, dyt := mem.Grow(&ws.Col, cols*ldc), mem.Grow(&ws.Aux, cols*ldy)
		CliCols(g, ws, x, n0, n1, colt, ldc)
		cliGrads(g, dy, n0, n1, dyt, ldy)
		beta := float32(1)
		if n0 == 0 {
			beta = 0
		}
		ws.Gemm(true, false, g.Cout, g.KDim(), cols, 1, dyt, ldy, colt, ldc, beta, dw, g.KDim())
	}
}
