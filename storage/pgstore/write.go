package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

const sessionCols = "id, title, model, workspace, created_ns, updated_ns, head, versions, phase, removed, crc"

func scanSession(row pgx.Row) (sessionRow, error) {
	var r sessionRow
	err := row.Scan(&r.id, &r.title, &r.model, &r.wspace, &r.created, &r.updated, &r.head, &r.versions, &r.phase, &r.removed, &r.crc)
	return r, err
}

// putSession writes a session's row whole, its checksum made afresh.
func putSession(ctx context.Context, tx pgx.Tx, r sessionRow) error {
	r = r.sealed()
	_, err := tx.Exec(ctx, `UPDATE retrace_sessions SET title = $2, model = $3, workspace = $4, created_ns = $5,
		updated_ns = $6, head = $7, versions = $8, phase = $9, removed = $10, crc = $11 WHERE id = $1`,
		r.id, r.title, r.model, r.wspace, r.created, r.updated, r.head, r.versions, r.phase, r.removed, r.crc)
	return err
}

func insertSession(ctx context.Context, tx pgx.Tx, r sessionRow) (bool, error) {
	r = r.sealed()
	tag, err := tx.Exec(ctx, `INSERT INTO retrace_sessions (`+sessionCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`,
		r.id, r.title, r.model, r.wspace, r.created, r.updated, r.head, r.versions, r.phase, r.removed, r.crc)
	return tag.RowsAffected() == 1, err
}

// Create starts a new session and claims it.
func (s *Store) Create(ctx context.Context, ns storage.NewSession) (storage.SessionInfo, error) {
	at := ns.CreatedAt
	if at.IsZero() {
		at = s.opts.Now()
	}
	created, err := nanos(at)
	if err != nil {
		return storage.SessionInfo{}, s.wrap(err, "create", "")
	}
	r := sessionRow{title: ns.Title, model: ns.Model, wspace: ns.Workspace, created: created, updated: created,
		phase: state.Idle.String(), removed: []int32{}}
	for {
		r.id = newID()
		var ok bool
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			ok, err = insertSession(ctx, tx, r)
			return err
		})
		if err != nil {
			return storage.SessionInfo{}, s.wrap(err, "create", "")
		}
		if ok {
			break // else the id was taken: one in 2^64 per session
		}
	}
	if err := s.Claim(ctx, r.id); err != nil {
		return storage.SessionInfo{}, err
	}
	return s.info(r.sealed())
}

// locked is what a write finds under its row lock: the session's row and
// the header of the version it names (nil for version 0 or none).
type locked struct {
	row sessionRow
	at  *checkpointRow
}

// write runs fn in one transaction with the session's row locked (FOR
// UPDATE), its checksum checked, the schema checked to be this build's,
// and, when claimed is set, this store's claim checked to be alive (see
// claim). version names the checkpoint whose header the same query
// reads, for fn's parent check.
func (s *Store) write(ctx context.Context, id string, version int, claimed bool, fn func(tx pgx.Tx, l locked) error) error {
	if !validID.MatchString(id) {
		return s.notFound(id)
	}
	var c *claim
	if claimed {
		var ok bool
		if c, ok = s.claimOf(id); !ok {
			return fmt.Errorf("session %s in %s: this store's claim was released during the write: %w", id, s.where, storage.ErrClaimLost)
		}
	}
	held := "true"
	args := []any{id, version}
	if c != nil {
		held = lockHeld("$3", "$4", "$5")
		args = append(args, lockKey(id), c.backend, c.started)
	}
	var lost bool
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var l locked
		var schema int
		var alive bool
		var at struct {
			version, parent *int
			phase, kind     *string
			ns, bodyCRC     *int64
			crc             *int64
		}
		err := tx.QueryRow(ctx, `SELECT s.id, s.title, s.model, s.workspace, s.created_ns, s.updated_ns, s.head,
				s.versions, s.phase, s.removed, s.crc, (SELECT version FROM retrace_schema), `+held+`,
				c.version, c.parent, c.phase, c.kind, c.at_ns, c.body_crc, c.crc
			FROM retrace_sessions s LEFT JOIN retrace_checkpoints c ON c.session_id = s.id AND c.version = $2
			WHERE s.id = $1 FOR UPDATE OF s`, args...).Scan(
			&l.row.id, &l.row.title, &l.row.model, &l.row.wspace, &l.row.created, &l.row.updated, &l.row.head,
			&l.row.versions, &l.row.phase, &l.row.removed, &l.row.crc, &schema, &alive,
			&at.version, &at.parent, &at.phase, &at.kind, &at.ns, &at.bodyCRC, &at.crc)
		if errors.Is(err, pgx.ErrNoRows) {
			return s.notFound(id)
		}
		if err != nil {
			return err
		}
		if err := s.checkSchema(schema); err != nil {
			return err
		}
		if !alive {
			lost = true
			return storage.ErrClaimLost
		}
		if _, err := s.info(l.row); err != nil {
			return err
		}
		if at.version != nil {
			l.at = &checkpointRow{version: *at.version, parent: *at.parent, phase: *at.phase, kind: *at.kind,
				at: *at.ns, bodyCRC: *at.bodyCRC, crc: *at.crc}
		}
		return fn(tx, l)
	})
	if lost {
		return s.lost(id, c)
	}
	return err
}

// phaseAt is the phase at the version l.at is, read from its header.
func (s *Store) phaseAt(id string, v int, l locked) (state.Phase, error) {
	if v == 0 {
		return state.Idle, nil
	}
	if l.at == nil {
		return 0, s.corrupt(id, v, "the version is missing")
	}
	cp, err := s.header(id, *l.at)
	return cp.Phase, err
}

// Append keeps ev as a checkpoint under parent, which must be the head,
// with the file contents it carries, in one transaction.
func (s *Store) Append(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	return s.appendUnder(ctx, id, parent, ev, false)
}

// Fork keeps ev as a checkpoint under parent, any version, and moves the
// head to it, in one transaction.
func (s *Store) Fork(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	return s.appendUnder(ctx, id, parent, ev, true)
}

func (s *Store) appendUnder(ctx context.Context, id string, parent int, ev state.Event, fork bool) (storage.Checkpoint, error) {
	blobs, err := storage.CheckBlobs(ev)
	if err != nil {
		return storage.Checkpoint{}, s.wrap(err, "append to", id)
	}
	if err := s.autoClaim(ctx, id); err != nil {
		return storage.Checkpoint{}, err
	}
	var cp storage.Checkpoint
	err = s.write(ctx, id, parent, true, func(tx pgx.Tx, l locked) error {
		switch {
		case fork && l.row.missing(parent) != nil:
			return l.row.missing(parent)
		case !fork && parent != l.row.head:
			return &storage.ConflictError{Session: id, Parent: parent, Head: l.row.head}
		}
		from, err := s.phaseAt(id, parent, l)
		if err != nil {
			return err
		}
		to, err := state.Next(from, ev.Kind)
		if err != nil {
			return err
		}
		v := l.row.versions + 1
		rec, err := encodeCheckpoint(id, v, parent, to, ev)
		if err != nil {
			return err
		}
		if err := keepBlobs(ctx, tx, ev, blobs); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO retrace_checkpoints
			(session_id, version, parent, phase, kind, at_ns, body, body_crc, crc)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, v, parent, rec.phase, rec.kind, rec.at, rec.body, rec.bodyCRC, rec.crc); err != nil {
			return err
		}
		l.row.head, l.row.versions, l.row.phase, l.row.updated = v, v, rec.phase, rec.at
		cp = storage.Checkpoint{Version: v, Parent: parent, Event: ev.Kind, Phase: to, At: fromNanos(rec.at)}
		return putSession(ctx, tx, l.row)
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		_ = s.Release(id)
	}
	return cp, s.wrap(err, "append to", id)
}

// keepBlobs refuses ev if it refers to content neither it nor the
// database holds, and keeps every carried content the database does not
// hold yet, in the checkpoint's transaction: both are kept, or neither.
func keepBlobs(ctx context.Context, tx pgx.Tx, ev state.Event, blobs []state.Blob) error {
	if len(blobs) == 0 && len(ev.Files) == 0 {
		return nil
	}
	rows, _ := tx.Query(ctx, "SELECT digest FROM retrace_blobs WHERE digest = ANY($1)", ev.BlobDigests())
	have, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	held := make(map[string]bool, len(have))
	for _, d := range have {
		held[d] = true
	}
	if err := storage.CheckReferences(ev, blobs, func(d string) bool { return held[d] }); err != nil {
		return err
	}
	return putBlobs(ctx, tx, blobs)
}

// putBlobs inserts contents checked already, those the database holds
// left as they are: what a digest names is the same whoever wrote it.
func putBlobs(ctx context.Context, tx pgx.Tx, blobs []state.Blob) error {
	if len(blobs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, bl := range blobs {
		data := bl.Data
		if data == nil {
			data = []byte{} // an empty file is content too, and bytea is NOT NULL
		}
		b.Queue("INSERT INTO retrace_blobs (digest, data, crc) VALUES ($1, $2, $3) ON CONFLICT (digest) DO NOTHING",
			bl.Digest, data, blobChecksum(bl.Digest, data))
	}
	return tx.SendBatch(ctx, b).Close()
}

// SetHead moves the head to version.
func (s *Store) SetHead(ctx context.Context, id string, version int) error {
	if err := s.autoClaim(ctx, id); err != nil {
		return err
	}
	err := s.write(ctx, id, version, true, func(tx pgx.Tx, l locked) error {
		if err := l.row.missing(version); err != nil {
			return err
		}
		phase, err := s.phaseAt(id, version, l)
		if err != nil {
			return err
		}
		now, err := nanos(s.opts.Now())
		if err != nil {
			return err
		}
		l.row.head, l.row.phase, l.row.updated = version, phase.String(), now
		return putSession(ctx, tx, l.row)
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		_ = s.Release(id)
	}
	return s.wrap(err, "move the head of", id)
}

// Rename sets a session's title. It needs no claim: a title is not part
// of any version.
func (s *Store) Rename(ctx context.Context, id, title string) error {
	err := s.write(ctx, id, 0, false, func(tx pgx.Tx, l locked) error {
		l.row.title = title
		return putSession(ctx, tx, l.row)
	})
	return s.wrap(err, "rename", id)
}

// Delete removes a session and its checkpoints (the rows go with it, ON
// DELETE CASCADE); the file contents stay, for other sessions may share
// them.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.autoClaim(ctx, id); err != nil {
		return err
	}
	err := s.write(ctx, id, 0, true, func(tx pgx.Tx, _ locked) error {
		_, err := tx.Exec(ctx, "DELETE FROM retrace_sessions WHERE id = $1", id)
		return err
	})
	if err == nil || errors.Is(err, storage.ErrSessionNotFound) {
		_ = s.Release(id)
	}
	return s.wrap(err, "delete", id)
}
