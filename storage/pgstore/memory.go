package pgstore

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// The memory log is a table of its own (migrations/0002_memory.sql), and
// its snapshot another (0003_memory_now.sql). An append locks the log
// against other appends (reads go on), reads the memories as they are
// (the whole log, checked row by row, at a Store's first append or for a
// restore; from the snapshot after), inserts the next version and, every
// storage.MemorySnapshotEvery versions, keeps a new snapshot, in one
// transaction.

// AppendMemory keeps ev as the memory log's next version.
func (s *Store) AppendMemory(ctx context.Context, ev state.MemoryEvent) (state.MemoryEvent, error) {
	var kept state.MemoryEvent
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.lockMemory(ctx, tx); err != nil {
			return err
		}
		cur, base := state.Memories{}, -1
		var err error
		if !s.memoryChecked.Load() || ev.Kind == state.MemoryRestored {
			// A restore brings back a version only the whole log knows.
			// The snapshot is checked against the fold: a sound one
			// need not be kept anew.
			if cur, err = s.foldMemory(ctx, tx); err == nil {
				s.memoryChecked.Store(true)
				if v, serr := s.checkMemorySnapshot(ctx, tx, cur); serr == nil {
					base = v
				}
			}
		} else {
			cur, base, err = s.memoriesNowIn(ctx, tx)
		}
		if err != nil {
			return err
		}
		var next state.Memories
		if kept, next, err = storage.NextMemory(cur, ev, s.opts.Now(), newID); err != nil {
			return err
		}
		body, err := json.Marshal(kept)
		if err != nil {
			return err
		}
		crc := memoryCRC(kept.Version, body)
		if _, err = tx.Exec(ctx, "INSERT INTO retrace_memory (version, body, crc) VALUES ($1, $2, $3)", kept.Version, body, crc); err != nil {
			return err
		}
		if !storage.SnapshotDue(kept, base) {
			return nil
		}
		return keepMemorySnapshot(ctx, tx, next, crc)
	})
	if err != nil {
		return state.MemoryEvent{}, s.memoryError("keep a memory in", err)
	}
	return kept, nil
}

// lockMemory locks the log against other writers until tx ends, and
// checks the schema is still this build's.
func (s *Store) lockMemory(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "LOCK TABLE retrace_memory IN EXCLUSIVE MODE"); err != nil {
		return err
	}
	var schema int
	if err := tx.QueryRow(ctx, "SELECT version FROM retrace_schema").Scan(&schema); err != nil {
		return err
	}
	return s.checkSchema(schema)
}

// MemoryEvents returns the memory log.
func (s *Store) MemoryEvents(ctx context.Context) ([]state.MemoryEvent, error) {
	log, err := s.readMemory(ctx, s.pool, 0)
	if err != nil {
		return nil, s.memoryError("read the memories of", err)
	}
	return log, nil
}

func (s *Store) memoryError(what string, err error) error {
	var me *state.MemoryError
	if errors.Is(err, storage.ErrCorrupt) || errors.Is(err, storage.ErrTooNew) || errors.As(err, &me) {
		return err
	}
	return s.errorf("%s %s: %w", what, s.where, err)
}

// querier is what both a pool and a transaction can do.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// foldMemory reads the whole log and folds it: a row that does not follow
// the ones before it is damage.
func (s *Store) foldMemory(ctx context.Context, q querier) (state.Memories, error) {
	log, err := s.readMemory(ctx, q, 0)
	if err != nil {
		return state.Memories{}, err
	}
	return storage.FoldStored(s.where, log)
}

// readMemory reads the log's rows after version from, each checked
// against its CRC and its version, and the versions running on from it
// one by one.
func (s *Store) readMemory(ctx context.Context, q querier, from int) ([]state.MemoryEvent, error) {
	rows, err := q.Query(ctx, "SELECT version, body, crc FROM retrace_memory WHERE version > $1 ORDER BY version", from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var log []state.MemoryEvent
	for rows.Next() {
		var v int
		var body []byte
		var crc int64
		if err := rows.Scan(&v, &body, &crc); err != nil {
			return nil, err
		}
		if want := from + len(log) + 1; v != want {
			return nil, storage.MemoryDamage(s.where, want, "is missing")
		}
		if memoryCRC(v, body) != crc {
			return nil, storage.MemoryDamage(s.where, v, "checksum mismatch")
		}
		var ev state.MemoryEvent
		if err := json.Unmarshal(body, &ev); err != nil || ev.Version != v {
			return nil, storage.MemoryDamage(s.where, v, "not the entry its row says (%v)", err)
		}
		log = append(log, ev)
	}
	return log, rows.Err()
}

func memoryCRC(version int, body []byte) int64 {
	return crcBuf(nil).num(int64(version)).str(string(body)).sum()
}
