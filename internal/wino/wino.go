// Package wino holds the trainer's channel-lane Winograd kernels, in
// AVX-512 assembly: a vector holds one value of 16 channels, so a tile's
// transform is vertical arithmetic, and the planes go in and out of that
// layout by 16×16 transposes. It lives in its own package because a
// package using cgo (the trainer's OpenBLAS build) cannot hold assembly.
package wino
