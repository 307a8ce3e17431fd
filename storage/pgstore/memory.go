package pgstore

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// The memory log is a table of its own (migrations/0002_memory.sql). An
// append locks the table against other appends (reads go on), reads and
// folds the whole log, checked row by row, and inserts the next version,
// in one transaction.

// AppendMemory keeps ev as the memory log's next version.
func (s *Store) AppendMemory(ctx context.Context, ev state.MemoryEvent) (state.MemoryEvent, error) {
	var kept state.MemoryEvent
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE retrace_memory IN EXCLUSIVE MODE"); err != nil {
			return err
		}
		var schema int
		if err := tx.QueryRow(ctx, "SELECT version FROM retrace_schema").Scan(&schema); err != nil {
			return err
		}
		if err := s.checkSchema(schema); err != nil {
			return err
		}
		log, err := s.readMemory(ctx, tx)
		if err != nil {
			return err
		}
		cur, err := storage.FoldStored(s.where, log)
		if err != nil {
			return err
		}
		if kept, err = storage.NextMemory(cur, ev, s.opts.Now(), newID); err != nil {
			return err
		}
		body, err := json.Marshal(kept)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "INSERT INTO retrace_memory (version, body, crc) VALUES ($1, $2, $3)",
			kept.Version, body, memoryCRC(kept.Version, body))
		return err
	})
	if err != nil {
		return state.MemoryEvent{}, s.memoryError("keep a memory in", err)
	}
	return kept, nil
}

// MemoryEvents returns the memory log.
func (s *Store) MemoryEvents(ctx context.Context) ([]state.MemoryEvent, error) {
	log, err := s.readMemory(ctx, s.pool)
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
}

// readMemory reads the log, each row checked against its CRC and its
// version, and the versions running 1, 2, 3...
func (s *Store) readMemory(ctx context.Context, q querier) ([]state.MemoryEvent, error) {
	rows, err := q.Query(ctx, "SELECT version, body, crc FROM retrace_memory ORDER BY version")
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
		if v != len(log)+1 {
			return nil, storage.MemoryDamage(s.where, len(log)+1, "is missing")
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
