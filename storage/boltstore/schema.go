package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// The layout, schema 7:
//
//	retrace/                 bucket: about the file
//	    schema               uint32, big-endian
//	sessions/                bucket: one bucket per session, named by its id
//	    <id>/
//	        info             sealed JSON: title, model, head, versions, removed, ...
//	        v/               bucket: version (uint64, big-endian) -> sealed checkpoint
//	        s/               bucket: version -> sealed snapshot (snapshot.go), derived
//	blobs/                   bucket: file contents, shared by every session
//	    <sha256, 32 bytes>   sealed, compressed content (see blob.go)
//	chunks/                  bucket: contents past 1 MiB, in chunks (see chunk.go)
//	    <sha256>/<n>         sealed, compressed chunk n
//	memory/                  bucket: the memory log (memory.go)
//	    <version>            uint64, big-endian -> sealed JSON of the event
//
// Schema 1 is schema 2 without the blobs bucket: files written before
// checkpoints carried workspace files. Schema 2 is schema 3 without gaps:
// its sessions hold every version from 1 to their count, which is what a
// schema-2 build checks, so a file gc may have pruned must not look like
// one to it (it would call the gaps damage). Schema 3 is schema 4 with
// every checkpoint in record format 1, its event as JSON. Schema 4 is
// schema 5 without snapshots, schema 5 is schema 6 without the memory
// log, and schema 6 is schema 7 with every content whole, in no chunks.
var (
	metaBucket     = []byte("retrace")
	schemaKey      = []byte("schema")
	sessionsBucket = []byte("sessions")
	infoKey        = []byte("info")
	versionsBucket = []byte("v")
	blobsBucket    = []byte("blobs")
	memoryBucket   = []byte("memory")
)

// schemaVersion is the layout this build writes. A build reads files of
// its own schema and older ones (migrating them), and refuses newer ones:
// an older build cannot know what a newer schema's records mean, and
// writing beside them would lose what it does not know, such as the
// contents a checkpoint refers to.
const schemaVersion = 7

// migrations[n] upgrades a file from schema n to n+1, inside the one
// transaction that also records the new schema version. Schema 0 is a
// bbolt file with no buckets at all: what a crash leaves if it comes
// between creating a file and initializing it, or a file someone created
// with another tool for us.
var migrations = []func(tx *bolt.Tx) error{
	0: func(tx *bolt.Tx) error {
		for _, name := range [][]byte{metaBucket, sessionsBucket} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	},
	// Schema 2 keeps workspace file contents. Nothing in a schema-1 file
	// refers to any, so an empty bucket is the whole migration.
	1: func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(blobsBucket)
		return err
	},
	// Schema 3 lets sessions have gaps gc made. A schema-2 file has none.
	2: func(*bolt.Tx) error { return nil },
	// Schema 4 writes checkpoints in record format 2 (record.go). Format 1
	// records stay as they are and readable, so nothing is rewritten; the
	// new number keeps older builds, which would call format 2 damage,
	// from reading the file at all.
	3: func(*bolt.Tx) error { return nil },
	// Schema 5 keeps snapshots beside the events. A schema-4 file has
	// none, and needs none: they come with the next checkpoints. The new
	// number keeps older builds out, whose gc would leave the snapshots
	// of the versions it removes behind.
	4: func(*bolt.Tx) error { return nil },
	// Schema 6 keeps what the agent remembers of the person, in a log
	// beside the sessions. An older build would not check it, copy it
	// when it recovers a file, or know it from damage.
	5: func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(memoryBucket)
		return err
	},
	// Schema 7 keeps a large content in chunks (chunk.go). A schema-6
	// file holds every content whole, which schema 7 reads as it is; an
	// older build would call a chunked content's record damage, and its
	// gc would leave the chunks behind.
	6: func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(chunksBucket)
		return err
	},
}

// readSchema returns the file's schema version.
func readSchema(tx *bolt.Tx, path string) (int, error) {
	mb := tx.Bucket(metaBucket)
	if mb == nil {
		var names []string
		ours := false
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, fmt.Sprintf("%q", name))
			ours = ours || bytes.Equal(name, sessionsBucket) || bytes.Equal(name, blobsBucket) || bytes.Equal(name, chunksBucket) || bytes.Equal(name, memoryBucket)
			return nil
		})
		if len(names) == 0 {
			return 0, nil
		}
		sort.Strings(names)
		if ours {
			// Retrace's sessions or contents without the schema record:
			// the record is what tells retrace's files from others', so
			// this may be a damaged one of ours or another program's.
			return 0, fmt.Errorf("%s: %w: bucket %q is missing (buckets %s)", path, storage.ErrNotDatabase, metaBucket, strings.Join(names, ", "))
		}
		return 0, fmt.Errorf("%s: %w: it is a bbolt file of another program (buckets %s)", path, storage.ErrNotDatabase, strings.Join(names, ", "))
	}
	v := mb.Get(schemaKey)
	if len(v) != 4 {
		return 0, &storage.CorruptError{Path: path, Reason: "the schema version is missing"}
	}
	return int(binary.BigEndian.Uint32(v)), nil
}

func tooNew(path string, schema int) error {
	return fmt.Errorf("%s: %w (schema %d; this retrace reads up to %d): upgrade retrace", path, storage.ErrTooNew, schema, schemaVersion)
}

// checkLayout checks, in every transaction, that the file still has the
// layout this build reads and writes. A Store reads the schema (and
// migrates an old one) only on its first operation, but the file is shared
// and may have changed since: a newer retrace may have migrated it, or
// another program removed a bucket. A missing bucket is told as what it
// is, never followed into bbolt's nil pointer.
func (s *Store) checkLayout(tx *bolt.Tx) error {
	schema, err := readSchema(tx, s.path)
	switch {
	case err != nil:
		return err
	case schema > schemaVersion:
		return tooNew(s.path, schema)
	case schema == 0:
		// Schema 0 is a file with no buckets at all. This Store found or
		// made retrace's buckets in it before: they are gone.
		return &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("bucket %q is missing: the file holds no buckets", metaBucket)}
	case schema < schemaVersion:
		// This Store migrated the file, or found it current, before; only
		// an older retrace making the file anew can have put it back.
		return &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("the file's schema went back to %d since it was read as %d", schema, schemaVersion)}
	}
	if _, err := s.sessionsOf(tx); err != nil {
		return err
	}
	if _, err := s.blobsOf(tx); err != nil {
		return err
	}
	if _, err := s.chunksOf(tx); err != nil {
		return err
	}
	_, err = s.memoryOf(tx)
	return err
}

// sessionsOf returns the bucket of sessions, or the damage its absence is:
// the file has retrace's schema record, so it is retrace's, and retrace
// never removes the bucket.
func (s *Store) sessionsOf(tx *bolt.Tx) (*bolt.Bucket, error) {
	if b := tx.Bucket(sessionsBucket); b != nil {
		return b, nil
	}
	return nil, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("bucket %q is missing", sessionsBucket)}
}

// blobsOf returns the bucket of file contents, or the damage its absence
// is, as sessionsOf does: a file of the current schema always has it.
func (s *Store) blobsOf(tx *bolt.Tx) (*bolt.Bucket, error) {
	if b := tx.Bucket(blobsBucket); b != nil {
		return b, nil
	}
	return nil, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("bucket %q is missing", blobsBucket)}
}

// memoryOf returns the memory log's bucket, or the damage its absence is,
// as sessionsOf does.
func (s *Store) memoryOf(tx *bolt.Tx) (*bolt.Bucket, error) {
	if b := tx.Bucket(memoryBucket); b != nil {
		return b, nil
	}
	return nil, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("bucket %q is missing", memoryBucket)}
}

// migrate brings tx's file from schema `from` to schemaVersion.
func migrate(tx *bolt.Tx, from int) error {
	for v := from; v < schemaVersion; v++ {
		if err := migrations[v](tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
		}
	}
	return tx.Bucket(metaBucket).Put(schemaKey, binary.BigEndian.AppendUint32(nil, schemaVersion))
}
