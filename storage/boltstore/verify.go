package boltstore

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// Verify checks a whole database file: bbolt's own consistency check of its
// pages, then every record retrace stored (checksum, decoding, parent
// links, and each session's count and head), every file content (it
// decompresses to what its digest says), and that every content a
// checkpoint refers to is there. It reads only; the file is never changed.
// It returns nil for a missing file, and the first problem found otherwise.
func Verify(ctx context.Context, path string) error {
	_, err := Check(ctx, path)
	return err
}

// CheckReport is storage.CheckReport.
type CheckReport = storage.CheckReport

// Check is Verify, reporting what it checked. A file that passes loses
// the mark of damage found in it before (see crash.go): whatever was
// found is not there now. A missing file passes with nothing in it.
func Check(ctx context.Context, path string) (CheckReport, error) {
	var rep CheckReport
	s, err := Open(path, Options{})
	if err != nil {
		return rep, err
	}
	defer s.Close()
	err = s.view(ctx, func(tx *bolt.Tx) error {
		if err := s.checkAll(tx, true); err != nil {
			return err
		}
		rep.Bytes = tx.Size()
		sessions, _ := s.sessionsOf(tx)
		blobs, _ := s.blobsOf(tx)
		rep.Contents = blobs.Stats().KeyN
		if mb, err := s.memoryOf(tx); err == nil {
			rep.Memories = mb.Stats().KeyN
		}
		return sessions.ForEachBucket(func(k []byte) error {
			rep.Sessions++
			rep.Checkpoints += sessions.Bucket(k).Bucket(versionsBucket).Stats().KeyN
			return nil
		})
	})
	if errors.Is(err, errNoFile) {
		return CheckReport{}, nil
	}
	if err == nil {
		s.clearDamage()
	}
	return rep, err
}

// checkAll checks the file's structure (checkStructure), then every
// record's checksum, header and parent link, and each session's count.
// With events set (Verify) it also decodes every event, checks that the
// contents it refers to are there, and reads every content back against
// its digest. Without (the check before a Store's first write) a content
// is only checked against its record's checksum: that catches a flipped
// byte just as well, for a fraction of the cost of decompressing and
// hashing every file the workspace ever held.
func (s *Store) checkAll(tx *bolt.Tx, events bool) error {
	if err := s.checkStructure(tx); err != nil {
		return err
	}
	sessions, err := s.sessionsOf(tx)
	if err != nil {
		return err
	}
	blobs, err := s.blobsOf(tx)
	if err != nil {
		return err
	}
	var problems []error
	c := sessions.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil {
			problems = append(problems, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("stray key %q among the sessions", k)})
			continue
		}
		if err := s.verifySession(tx, k, events, blobs); err != nil {
			problems = append(problems, err)
		}
	}
	problems = append(problems, s.verifyBlobs(tx, blobs, events)...)
	if mb, err := s.memoryOf(tx); err != nil {
		problems = append(problems, err)
	} else if m, err := s.foldMemory(mb); err != nil {
		problems = append(problems, err)
	} else if events {
		// Derived, as a session's snapshots: Verify reports it, and it
		// holds back no write.
		if _, err := s.verifyMemorySnapshot(tx, m, mb); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		// The first problem, in one line; the rest are usually its echoes.
		return problems[0]
	}
	return nil
}

// verifySession checks one session's records; with events set, it also
// decodes every event and checks that the contents it refers to are in
// blobs.
func (s *Store) verifySession(tx *bolt.Tx, k []byte, events bool, blobs *bolt.Bucket) error {
	b, rec, err := s.listedSession(tx, k)
	if err != nil {
		return err
	}
	id := string(k)
	n, want := 0, 0
	next := func() { // the next version the session should hold
		for want++; rec.removed(want); want++ {
		}
	}
	next()
	err = s.eachCheckpoint(b.Bucket(versionsBucket), id, func(v int, h header, raw []byte) error {
		n++
		if rec.removed(v) {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: "the version is there, but its record says gc removed it"}
		}
		if rec.removed(h.parent) {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: fmt.Sprintf("its parent v%d was removed by gc, which keeps every ancestor", h.parent)}
		}
		if v != want {
			return &storage.CorruptError{Path: s.path, Session: id, Version: want, Reason: "the version is missing"}
		}
		next()
		if !events {
			return nil
		}
		_, ev, err := decodeCheckpoint(raw)
		if err != nil {
			return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
		}
		for _, d := range ev.BlobDigests() {
			if k, ok := blobKey(d); !ok || blobs.Get(k) == nil {
				return &storage.CorruptError{Path: s.path, Session: id, Version: v, Blob: d, Reason: "the file content it refers to is missing"}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != rec.Versions-rec.removedCount() {
		return &storage.CorruptError{Path: s.path, Session: id, Reason: fmt.Sprintf("it records %d versions but holds %d", rec.Versions-rec.removedCount(), n)}
	}
	if !events {
		// Snapshots are derived: a damaged one is passed over by every
		// read, and holds back no write. Verify reports it.
		return nil
	}
	return s.verifySnapshots(b, id, rec)
}

// verifyBlobs checks every file content: its key is a digest, its record
// passes its checksum and, with full set, it decodes to content whose
// digest is its key. It returns every problem found.
func (s *Store) verifyBlobs(tx *bolt.Tx, blobs *bolt.Bucket, full bool) []error {
	chunks, err := s.chunksOf(tx)
	if err != nil {
		return []error{err}
	}
	var problems []error
	in := contents{blobs: blobs, chunks: chunks}
	c := blobs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 32 || v == nil {
			problems = append(problems, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("stray key %x among the file contents", k)})
			continue
		}
		d := keyDigest(k)
		var err error
		if full {
			_, err = s.readBlob(in, d, v)
		} else if size, chunked, cerr := chunkedSize(v); cerr != nil {
			err = &storage.CorruptError{Path: s.path, Blob: d, Reason: cerr.Error()}
		} else if chunked {
			if cerr := checkChunkSeals(chunks, k, size); cerr != nil {
				err = &storage.CorruptError{Path: s.path, Blob: d, Reason: cerr.Error()}
			}
		}
		if err != nil {
			problems = append(problems, err)
		}
	}
	return append(problems, s.verifyChunkBuckets(blobs, chunks)...)
}

// verifyChunkBuckets finds chunks no content's record names: every
// write puts a content's record with its chunks, and gc removes both.
func (s *Store) verifyChunkBuckets(blobs, chunks *bolt.Bucket) []error {
	var problems []error
	c := chunks.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		head := blobs.Get(k)
		_, chunked, err := chunkedSize(head)
		if len(k) != 32 || v != nil || head == nil || (err == nil && !chunked) {
			problems = append(problems, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("stray key %x among the chunked contents: no content's record names it", k)})
		}
	}
	return problems
}

// checkStructure checks the file as bbolt sees it, before anything of
// retrace's: our walk of every page, then bbolt's own check. tx.Check
// follows every pointer in the file from a goroutine of its own, where a
// fault cannot be recovered, so the walk comes first and the check runs
// only if it passed. It returns the first problem, in one line; the rest
// are usually its echoes.
func (s *Store) checkStructure(tx *bolt.Tx) error {
	if err := s.walkPages(); err != nil {
		return err
	}
	var first error
	for err := range tx.Check() {
		if first == nil {
			first = &storage.CorruptError{Path: s.path, Reason: "bbolt check: " + err.Error()}
		}
	}
	return first
}

// checkRecordsOnce checks a session's records, as the whole check does,
// before this Store first writes to it: damage in them that no read came
// across yet must not be written over. The session's own records are what
// a write to it builds on; other sessions' are not touched.
func (s *Store) checkRecordsOnce(tx *bolt.Tx, id string) error {
	if s.checkedRecords[id] {
		return nil
	}
	if err := s.verifySession(tx, []byte(id), false, nil); err != nil {
		return err
	}
	s.checkedRecords[id] = true
	return nil
}
