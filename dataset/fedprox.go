package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
)

// FedProxOptions configures FedProxSynthetic. The zero value except Users is FedProx's
// Synthetic(0, 0).
type FedProxOptions struct {
	Alpha float64 // α: how much the clients' models differ (std of their means); >= 0
	Beta  float64 // β: how much the clients' inputs differ (std of their means); >= 0
	Users int     // number of clients; 0 means 30, FedProx's NUM_USER
	IID   bool    // FedProx's synthetic_iid: one shared model, inputs centred at 0; α and β unused
	Seed  uint64  // selects the draws
	// Samples, when set, gives every client that many samples instead of
	// FedProx's int(lognormal(4, 2)) + 50 (ours, for cross-device sizes:
	// 100,000 users of FedProx's sizes hold about 45 million samples).
	Samples int
}

// Limits of FedProxSynthetic.
const (
	// FedProxDefaultUsers is FedProx's NUM_USER.
	FedProxDefaultUsers = 30
	fedProxDim          = 60
	fedProxClasses      = 10
	fedProxMaxUsers     = 100000
	// FedProxMinSamples gives a client of fixed size a train and a test sample.
	FedProxMinSamples = 2
)

func (o FedProxOptions) withDefaults() FedProxOptions {
	if o.Users == 0 {
		o.Users = FedProxDefaultUsers
	}
	return o
}

// Validate reports options FedProxSynthetic rejects.
func (o FedProxOptions) Validate() error {
	o = o.withDefaults()
	for _, f := range []struct {
		name string
		v    float64
	}{{"alpha", o.Alpha}, {"beta", o.Beta}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("fedprox-synthetic: %s = %v; want a finite value >= 0 (FedProx uses 0, 0.5 and 1): %w", f.name, f.v, ErrInvalid)
		}
	}
	if o.Users < 1 || o.Users > fedProxMaxUsers {
		return fmt.Errorf("fedprox-synthetic: users = %d; want 1 to %d: %w", o.Users, fedProxMaxUsers, ErrInvalid)
	}
	if o.Samples != 0 && (o.Samples < FedProxMinSamples || o.Samples > FedProxMaxSamples(o.Users)) {
		return fmt.Errorf("fedprox-synthetic: samples = %d; want 0 (FedProx's lognormal sizes) or %d to %d for %d users: %w",
			o.Samples, FedProxMinSamples, FedProxMaxSamples(o.Users), o.Users, ErrInvalid)
	}
	return nil
}

// FedProxMaxSamples is the most samples a client of FedProxSynthetic may be given (Samples) when
// there are users clients: the data's bound on values, shared out.
func FedProxMaxSamples(users int) int {
	return syntheticMaxValues / fedProxDim / max(users, 1)
}

// NaturalSplit is a dataset's own division into clients: Train[k] and Test[k] index client k's
// samples in the dataset's Train and Test splits.
type NaturalSplit struct {
	Train, Test [][]int
}

// FedProxSynthetic generates Synthetic(α, β) of FedProx (Li, Sahu, Zaheer, Sanjabi, Talwalkar,
// Smith, MLSys 2020, §5.1; code: litian96/FedProx data/synthetic_*/generate_synthetic.py), named
// "fedprox-synthetic": 60 features, 10 classes, and every client k draws its own model and
// inputs,
//
//	n_k   = int(lognormal(4, 2)) + 50                     samples (or Samples, ours)
//	u_k ~ N(0, α),  W_k ~ N(u_k, 1)^{60×10},  b_k ~ N(u_k, 1)^10
//	B_k ~ N(0, β),  v_k ~ N(B_k, 1)^60
//	x ~ N(v_k, Σ),  Σ = diag(j^-1.2), j = 1..60
//	y = argmax(softmax(W_kᵀ x + b_k))
//
// (the IID variant, generate_iid.py: v_k = 0 and one W, b ~ N(0, 1) for all clients). Each
// client's samples are shuffled and its first int(0.9·n_k) become its train samples, the rest
// its test samples, as in the code. The dataset's Train split holds all clients' train samples,
// client by client, and Test their test samples; Natural records which are whose, and is the
// partition a spec selects with partition.scheme: natural. Shape is {1, 1, 60}; values are not
// in [0, 1] (they are Gaussian features, not pixels).
//
// The draws follow the code's order (sizes; u; B; v; then per client W, b and its samples) from
// a ChaCha8 stream keyed by SHA-256("flsweep/fedprox-synthetic/<Seed>"). Normal variates are the
// package's exact Irwin–Hall approximation (approxNormal: mean 0, variance 1, tails cut at ±6),
// not numpy's, so the data match FedProx's in distribution, not value by value. Only the
// lognormal sizes go through math.Exp. Digest is the SHA-256 of the options and the data.
func FedProxSynthetic(opts FedProxOptions) (*Dataset, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	src := newStream(fmt.Sprintf("flsweep/fedprox-synthetic/%d", o.Seed))
	normal := func(mean, std float64) float64 { return mean + std*approxNormal(src) }
	n := o.Users
	sizes := make([]int, n)
	total := 0
	for k := range sizes {
		if o.Samples != 0 {
			sizes[k] = o.Samples
		} else {
			sizes[k] = int(math.Exp(normal(4, 2))) + 50
		}
		total += sizes[k]
	}
	if uint64(total)*fedProxDim > syntheticMaxValues {
		return nil, fmt.Errorf("fedprox-synthetic: seed %d draws %d samples, more than %d values; use another seed or fewer users: %w",
			o.Seed, total, syntheticMaxValues, ErrInvalid)
	}
	meanW := make([]float64, n)
	for k := range meanW {
		meanW[k] = normal(0, o.Alpha)
	}
	bMean := make([]float64, n)
	for k := range bMean {
		bMean[k] = normal(0, o.Beta)
	}
	meanX := make([]float64, n*fedProxDim)
	if !o.IID {
		for k := range n {
			for j := range fedProxDim {
				meanX[k*fedProxDim+j] = normal(bMean[k], 1)
			}
		}
	}
	sd := make([]float64, fedProxDim)
	for j := range sd {
		sd[j] = math.Sqrt(math.Pow(float64(j+1), -1.2))
	}
	w := make([]float64, fedProxDim*fedProxClasses)
	b := make([]float64, fedProxClasses)
	drawModel := func(mean float64) {
		for i := range w {
			w[i] = normal(mean, 1)
		}
		for i := range b {
			b[i] = normal(mean, 1)
		}
	}
	if o.IID {
		drawModel(0)
	}
	d := &Dataset{Name: "fedprox-synthetic", Classes: fedProxClasses, Shape: [3]int{1, 1, fedProxDim}}
	d.Natural = &NaturalSplit{Train: make([][]int, n), Test: make([][]int, n)}
	// The splits are allocated once at their final sizes: grown by append,
	// the old and new arrays and the garbage of earlier doublings held the
	// process at four times the data (4.2 GB for 1.0 GB at 10,000 users).
	trainTotal := 0
	for _, nk := range sizes {
		trainTotal += int(0.9 * float64(nk))
	}
	d.Train.X, d.Train.Y = make([]float32, 0, trainTotal*fedProxDim), make([]uint8, 0, trainTotal)
	d.Test.X, d.Test.Y = make([]float32, 0, (total-trainTotal)*fedProxDim), make([]uint8, 0, total-trainTotal)
	x := make([]float32, fedProxDim)
	order := []int{}
	var xs []float32
	var ys []uint8
	for k, nk := range sizes {
		if !o.IID {
			drawModel(meanW[k])
		}
		xs, ys = xs[:0], ys[:0]
		for range nk {
			for j := range x {
				x[j] = float32(normal(meanX[k*fedProxDim+j], sd[j]))
			}
			best, arg := math.Inf(-1), 0
			for c := range fedProxClasses {
				z := b[c]
				for j, v := range x {
					z += float64(v) * w[j*fedProxClasses+c]
				}
				if z > best {
					best, arg = z, c
				}
			}
			xs = append(xs, x...)
			ys = append(ys, uint8(arg))
		}
		order = order[:0]
		for i := range nk {
			order = append(order, i)
		}
		shuffle(order, src)
		trainLen := int(0.9 * float64(nk))
		d.Natural.Train[k], d.Natural.Test[k] = make([]int, 0, trainLen), make([]int, 0, nk-trainLen)
		for p, i := range order {
			split, list := &d.Train, &d.Natural.Train[k]
			if p >= trainLen {
				split, list = &d.Test, &d.Natural.Test[k]
			}
			*list = append(*list, split.N)
			split.X = append(split.X, xs[i*fedProxDim:(i+1)*fedProxDim]...)
			split.Y = append(split.Y, ys[i])
			split.N++
		}
	}
	d.Digest = fedProxDigest(o, d)
	return d, nil
}

// fedProxDigest hashes the options, then each split's values (float32 bits, little-endian) and
// labels.
func fedProxDigest(o FedProxOptions, d *Dataset) string {
	h := sha256.New()
	fmt.Fprintf(h, "flsweep/fedprox-synthetic alpha=%v beta=%v users=%d iid=%t seed=%d", o.Alpha, o.Beta, o.Users, o.IID, o.Seed)
	if o.Samples != 0 { // left out at 0, so FedProx's sizes keep their digests
		fmt.Fprintf(h, " samples=%d", o.Samples)
	}
	h.Write([]byte{'\n'})
	var buf [4]byte
	for _, s := range []Split{d.Train, d.Test} {
		for _, v := range s.X {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			h.Write(buf[:])
		}
		h.Write(s.Y)
	}
	return hex.EncodeToString(h.Sum(nil))
}
