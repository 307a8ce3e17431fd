package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
)

// Compact gives the space of removed rows back to the disk: VACUUM FULL
// of retrace's tables, which PostgreSQL rewrites, indexes and all. It
// refuses while another process holds a session, as compacting a file
// does; one that claims a session meanwhile waits for the rewrite (it
// locks the tables) and loses nothing. The role needs to own the tables.
func (s *Store) Compact(ctx context.Context) (storage.CompactReport, error) {
	var rep storage.CompactReport
	held, err := s.heldClaims(ctx)
	if err != nil {
		return rep, s.wrap(err, "compact", "")
	}
	if len(held) > 0 {
		h := held[0]
		return rep, s.wrap(&storage.BusyError{Session: h.id, PID: h.pid, Host: h.host}, "compact", "")
	}
	if rep.Before, err = s.Size(ctx); err != nil {
		return rep, err
	}
	if _, err := s.pool.Exec(ctx, "VACUUM FULL retrace_checkpoints, retrace_blobs, retrace_sessions, retrace_claims"); err != nil {
		return rep, s.wrap(err, "compact", "")
	}
	rep.After, err = s.Size(ctx)
	return rep, err
}

type heldClaim struct {
	id, host string
	pid      int
}

// heldClaims is every claim another store holds now.
func (s *Store) heldClaims(ctx context.Context) ([]heldClaim, error) {
	rows, _ := s.pool.Query(ctx, "SELECT session_id FROM retrace_claims ORDER BY session_id")
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []heldClaim
	for _, id := range ids {
		if pid, held := s.Holder(id); held {
			var host string
			_ = s.pool.QueryRow(ctx, "SELECT host FROM retrace_claims WHERE session_id = $1", id).Scan(&host)
			out = append(out, heldClaim{id: id, host: host, pid: pid})
		}
	}
	return out, nil
}
