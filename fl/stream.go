package fl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// Purpose names what a random stream is used for. Two purposes never share a
// stream, so adding draws for one purpose never shifts another's.
type Purpose uint8

const (
	PurposeInit      Purpose = iota + 1 // the initial global model
	PurposePartition                    // splitting the data into clients
	PurposeSample                       // choosing a round's clients
	PurposeTrain                        // a client's minibatch order and dropout masks
	PurposeAttack                       // the attacker's auxiliary set and its methods' draws
	PurposeRefine                       // a refine phase's training on the server's public data
)

var purposeNames = [...]string{"", "init", "partition", "sample", "train", "attack", "refine"}

func (p Purpose) String() string {
	if int(p) < len(purposeNames) && p != 0 {
		return purposeNames[p]
	}
	return fmt.Sprintf("purpose(%d)", uint8(p))
}

// Server is the Client value of a key for draws that belong to no client.
const Server = -1

// Key identifies one random stream (docs/architecture.md, "Determinism"). Equal keys give equal
// streams on every machine and in every run; keys differing in any field give
// independent streams.
//
// Point is empty for the streams that all points of a seed share: the initial
// model and the data partition. Two points that differ only in their method
// (sampler, aggregator, learning rate, ...) therefore start from the same model
// on the same client split, so a comparison between them is not confounded by
// initialisation or data luck.
type Key struct {
	Seed    uint64
	Point   string
	Round   int
	Client  int
	Purpose Purpose
}

// Stream returns the generator for k: ChaCha8 seeded with
//
//	SHA-256("flsweep/stream/v1" | seed | len(point) | point | round | client | purpose)
//
// with integers as fixed-width little-endian values. The returned generator is
// not safe for concurrent use; derive one per goroutine.
func Stream(k Key) *rand.Rand {
	return rand.New(rand.NewChaCha8(k.seed()))
}

func (k Key) seed() [32]byte {
	h := sha256.New()
	var buf [8]byte
	h.Write([]byte("flsweep/stream/v1"))
	binary.LittleEndian.PutUint64(buf[:], k.Seed)
	h.Write(buf[:])
	binary.LittleEndian.PutUint64(buf[:], uint64(len(k.Point)))
	h.Write(buf[:])
	h.Write([]byte(k.Point))
	binary.LittleEndian.PutUint64(buf[:], uint64(int64(k.Round)))
	h.Write(buf[:])
	binary.LittleEndian.PutUint64(buf[:], uint64(int64(k.Client)))
	h.Write(buf[:])
	h.Write([]byte{byte(k.Purpose)})
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

func (k Key) String() string {
	return fmt.Sprintf("seed=%d point=%q round=%d client=%d purpose=%s", k.Seed, k.Point, k.Round, k.Client, k.Purpose)
}
