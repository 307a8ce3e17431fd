package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
)

// GC removes what opts names and the file contents nothing refers to any
// more, in one transaction, and reports it; with DryRun the transaction
// is rolled back. Each session GC would touch is locked for the
// transaction with the claim's own advisory lock (taken for the
// transaction only): a session another process holds is skipped and
// named, and none can be claimed while GC works on it.
func (s *Store) GC(ctx context.Context, opts storage.GCOptions) (storage.GCReport, error) {
	if opts.OlderThan < 0 || (opts.OlderThan == 0 && !opts.Branches) {
		return storage.GCReport{}, errors.New("gc: say what to remove: sessions older than an age, abandoned branches, or both")
	}
	rep := storage.GCReport{DryRun: opts.DryRun}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.planAndRemove(ctx, tx, opts, &rep); err != nil {
			return err
		}
		if opts.DryRun {
			return errDryRun // rolls the transaction back
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		return rep, nil
	}
	if err != nil {
		return storage.GCReport{}, s.wrap(err, "gc", "")
	}
	for _, gone := range rep.Sessions {
		_ = s.Release(gone.ID) // a claim on nothing
	}
	return rep, nil
}

var errDryRun = errors.New("a dry run keeps nothing")

// planAndRemove removes, inside tx, what opts names, and fills rep.
func (s *Store) planAndRemove(ctx context.Context, tx pgx.Tx, opts storage.GCOptions, rep *storage.GCReport) error {
	// Sessions made, written or imported while GC looks would refer to
	// contents it cannot see referred to: the table is locked against
	// every write (reads go on) until GC ends.
	if _, err := tx.Exec(ctx, "LOCK TABLE retrace_sessions IN EXCLUSIVE MODE"); err != nil {
		return err
	}
	rows, _ := tx.Query(ctx, "SELECT "+sessionCols+" FROM retrace_sessions ORDER BY id")
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sessionRow, error) { return scanSession(r) })
	if err != nil {
		return err
	}
	for id := range opts.Keep {
		if !slices.ContainsFunc(list, func(r sessionRow) bool { return r.id == id }) {
			return s.notFound(id)
		}
	}
	now := s.opts.Now()
	refs := map[string]bool{} // digests the versions that stay refer to
	for _, r := range list {
		info, err := s.info(r)
		if err != nil {
			return err
		}
		old := opts.OlderThan > 0 && now.Sub(info.UpdatedAt) >= opts.OlderThan
		if !old && !opts.Branches {
			if err := s.collectRefs(ctx, tx, r.id, refs); err != nil {
				return err
			}
			continue
		}
		// A session this store claims is its own to change; any other
		// is locked for the transaction, or held by someone else.
		mine := s.holds(r.id)
		if !mine {
			if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", lockKey(r.id)).Scan(&mine); err != nil {
				return err
			}
		}
		switch {
		case !mine:
			pid, _ := s.Holder(r.id)
			rep.Skipped = append(rep.Skipped, storage.Skipped{SessionInfo: info, PID: pid})
		case old:
			var n int64
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(pg_column_size(c.*)), 0)::bigint + (SELECT pg_column_size(s.*) FROM retrace_sessions s WHERE id = $1)
				FROM retrace_checkpoints c WHERE session_id = $1`, r.id).Scan(&n); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "DELETE FROM retrace_sessions WHERE id = $1", r.id); err != nil {
				return err
			}
			rep.Sessions = append(rep.Sessions, storage.GoneSession{SessionInfo: info, Bytes: n})
			rep.Bytes += n
			continue
		default:
			if err := s.pruneBranches(ctx, tx, r, info, opts.Keep[r.id], rep); err != nil {
				return err
			}
		}
		if err := s.collectRefs(ctx, tx, r.id, refs); err != nil {
			return err
		}
	}
	return s.removeUnreferenced(ctx, tx, refs, rep)
}

// pruneBranches removes a session's versions on no path from the root to
// its head or to a kept version, and records them among its removed
// versions (their numbers are never used again).
func (s *Store) pruneBranches(ctx context.Context, tx pgx.Tx, r sessionRow, info storage.SessionInfo, keep []int, rep *storage.GCReport) error {
	for _, v := range keep {
		if err := r.missing(v); err != nil {
			return err
		}
	}
	rows, _ := tx.Query(ctx, `SELECT version, parent, phase, kind, at_ns, body_crc, crc, pg_column_size(c.*)
		FROM retrace_checkpoints c WHERE session_id = $1 ORDER BY version`, r.id)
	var cps []storage.Checkpoint
	size := map[int]int64{}
	var row checkpointRow
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&row.version, &row.parent, &row.phase, &row.kind, &row.at, &row.bodyCRC, &row.crc, &n}, func() error {
		cp, err := s.header(r.id, row)
		cps = append(cps, cp)
		size[row.version] = n
		return err
	})
	if err != nil {
		return err
	}
	tree := storage.BuildTree(r.id, r.head, cps)
	branches, gone := storage.Abandoned(info, tree, keep, func(v int) int64 { return size[v] })
	for _, b := range branches {
		rep.Branches = append(rep.Branches, b)
		rep.Bytes += b.Bytes
	}
	if len(gone) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, "DELETE FROM retrace_checkpoints WHERE session_id = $1 AND version = ANY($2)", r.id, gone); err != nil {
		return err
	}
	r.removed = flatRuns(storage.WithRemoved(runsOf(r.removed), gone))
	return putSession(ctx, tx, r)
}

// collectRefs adds to refs the digests the session's versions refer to
// (those GC removed are gone from the table already). Only rows whose
// event names a digest are read and decoded: most events refer to no
// file.
func (s *Store) collectRefs(ctx context.Context, tx pgx.Tx, id string, refs map[string]bool) error {
	rows, _ := tx.Query(ctx, `SELECT version, parent, phase, kind, at_ns, body, body_crc, crc FROM retrace_checkpoints
		WHERE session_id = $1 AND position('sha256:'::bytea in body) > 0 ORDER BY version`, id)
	cps, err := pgx.CollectRows(rows, scanCheckpoint)
	if err != nil {
		return err
	}
	for _, r := range cps {
		_, ev, err := s.event(id, r)
		if err != nil {
			return err
		}
		for _, d := range ev.BlobDigests() {
			refs[d] = true
		}
	}
	return nil
}

// removeUnreferenced deletes the file contents refs does not name.
func (s *Store) removeUnreferenced(ctx context.Context, tx pgx.Tx, refs map[string]bool, rep *storage.GCReport) error {
	rows, _ := tx.Query(ctx, "SELECT digest, pg_column_size(b.*) FROM retrace_blobs b ORDER BY digest")
	var unused []string
	var digest string
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&digest, &n}, func() error {
		if !refs[digest] {
			unused = append(unused, digest)
			rep.Blobs++
			rep.BlobBytes += n
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.Bytes += rep.BlobBytes
	if len(unused) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, "DELETE FROM retrace_blobs WHERE digest = ANY($1)", unused)
	if err != nil {
		return fmt.Errorf("remove %d file contents: %w", len(unused), err)
	}
	return nil
}

// runsOf and flatRuns turn a session's removed runs into the flattened
// [first, last] pairs its row keeps, and back.
func runsOf(flat []int32) [][2]int {
	runs := make([][2]int, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		runs = append(runs, [2]int{int(flat[i]), int(flat[i+1])})
	}
	return runs
}

func flatRuns(runs [][2]int) []int32 {
	flat := make([]int32, 0, 2*len(runs))
	for _, r := range runs {
		flat = append(flat, int32(r[0]), int32(r[1]))
	}
	return flat
}
