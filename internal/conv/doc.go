// Package conv holds the convolution kernels the trainer's convolution op
// (trainer/op_conv.go) computes with: the layout of a chunk of samples for
// its products and the transforms around them, forward and backward. The
// op keeps a training step's state (the transformed weights, the cached
// column matrices or transformed inputs) and drives the chunks' products
// (mem.Workspace.Gemm); a Geom says which algorithm computes a
// convolution, chosen by NewGeom from the trainer's resolved kernel choice
// (Kernels).
//
// Which file holds which algorithm:
//
//   - geom.go: Geom, NewGeom and the chunking of im2col's products.
//   - im2col.go: im2col and col2im, the receptive fields of a chunk as a
//     column matrix for one product (Caffe's scheme, over chunks of
//     samples), with stride 2 through half-planes.
//   - im2col_cl.go: the channel-lane im2col of 3×3 convolutions without
//     Winograd (AVX-512, package wino).
//   - winograd.go: Winograd's F(2×2, 3×3) (Lavin and Gray, CVPR 2016), the
//     tile geometry, the chunks and the drivers of the F(2×2, ·)
//     transforms; winograd5.go: F(2×2, 5×5) in its layout;
//     winograd43.go: F(4×4, 3×3) and the drivers of F(4×4, ·);
//     winograd45.go: F(4×4, 5×5).
//   - winograd_cl.go: the channel-lane Winograd transforms' drivers
//     (AVX-512, package wino).
//   - winograd_avx2.go, winograd5_avx2.go, winograd43_avx2.go,
//     winograd45_avx2.go: AVX2 versions of the transforms (build tag
//     goexperiment.simd on amd64), installed at init where the CPU has
//     AVX2.
//
// Every path computes the bits of the portable loops of its algorithm: the
// vector transforms evaluate the same expressions in the same order, and
// the channel-lane paths run the same multiply-adds in the same order
// along k. Which algorithm runs is part of a model's numerics
// (trainer.KernelChoice.Numerics).
package conv
