package wino

import "golang.org/x/sys/cpu"

// Available reports whether the CPU runs the kernels (AVX-512 F).
var Available = cpu.X86.HasAVX512F

// Fill16 transposes rows rows of w floats of 16 planes (plane bytes apart,
// rows srow bytes apart, from src) into dst: position x of row y goes to
// dst + y·drow + x·pstride as 16 floats, one per plane.
//
//go:noescape
func Fill16(dst *float32, drow uintptr, src *float32, plane, srow uintptr, w, rows int, pstride uintptr)

// Drain16 is Fill16 backwards: position x of row y at src + y·srow +
// x·pstride goes to 16 planes' rows (plane bytes apart, rows drow apart,
// from dst).
//
//go:noescape
func Drain16(dst *float32, plane, drow uintptr, src *float32, srow uintptr, w, rows int, pstride uintptr)

// The transforms take a scratch pointer last, as F(4×4, 5×5)'s do, so
// that one function type holds any algorithm's (package conv's clKernels);
// F(4×4, 3×3)'s and F(2×2, 3×3)'s need none and ignore it.

// In43 is F(4×4, 3×3)'s input transform Bᵀ d B on th×tw tiles of 16
// channels: tile (ti, tj)'s receptive field starts at buf + 4ti·brow +
// 4tj·64 (positions 64 bytes apart, rows brow apart), and its value ξ goes
// to vt + ξ·xs + (ti·tw+tj)·ldv.
//
//go:noescape
func In43(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, _ *float32)

// Out43 is F(4×4, 3×3)'s output transform Aᵀ M A + bias on th×tw tiles of
// 16 channels: tile t = ti·tw+tj's value ξ at mt + ξ·xs + t·ldm, its 4×4
// outputs to obuf + (4ti+a)·orow + (4tj+b)·64; bias holds the channels'
// 16 biases.
//
//go:noescape
func Out43(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, _ *float32)

// Dy43 is F(4×4, 3×3)'s output-gradient transform A dY Aᵀ: tile (ti, tj)'s
// 4×4 gradients at dbuf + (4ti+a)·drow + (4tj+b)·64, its value ξ to dmt +
// ξ·xs + (ti·tw+tj)·ldm.
//
//go:noescape
func Dy43(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, _ *float32)

// Dx43 adds F(4×4, 3×3)'s input-gradient transform B dV Bᵀ of th×tw tiles
// (value ξ of tile t at dvt + ξ·xs + t·ldv) into the 6×6 receptive fields
// at xbuf + 4ti·xrow + 4tj·64, the rows of tiles in order and each row's
// tiles from last to first.
//
//go:noescape
func Dx43(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, _ *float32)

// In23, Out23, Dy23 and Dx23 are In43, Out43, Dy43 and Dx43 for F(2×2,
// 3×3): 4×4 receptive fields 2 positions apart, 2×2 outputs, 16 values ξ.
//
//go:noescape
func In23(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, _ *float32)

//go:noescape
func Out23(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, _ *float32)

//go:noescape
func Dy23(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, _ *float32)

//go:noescape
func Dx23(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, _ *float32)

// Col33 writes the 3×3 receptive fields of a convolution of stride s over
// 16 channels (a padded plane at buf, positions 64 bytes apart, rows brow
// apart) as rows of im2col's transpose: output position p = i·wo+j gets
// channel c's 9 values x[c][s·i+u][s·j+v], in the order of u then v, at
// colt + p·ldcol + 36c.
//
//go:noescape
func Col33(buf *float32, brow uintptr, ho, wo, s int, colt *float32, ldcol uintptr)

// Uncol33 is Col33's adjoint: it adds the output positions' values back
// into their receptive fields in buf, from the last position to the first,
// so that every position of buf receives its additions in the order of
// (u, v), as col2im adds them.
//
//go:noescape
func Uncol33(colt *float32, ldcol uintptr, ho, wo, s int, buf *float32, brow uintptr)

// In45 is F(4×4, 5×5)'s input transform Bᵀ d B on th×tw tiles of 16
// channels, as In43 (receptive fields of 8×8 positions, 4 apart; 64
// values ξ), with scratch (64 vectors) for the first stage.
//
//go:noescape
func In45(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, scratch *float32)

// Out45, Dy45 and Dx45 are Out43, Dy43 and Dx43 for F(4×4, 5×5), with
// scratch (64 vectors) for the first stage.
//
//go:noescape
func Out45(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, scratch *float32)

//go:noescape
func Dy45(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, scratch *float32)

//go:noescape
func Dx45(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, scratch *float32)

// CopyRuns copies runs runs of w floats, sstride bytes apart from src, one
// after another to dst (im2col's rows without padding).
//
//go:noescape
func CopyRuns(dst, src *float32, sstride uintptr, runs, w int)

// AddRuns adds runs runs of w floats, one after another from src, into
// dst's runs dstride bytes apart (col2im's rows without padding), one
// addition per element.
//
//go:noescape
func AddRuns(dst *float32, dstride uintptr, src *float32, runs, w int)

// Col2imRows writes one channel's plane of dx (h×w, w ≤ 16) from its k²
// rows of a column matrix (row (u, v) at col + (u·k+v)·ldcol bytes,
// output row i at + 4·i·wo) of a stride-1 convolution without padding,
// each row of dx summed in a register: every entry sees col2im's additions
// in col2im's order, from +0.
//
//go:noescape
func Col2imRows(dx *float32, h, w int, col *float32, ldcol uintptr, k, ho, wo int)
