package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// read runs fn in one read-only transaction that sees one snapshot
// (repeatable read): a session's row and its checkpoints as of one moment.
func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// session reads and checks a session's row.
func (s *Store) session(ctx context.Context, q pgx.Tx, id string) (sessionRow, storage.SessionInfo, error) {
	if !validID.MatchString(id) {
		return sessionRow{}, storage.SessionInfo{}, s.notFound(id)
	}
	r, err := scanSession(q.QueryRow(ctx, "SELECT "+sessionCols+" FROM retrace_sessions WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, storage.SessionInfo{}, s.notFound(id)
	}
	if err != nil {
		return r, storage.SessionInfo{}, err
	}
	info, err := s.info(r)
	return r, info, err
}

// Session returns one session's summary.
func (s *Store) Session(ctx context.Context, id string) (storage.SessionInfo, error) {
	var info storage.SessionInfo
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		_, info, err = s.session(ctx, tx, id)
		return err
	})
	return info, s.wrap(err, "read", id)
}

// Sessions lists every session, most recently updated first.
func (s *Store) Sessions(ctx context.Context) ([]storage.SessionInfo, error) {
	list, err := s.sessions(ctx, "")
	return list, s.wrap(err, "list sessions", "")
}

// sessions reads every session whose id starts with prefix.
func (s *Store) sessions(ctx context.Context, prefix string) ([]storage.SessionInfo, error) {
	rows, _ := s.pool.Query(ctx, "SELECT "+sessionCols+" FROM retrace_sessions WHERE starts_with(id, $1)", prefix)
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sessionRow, error) { return scanSession(row) })
	if err != nil {
		return nil, err
	}
	var list []storage.SessionInfo
	for _, r := range all {
		info, err := s.info(r)
		if err != nil {
			return nil, err
		}
		list = append(list, info)
	}
	storage.SortSessions(list)
	return list, nil
}

// Resolve finds the one session whose id starts with prefix.
func (s *Store) Resolve(ctx context.Context, prefix string) (string, error) {
	if prefix == "" {
		return "", errors.New("no session id given")
	}
	if !validID.MatchString(prefix) {
		return "", s.notFound(prefix)
	}
	matches, err := s.sessions(ctx, prefix)
	if err != nil {
		return "", s.wrap(err, "resolve", prefix)
	}
	for _, m := range matches {
		if m.ID == prefix {
			return m.ID, nil
		}
	}
	switch len(matches) {
	case 0:
		return "", s.notFound(prefix)
	case 1:
		return matches[0].ID, nil
	}
	return "", &storage.AmbiguousError{Prefix: prefix, Candidates: matches}
}

// Head returns the state at the session's head.
func (s *Store) Head(ctx context.Context, id string) (state.State, error) {
	var st state.State
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, _, err := s.session(ctx, tx, id)
		if err != nil {
			return err
		}
		st, err = s.replay(ctx, tx, id, r.head)
		return err
	})
	return st, s.wrap(err, "read the head of", id)
}

// At returns the state at a version.
func (s *Store) At(ctx context.Context, id string, version int) (state.State, error) {
	var st state.State
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, _, err := s.session(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := r.missing(version); err != nil {
			return err
		}
		st, err = s.replay(ctx, tx, id, version)
		return err
	})
	return st, s.wrap(err, "read", id)
}

// Recent returns the state at a version windowed as storage.Store says.
// It replays the whole path, as At does: the server keeps no snapshots
// yet, so a long session costs here what At costs.
func (s *Store) Recent(ctx context.Context, id string, version, keep int) (state.State, error) {
	st, err := s.At(ctx, id, version)
	if err != nil {
		return st, err
	}
	return st.Window(max(0, min(st.SummaryThrough, st.HistoryLen()-keep)))
}

// pathQuery reads the checkpoints from version $2 up to the root, by
// their parents, newest first. A parent that is not older than its child
// (damage) ends the walk rather than looping; replay finds the break.
const pathQuery = `WITH RECURSIVE path AS (
	SELECT version, parent, phase, kind, at_ns, body, body_crc, crc
	FROM retrace_checkpoints WHERE session_id = $1 AND version = $2
	UNION ALL
	SELECT c.version, c.parent, c.phase, c.kind, c.at_ns, c.body, c.body_crc, c.crc
	FROM path p JOIN retrace_checkpoints c ON c.session_id = $1 AND c.version = p.parent
	WHERE p.parent < p.version AND p.parent > 0
) SELECT version, parent, phase, kind, at_ns, body, body_crc, crc FROM path ORDER BY version DESC`

func scanCheckpoint(row pgx.CollectableRow) (checkpointRow, error) {
	var r checkpointRow
	err := row.Scan(&r.version, &r.parent, &r.phase, &r.kind, &r.at, &r.body, &r.bodyCRC, &r.crc)
	return r, err
}

// replay builds the state at version v from the events on the path from
// the root to it, every row checked on the way.
func (s *Store) replay(ctx context.Context, tx pgx.Tx, id string, v int) (state.State, error) {
	var path []checkpointRow
	if v > 0 {
		rows, _ := tx.Query(ctx, pathQuery, id, v)
		var err error
		if path, err = pgx.CollectRows(rows, scanCheckpoint); err != nil {
			return state.State{}, err
		}
	}
	// The rows must be v, its parent, its parent's parent... down to a
	// version whose parent is the root.
	want := v
	for _, r := range path {
		if r.version != want {
			break
		}
		if _, err := s.header(id, r); err != nil {
			return state.State{}, err
		}
		want = r.parent
	}
	if want != 0 {
		return state.State{}, s.corrupt(id, want, "the version is missing")
	}
	b := state.NewBuilder(state.New(id))
	b.GrowHistory(len(path))
	for _, r := range slices.Backward(path) {
		cp, ev, err := s.event(id, r)
		if err != nil {
			return state.State{}, err
		}
		if err := b.Apply(ev); err != nil {
			return state.State{}, s.corrupt(id, r.version, "does not replay: "+err.Error())
		}
		if b.Phase() != cp.Phase {
			return state.State{}, s.corrupt(id, r.version, fmt.Sprintf("replays to phase %s, but was stored as %s", b.Phase(), cp.Phase))
		}
	}
	out := b.State()
	out.Version = v
	if len(path) > 0 {
		out.ParentVersion = path[0].parent
	}
	return out, nil
}

// Tree lists every version's header and the branches, from the header
// columns alone: no event is read or decoded.
func (s *Store) Tree(ctx context.Context, id string) (storage.Tree, error) {
	var t storage.Tree
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, _, err := s.session(ctx, tx, id)
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT version, parent, phase, kind, at_ns, NULL::bytea, body_crc, crc
			FROM retrace_checkpoints WHERE session_id = $1 ORDER BY version`, id)
		heads, err := pgx.CollectRows(rows, scanCheckpoint)
		if err != nil {
			return err
		}
		cps := make([]storage.Checkpoint, 0, len(heads))
		for _, h := range heads {
			cp, err := s.header(id, h)
			if err != nil {
				return err
			}
			cps = append(cps, cp)
		}
		t = storage.BuildTree(id, r.head, cps)
		return nil
	})
	return t, s.wrap(err, "read the tree of", id)
}

// Export returns a session, every checkpoint with its event, and every
// file content the events refer to.
func (s *Store) Export(ctx context.Context, id string) (storage.Export, error) {
	var ex storage.Export
	err := s.read(ctx, func(tx pgx.Tx) error {
		var refs contentRefs
		var err error
		if ex, refs, err = s.records(ctx, tx, id); err != nil || len(refs.digests) == 0 {
			return err
		}
		if ex.Blobs, err = s.blobs(ctx, tx, refs.digests); err != nil {
			return err
		}
		return s.allHeld(id, refs, func(d string) bool { _, ok := ex.Blobs[d]; return ok })
	})
	return ex, s.wrap(err, "export", id)
}

// ExportRecords is Export without the file contents, which it checks the
// database holds (see storage.Exporter).
func (s *Store) ExportRecords(ctx context.Context, id string) (storage.Export, error) {
	var ex storage.Export
	err := s.read(ctx, func(tx pgx.Tx) error {
		var refs contentRefs
		var err error
		if ex, refs, err = s.records(ctx, tx, id); err != nil || len(refs.digests) == 0 {
			return err
		}
		rows, _ := tx.Query(ctx, "SELECT digest FROM retrace_blobs WHERE digest = ANY($1)", refs.digests)
		held := make(map[string]bool, len(refs.digests))
		var d string
		if _, err := pgx.ForEachRow(rows, []any{&d}, func() error { held[d] = true; return nil }); err != nil {
			return err
		}
		return s.allHeld(id, refs, func(d string) bool { return held[d] })
	})
	return ex, s.wrap(err, "export", id)
}

// contentRefs are the contents a session's events refer to, each once,
// and the first version that refers to each.
type contentRefs struct {
	digests  []string
	firstUse map[string]int
}

// records reads a session and every checkpoint with its event, and the
// contents the events refer to.
func (s *Store) records(ctx context.Context, tx pgx.Tx, id string) (storage.Export, contentRefs, error) {
	var ex storage.Export
	refs := contentRefs{firstUse: map[string]int{}}
	_, info, err := s.session(ctx, tx, id)
	if err != nil {
		return ex, refs, err
	}
	rows, _ := tx.Query(ctx, `SELECT version, parent, phase, kind, at_ns, body, body_crc, crc
		FROM retrace_checkpoints WHERE session_id = $1 ORDER BY version`, id)
	all, err := pgx.CollectRows(rows, scanCheckpoint)
	if err != nil {
		return ex, refs, err
	}
	ex.Session = info
	ex.Checkpoints = make([]storage.Record, 0, len(all))
	for _, r := range all {
		cp, ev, err := s.event(id, r)
		if err != nil {
			return ex, refs, err
		}
		ex.Checkpoints = append(ex.Checkpoints, storage.Record{Checkpoint: cp, Data: ev})
		for _, d := range ev.BlobDigests() {
			if _, ok := refs.firstUse[d]; !ok {
				refs.firstUse[d] = cp.Version
				refs.digests = append(refs.digests, d)
			}
		}
	}
	return ex, refs, nil
}

// allHeld names the first content the events refer to that held says the
// database lacks, and the version that refers to it.
func (s *Store) allHeld(id string, refs contentRefs, held func(digest string) bool) error {
	for _, d := range refs.digests {
		if !held(d) {
			return &storage.CorruptError{Path: s.where, Session: id, Version: refs.firstUse[d], Blob: d, Reason: "the file content it refers to is missing"}
		}
	}
	return nil
}

// blobs reads and checks the contents with the given digests that the
// database holds.
func (s *Store) blobs(ctx context.Context, tx pgx.Tx, digests []string) (map[string][]byte, error) {
	rows, _ := tx.Query(ctx, "SELECT digest, data, crc FROM retrace_blobs WHERE digest = ANY($1)", digests)
	out := make(map[string][]byte, len(digests))
	var digest string
	var data []byte
	var crc int64
	_, err := pgx.ForEachRow(rows, []any{&digest, &data, &crc}, func() error {
		if err := s.checkBlob(digest, data, crc); err != nil {
			return err
		}
		out[digest] = data
		return nil
	})
	return out, err
}

// checkBlob checks a content read back: its row's checksum, then that it
// hashes to its digest.
func (s *Store) checkBlob(digest string, data []byte, crc int64) error {
	if got := blobChecksum(digest, data); got != crc {
		return &storage.CorruptError{Path: s.where, Blob: digest, Reason: fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", crc, got)}
	}
	if err := storage.CheckBlob(digest, data); err != nil {
		return &storage.CorruptError{Path: s.where, Blob: digest, Reason: err.Error()}
	}
	return nil
}

// Blobs reads many contents in one query (see storage.BlobsReader).
func (s *Store) Blobs(ctx context.Context, digests []string, fn func(digest string, data []byte) error) error {
	for _, d := range digests {
		if !state.ValidDigest(d) {
			return fmt.Errorf("file content %q: not a sha256 digest: %w", d, storage.ErrInvalid)
		}
	}
	type row struct {
		data []byte
		crc  int64
	}
	got := make(map[string]row, len(digests))
	rows, err := s.pool.Query(ctx, "SELECT digest, data, crc FROM retrace_blobs WHERE digest = ANY($1)", digests)
	if err != nil {
		return s.errorf("read file contents in %s: %w", s.where, err)
	}
	for rows.Next() {
		var d string
		var r row
		if err := rows.Scan(&d, &r.data, &r.crc); err != nil {
			rows.Close()
			return s.errorf("read file contents in %s: %w", s.where, err)
		}
		got[d] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.errorf("read file contents in %s: %w", s.where, err)
	}
	for _, d := range digests {
		r, ok := got[d]
		if !ok {
			return fmt.Errorf("%s holds no file content %s: %w", s.where, d, storage.ErrBlobNotFound)
		}
		if err := s.checkBlob(d, r.data, r.crc); err != nil {
			return err
		}
		if err := fn(d, r.data); err != nil {
			return err
		}
	}
	return nil
}

// Blob returns the file content with the given digest, checked against
// the digest.
func (s *Store) Blob(ctx context.Context, digest string) ([]byte, error) {
	if !state.ValidDigest(digest) {
		return nil, fmt.Errorf("file content %q: not a sha256 digest: %w", digest, storage.ErrInvalid)
	}
	var data []byte
	var crc int64
	err := s.pool.QueryRow(ctx, "SELECT data, crc FROM retrace_blobs WHERE digest = $1", digest).Scan(&data, &crc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s holds no file content %s: %w", s.where, digest, storage.ErrBlobNotFound)
	}
	if err != nil {
		return nil, s.errorf("read file content %s in %s: %w", digest, s.where, err)
	}
	if err := s.checkBlob(digest, data, crc); err != nil {
		return nil, err
	}
	return data, nil
}
