package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"retrace/state"
	"retrace/storage"
)

// copyPiece is how much of a content CopyBlob takes from the server at
// once, as an import sends it (importPiece).
const copyPiece = importPiece

// copyQuery cuts one content into pieces of $2 bytes, one row each, with
// the row's checksum and the content's length on every row. The subquery
// reads the value whole once, decompressed (OFFSET 0 keeps the planner
// from folding it into each row's substring): a substring of the stored
// value is cheap only where the value is stored uncompressed, and a
// compressed one is decompressed from its start for every piece, which
// made 150 MiB of text take 13 s of the server's time where this takes
// a third of one. The server holds the value meanwhile; the store holds
// a piece. An empty content is one empty piece.
const copyQuery = `SELECT s.crc, s.len, g, substring(s.d FROM g FOR $2)
	FROM (SELECT crc, octet_length(data) AS len, data || ''::bytea AS d
		FROM retrace_blobs WHERE digest = $1 OFFSET 0) s,
	LATERAL generate_series(1, greatest(s.len, 1), $2) g`

// CopyBlob writes a file content to w a piece at a time (see
// storage.Exporter): one query whose rows are the content's pieces, read
// as they come, so the store holds one piece, never the content. The
// row's checksum and the digest are computed over the pieces as they go,
// and compared before the last piece is written.
func (s *Store) CopyBlob(ctx context.Context, digest string, w io.Writer) error {
	if !state.ValidDigest(digest) {
		return fmt.Errorf("file content %q: not a sha256 digest: %w", digest, storage.ErrInvalid)
	}
	// A writer that fails ends the query: the rest of the content is not
	// worth the server's sending.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, copyQuery, digest, copyPiece)
	if err != nil {
		return s.errorf("read file content %s in %s: %w", digest, s.where, err)
	}
	defer rows.Close()
	c := pieceCheck{digest: digest, sum: crc32.Checksum(crcBuf(nil).str(digest), castagnoli), h: sha256.New()}
	var buf []byte
	n := 0
	for ; rows.Next(); n++ {
		var at int64
		if err := rows.Scan(&c.crc, &c.size, &at, &buf); err != nil {
			return s.errorf("read file content %s in %s: %w", digest, s.where, err)
		}
		off := int64(n) * copyPiece
		if want := min(copyPiece, c.size-off); at != off+1 || int64(len(buf)) != max(want, 0) {
			return &storage.CorruptError{Path: s.where, Blob: digest, Reason: fmt.Sprintf("piece %d came from byte %d with %d bytes, not from byte %d with %d", n, at-1, len(buf), off, want)}
		}
		c.sum = crc32.Update(c.sum, castagnoli, buf)
		c.h.Write(buf)
		// The last piece waits for the checks: a content of one piece
		// that is not what its digest says is never written.
		if c.last = off+copyPiece >= c.size; c.last {
			if err := s.checkCopied(c); err != nil {
				return err
			}
		}
		if _, err := w.Write(buf); err != nil {
			cancel()
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.errorf("read file content %s in %s: %w", digest, s.where, err)
	}
	switch {
	case n == 0:
		return fmt.Errorf("%s holds no file content %s: %w", s.where, digest, storage.ErrBlobNotFound)
	case !c.last:
		return &storage.CorruptError{Path: s.where, Blob: digest, Reason: fmt.Sprintf("%d of its pieces came, not the last", n)}
	}
	return nil
}

// pieceCheck is what a copy computes over a content's pieces, and what
// the row says they must come to.
type pieceCheck struct {
	digest    string
	crc, size int64 // the row's
	sum       uint32
	h         hash.Hash
	last      bool // the last piece came
}

// checkCopied compares what a copy computed over a content's pieces with
// its row's checksum and its digest.
func (s *Store) checkCopied(c pieceCheck) error {
	if int64(c.sum) != c.crc {
		return &storage.CorruptError{Path: s.where, Blob: c.digest, Reason: fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", c.crc, c.sum)}
	}
	if got := "sha256:" + hex.EncodeToString(c.h.Sum(nil)); got != c.digest {
		return &storage.CorruptError{Path: s.where, Blob: c.digest, Reason: fmt.Sprintf("its %d bytes hash to %s", c.size, got)}
	}
	return nil
}
