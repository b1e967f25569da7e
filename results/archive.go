package results

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flsweep/flsweep/steps"
	"github.com/flsweep/flsweep/store"
)

// ArchiveStats counts what Archive did, per call.
type ArchiveStats struct {
	Points  int   // finished points whose results are in the archive
	Skipped int   // points left out: not finished (pending, running, stopped, failed)
	Started int   // of Skipped, those that had begun (rounds or tables written); the rest were only planned
	Copied  int   // files written
	Same    int   // files the archive already held, byte for byte
	Bytes   int64 // bytes written
}

// Archive copies the results of the named sweeps' finished points (status
// done or diverged) from the bucket src to the bucket dst: each point's
// Parquet tables, DONE.json and config.json (when it has one), and the sweep's spec.json, under
// the same keys. Checkpoints, states and updates are not copied, so dst
// answers `starter query`, `starter claims` and the paired view like the
// source, for the finished points only, in a few hundred kilobytes a point,
// and an archived point cannot be resumed from it. A point that is not
// finished is left out, so no claim reads a half-run point.
//
// Archiving again is idempotent. A file dst holds with other bytes (the
// point was re-run, by another build say) is an error naming it, unless
// replace is set; nothing is written to dst for a sweep until every file of
// it has been checked. Files are read one at a time (the check, then the
// copy), so a sweep of any size archives in the memory of its largest file.
func Archive(ctx context.Context, src, dst *store.Store, names []string, replace bool) (ArchiveStats, error) {
	var st ArchiveStats
	for _, name := range names {
		keys, skipped, started, points, err := archiveKeys(ctx, src, name)
		if err != nil {
			return st, err
		}
		if points == 0 {
			return st, fmt.Errorf("sweep %s has no finished point to archive (%d not finished); `starter sweep status %s` or `starter run --local` shows where it stands", name, skipped, name)
		}
		// Check every file first, one at a time (a sweep of thousands of
		// points does not fit in memory), then write those that need it.
		var write []string
		for _, k := range keys {
			old, err := dst.Get(ctx, k)
			switch {
			case errors.Is(err, store.ErrNotFound):
				write = append(write, k)
				continue
			case err != nil:
				return st, err
			}
			b, err := src.Get(ctx, k)
			if err != nil {
				return st, err
			}
			switch {
			case bytes.Equal(old, b):
				st.Same++
			case replace:
				write = append(write, k)
			default:
				return st, fmt.Errorf("the archive holds %s with other bytes than the bucket's (the point was re-run?); pass --replace to overwrite it with the bucket's", k)
			}
		}
		for _, k := range write {
			b, err := src.Get(ctx, k)
			if err != nil {
				return st, err
			}
			if err := dst.Put(ctx, k, b); err != nil {
				return st, err
			}
			st.Copied++
			st.Bytes += int64(len(b))
		}
		st.Points += points
		st.Skipped += skipped
		st.Started += started
	}
	return st, nil
}

// archiveKeys lists the keys of sweep name that Archive copies, sorted,
// and counts the points left out (skipped), of them those that had begun
// (started: a folder beside config.json, rounds or tables), and the points
// archived.
func archiveKeys(ctx context.Context, s *store.Store, name string) (keys []string, skipped, started, points int, err error) {
	sk, err := store.SweepKeys(name)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	if ok, err := s.Exists(ctx, sk.Spec()); err != nil {
		return nil, 0, 0, 0, err
	} else if !ok {
		return nil, 0, 0, 0, fmt.Errorf("no sweep %s in the bucket (no %s): %w", name, sk.Spec(), store.ErrNotFound)
	}
	keys = append(keys, sk.Spec())
	ids, err := s.Dirs(ctx, sk.Prefix())
	if err != nil {
		return nil, 0, 0, 0, err
	}
	for _, id := range ids {
		pk, err := sk.Point(id)
		if err != nil {
			continue // not a point's folder (the plan's pages)
		}
		var done steps.PointResult
		err = s.GetJSON(ctx, pk.Done(), &done)
		switch {
		case errors.Is(err, store.ErrNotFound):
			skipped++
			sub, err := s.Dirs(ctx, pk.Prefix())
			if err != nil {
				return nil, 0, 0, 0, err
			}
			if len(sub) > 0 {
				started++
			}
			continue
		case err != nil:
			return nil, 0, 0, 0, err
		}
		if done.Status != steps.StatusDone && done.Status != steps.StatusDiverged {
			skipped++
			started++
			continue
		}
		keys = append(keys, pk.Done())
		if ok, err := s.Exists(ctx, pk.Config()); err != nil {
			return nil, 0, 0, 0, err
		} else if ok {
			keys = append(keys, pk.Config())
		}
		tables, err := s.List(ctx, pk.Prefix()+"metrics/")
		if err != nil {
			return nil, 0, 0, 0, err
		}
		for _, k := range tables {
			if strings.HasSuffix(k, ".parquet") {
				keys = append(keys, k)
			}
		}
		points++
	}
	slices.Sort(keys)
	return keys, skipped, started, points, nil
}
