package partition

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// Noise is NIID-Bench's noise-based feature skew (Li, Diao, Chen, He, ICDE
// 2022, §III-B; utils.py AddGaussianNoise in "level" mode; specs/fnrfl.md
// §2): client k of n sees every input value x of its data as
//
//	x' = x + σ_k·ε,   σ_k = Sigma·k/(n-1),   ε ~ N(0, 1) per value
//
// so client 0 is clean and client n-1 gets Sigma (n = 10, Sigma = 0.5:
// σ_1 = 0.0556, ..., σ_9 = 0.5). Values are not clipped, as in NIID-Bench.
// It applies to a client's train samples and to its local test set; the
// global test split stays clean (FNR-FL's code scores on the clean test set;
// NIID-Bench instead scores on the concatenation of the n clients' noisy
// copies of the test split).
//
// Deviation from NIID-Bench, by design: there the noise is a data-loader
// transform, drawn anew every time a sample is loaded (every epoch). Here ε
// is a pure function of (Seed, split, client, sample index): each sample's
// values come from a ChaCha8 stream keyed by
//
//	SHA-256("flsweep/partition/noise/v1" | seed | split | client | index)
//
// (integers as 8-byte little-endian, split as its name), so a sample looks
// the same in every round, on every worker, and after a resume. A client's
// noisy copy can therefore be rebuilt whenever it is needed instead of being
// stored. The zero Noise, or Sigma = 0, adds nothing.
//
// Normalised inputs: NIID-Bench adds the noise to ToTensor's output, pixels
// in [0, 1] (utils.py get_dataloader: Compose([ToTensor(),
// AddGaussianNoise(...)]) for mnist, fmnist, svhn and cifar10; its datasets
// that are normalised, cifar100 and tinyimagenet, get no noise), so σ is in
// units of the [0, 1] pixel range. To keep that meaning on data normalised
// per channel, x_n = (x − m_c)/s_c, the noise goes in before the
// normalisation, as a pipeline Compose([ToTensor(), AddGaussianNoise,
// Normalize]) would add it:
//
//	(x + σ_k·ε − m_c)/s_c = x_n + (σ_k/s_c)·ε
//
// Our data are normalised once, when loaded, so Copy adds the right-hand
// side: ChannelScale holds 1/s_c per channel (dataset.Norm.InvStd). The draws
// ε are the same as without normalisation; only their scale differs.
type Noise struct {
	Sigma   float64 // σ: the standard deviation of client n-1's noise, in [0, 1] pixel units
	Clients int     // n
	Seed    uint64  // the point's seed, shared by all points of the seed
	// ChannelScale multiplies σ_k per channel: 1/s_c for data normalised as
	// (x − m_c)/s_c, nil (all 1) for data in [0, 1]. A sample's dim values
	// are len(ChannelScale) equal planes in CHW order.
	ChannelScale []float64
}

// Validate reports a Sigma that is negative or not finite, and a
// ChannelScale entry that is not finite and positive.
func (z Noise) Validate() error {
	if math.IsNaN(z.Sigma) || math.IsInf(z.Sigma, 0) || z.Sigma < 0 {
		return fmt.Errorf("partition: noise = %g; use a finite standard deviation >= 0 (FNR-FL uses 0.1 and 0.5): %w", z.Sigma, ErrInvalid)
	}
	for c, v := range z.ChannelScale {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("partition: noise channel scale [%d] = %g; it must be finite and > 0 (1/std of the normalisation): %w", c, v, ErrInvalid)
		}
	}
	return nil
}

// Std returns σ_k = Sigma·k/(n-1) for client k. With one client (where
// NIID-Bench divides by zero) it returns 0: client 0 is always clean.
func (z Noise) Std(k int) float64 {
	if z.Clients <= 1 || z.Sigma == 0 {
		return 0
	}
	return z.Sigma * float64(k) / float64(z.Clients-1)
}

// Active reports whether any client gets noise.
func (z Noise) Active() bool { return z.Std(z.Clients-1) > 0 }

// Copy returns client k's noisy copy of the samples idx of a split: row p
// (dim values) is sample idx[p] of x plus σ_k·ε (times ChannelScale[c] in
// channel c), ε drawn from the sample's stream in row order. split names the
// split x belongs to (its noise differs from the other split's). The result
// has len(idx)·dim values; x is not modified. Copy panics if an index is out
// of range or dim is not a multiple of len(ChannelScale).
func (z Noise) Copy(x []float32, dim int, idx []int, split Source, client int) []float32 {
	out := make([]float32, len(idx)*dim)
	std := z.Std(client)
	channels := max(1, len(z.ChannelScale))
	if dim%channels != 0 {
		panic(fmt.Sprintf("partition: noise over %d values per sample in %d channels", dim, channels))
	}
	plane := dim / channels
	stds := make([]float64, channels) // σ_k per channel
	for c := range stds {
		stds[c] = std
		if len(z.ChannelScale) > 0 {
			stds[c] = std * z.ChannelScale[c]
		}
	}
	src := rand.NewChaCha8([32]byte{})
	r := rand.New(src)
	for p, i := range idx {
		row, dst := x[i*dim:(i+1)*dim], out[p*dim:(p+1)*dim]
		if std == 0 {
			copy(dst, row)
			continue
		}
		src.Seed(z.key(split, client, i))
		for j, v := range row {
			dst[j] = float32(float64(v) + stds[j/plane]*r.NormFloat64())
		}
	}
	return out
}

// key is the seed of sample index's stream for client k.
func (z Noise) key(split Source, client, index int) [32]byte {
	var b [16]byte
	h := sha256.New()
	h.Write([]byte("flsweep/partition/noise/v1"))
	binary.LittleEndian.PutUint64(b[0:8], z.Seed)
	binary.LittleEndian.PutUint64(b[8:16], uint64(len(split)))
	h.Write(b[:16])
	h.Write([]byte(split))
	binary.LittleEndian.PutUint64(b[0:8], uint64(int64(client)))
	binary.LittleEndian.PutUint64(b[8:16], uint64(int64(index)))
	h.Write(b[:16])
	var s [32]byte
	h.Sum(s[:0])
	return s
}
