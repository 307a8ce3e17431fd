package boltstore

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// The layout, schema 1:
//
//	retrace/                 bucket: about the file
//	    schema               uint32, big-endian
//	sessions/                bucket: one bucket per session, named by its id
//	    <id>/
//	        info             sealed JSON: title, model, head, versions, ...
//	        v/               bucket: version (uint64, big-endian) -> sealed checkpoint
var (
	metaBucket     = []byte("retrace")
	schemaKey      = []byte("schema")
	sessionsBucket = []byte("sessions")
	infoKey        = []byte("info")
	versionsBucket = []byte("v")
)

// schemaVersion is the layout this build writes.
const schemaVersion = 1

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
}

// readSchema returns the file's schema version.
func readSchema(tx *bolt.Tx, path string) (int, error) {
	mb := tx.Bucket(metaBucket)
	if mb == nil {
		var names []string
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, fmt.Sprintf("%q", name))
			return nil
		})
		if len(names) == 0 {
			return 0, nil
		}
		sort.Strings(names)
		return 0, fmt.Errorf("%s: %w: it is a bbolt file of another program (buckets %s)", path, storage.ErrNotDatabase, strings.Join(names, ", "))
	}
	v := mb.Get(schemaKey)
	if len(v) != 4 {
		return 0, &storage.CorruptError{Path: path, Reason: "the schema version is missing"}
	}
	return int(binary.BigEndian.Uint32(v)), nil
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
