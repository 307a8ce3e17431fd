package pgstore

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// SchemaVersion is the schema this build writes, for the tests.
var SchemaVersion = schemaVersion

// PutMemorySnapshot keeps a snapshot of m, naming the entry checksum
// entry, as the store's, whatever the log holds: for the tests.
func PutMemorySnapshot(ctx context.Context, s *Store, m state.Memories, entry uint64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		body := storage.EncodeMemorySnapshot(m, entry)
		_, err := tx.Exec(ctx, "UPDATE retrace_memory_now SET body = $1, crc = $2", body, snapshotCRC(body))
		return err
	})
}

// PutMemoryRow writes ev as the memory log's row, as an older build
// would, leaving the snapshot as it is: for the tests.
func PutMemoryRow(ctx context.Context, s *Store, ev state.MemoryEvent) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, "INSERT INTO retrace_memory (version, body, crc) VALUES ($1, $2, $3)", ev.Version, body, memoryCRC(ev.Version, body))
	return err
}
