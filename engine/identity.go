package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/flsweep/flsweep/errkind"
	"github.com/flsweep/flsweep/fl"
	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// BucketMarker is the key of a bucket's identity marker: a random ID written
// once, by the first worker or runner that opens the bucket, and never
// changed. Two workers whose buckets hold the same marker share a store.
const BucketMarker = "flsweep-bucket.json"

// bucketMarker is BucketMarker's content.
type bucketMarker struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

// Identity says which workers may compute a sweep: those whose bucket holds
// the same marker (Bucket) and whose build is Build (conf.Version). It is
// recorded once per sweep, when the sweep is first planned
// (sweeps/<sweep>/IDENTITY.json), and routes the sweep's points to the task
// queue only such workers poll (docs/architecture.md, "Several workers").
type Identity struct {
	Bucket string `json:"bucket"`
	Build  string `json:"build"`
}

// String is the identity as a task-queue suffix: steps.Routed appends it to
// a queue name.
func (id Identity) String() string {
	b := id.Bucket
	if len(b) > 12 {
		b = b[:12]
	}
	return strings.ReplaceAll(id.Build, "@", "_") + "@" + b
}

// QueueIdentity returns the identity a routed task queue
// ("<queue>@<build>@<bucket>", steps.Routed) names, its bucket shortened to
// 12 characters (Refuses compares it as a prefix); false for a queue that is
// not routed.
func QueueIdentity(queue string) (Identity, bool) {
	parts := strings.Split(queue, "@")
	if len(parts) < 3 {
		return Identity{}, false
	}
	return Identity{Build: parts[len(parts)-2], Bucket: parts[len(parts)-1]}, true
}

// BucketID returns the bucket's identity marker, creating it if the bucket
// has none. The marker is created with a conditional write (IfNotExist), so
// workers starting at once on a fresh bucket agree on one ID.
func (e *Engine) BucketID(ctx context.Context) (string, error) {
	e.idMu.Lock()
	defer e.idMu.Unlock()
	if e.bucketID != "" {
		return e.bucketID, nil
	}
	var m bucketMarker
	err := e.Store.GetJSON(ctx, BucketMarker, &m)
	if errors.Is(err, store.ErrNotFound) {
		var raw [16]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", err
		}
		m = bucketMarker{ID: hex.EncodeToString(raw[:]), Created: time.Now().UTC()}
		if err := putIfAbsent(ctx, e.Store, BucketMarker, m); err != nil {
			return "", err
		}
		err = e.Store.GetJSON(ctx, BucketMarker, &m) // the winner's, if another worker wrote first
	}
	if err != nil {
		return "", fmt.Errorf("bucket identity %s: %w", BucketMarker, err)
	}
	if len(m.ID) < 12 {
		return "", fmt.Errorf("bucket identity %s holds id %q, too short; delete the file to have a new one written: %w", BucketMarker, m.ID, store.ErrCorrupt)
	}
	e.bucketID = m.ID
	return m.ID, nil
}

// Identity returns this engine's identity: its bucket's marker and its build.
func (e *Engine) Identity(ctx context.Context) (Identity, error) {
	b, err := e.BucketID(ctx)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Bucket: b, Build: e.Version}, nil
}

// SweepIdentity returns the identity a sweep runs with: the one recorded
// when it was first planned, or, for a sweep planned before identities were
// recorded or planned now, this engine's, which it records.
func (e *Engine) SweepIdentity(ctx context.Context, sweepName string) (Identity, error) {
	sk, err := store.SweepKeys(sweepName)
	if err != nil {
		return Identity{}, err
	}
	key := sk.Prefix() + "IDENTITY.json"
	var id Identity
	err = e.Store.GetJSON(ctx, key, &id)
	if errors.Is(err, store.ErrNotFound) {
		if id, err = e.Identity(ctx); err != nil {
			return Identity{}, err
		}
		if err := putIfAbsent(ctx, e.Store, key, id); err != nil {
			return Identity{}, err
		}
		err = e.Store.GetJSON(ctx, key, &id)
	}
	if err != nil {
		return Identity{}, err
	}
	return id, nil
}

// Refuses returns a non-nil error when this engine must not compute for a
// sweep with identity want: another bucket or another build. The error
// names both and what to start instead.
func (e *Engine) Refuses(ctx context.Context, want Identity) error {
	have, err := e.Identity(ctx)
	if err != nil {
		return err
	}
	switch {
	case want.Bucket != "" && !strings.HasPrefix(have.Bucket, want.Bucket):
		return fmt.Errorf("%w: this worker's bucket has identity %.12s but the sweep's bucket has %.12s (%s); start workers with the sweep's --blob",
			ErrRefused, have.Bucket, want.Bucket, BucketMarker)
	case want.Build != strings.ReplaceAll(have.Build, "@", "_"):
		return fmt.Errorf("%w: this worker is build %q but the sweep runs on build %q (a point's rounds all run on one build); start a worker of build %q",
			ErrRefused, have.Build, want.Build, want.Build)
	}
	return nil
}

// ErrRefused marks a task this worker must not compute: it belongs to a
// sweep of another bucket or build. It is not bad input: another worker
// can run it.
var ErrRefused = errkind.New(errkind.Refused, "refused")

// IsRefused reports whether err is a refusal (ErrRefused).
func IsRefused(err error) bool { return errkind.Is(err, errkind.Refused) }

// checkBuild refuses to continue a point whose last committed round was
// computed by another build than this engine's: the determinism contract
// holds per build, so a point's rounds all run on one. Rounds committed
// before builds were recorded (empty CodeVersion) pass.
func (e *Engine) checkBuild(ref steps.PointRef, last int, c *store.Commit) error {
	if c == nil || c.CodeVersion == "" || c.CodeVersion == e.Version {
		return nil
	}
	return fmt.Errorf("point %s/%s: round %d was computed by build %q but this worker is build %q; a point's rounds all run on one build: finish it with workers of build %q, or run the spec as a new sweep: %w",
		ref.Sweep, ref.Point, last, c.CodeVersion, e.Version, c.CodeVersion, fl.ErrInvalid)
}

// putIfAbsent writes v as JSON at key unless key exists. Losing the race to
// another writer is not an error: the caller reads the winner's value.
func putIfAbsent(ctx context.Context, st *store.Store, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	err = st.Bucket().WriteAll(ctx, key, b, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"})
	if err != nil && gcerrors.Code(err) != gcerrors.FailedPrecondition {
		return fmt.Errorf("store: write %s: %w", key, err)
	}
	return nil
}

// RecordedSweepIdentity returns the identity recorded for a sweep when it
// was first planned, without recording one; ok is false when there is none
// yet (a sweep not planned, or planned before identities were recorded).
func RecordedSweepIdentity(ctx context.Context, st *store.Store, sweepName string) (id Identity, ok bool, err error) {
	sk, err := store.SweepKeys(sweepName)
	if err != nil {
		return Identity{}, false, err
	}
	switch err := st.GetJSON(ctx, sk.Prefix()+"IDENTITY.json", &id); {
	case errors.Is(err, store.ErrNotFound):
		return Identity{}, false, nil
	case err != nil:
		return Identity{}, false, err
	}
	return id, true, nil
}
