package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
)

// A claim is a session-level advisory lock, pg_try_advisory_lock on a key
// made from the session id, taken on a connection of its own that the
// claim holds until Release or Close. PostgreSQL drops the lock when that
// connection ends, however it ends: the process killed, the machine gone,
// the backend terminated.
//
// A lost claim must not go on writing as if it held the session: another
// store may claim it the moment the lock is gone. So every write checks,
// inside its own transaction and after it has locked the session's row,
// that the claim's backend (its pid and start time, so a pid used again is
// not mistaken for it) still holds the lock, in pg_locks. A write whose
// claim is gone fails with storage.ErrClaimLost and the claim is dropped. Once the
// check passes the write cannot be overtaken: any other writer has first
// to lock the same row, which waits for this transaction to end, and then
// finds the head moved (a ConflictError).
type claim struct {
	conn    *pgx.Conn
	backend int32     // the claim connection's backend pid
	started time.Time // and its start, which tells it from a later backend of that pid
}

// lockKey is a session's advisory lock key: the first 8 bytes of a hash of
// its id, in a space of retrace's own.
func lockKey(id string) int64 {
	sum := sha256.Sum256([]byte("retrace session claim\x00" + id))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// lockHeld is SQL that is true while the backend with pid and start time
// (SQL expressions) holds the advisory lock with key (an SQL expression)
// in this database. A bigint key shows in pg_locks as classid (its high
// half) and objid (its low half), objsubid 1.
func lockHeld(key, pid, start string) string {
	return `EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	  AND l.classid = ((` + key + `::bigint >> 32) & 4294967295)::oid
	  AND l.objid = (` + key + `::bigint & 4294967295)::oid
	  AND l.pid = ` + pid + ` AND a.backend_start = ` + start + `)`
}

// Claim makes this store the session's writer. A claim this store holds
// already is checked to be alive, and taken afresh if its connection was
// lost (writes find that out for themselves; see claim).
func (s *Store) Claim(ctx context.Context, id string) error {
	if _, err := s.Session(ctx, id); err != nil {
		return err
	}
	s.claimMu.Lock()
	if c, ok := s.claims[id]; ok && c.conn.Ping(ctx) != nil {
		delete(s.claims, id)
		c.conn.Close(context.Background())
	}
	s.claimMu.Unlock()
	return s.autoClaim(ctx, id)
}

// autoClaim claims a session before a write, without first checking it
// exists (the write does; a claim on a missing session is dropped again).
func (s *Store) autoClaim(ctx context.Context, id string) error {
	if !validID.MatchString(id) {
		return s.notFound(id)
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.closed {
		return fmt.Errorf("session %s: the store on %s is closed", id, s.where)
	}
	if _, ok := s.claims[id]; ok {
		return nil
	}
	c, err := s.takeClaim(ctx, id)
	if err != nil {
		return err
	}
	s.claims[id] = c
	return nil
}

// takeClaim connects, tries the lock, and on success writes who holds it.
func (s *Store) takeClaim(ctx context.Context, id string) (*claim, error) {
	conn, err := pgx.ConnectConfig(ctx, s.config)
	if err != nil {
		return nil, s.errorf("claim session %s in %s: %w", id, s.where, err)
	}
	fail := func(err error) (*claim, error) {
		conn.Close(context.Background())
		return nil, err
	}
	key := lockKey(id)
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got); err != nil {
		return fail(s.errorf("claim session %s in %s: %w", id, s.where, err))
	}
	if !got {
		return fail(s.busy(ctx, conn, id))
	}
	c := &claim{conn: conn}
	err = conn.QueryRow(ctx, `INSERT INTO retrace_claims (session_id, host, pid, backend_pid, backend_start)
		SELECT $1, $2, $3, pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()
		ON CONFLICT (session_id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
			backend_pid = excluded.backend_pid, backend_start = excluded.backend_start
		RETURNING backend_pid, backend_start`, id, s.opts.Host, os.Getpid()).Scan(&c.backend, &c.started)
	if err != nil {
		return fail(s.errorf("claim session %s in %s: %w", id, s.where, err))
	}
	return c, nil
}

// busy is the BusyError for a session another backend holds, naming the
// holder's pid and host when its row is that backend's.
func (s *Store) busy(ctx context.Context, conn *pgx.Conn, id string) error {
	be := &storage.BusyError{Session: id}
	_ = conn.QueryRow(ctx, `SELECT host, pid FROM retrace_claims c
		WHERE session_id = $2 AND `+lockHeld("$1", "c.backend_pid", "c.backend_start"), lockKey(id), id).Scan(&be.Host, &be.PID)
	return fmt.Errorf("%s: %w", s.where, be)
}

// Release gives up the claim on a session.
func (s *Store) Release(id string) error {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	c, ok := s.claims[id]
	if !ok {
		return nil
	}
	delete(s.claims, id)
	return s.unclaim(id, c)
}

// unclaim removes the holder's row and ends the claim's connection, which
// ends the lock. A connection already lost has nothing left to release.
func (s *Store) unclaim(id string, c *claim) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Unlock before closing: a closed connection's backend lets go of
	// the lock only once it has exited, which a claimer right after us
	// would otherwise race.
	_, _ = c.conn.Exec(ctx, "DELETE FROM retrace_claims WHERE session_id = $1 AND backend_pid = pg_backend_pid()", id)
	_, _ = c.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", lockKey(id))
	if err := c.conn.Close(ctx); err != nil && !c.conn.IsClosed() {
		return s.errorf("release session %s in %s: %w", id, s.where, err)
	}
	return nil
}

// claimOf returns the store's claim on a session, for a write to check.
func (s *Store) claimOf(id string) (*claim, bool) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	c, ok := s.claims[id]
	return c, ok
}

// lost drops a claim a write found gone, and says so.
func (s *Store) lost(id string, c *claim) error {
	s.claimMu.Lock()
	if s.claims[id] == c {
		// Ours to end: Release and Close take a claim out of the map
		// before they end it, so no two end the same connection.
		delete(s.claims, id)
		c.conn.Close(context.Background())
	}
	s.claimMu.Unlock()
	return fmt.Errorf("session %s in %s: this store's claim ended with its connection (backend %d); another process may write the session now, so nothing was written: claim it again and reload: %w",
		id, s.where, c.backend, storage.ErrClaimLost)
}

// Holder reports which process holds the session's claim: its pid and
// true while another one does, as the interface's follower asks it. A
// claim this store holds is not another's; an error reading the claims
// says nobody, as a follower only asks to offer a take-over, which claims
// for real.
func (s *Store) Holder(id string) (pid int, held bool) {
	if !validID.MatchString(id) {
		return 0, false
	}
	if s.holds(id) {
		return os.Getpid(), false
	}
	ctx := context.Background()
	err := s.pool.QueryRow(ctx, `SELECT pid FROM retrace_claims c WHERE session_id = $2 AND `+
		lockHeld("$1", "c.backend_pid", "c.backend_start"), lockKey(id), id).Scan(&pid)
	if err != nil {
		return 0, false
	}
	return pid, true
}

// holds reports whether this store has a claim on the session (alive or
// not: its writes find out).
func (s *Store) holds(id string) bool {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	_, ok := s.claims[id]
	return ok
}
