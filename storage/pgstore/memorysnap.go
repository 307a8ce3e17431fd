package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// errWholeLog says the snapshot cannot serve: there is none, it is
// damaged, or it is not of this log's rows. The whole log is read.
var errWholeLog = errors.New("the memory log is read whole")

// MemoriesNow returns the memories as they are now, read in one
// repeatable-read transaction, so that the snapshot and the rows after
// it are of one moment.
func (s *Store) MemoriesNow(ctx context.Context) (state.Memories, error) {
	var m state.Memories
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, s.pool, opts, func(tx pgx.Tx) error {
		var err error
		m, _, err = s.memoriesNowIn(ctx, tx)
		return err
	})
	if err != nil {
		return state.Memories{}, s.memoryError("read the memories of", err)
	}
	return state.Folded(m.Version, m.List), nil
}

// memoriesNowIn is the snapshot with the rows after it applied or, when
// the snapshot cannot serve, the whole log folded; and the version of the
// snapshot it started from, -1 when it folded the whole log.
func (s *Store) memoriesNowIn(ctx context.Context, q querier) (state.Memories, int, error) {
	m, base, err := s.memoriesAfterSnapshot(ctx, q)
	if errors.Is(err, errWholeLog) {
		m, err = s.foldMemory(ctx, q)
		return m, -1, err
	}
	return m, base, err
}

func (s *Store) memoriesAfterSnapshot(ctx context.Context, q querier) (state.Memories, int, error) {
	snap, ok, err := readMemorySnapshot(ctx, q)
	if err != nil || !ok {
		return state.Memories{}, 0, errors.Join(err, errWholeLog)
	}
	if snap.Version > 0 {
		var crc int64
		err := q.QueryRow(ctx, "SELECT crc FROM retrace_memory WHERE version = $1", snap.Version).Scan(&crc)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && uint64(crc) != snap.Entry {
			return state.Memories{}, 0, errWholeLog
		}
		if err != nil {
			return state.Memories{}, 0, err
		}
	}
	var behind int
	if err := q.QueryRow(ctx, "SELECT count(*) FROM retrace_memory WHERE version > $1", snap.Version).Scan(&behind); err != nil {
		return state.Memories{}, 0, err
	}
	if behind > 2*storage.MemorySnapshotEvery {
		// Far behind the log (an older build appended): the whole log
		// costs about as much.
		return state.Memories{}, 0, errWholeLog
	}
	tail, err := s.readMemory(ctx, q, snap.Version)
	if errors.Is(err, storage.ErrCorrupt) {
		return state.Memories{}, 0, errWholeLog // the whole read names it
	}
	if err != nil {
		return state.Memories{}, 0, err
	}
	m, ok := storage.MemoriesAfter(snap, tail)
	if !ok {
		return state.Memories{}, 0, errWholeLog
	}
	return m, snap.Version, nil
}

// readMemorySnapshot reads the snapshot's row, if there is a sound one.
func readMemorySnapshot(ctx context.Context, q querier) (storage.MemorySnapshot, bool, error) {
	var body []byte
	var crc int64
	err := q.QueryRow(ctx, "SELECT body, crc FROM retrace_memory_now WHERE id = 1").Scan(&body, &crc)
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.MemorySnapshot{}, false, nil
	}
	if err != nil {
		return storage.MemorySnapshot{}, false, err
	}
	if snapshotCRC(body) != crc {
		return storage.MemorySnapshot{}, false, nil
	}
	snap, err := storage.DecodeMemorySnapshot(body)
	return snap, err == nil, nil
}

// keepMemorySnapshot keeps next as the snapshot of the log whose row at
// next's version has the CRC last (0 for an empty log).
func keepMemorySnapshot(ctx context.Context, tx pgx.Tx, next state.Memories, last int64) error {
	body := storage.EncodeMemorySnapshot(next, uint64(last))
	_, err := tx.Exec(ctx, `INSERT INTO retrace_memory_now (id, body, crc) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body, crc = EXCLUDED.crc`, body, snapshotCRC(body))
	return err
}

func snapshotCRC(body []byte) int64 { return crcBuf(nil).str(string(body)).sum() }

// checkMemorySnapshot checks the snapshot against m, the whole log
// folded (every version known): it must be what the log's rows make of
// its version. It returns that version, -1 when there is no snapshot.
// Damage in it is derived, and passed over by every read.
func (s *Store) checkMemorySnapshot(ctx context.Context, q querier, m state.Memories) (int, error) {
	damaged := func(format string, args ...any) (int, error) {
		return -1, &storage.CorruptError{Path: s.where, Reason: "the memory log's snapshot " + fmt.Sprintf(format, args...), Derived: true}
	}
	var body []byte
	var crc int64
	err := q.QueryRow(ctx, "SELECT body, crc FROM retrace_memory_now WHERE id = 1").Scan(&body, &crc)
	if errors.Is(err, pgx.ErrNoRows) {
		return -1, nil
	}
	if err != nil {
		return -1, s.wrap(err, "read the memory log's snapshot", "")
	}
	if snapshotCRC(body) != crc {
		return damaged("fails its checksum")
	}
	snap, err := storage.DecodeMemorySnapshot(body)
	if err != nil {
		return damaged("%v", err)
	}
	then, ok := m.At(snap.Version)
	if !ok {
		return damaged("is of v%d, past the log's end (v%d)", snap.Version, m.Version)
	}
	var last int64
	if snap.Version > 0 {
		if err := q.QueryRow(ctx, "SELECT crc FROM retrace_memory WHERE version = $1", snap.Version).Scan(&last); err != nil {
			return -1, s.wrap(err, "read the memory log", "")
		}
	}
	if !bytes.Equal(body, storage.EncodeMemorySnapshot(state.Folded(snap.Version, then), uint64(last))) {
		return damaged("is not what the log's rows make of v%d", snap.Version)
	}
	return snap.Version, nil
}
