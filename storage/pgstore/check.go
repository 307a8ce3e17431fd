package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
)

// Check reads everything the store keeps and checks it, as
// `retrace verify` does a file: every session's row, every checkpoint's
// header and event against their checksums (Export reads them all), the version tree replayed
// whole (storage.CheckImport: parents, phases, events that apply), and
// every file content against its digest. The first damage found is the
// error, a *storage.CorruptError naming what.
func (s *Store) Check(ctx context.Context) (storage.CheckReport, error) {
	var rep storage.CheckReport
	list, err := s.Sessions(ctx)
	if err != nil {
		return rep, err
	}
	for _, info := range list {
		ex, err := s.Export(ctx, info.ID)
		if err != nil {
			return rep, err
		}
		if _, err := storage.CheckImport(ex); err != nil {
			return rep, s.corrupt(info.ID, 0, fmt.Sprintf("its versions do not hold together: %v", err))
		}
		rep.Sessions++
		rep.Checkpoints += len(ex.Checkpoints)
	}
	rows, err := s.pool.Query(ctx, "SELECT digest, data, crc FROM retrace_blobs ORDER BY digest")
	if err != nil {
		return rep, s.wrap(err, "read the file contents", "")
	}
	var digest string
	var data []byte
	var crc int64
	_, err = pgx.ForEachRow(rows, []any{&digest, &data, &crc}, func() error {
		rep.Contents++
		return s.checkBlob(digest, data, crc)
	})
	if err != nil {
		return rep, s.wrap(err, "check the file contents", "")
	}
	log, err := s.MemoryEvents(ctx)
	if err != nil {
		return rep, err
	}
	m, err := storage.FoldStored(s.where, log)
	if err != nil {
		return rep, err
	}
	if _, err := s.checkMemorySnapshot(ctx, s.pool, m); err != nil {
		return rep, err
	}
	rep.Memories = len(log)
	rep.Bytes, err = s.Size(ctx)
	return rep, err
}
