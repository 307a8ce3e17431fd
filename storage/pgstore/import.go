package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// Import keeps an exported session, checked whole first, in one
// transaction: the session is visible complete or not at all. The
// checkpoints go in by COPY, so a session of many thousands costs one
// round of the wire, not one per checkpoint.
func (s *Store) Import(ctx context.Context, ex storage.Export) (storage.SessionInfo, error) {
	records, err := storage.CheckImport(ex)
	if err != nil {
		return storage.SessionInfo{}, err
	}
	in := ex.Session
	id := in.ID
	if id == "" {
		id = newID() // 64 random bits: the insert below checks anyway
	} else if !validID.MatchString(id) {
		return storage.SessionInfo{}, fmt.Errorf("import: session id %q is not one retrace makes (1 to 64 letters, digits, - or _): %w", id, storage.ErrInvalid)
	}
	row := sessionRow{id: id, title: in.Title, model: in.Model, wspace: in.Workspace,
		head: in.Head, versions: in.Versions, phase: in.Phase.String(), removed: flatRuns(storage.Gaps(records, in.Versions))}
	if row.created, err = nanos(in.CreatedAt); err == nil {
		row.updated, err = nanos(in.UpdatedAt)
	}
	if err != nil {
		return storage.SessionInfo{}, fmt.Errorf("import: the session's times: %w", err)
	}
	cps := make([][]any, len(records))
	var blobs []string
	for i, r := range records {
		// CheckImport hashed every content and named each in the event
		// of the first checkpoint that refers to it.
		for _, b := range r.Data.Blobs {
			blobs = append(blobs, b.Digest)
		}
		rec, err := encodeCheckpoint(id, r.Version, r.Parent, r.Phase, r.Data)
		if err != nil {
			return storage.SessionInfo{}, fmt.Errorf("import: version %d: %v: %w", r.Version, err, storage.ErrInvalid)
		}
		cps[i] = []any{id, rec.version, rec.parent, rec.phase, rec.kind, rec.at, rec.body, rec.bodyCRC, rec.crc}
	}

	_, ours := s.claimOf(id)
	if err := s.autoClaim(ctx, id); err != nil {
		return storage.SessionInfo{}, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ok, err := insertSession(ctx, tx, row)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s holds session %s already; delete it first ('retrace rm %s') or import a copy under a new id (--new-id)", storage.ErrSessionExists, s.where, id, id)
		}
		if err := putImportBlobs(ctx, tx, ex, blobs); err != nil {
			return err
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"retrace_checkpoints"},
			[]string{"session_id", "version", "parent", "phase", "kind", "at_ns", "body", "body_crc", "crc"},
			pgx.CopyFromRows(cps))
		return err
	})
	if !ours {
		// The claim kept anyone from writing the session while it was
		// made; a claim the caller held before stays theirs.
		_ = s.Release(id)
	}
	if err != nil {
		return storage.SessionInfo{}, s.errorf("import session %s into %s: %w", id, s.where, err)
	}
	return s.info(row.sealed())
}

// importBatchBytes bounds the contents one round of an import's inserts
// carries: an export's contents are read one at a time and sent a few
// MiB at a time, never held all at once. A content larger than
// importPiece goes alone, in pieces (see putLargeBlob).
const importBatchBytes = 4 << 20

// putImportBlobs keeps the contents an import carries, read from ex as
// they are sent.
func putImportBlobs(ctx context.Context, tx pgx.Tx, ex storage.Export, digests []string) error {
	var batch []state.Blob
	size := 0
	flush := func() error {
		err := putBlobs(ctx, tx, batch)
		batch, size = nil, 0
		return err
	}
	for _, d := range digests {
		if ex.ContentSize(d) > importPiece {
			if err := putLargeBlob(ctx, tx, ex, d); err != nil {
				return err
			}
			continue
		}
		data, err := ex.Content(d)
		if err != nil {
			return err
		}
		batch, size = append(batch, state.Blob{Digest: d, Data: data}), size+len(data)
		if size >= importBatchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
