package boltstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// An import is written in batches, each its own transaction, so that a
// session of a hundred thousand checkpoints neither costs a hundred
// thousand fsyncs nor holds the file for longer than other processes wait
// for it (LockTimeout). The batches build the session under its id in a
// bucket of its own,
//
//	importing/<id>/          like sessions/<id>, without its info record
//
// invisible to every reader, and the last batch moves it among the
// sessions with its info record: the session appears whole, or not at
// all. The importer holds the session's claim throughout, so a staging
// bucket nobody holds the claim of was left by a crash, and the next
// import of that id removes it.
var importingBucket = []byte("importing")

// importBatch bounds one transaction of an import: enough checkpoints that
// the fsyncs disappear into the cost of the writes, few enough bytes that
// one commit takes milliseconds, not seconds.
var importBatch = struct{ checkpoints, bytes int }{checkpoints: 4096, bytes: 16 << 20}

// importTxs counts the read-write transactions imports ran, for the
// benchmark that measures the bulk path.
var importTxs atomic.Int64

// importUpdate is update for an import's transactions, counted.
func (s *Store) importUpdate(ctx context.Context, fn func(*bolt.Tx) error) error {
	importTxs.Add(1)
	return s.update(ctx, fn)
}

// Import keeps an exported session: checked whole first, then written in
// batches and made visible in the last (see importingBucket).
func (s *Store) Import(ctx context.Context, ex storage.Export) (storage.SessionInfo, error) {
	records, err := storage.CheckImport(ex)
	if err != nil {
		return storage.SessionInfo{}, err
	}
	id := ex.Session.ID
	if id == "" {
		// A fresh id: newID's sixteen random hex digits collide with no
		// session in this file for any file that will ever exist, and the
		// last batch checks anyway.
		id = newID()
	} else if !validID.MatchString(id) {
		return storage.SessionInfo{}, fmt.Errorf("import: session id %q is not one retrace makes (1 to 64 letters, digits, - or _): %w", id, storage.ErrInvalid)
	}
	batches, err := importBatches(ex, records)
	if err != nil {
		return storage.SessionInfo{}, err
	}
	if err := s.autoClaim(ctx, id); err != nil {
		return storage.SessionInfo{}, err
	}
	in := ex.Session
	rec := infoRecord{Title: in.Title, Model: in.Model, Workspace: in.Workspace,
		CreatedAt: in.CreatedAt.UTC(), UpdatedAt: in.UpdatedAt.UTC(),
		Head: in.Head, Versions: in.Versions, Phase: in.Phase, Removed: storage.Gaps(records, in.Versions)}
	if err := s.writeImport(ctx, id, rec, batches); err != nil {
		s.dropClaim(id)
		return storage.SessionInfo{}, fmt.Errorf("import session %s into %s: %w", id, s.path, err)
	}
	if err := s.Release(id); err != nil {
		return storage.SessionInfo{}, err
	}
	return rec.info(id), nil
}

// importRecord is one checkpoint as the file keeps it, with the contents
// it is the first to refer to and where to read them.
type importRecord struct {
	version int // gc may have left gaps: not always the one before plus one
	value   []byte
	ev      state.Event
	blobs   []state.Blob // their digests; the data is read from src
	src     *storage.Export
}

// importBatches encodes every checkpoint, before any transaction, and
// cuts them into batches by their size and their contents'. The contents
// are read and sealed batch by batch, as each is written (see putBatch):
// an import holds one batch's contents at a time, not the export's.
func importBatches(ex storage.Export, records []storage.Record) ([][]importRecord, error) {
	var batches [][]importRecord
	var cur []importRecord
	size := 0
	for _, r := range records {
		value, err := encodeCheckpoint(r.Parent, r.Phase, r.Data)
		if err != nil {
			return nil, fmt.Errorf("import: version %d: %v: %w", r.Version, err, storage.ErrInvalid)
		}
		n := len(value)
		for _, b := range r.Data.Blobs {
			m := ex.ContentSize(b.Digest)
			if m > maxBlobSize {
				return nil, fmt.Errorf("import: version %d carries file content %s of %d bytes; a blob holds at most %d: %w", r.Version, b.Digest, m, maxBlobSize, storage.ErrInvalid)
			}
			if m <= chunkSize {
				n += int(m) // larger ones are staged before the batch
			}
		}
		if len(cur) > 0 && (len(cur) >= importBatch.checkpoints || size+n > importBatch.bytes) {
			batches, cur, size = append(batches, cur), nil, 0
		}
		cur, size = append(cur, importRecord{version: r.Version, value: value, ev: r.Data, blobs: r.Data.Blobs, src: &ex}), size+n
	}
	// A session with no checkpoints is still one batch: the one that
	// makes it visible.
	return append(batches, cur), nil
}

// writeImport writes the batches and makes the session visible. One batch
// is one transaction straight into the sessions; more are staged (see
// importingBucket) and published by one transaction more. The chunks of a
// batch's large contents are staged before it (see stageChunks). On
// failure it removes what it staged.
func (s *Store) writeImport(ctx context.Context, id string, rec infoRecord, batches [][]importRecord) error {
	st := &staging{s: s, id: id, fresh: true}
	err := s.writeBatches(ctx, st, rec, batches)
	if err != nil && st.wrote && !errors.Is(err, storage.ErrCorrupt) {
		s.unstage(id)
	}
	return err
}

func (s *Store) writeBatches(ctx context.Context, st *staging, rec infoRecord, batches [][]importRecord) error {
	id := st.id
	if len(batches) == 1 {
		if err := st.stageChunks(ctx, batches[0]); err != nil {
			return err
		}
		return s.importUpdate(ctx, func(tx *bolt.Tx) error {
			if err := s.refuseExisting(tx, id); err != nil {
				return err
			}
			if st.fresh {
				if err := dropStaged(tx, id); err != nil {
					return err
				}
			}
			sessions, err := s.sessionsOf(tx)
			if err != nil {
				return err
			}
			b, err := sessions.CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			vb, err := b.CreateBucket(versionsBucket)
			if err != nil {
				return err
			}
			if err := s.putBatch(tx, vb, id, batches[0]); err != nil {
				return err
			}
			if err := s.keepSnapshots(b, id, rec); err != nil {
				return err
			}
			if err := putInfo(b, rec); err != nil {
				return err
			}
			return dropStaged(tx, id) // chunks of contents the file held already
		})
	}
	for i, batch := range batches {
		if err := st.stageChunks(ctx, batch); err != nil {
			return err
		}
		err := s.importUpdate(ctx, func(tx *bolt.Tx) error {
			if i == 0 {
				if err := s.refuseExisting(tx, id); err != nil {
					return err
				}
			}
			vb, err := stagingVersions(tx, id, i == 0, st.fresh)
			if err != nil {
				return err
			}
			return s.putBatch(tx, vb, id, batch)
		})
		if err != nil {
			return err
		}
		st.fresh, st.wrote = false, true
	}
	// The move is a transaction of its own: bbolt's MoveBucket moves the
	// bucket as last committed and drops what the same transaction wrote
	// into it.
	return s.importUpdate(ctx, func(tx *bolt.Tx) error {
		if err := s.refuseExisting(tx, id); err != nil {
			return err
		}
		return s.publishImport(tx, id, rec)
	})
}

// putBatch keeps a batch's contents and checkpoints.
func (s *Store) putBatch(tx *bolt.Tx, vb *bolt.Bucket, id string, batch []importRecord) error {
	vb.FillPercent = 1.0 // keys only grow, as in Append
	bucket, err := s.blobsOf(tx)
	if err != nil {
		return err
	}
	for _, r := range batch {
		v := r.version
		sealed, err := r.seal(tx, bucket, id)
		if err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		if err := s.keepBlobs(tx, r.ev, r.blobs, sealed); err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		if err := vb.Put(versionKey(v), r.value); err != nil {
			return err
		}
	}
	return nil
}

// seal reads and seals the contents r carries that the file does not
// hold yet; those it holds are left empty, which keepBlobs passes over.
// A large content's chunks were staged already: its record moves them.
func (r importRecord) seal(tx *bolt.Tx, bucket *bolt.Bucket, id string) ([]sealedBlob, error) {
	sealed := make([]sealedBlob, len(r.blobs))
	for i, b := range r.blobs {
		if k, ok := blobKey(b.Digest); ok && bucket.Get(k) != nil {
			continue
		}
		size := r.src.ContentSize(b.Digest)
		if size > chunkSize {
			staged, err := stagedChunks(tx, id, b.Digest)
			if err != nil {
				return nil, err
			}
			sealed[i] = sealedBlob{head: chunkedHead(size), staged: staged}
			continue
		}
		data, err := readContent(r.src, b.Digest, size)
		if err != nil {
			return nil, err
		}
		sealed[i] = sealedBlob{head: encodeBlob(data)}
	}
	return sealed, nil
}

// refuseExisting is ErrSessionExists when the file holds the session.
func (s *Store) refuseExisting(tx *bolt.Tx, id string) error {
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return err
	}
	if sessions.Bucket([]byte(id)) != nil {
		return fmt.Errorf("%w: %s holds session %s already; delete it first ('retrace rm %s') or import a copy under a new id (--new-id)", storage.ErrSessionExists, s.path, id, id)
	}
	return nil
}

// stagingVersions returns the staging bucket's versions; the first batch
// makes it afresh, dropping what a crashed import of the same id left.
func stagingVersions(tx *bolt.Tx, id string, first, fresh bool) (*bolt.Bucket, error) {
	if fresh {
		if err := dropStaged(tx, id); err != nil {
			return nil, err
		}
	}
	root, err := tx.CreateBucketIfNotExists(importingBucket)
	if err != nil {
		return nil, err
	}
	if first {
		b, err := root.CreateBucket([]byte(id))
		if err != nil {
			return nil, err
		}
		return b.CreateBucket(versionsBucket)
	}
	b := root.Bucket([]byte(id))
	if b == nil || b.Bucket(versionsBucket) == nil {
		return nil, errors.New("its staged versions are gone: another process removed them")
	}
	return b.Bucket(versionsBucket), nil
}

// publishImport moves the staged session among the sessions and gives it
// its info record there, dropping the staging bucket once it is empty.
func (s *Store) publishImport(tx *bolt.Tx, id string, rec infoRecord) error {
	root := tx.Bucket(importingBucket)
	if root == nil || root.Bucket([]byte(id)) == nil {
		return errors.New("its staged versions are gone: another process removed them")
	}
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return err
	}
	if err := tx.MoveBucket([]byte(id), root, sessions); err != nil {
		return err
	}
	b := sessions.Bucket([]byte(id))
	if err := s.keepSnapshots(b, id, rec); err != nil {
		return err
	}
	if err := putInfo(b, rec); err != nil {
		return err
	}
	if err := dropStagedChunks(root, id); err != nil {
		return err
	}
	if k, _ := root.Cursor().First(); k == nil {
		return tx.DeleteBucket(importingBucket)
	}
	return nil
}

// unstage removes what a failed import staged, as best it can: what is
// left is invisible, and the next import of the id removes it.
func (s *Store) unstage(id string) {
	_ = s.update(context.Background(), func(tx *bolt.Tx) error { return dropStaged(tx, id) })
}

// dropStaged removes what an import of id staged, and the staging bucket
// once it is empty. The caller holds id's claim: no live import owns it.
func dropStaged(tx *bolt.Tx, id string) error {
	root := tx.Bucket(importingBucket)
	if root == nil {
		return nil
	}
	if root.Bucket([]byte(id)) != nil {
		if err := root.DeleteBucket([]byte(id)); err != nil {
			return err
		}
	}
	if err := dropStagedChunks(root, id); err != nil {
		return err
	}
	if k, _ := root.Cursor().First(); k == nil {
		return tx.DeleteBucket(importingBucket)
	}
	return nil
}
