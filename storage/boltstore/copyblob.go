package boltstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// CopyBlob writes a file content to w a chunk at a time (see
// storage.Exporter). Each chunk is read in an operation of its own and
// written to w once that operation is over: the file's lock is never
// held while w waits (a pager, a pipe nobody reads), which would keep
// every writer out, and the process holds one chunk of the content,
// never the whole. The chunks are hashed as they go, and the whole is
// checked against the digest before the last chunk is written.
func (s *Store) CopyBlob(ctx context.Context, digest string, w io.Writer) error {
	k, ok := blobKey(digest)
	if !ok {
		return fmt.Errorf("file content %q: not a sha256 digest: %w", digest, storage.ErrInvalid)
	}
	h := sha256.New()
	var buf []byte
	var size uint64
	pieces := 1 // a content kept whole; its chunks' count once it is known
	for i := 0; i < pieces; i++ {
		var p piece
		err := s.viewIn(ctx, fileHead, func(tx *bolt.Tx) error {
			c, err := s.contentsOf(tx)
			if err != nil {
				return err
			}
			p, err = s.readPiece(c, k, i, buf[:0])
			return err
		})
		switch {
		case errors.Is(err, errNoFile):
			return s.noBlob(digest)
		case err != nil:
			return err
		case i == 0:
			size = p.size
			if p.chunked {
				pieces = chunkCount(size)
			}
		case !p.chunked || p.size != size:
			// Only gc removes a content, and the same digest put back is
			// the same bytes in the same chunks.
			return &storage.CorruptError{Path: s.path, Blob: digest, Reason: "it changed while it was read"}
		}
		buf = p.data
		h.Write(buf)
		// The last piece waits for the check: a content kept whole that
		// is not what its digest says is never written at all.
		if i == pieces-1 {
			if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest {
				return &storage.CorruptError{Path: s.path, Blob: digest, Reason: fmt.Sprintf("its %d bytes hash to %s", size, got)}
			}
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// piece is what one read of CopyBlob found: the content's length, whether
// it is kept in chunks, and the bytes read (the content, or one chunk).
type piece struct {
	size    uint64
	chunked bool
	data    []byte
}

// readPiece reads piece i of the content under key into dst: the content
// when it is kept whole (i is 0), chunk i when it is kept in chunks. The
// record under the key is read again each time, so that a content gc took
// meanwhile is missing, never read from pages reused since.
func (s *Store) readPiece(c contents, key []byte, i int, dst []byte) (piece, error) {
	digest := keyDigest(key)
	if err := s.guardBlob(key); err != nil {
		return piece{}, err
	}
	raw := c.blobs.Get(key)
	if raw == nil {
		return piece{}, s.noBlob(digest)
	}
	var p piece
	payload, err := unseal(raw)
	if err == nil {
		p.size, p.chunked, err = chunkedPayload(payload)
	}
	switch {
	case err != nil:
	case !p.chunked && i == 0:
		p.data, err = appendPayload(dst, payload)
		p.size = uint64(len(p.data))
	case !p.chunked:
		return p, nil // the caller finds it changed
	default:
		if err = s.guardChunk(key, i); err != nil {
			return piece{}, err
		}
		p.data, err = readChunk(c.chunks, key, i, p.size, dst)
	}
	if err != nil {
		return piece{}, &storage.CorruptError{Path: s.path, Blob: digest, Reason: err.Error()}
	}
	return p, nil
}

// readChunk reads chunk i of a chunked content of size bytes into dst,
// checked against its record's checksum and the length it must have.
// With the last chunk it checks that no chunk follows: a read of the
// whole content refuses one too.
func readChunk(chunks *bolt.Bucket, key []byte, i int, size uint64, dst []byte) ([]byte, error) {
	b := chunks.Bucket(key)
	if b == nil {
		return nil, errors.New("its chunks are missing")
	}
	cb := b.Bucket(chunkKey(i))
	if cb == nil {
		return nil, fmt.Errorf("its chunk %d is missing", i)
	}
	if last := chunkCount(size) - 1; i == last {
		if k, _ := b.Cursor().Last(); !bytes.Equal(k, chunkKey(last)) {
			return nil, fmt.Errorf("a stray key %x follows its last chunk", k)
		}
	}
	rec, err := chunkRecord(cb)
	var data []byte
	if err == nil {
		data, err = appendBlob(dst, rec)
	}
	if err == nil && uint64(len(data)) != min(size-uint64(i)*chunkSize, chunkSize) {
		err = fmt.Errorf("holds %d bytes, not %d", len(data), min(size-uint64(i)*chunkSize, chunkSize))
	}
	if err != nil {
		return nil, fmt.Errorf("chunk %d: %w", i, err)
	}
	return data, nil
}

// holds looks for a content's record, without reading the content.
func (s *Store) holds(c contents, digest string) error {
	k, ok := blobKey(digest)
	if !ok {
		return fmt.Errorf("file content %q: not a sha256 digest: %w", digest, storage.ErrInvalid)
	}
	if err := s.guardBlob(k); err != nil {
		return err
	}
	if c.blobs.Get(k) == nil {
		return s.noBlob(digest)
	}
	return nil
}
