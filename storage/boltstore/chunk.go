package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// A content larger than chunkSize is kept in chunks, each a record of its
// own (schema 7):
//
//	blobs/<sha256>           sealed: codec 2 (chunked), uvarint the content's length
//	chunks/<sha256>/         bucket: the content's chunks, in order
//	    <uint32, big-endian>/  bucket: one chunk
//	        chunk            sealed, encoded as a blob record is (codec 0 or 1)
//
// bbolt keeps a value whole on the pages of one leaf, never splits a leaf
// of four keys or fewer, and writes a leaf it changes whole again: a
// content of 32 MiB beside others made every commit that touched its leaf
// copy and rewrite them all. Chunks of 1 MiB bound what one write copies,
// and let an import write a large content a chunk or two per transaction,
// holding only those in memory. Each chunk is alone in a bucket of its
// own so that adding the next writes only the next: chunks side by side
// in one bucket share leaves, and adding one rewrote up to three before
// it.
//
// The record under the digest is put in the transaction that puts the
// chunks, or moves them in (an import, see stageChunks), never before: a
// content the blobs bucket names is whole. Every read reassembles the
// chunks and checks the whole against the digest, as for any content.
const chunkSize = 1 << 20

const codecChunks = 2

var (
	chunksBucket   = []byte("chunks")
	chunkRecordKey = []byte("chunk")
)

// sealedBlob is one content as the file keeps it: the record under its
// digest and, for a chunked content, its chunks' records in order.
type sealedBlob struct {
	head   []byte
	chunks [][]byte
	staged *bolt.Bucket // or where an import staged the chunks, to move them from
}

// sealContent seals data: in one record, or in chunks past chunkSize.
func sealContent(data []byte) sealedBlob {
	if len(data) <= chunkSize {
		return sealedBlob{head: encodeBlob(data)}
	}
	try := compressible(data)
	sb := sealedBlob{head: chunkedHead(int64(len(data))), chunks: make([][]byte, 0, chunkCount(uint64(len(data))))}
	for off := 0; off < len(data); off += chunkSize {
		rec, _ := encodeChunk(data[off:min(off+chunkSize, len(data))], try)
		sb.chunks = append(sb.chunks, rec)
	}
	return sb
}

// encodeChunk seals one chunk as a blob record, compressed only if try
// and that makes it smaller, which it reports.
func encodeChunk(p []byte, try bool) ([]byte, bool) {
	buf := make([]byte, sealSize, sealSize+1+binary.MaxVarintLen64+len(p)+len(p)>>7+64)
	head := func(codec byte) []byte {
		return binary.AppendUvarint(append(buf[:sealSize], codec), uint64(len(p)))
	}
	if try {
		z := head(codecZstd)
		if out := zstdEncoder().EncodeAll(p, z); len(out)-len(z) < len(p) {
			return seal(out), len(out)-len(z) < len(p)*9/10
		}
	}
	return seal(append(head(codecRaw), p...)), false
}

// chunkedHead is the record under a chunked content's digest.
func chunkedHead(size int64) []byte {
	buf := append(make([]byte, sealSize, sealSize+1+binary.MaxVarintLen64), codecChunks)
	return seal(binary.AppendUvarint(buf, uint64(size)))
}

// chunkCount is how many chunks a content of size bytes is kept in.
func chunkCount(size uint64) int { return int((size + chunkSize - 1) / chunkSize) }

// chunkKey is chunk i's key in its content's bucket.
func chunkKey(i int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(i)) }

// chunkedSize returns the length a head record declares when it is a
// chunked content's, and ok false for a content kept whole.
func chunkedSize(head []byte) (size uint64, ok bool, err error) {
	p, err := unseal(head)
	if err != nil {
		return 0, false, err
	}
	return chunkedPayload(p)
}

// chunkedPayload is chunkedSize of a record unsealed already.
func chunkedPayload(p []byte) (size uint64, ok bool, err error) {
	if len(p) < 1 || p[0] != codecChunks {
		return 0, false, nil
	}
	size, n := binary.Uvarint(p[1:])
	switch {
	case n <= 0 || 1+n != len(p):
		return 0, false, errors.New("bad chunked content length")
	case size <= chunkSize:
		return 0, false, fmt.Errorf("declares %d bytes in chunks, which a record holds whole", size)
	case size > maxBlobSize:
		return 0, false, fmt.Errorf("content length %d is more than a blob may hold", size)
	}
	return size, true, nil
}

// chunksOf returns the bucket of chunked contents, or the damage its
// absence is, as sessionsOf does.
func (s *Store) chunksOf(tx *bolt.Tx) (*bolt.Bucket, error) {
	if b := tx.Bucket(chunksBucket); b != nil {
		return b, nil
	}
	return nil, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("bucket %q is missing", chunksBucket)}
}

// putChunks puts a chunked content's chunks under key, in place of any
// left there (none are, in a file that is not damaged).
func putChunks(chunks *bolt.Bucket, key []byte, recs [][]byte) error {
	if chunks.Bucket(key) != nil {
		if err := chunks.DeleteBucket(key); err != nil {
			return err
		}
	}
	b, err := chunks.CreateBucket(key)
	if err != nil {
		return err
	}
	return addChunks(b, 0, recs)
}

// addChunks puts recs into a content's bucket as chunks from... on.
func addChunks(b *bolt.Bucket, from int, recs [][]byte) error {
	b.FillPercent = 1.0 // keys only grow
	for i, rec := range recs {
		cb, err := b.CreateBucket(chunkKey(from + i))
		if err != nil {
			return err
		}
		if err := cb.Put(chunkRecordKey, rec); err != nil {
			return err
		}
	}
	return nil
}

// dropChunks removes a content's chunks, if it has any.
func dropChunks(chunks *bolt.Bucket, key []byte) error {
	if chunks.Bucket(key) == nil {
		return nil
	}
	return chunks.DeleteBucket(key)
}

// eachChunk calls fn with each chunk of a content of size bytes, in
// order, checking that they are all there, each where it belongs, and
// nothing else is.
func eachChunk(chunks *bolt.Bucket, key []byte, size uint64, fn func(i int, rec []byte) error) error {
	b := chunks.Bucket(key)
	if b == nil {
		return errors.New("its chunks are missing")
	}
	n := chunkCount(size)
	c := b.Cursor()
	i := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || i >= n || !bytes.Equal(k, chunkKey(i)) {
			return fmt.Errorf("its chunk %d is missing, or a stray key %x is among its chunks", i, k)
		}
		rec, err := chunkRecord(b.Bucket(k))
		if err == nil {
			err = fn(i, rec)
		}
		if err != nil {
			return fmt.Errorf("chunk %d: %w", i, err)
		}
		i++
	}
	if i != n {
		return fmt.Errorf("it holds %d chunks of the %d its length needs", i, n)
	}
	return nil
}

// readChunks reassembles a chunked content, each chunk checked against
// its record's checksum and the length it must have.
func readChunks(chunks *bolt.Bucket, key []byte, size uint64) ([]byte, error) {
	data := make([]byte, 0, size)
	err := eachChunk(chunks, key, size, func(i int, rec []byte) error {
		want := min(size-uint64(i)*chunkSize, chunkSize)
		var err error
		before := len(data)
		if data, err = appendBlob(data, rec); err != nil {
			return err
		}
		if got := uint64(len(data) - before); got != want {
			return fmt.Errorf("holds %d bytes, not %d", got, want)
		}
		return nil
	})
	return data, err
}

// checkChunkSeals checks a chunked content's chunks against their
// records' checksums only, as checkAll does for contents before a write.
func checkChunkSeals(chunks *bolt.Bucket, key []byte, size uint64) error {
	return eachChunk(chunks, key, size, func(_ int, rec []byte) error {
		_, err := unseal(rec)
		return err
	})
}

// chunkRecord is the one record a chunk's bucket holds.
func chunkRecord(b *bolt.Bucket) ([]byte, error) {
	c := b.Cursor()
	k, v := c.First()
	if !bytes.Equal(k, chunkRecordKey) || v == nil {
		return nil, fmt.Errorf("its bucket holds %q, not a record %q", k, chunkRecordKey)
	}
	if k, _ := c.Next(); k != nil {
		return nil, fmt.Errorf("a stray key %q is beside its record", k)
	}
	return v, nil
}
