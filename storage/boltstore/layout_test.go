package boltstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// A bbolt file that lacks a bucket of retrace's layout (retrace, sessions,
// blobs, chunks, memory, or a session's versions, each in turn) is told as what is missing, by
// every operation of the Store interface, Verify and Recover, naming the
// file: never a panic, never bbolt's nil pointer. This holds both for a
// store opened afterwards (Open refuses the file when the damage is not
// inside one session) and for one opened before the bucket went, since the
// file is shared and can change between operations. Nothing is written to
// the file.
//
// A missing retrace bucket (it holds the schema record) leaves nothing to
// tell a damaged retrace file from another program's bbolt file:
// storage.ErrNotDatabase. With the record there, the file is retrace's, and
// a missing bucket inside it is damage: storage.ErrCorrupt, as a missing
// schema record is.
func TestMissingBuckets(t *testing.T) {
	for _, c := range []struct {
		name   string
		remove func(tx *bolt.Tx, id string) error
		is     error
		says   string
		openOK bool // the damage is inside one session, which Open does not read
	}{
		{"retrace", func(tx *bolt.Tx, _ string) error { return tx.DeleteBucket([]byte("retrace")) },
			storage.ErrNotDatabase, `bucket "retrace" is missing`, false},
		{"sessions", func(tx *bolt.Tx, _ string) error { return tx.DeleteBucket([]byte("sessions")) },
			storage.ErrCorrupt, `bucket "sessions" is missing`, false},
		{"blobs", func(tx *bolt.Tx, _ string) error { return tx.DeleteBucket([]byte("blobs")) },
			storage.ErrCorrupt, `bucket "blobs" is missing`, false},
		{"memory", func(tx *bolt.Tx, _ string) error { return tx.DeleteBucket([]byte("memory")) },
			storage.ErrCorrupt, `bucket "memory" is missing`, false},
		{"chunks", func(tx *bolt.Tx, _ string) error { return tx.DeleteBucket([]byte("chunks")) },
			storage.ErrCorrupt, `bucket "chunks" is missing`, false},
		{"a session's versions", func(tx *bolt.Tx, id string) error {
			return tx.Bucket([]byte("sessions")).Bucket([]byte(id)).DeleteBucket([]byte("v"))
		}, storage.ErrCorrupt, "its versions are missing", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "retrace.db")
			id := newSessions(t, path, 2)[0]
			before, err := boltstore.Open(path, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := before.Head(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error { return c.remove(tx, id) })
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			sum := fileSum(t, path)
			want := func(what string, err error) {
				t.Helper()
				if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), path) ||
					strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "nil pointer") || strings.Contains(err.Error(), "PANIC") {
					t.Errorf("%s: want one line wrapping %v that names %s and says %q; got %v", what, c.is, path, c.says, err)
				}
			}

			t.Run("a store opened before", func(t *testing.T) { everyOperation(t, before, id, want) })
			after, err := boltstore.Open(path, boltstore.Options{})
			if c.openOK {
				if err != nil {
					t.Fatal(err)
				}
				t.Run("a store opened after", func(t *testing.T) { everyOperation(t, after, id, want) })
			} else {
				want("open", err)
			}
			want("verify", boltstore.Verify(context.Background(), path))
			_, err = boltstore.Recover(context.Background(), path, filepath.Join(t.TempDir(), "new.db"))
			if c.openOK {
				if err != nil {
					t.Errorf("recover: %v", err)
				}
			} else {
				want("recover", err)
			}
			if fileSum(t, path) != sum {
				t.Error("the damaged file was written to")
			}
		})
	}
}

// The layout is checked in every transaction, not only by a store's first
// operation: a store opened before a newer retrace upgraded the file, or
// before every bucket was removed from it, says so from then on, rather
// than writing its own layout into the file or following a nil bucket.
func TestLayoutCheckedByEveryOperation(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(tx *bolt.Tx) error
		is     error
		says   string
	}{
		{"upgraded to the next schema", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("retrace")).Put([]byte("schema"), binary.BigEndian.AppendUint32(nil, boltstore.SchemaVersion+1))
		}, storage.ErrTooNew, fmt.Sprintf("(schema %d; this retrace reads up to %d): upgrade retrace", boltstore.SchemaVersion+1, boltstore.SchemaVersion)},
		{"made anew by a schema-1 build", func(tx *bolt.Tx) error {
			if err := tx.DeleteBucket([]byte("blobs")); err != nil {
				return err
			}
			return tx.Bucket([]byte("retrace")).Put([]byte("schema"), []byte{0, 0, 0, 1})
		}, storage.ErrCorrupt, fmt.Sprintf("the file's schema went back to 1 since it was read as %d", boltstore.SchemaVersion)},
		{"every bucket removed", func(tx *bolt.Tx) error {
			for _, name := range []string{"retrace", "sessions", "blobs", "chunks", "memory"} {
				if err := tx.DeleteBucket([]byte(name)); err != nil {
					return err
				}
			}
			return nil
		}, storage.ErrCorrupt, `bucket "retrace" is missing: the file holds no buckets`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "retrace.db")
			id := newSessions(t, path, 1)[0]
			st, err := boltstore.Open(path, boltstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(c.change)
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			sum := fileSum(t, path)
			everyOperation(t, st, id, func(what string, err error) {
				t.Helper()
				if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: want one line wrapping %v that names %s and says %q; got %v", what, c.is, path, c.says, err)
				}
			})
			if fileSum(t, path) != sum {
				t.Error("the file was written to")
			}
		})
	}
}

// everyOperation runs every operation of the Store interface on session id
// of st, whose file lacks a bucket, and holds each error to want. Release
// and Close touch no file and succeed.
func everyOperation(t *testing.T, st *boltstore.Store, id string, want func(what string, err error)) {
	ctx := context.Background()
	ev := state.Event{Kind: state.UserMessage, At: statetest.Epoch, Messages: []state.Message{{Role: state.RoleUser, Content: "x"}}}
	for _, op := range []struct {
		name string
		fn   func() error
	}{
		// Append first: a store's write checks what it writes over, and
		// a new session's is not the damaged one. Once the store has seen
		// the damage, it writes nothing, new sessions included.
		{"append", func() error { _, err := st.Append(ctx, id, 0, ev); return err }},
		{"create", func() error { _, err := st.Create(ctx, storage.NewSession{Title: "new"}); return err }},
		{"head", func() error { _, err := st.Head(ctx, id); return err }},
		{"at", func() error { _, err := st.At(ctx, id, 0); return err }},
		{"tree", func() error { _, err := st.Tree(ctx, id); return err }},
		{"set head", func() error { return st.SetHead(ctx, id, 0) }},
		{"session", func() error { _, err := st.Session(ctx, id); return err }},
		{"sessions", func() error { _, err := st.Sessions(ctx); return err }},
		{"resolve", func() error { _, err := st.Resolve(ctx, id[:4]); return err }},
		{"rename", func() error { return st.Rename(ctx, id, "renamed") }},
		{"delete", func() error { return st.Delete(ctx, id) }},
		{"export", func() error { _, err := st.Export(ctx, id); return err }},
		{"claim", func() error { return st.Claim(ctx, id) }},
	} {
		want(op.name, noPanic(op.fn))
	}
	if err := noPanic(func() error { return st.Release(id) }); err != nil {
		t.Errorf("release: %v", err)
	}
	if err := noPanic(st.Close); err != nil {
		t.Errorf("close: %v", err)
	}
}

func noPanic(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return fn()
}
