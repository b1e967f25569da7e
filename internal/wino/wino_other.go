//go:build !amd64

package wino

var Available = false

func Fill16(dst *float32, drow uintptr, src *float32, plane, srow uintptr, w, rows int, pstride uintptr) {
	panic("wino: no kernels")
}
func Drain16(dst *float32, plane, drow uintptr, src *float32, srow uintptr, w, rows int, pstride uintptr) {
	panic("wino: no kernels")
}
func In43(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Out43(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Dy43(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Dx43(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, _ *float32) {
	panic("wino: no kernels")
}
func In23(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Out23(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Dy23(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Dx23(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, _ *float32) {
	panic("wino: no kernels")
}
func Col33(buf *float32, brow uintptr, ho, wo, s int, colt *float32, ldcol uintptr) {
	panic("wino: no kernels")
}
func Uncol33(colt *float32, ldcol uintptr, ho, wo, s int, buf *float32, brow uintptr) {
	panic("wino: no kernels")
}
func In45(buf *float32, brow uintptr, th, tw int, vt *float32, xs, ldv uintptr, scratch *float32) {
	panic("wino: no kernels")
}
func Out45(mt *float32, xs, ldm uintptr, bias *float32, th, tw int, obuf *float32, orow uintptr, scratch *float32) {
	panic("wino: no kernels")
}
func Dy45(dbuf *float32, drow uintptr, th, tw int, dmt *float32, xs, ldm uintptr, scratch *float32) {
	panic("wino: no kernels")
}
func Dx45(dvt *float32, xs, ldv uintptr, th, tw int, xbuf *float32, xrow uintptr, scratch *float32) {
	panic("wino: no kernels")
}
func CopyRuns(dst, src *float32, sstride uintptr, runs, w int)         { panic("wino: no kernels") }
func AddRuns(dst *float32, dstride uintptr, src *float32, runs, w int) { panic("wino: no kernels") }
func Col2imRows(dx *float32, h, w int, col *float32, ldcol uintptr, k, ho, wo int) {
	panic("wino: no kernels")
}
