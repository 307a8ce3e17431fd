package pgstore

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/jackc/pgx/v5"

	"retrace/storage"
)

// importPiece is how much of a large content an import sends at once.
// The pieces wait in a temporary table of the import's transaction, and
// the server joins them into the content's row: the import holds one
// piece in memory, never the content, which may be hundreds of MiB.
const importPiece = 1 << 20

// putLargeBlob keeps one large content of ex, read and sent a piece at a
// time, unless the database holds it already. Its checksum is computed
// as it is read, and the reader checks the whole against its digest
// before the row is made.
func putLargeBlob(ctx context.Context, tx pgx.Tx, ex storage.Export, digest string) error {
	var held bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM retrace_blobs WHERE digest = $1)", digest).Scan(&held); err != nil {
		return err
	}
	if held {
		return nil
	}
	r, err := ex.OpenContent(digest)
	if err != nil {
		return err
	}
	// ON COMMIT DROP: the table goes with the transaction, whatever
	// becomes of it; a second large content of the same import empties it.
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE IF NOT EXISTS retrace_import_pieces (n integer PRIMARY KEY, data bytea NOT NULL) ON COMMIT DROP"); err != nil {
		return fmt.Errorf("a table for the pieces of file content %s: %w", digest, err)
	}
	if _, err := tx.Exec(ctx, "TRUNCATE retrace_import_pieces"); err != nil {
		return err
	}
	crc := crc32.Checksum(crcBuf(nil).str(digest), castagnoli)
	buf := make([]byte, importPiece)
	for n := 0; ; n++ {
		m, err := io.ReadFull(r, buf)
		if m > 0 {
			crc = crc32.Update(crc, castagnoli, buf[:m])
			if _, err := tx.Exec(ctx, "INSERT INTO retrace_import_pieces (n, data) VALUES ($1, $2)", n, buf[:m]); err != nil {
				return fmt.Errorf("send file content %s: %w", digest, err)
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read file content %s from the export: %w", digest, err)
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO retrace_blobs (digest, data, crc)
		SELECT $1, string_agg(data, ''::bytea ORDER BY n), $2 FROM retrace_import_pieces
		ON CONFLICT (digest) DO NOTHING`, digest, int64(crc))
	if err != nil {
		return fmt.Errorf("keep file content %s: %w", digest, err)
	}
	return nil
}
