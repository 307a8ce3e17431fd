package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// An import writes a large content's chunks before the batch whose first
// checkpoint carries it, a few chunks per transaction, so that it holds
// those few in memory and never the content:
//
//	importing/"<id>/chunks"/<sha256>/   the chunks, as chunks/<sha256>/ will hold them
//
// (a key of its own beside the staged session's importing/<id>, which
// the last batch moves whole, as it was last committed).
//
// The batch that keeps the content moves its chunks' bucket among the
// chunked contents and puts its record (bbolt moves a bucket without
// reading it), in the same transaction: the content appears whole or not
// at all. What a failed or crashed import staged goes as its staged
// versions do (dropStaged).
//
// Two chunks a transaction: an import of 32 MiB contents peaked at 46
// MiB, and at 56 with four (the chunks and bbolt's copies of them wait
// for the commit together); one a transaction would add fsyncs for
// little.
var importChunksPerTx = 2

// staging is what one import staged so far.
type staging struct {
	s     *Store
	id    string
	fresh bool // what a crashed import of id left is still to be dropped
	wrote bool // a staging transaction of this import committed
}

// errHeld: the file holds the content a chunk transaction was to stage.
var errHeld = errors.New("the file holds the content")

// stagedChunksKey names, in the importing bucket, where an import of id
// stages chunks: no session id holds a '/'.
func stagedChunksKey(id string) []byte { return []byte(id + "/chunks") }

// stageChunks stages the chunks of every large content batch carries.
func (st *staging) stageChunks(ctx context.Context, batch []importRecord) error {
	for _, r := range batch {
		for _, b := range r.blobs {
			size := r.src.ContentSize(b.Digest)
			if size <= chunkSize {
				continue
			}
			if err := st.stageContent(ctx, r.src, b.Digest, size); err != nil {
				return fmt.Errorf("version %d: file content %s: %w", r.version, b.Digest, err)
			}
		}
	}
	return nil
}

// stageContent reads one content from src a chunk at a time and stages
// its chunks, importChunksPerTx per transaction. The reader checks the
// content against its digest as it ends: a content that does not match
// is never moved in.
func (st *staging) stageContent(ctx context.Context, src *storage.Export, digest string, size int64) error {
	key, ok := blobKey(digest)
	if !ok {
		return fmt.Errorf("not a sha256 digest: %w", storage.ErrInvalid)
	}
	r, err := src.OpenContent(digest)
	if err != nil {
		return err
	}
	buf := make([]byte, chunkSize)
	try := true
	var recs [][]byte
	n, total := 0, int64(0)
	for total < size {
		m, err := io.ReadFull(r, buf[:min(int64(chunkSize), size-total)])
		if err != nil {
			return fmt.Errorf("read it from the export: %w", err)
		}
		total += int64(m)
		rec, small := encodeChunk(buf[:m], try)
		try = try && small // as for a whole content: stop trying where the first does not compress
		recs = append(recs, rec)
		if len(recs) == importChunksPerTx || total == size {
			if total == size {
				// The last Read reports a content that does not match.
				if _, err := r.Read(buf[:1]); err != io.EOF {
					return fmt.Errorf("read it from the export: %w", errOr(err, "it is longer than the export said"))
				}
			}
			if err := st.putChunks(ctx, key, n, recs); err != nil {
				if errors.Is(err, errHeld) {
					return nil
				}
				return err
			}
			n, recs = n+len(recs), nil
		}
	}
	return nil
}

func errOr(err error, why string) error {
	if err != nil {
		return err
	}
	return errors.New(why)
}

// putChunks stages recs as chunks from..., in a transaction of their own.
func (st *staging) putChunks(ctx context.Context, key []byte, from int, recs [][]byte) error {
	err := st.s.importUpdate(ctx, func(tx *bolt.Tx) error {
		if st.fresh {
			if err := dropStaged(tx, st.id); err != nil {
				return err
			}
		}
		blobs, err := st.s.blobsOf(tx)
		if err != nil {
			return err
		}
		if from == 0 && blobs.Get(key) != nil {
			return errHeld
		}
		root, err := tx.CreateBucketIfNotExists(importingBucket)
		if err != nil {
			return err
		}
		parent, err := root.CreateBucketIfNotExists(stagedChunksKey(st.id))
		if err != nil {
			return err
		}
		b := parent.Bucket(key)
		if from == 0 {
			b, err = parent.CreateBucket(key) // a content is staged once: CheckImport names each once
		} else if b == nil {
			err = errors.New("its staged chunks are gone: another process removed them")
		}
		if err != nil {
			return err
		}
		return addChunks(b, from, recs)
	})
	if err == nil {
		st.fresh, st.wrote = false, true
	}
	return err
}

// stagedChunks returns the bucket an import of id staged digest's chunks
// in, for putContent to move them from.
func stagedChunks(tx *bolt.Tx, id, digest string) (*bolt.Bucket, error) {
	key, _ := blobKey(digest)
	if root := tx.Bucket(importingBucket); root != nil {
		if parent := root.Bucket(stagedChunksKey(id)); parent != nil && parent.Bucket(key) != nil {
			return parent, nil
		}
	}
	return nil, errors.New("its staged chunks are gone: another process removed them")
}

// moveChunks moves a content's staged chunks among the chunked contents.
func moveChunks(staged, chunks *bolt.Bucket, key []byte) error {
	if err := dropChunks(chunks, key); err != nil {
		return err
	}
	return staged.MoveBucket(key, chunks)
}

// dropStagedChunks removes the chunks an import of id staged.
func dropStagedChunks(root *bolt.Bucket, id string) error {
	if root.Bucket(stagedChunksKey(id)) == nil {
		return nil
	}
	return root.DeleteBucket(stagedChunksKey(id))
}

// readContent reads a content small enough to hold whole from src,
// checked against its digest.
func readContent(src *storage.Export, digest string, size int64) ([]byte, error) {
	r, err := src.OpenContent(digest)
	if err != nil {
		return nil, err
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	if _, err := r.Read(make([]byte, 1)); err != io.EOF {
		return nil, errOr(err, "file content "+digest+" is longer than the export said")
	}
	return data, nil
}
