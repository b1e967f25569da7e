package conv

import "github.com/flsweep/flsweep/internal/mem"

// Geom is a 2-D convolution with stride s and zero padding p, PyTorch's
// nn.Conv2d(cin, cout, k, stride=s, padding=p, bias=...), and the kernels
// that compute it:
//
//	y[n, o, i, j] = b[o] + Σ_{c, u, v} W[o, c, u, v] · x[n, c, i·s+u−p, j·s+v−p]
//
// (x is 0 outside the image; b is 0 without bias). It is computed as in
// Caffe, but over chunks of samples: im2col lays the receptive fields of a
// chunk out as a [cin·k·k, chunk·ho·wo] matrix, and one gemm with W viewed
// as [cout, cin·k·k] gives the chunk's outputs. Chunks hold enough samples
// for about gemmCols columns (Chunk; small products run far below the
// BLAS's peak: one sample of the second HiCS convolution has only 8·8 = 64
// columns) while the column matrix stays below maxColFloats, in the
// graph's shared workspace.
type Geom struct {
	Cin, Cout int
	K, S, P   int
	H, W      int  // input
	Ho, Wo    int  // output
	Wino      bool // computed by F(2×2, 3×3) or F(2×2, 5×5) (winograd.go)
	Wino4     bool // by F(4×4, ·) instead of F(2×2, ·) (winograd43.go, winograd45.go)
	CL        bool // on the channel-lane path (winograd_cl.go)
	CLI       bool // on the channel-lane im2col path (im2col_cl.go)
}

// Kernels is the part of the trainer's kernel choice
// (trainer.KernelChoice), resolved against this CPU and build, that
// decides which kernels compute a convolution.
type Kernels struct {
	Winograd bool // 3×3 and 5×5 stride-1 convolutions by Winograd where they fit
	F43      bool // the Winograd 3×3 ones by F(4×4, 3×3) where wide enough
	F45      bool // the Winograd 5×5 ones by F(4×4, 5×5) where they fit
	CL       bool // the channel-lane paths where they fit
}

const (
	gemmCols     = 1024    // the gemm columns a chunk aims for
	maxColFloats = 1 << 21 // largest column matrix (8 MiB of float32)
)

// NewGeom returns the geometry of a convolution of cin input and cout
// output channels with a k×k kernel, stride s and padding p, from h×w
// input planes to ho×wo output planes, and the kernels that compute it
// under kern.
func NewGeom(cin, cout, k, s, p, h, w, ho, wo int, kern Kernels) Geom {
	g := Geom{Cin: cin, Cout: cout, K: k, S: s, P: p, H: h, W: w, Ho: ho, Wo: wo}
	g.Wino = kern.Winograd && g.winogradFits()
	g.Wino4 = g.Wino && (g.K == 3 && kern.F43 && g.wino4Fits() || g.K == 5 && kern.F45 && g.wino45Fits())
	g.CL = kern.CL && g.clFits()
	g.CLI = kern.CL && g.CliFits()
	return g
}

// InSize is the floats of one sample's input, cin·h·w.
func (g Geom) InSize() int { return g.Cin * g.H * g.W }

// OutSize is the floats of one sample's output, cout·ho·wo.
func (g Geom) OutSize() int { return g.Cout * g.Ho * g.Wo }

// KDim is the rows of a column matrix, cin·k·k.
func (g Geom) KDim() int { return g.Cin * g.K * g.K }

// HW is the output positions of one sample, ho·wo.
func (g Geom) HW() int { return g.Ho * g.Wo }

// Chunk is the number of samples whose columns form one chunk's gemm: the
// most whose columns fit in gemmCols when that is two or more, else the
// fewest that reach it. The CIFAR CNN's second convolution (100 columns a
// sample) trained 7–10% faster in chunks of 10 samples (1,000 columns) than
// of 11 (1,100; three in-process comparisons, two Trainers each); larger
// planes keep chunks of at least gemmCols columns, which nothing measured
// beyond noise either way.
func (g Geom) Chunk() int {
	c := gemmCols / g.HW()
	if c < 2 {
		c = (gemmCols + g.HW() - 1) / g.HW()
	}
	return max(1, min(c, maxColFloats/(g.KDim()*g.HW())))
}

// ColLd is the distance between the rows of a chunk's column matrix (or
// transformed tiles) of cols columns: cols rounded up to a multiple of 16
// floats, 16 more where that is a multiple of 32. Rows then start on a
// 64-byte cache line, so that the kernels' rows of 16 floats of B are one
// line each: the CIFAR CNN's second convolution (275 columns, rows 1,100
// bytes apart) read every row across two lines, and its steps ran 14–20%
// slower on one thread (6% with two clients) than with rows 304 floats
// apart. The packed gemm reads B in place unless its rows are a multiple
// of 32 floats apart (package packed, packMinM), and ResNet-18's im2col
// chunks are 1,024 columns wide, its F(4×4, 3×3) chunks 256 (wino4Cols)
// or its whole batch. The padding is never read, and the products' sums
// do not depend on it: the same bits.
func ColLd(cols int) int {
	ld := (cols + 15) &^ 15
	if ld%32 == 0 {
		ld += 16
	}
	return ld
}

// float is the element type the kernels compute in (mem.Float): float32
// in production, float64 in the trainer's finite-difference tests.
type float = mem.Float
