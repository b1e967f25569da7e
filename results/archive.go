package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
// it has been checked.
func Archive(ctx context.Context, src, dst *store.Store, names []string, replace bool) (ArchiveStats, error) {
	var st ArchiveStats
	for _, name := range names {
		files, skipped, started, points, err := archiveFiles(ctx, src, name)
		if err != nil {
			return st, err
		}
		if points == 0 {
			return st, fmt.Errorf("sweep %s has no finished point to archive (%d not finished); `starter sweep status %s` or `starter run --local` shows where it stands", name, skipped, name)
		}
		var write []string
		for _, k := range slices.Sorted(maps.Keys(files)) {
			old, err := dst.Get(ctx, k)
			switch {
			case errors.Is(err, store.ErrNotFound):
				write = append(write, k)
			case err != nil:
				return st, err
			case bytes.Equal(old, files[k]):
				st.Same++
			case replace:
				write = append(write, k)
			default:
				return st, fmt.Errorf("the archive holds %s with other bytes than the bucket's (the point was re-run?); pass --replace to overwrite it with the bucket's", k)
			}
		}
		for _, k := range write {
			if err := dst.Put(ctx, k, files[k]); err != nil {
				return st, err
			}
			st.Copied++
			st.Bytes += int64(len(files[k]))
		}
		st.Points += points
		st.Skipped += skipped
		st.Started += started
	}
	return st, nil
}

// archiveFiles reads the files of sweep name that Archive copies, by key,
// and counts the points left out (skipped), of them those that had begun
// (started: a folder beside config.json, rounds or tables), and the points
// archived.
func archiveFiles(ctx context.Context, s *store.Store, name string) (files map[string][]byte, skipped, started, points int, err error) {
	sk, err := store.SweepKeys(name)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	files = map[string][]byte{}
	get := func(k string) error {
		b, err := s.Get(ctx, k)
		if err != nil {
			return err
		}
		files[k] = b
		return nil
	}
	if err := get(sk.Spec()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, 0, 0, 0, fmt.Errorf("no sweep %s in the bucket (no %s): %w", name, sk.Spec(), err)
		}
		return nil, 0, 0, 0, err
	}
	ids, err := s.Dirs(ctx, sk.Prefix())
	if err != nil {
		return nil, 0, 0, 0, err
	}
	for _, id := range ids {
		pk, err := sk.Point(id)
		if err != nil {
			continue // not a point's folder (the plan's pages)
		}
		b, err := s.Get(ctx, pk.Done()) // read once: decoded here, copied below
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
		var done steps.PointResult
		if err := json.Unmarshal(b, &done); err != nil {
			return nil, 0, 0, 0, fmt.Errorf("%s: %v: %w", pk.Done(), err, store.ErrCorrupt)
		}
		if done.Status != steps.StatusDone && done.Status != steps.StatusDiverged {
			skipped++
			started++
			continue
		}
		files[pk.Done()] = b
		if err := get(pk.Config()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, 0, 0, 0, err
		}
		keys, err := s.List(ctx, pk.Prefix()+"metrics/")
		if err != nil {
			return nil, 0, 0, 0, err
		}
		for _, k := range keys {
			if strings.HasSuffix(k, ".parquet") {
				if err := get(k); err != nil {
					return nil, 0, 0, 0, err
				}
			}
		}
		points++
	}
	return files, skipped, started, points, nil
}
