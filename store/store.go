// Package store keeps a sweep's durable state in a gocloud.dev blob bucket:
// specs and point configurations, global models and server state per round,
// transient client updates, commit manifests, and the Parquet metric tables.
//
// # Commit protocol
//
// A round's files are written first and its COMMITTED.json last; a round
// without the manifest does not exist. Every key is a pure function of (sweep,
// point, round, client), so a retried step overwrites what an earlier attempt
// wrote, and resuming means finding the highest committed round.
//
// # Errors
//
// A missing object is ErrNotFound; a file that fails its checks (magic,
// header, sizes, checksum, architecture) is ErrCorrupt; a bad name is
// ErrInvalid. Other errors come from the bucket and may be transient.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// URLs
	_ "gocloud.dev/blob/memblob"  // mem:// URLs
	_ "gocloud.dev/blob/s3blob"   // s3:// URLs (AWS, MinIO and other S3-compatible stores)
	"gocloud.dev/gcerrors"

	"github.com/flsweep/flsweep/errkind"
)

var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt: the object exists but fails its checks.
	ErrCorrupt = errkind.New(errkind.Damaged, "corrupt")
	// ErrInvalid: a name or argument that can never be valid.
	ErrInvalid = errkind.New(errkind.Invalid, "invalid input")
)

// Store is a blob bucket with the project's layout on top. It counts the
// bytes it writes and reads (Traffic).
type Store struct {
	b *blob.Bucket
	// local: the bucket is on this machine (file://, mem://), where
	// gocloud's MD5 of every write (computed twice by WriteAll, and checked
	// against the same bytes it was computed from) guards nothing; remote
	// buckets keep it, for the server to check the upload against.
	local                     bool
	written, read, puts, gets atomic.Int64
	putNanos, getNanos        atomic.Int64
}

// Traffic is what a Store has written and read since it was opened.
type Traffic struct {
	Written, Read int64 // bytes
	Puts, Gets    int64 // objects
	// PutTime and GetTime are the wall times of the writes and reads,
	// summed over calls (concurrent ones counted each), failed ones
	// included.
	PutTime, GetTime time.Duration
}

// Traffic returns the bytes and objects written and read so far.
func (s *Store) Traffic() Traffic {
	return Traffic{Written: s.written.Load(), Read: s.read.Load(), Puts: s.puts.Load(), Gets: s.gets.Load(),
		PutTime: time.Duration(s.putNanos.Load()), GetTime: time.Duration(s.getNanos.Load())}
}

// Open opens the bucket at url (file:///abs/dir, mem://, s3://bucket?...).
func Open(ctx context.Context, url string) (*Store, error) {
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open blob bucket %q: %w", url, err)
	}
	local := strings.HasPrefix(url, "file://") || strings.HasPrefix(url, "mem://")
	return &Store{b: b, local: local}, nil
}

// New wraps an open bucket; the Store does not own it.
func New(b *blob.Bucket) *Store { return &Store{b: b} }

// Close closes the bucket.
func (s *Store) Close() error { return s.b.Close() }

// Bucket returns the underlying bucket.
func (s *Store) Bucket() *blob.Bucket { return s.b }

// Put writes data at key; the write is all-or-nothing.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	start := time.Now()
	err := s.write(ctx, key, data)
	s.putNanos.Add(int64(time.Since(start)))
	if err != nil {
		return fmt.Errorf("store: write %s: %w", key, err)
	}
	s.written.Add(int64(len(data)))
	s.puts.Add(1)
	return nil
}

// write writes data at key: through WriteAll (with its Content-MD5) on a
// remote bucket; on a local one through a Writer that neither hashes nor
// sniffs the content type (MD5 was 7% of an in-process demo's CPU profile).
func (s *Store) write(ctx context.Context, key string, data []byte) error {
	if !s.local {
		return s.b.WriteAll(ctx, key, data, nil)
	}
	// A cancelled context aborts the write: nothing is left at key.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		cancel()
		_ = w.Close()
		return err
	}
	return w.Close()
}

// Get reads the object at key.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	start := time.Now()
	b, err := s.b.ReadAll(ctx, key)
	s.getNanos.Add(int64(time.Since(start)))
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("store: %s: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("store: read %s: %w", key, err)
	}
	s.read.Add(int64(len(b)))
	s.gets.Add(1)
	return b, nil
}

// Exists reports whether key exists.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	ok, err := s.b.Exists(ctx, key)
	if err != nil {
		return false, fmt.Errorf("store: stat %s: %w", key, err)
	}
	return ok, nil
}

// Delete removes key; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	return nil
}

// DeletePrefix removes every key under prefix.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) error {
	keys, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// List returns the keys under prefix, sorted.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	it := s.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("store: list %s: %w", prefix, err)
		}
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	return keys, nil
}

// Dirs returns the names of the "directories" directly under prefix (which
// ends in "/"), sorted.
func (s *Store) Dirs(ctx context.Context, prefix string) ([]string, error) {
	var dirs []string
	it := s.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("store: list %s: %w", prefix, err)
		}
		if o.IsDir {
			dirs = append(dirs, strings.TrimSuffix(strings.TrimPrefix(o.Key, prefix), "/"))
		}
	}
	slices.Sort(dirs)
	return dirs, nil
}

// PutJSON writes v as indented JSON.
func (s *Store) PutJSON(ctx context.Context, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", key, err)
	}
	return s.Put(ctx, key, append(b, '\n'))
}

// GetJSON reads key into dst.
func (s *Store) GetJSON(ctx context.Context, key string, dst any) error {
	b, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("store: %s: %v: %w", key, err, ErrCorrupt)
	}
	return nil
}

// PutFile encodes f and writes it at key; it returns the file's checksum.
func (s *Store) PutFile(ctx context.Context, key string, f *File) (string, error) {
	b, sum, err := f.Encode()
	if err != nil {
		return "", err
	}
	return sum, s.Put(ctx, key, b)
}

// GetFile reads and verifies the blob file at key.
func (s *Store) GetFile(ctx context.Context, key string) (*File, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return DecodeFile(key, b)
}

// Commit is a round's manifest.
type Commit struct {
	Round        int     `json:"round"`
	Global       string  `json:"global"`        // key of the model after the round
	GlobalSHA256 string  `json:"global_sha256"` // Checksum of the model's weights
	DataDigest   string  `json:"data_digest"`   // the data the point runs on
	CodeVersion  string  `json:"code_version"`  // the build that computed the round
	Clients      []int   `json:"clients,omitempty"`
	TrainLoss    float64 `json:"train_loss,omitempty"`
	Evaluated    bool    `json:"evaluated,omitempty"`
	TestAcc      float64 `json:"test_acc,omitempty"`
	TestLoss     float64 `json:"test_loss,omitempty"`
}

// LastCommitted returns the highest committed round of a point and its
// manifest, or -1 and nil when no round is committed.
func (s *Store) LastCommitted(ctx context.Context, pk PointKeys) (int, *Commit, error) {
	dirs, err := s.Dirs(ctx, pk.Rounds())
	if err != nil {
		return -1, nil, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		r, err := strconv.Atoi(dirs[i])
		if err != nil || r < 0 {
			continue // not a round directory
		}
		var c Commit
		err = s.GetJSON(ctx, pk.Committed(r), &c)
		if errors.Is(err, ErrNotFound) {
			continue // an uncommitted round: ignored, it will be rewritten
		}
		if err != nil {
			return -1, nil, err
		}
		if c.Round != r {
			return -1, nil, fmt.Errorf("store: %s names round %d: %w", pk.Committed(r), c.Round, ErrCorrupt)
		}
		return r, &c, nil
	}
	return -1, nil, nil
}

// LatestAccuracy is the test accuracy a point showed at its last commit c:
// c's own when round c.Round was evaluated, else that of the latest round
// before it that was, the highest multiple of evalEvery (steps.ShouldEval;
// round 0, the initial model, is always evaluated). It is 0, as unknown,
// when that round's manifest is missing, damaged or not evaluated: only
// progress displays use it.
func (s *Store) LatestAccuracy(ctx context.Context, pk PointKeys, c Commit, evalEvery int) (float64, error) {
	if c.Evaluated {
		return c.TestAcc, nil
	}
	r := 0
	if evalEvery > 0 {
		r = c.Round - c.Round%evalEvery
	}
	var e Commit
	switch err := s.GetJSON(ctx, pk.Committed(r), &e); {
	case err == nil && e.Evaluated:
		return e.TestAcc, nil
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt):
		return 0, nil
	default:
		return 0, err
	}
}

// CommittedRounds lists the rounds of a point that have a manifest.
func (s *Store) CommittedRounds(ctx context.Context, pk PointKeys) ([]int, error) {
	dirs, err := s.Dirs(ctx, pk.Rounds())
	if err != nil {
		return nil, err
	}
	var rounds []int
	for _, d := range dirs {
		r, err := strconv.Atoi(d)
		if err != nil {
			continue
		}
		ok, err := s.Exists(ctx, pk.Committed(r))
		if err != nil {
			return nil, err
		}
		if ok {
			rounds = append(rounds, r)
		}
	}
	return rounds, nil
}
