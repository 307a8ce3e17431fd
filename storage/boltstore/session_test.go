package boltstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// What a session's summary says after each operation, with the store's
// clock set: creation takes the clock (or the time given), an append the
// event's time, a rollback the clock, a rename nothing; all kept in UTC.
func TestSessionSummaryAfterEachOperation(t *testing.T) {
	ctx := context.Background()
	east := time.FixedZone("UTC+3", 3*3600)
	clock := time.Date(2030, 1, 2, 13, 0, 0, 0, east) // 10:00 UTC
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := boltstore.Open(path, boltstore.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check := func(what string, id string, want storage.SessionInfo) {
		t.Helper()
		got, err := st.Session(ctx, id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v, %v\nwant %+v", what, got, err, want)
		}
	}
	tenUTC := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)

	info, err := st.Create(ctx, storage.NewSession{Title: "t", Model: "m", Workspace: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	want := storage.SessionInfo{ID: id, Title: "t", Model: "m", Workspace: "/w", CreatedAt: tenUTC, UpdatedAt: tenUTC, Phase: state.Idle}
	if !reflect.DeepEqual(info, want) {
		t.Fatalf("create returned %+v\nwant %+v", info, want)
	}
	check("created on the clock", id, want)

	given := time.Date(2029, 6, 1, 8, 0, 0, 0, east)
	other, err := st.Create(ctx, storage.NewSession{Title: "o", CreatedAt: given})
	if err != nil {
		t.Fatal(err)
	}
	givenUTC := time.Date(2029, 6, 1, 5, 0, 0, 0, time.UTC)
	check("created at a given time", other.ID, storage.SessionInfo{ID: other.ID, Title: "o", CreatedAt: givenUTC, UpdatedAt: givenUTC, Phase: state.Idle})

	at1 := time.Date(2030, 1, 2, 14, 0, 1, 0, east)
	cp, err := st.Append(ctx, id, 0, state.Event{Kind: state.UserMessage, At: at1, Messages: []state.Message{{Role: state.RoleUser, Content: "q"}}})
	at1UTC := time.Date(2030, 1, 2, 11, 0, 1, 0, time.UTC)
	if wantCP := (storage.Checkpoint{Version: 1, Parent: 0, Event: state.UserMessage, Phase: state.Planning, At: at1UTC}); err != nil || cp != wantCP {
		t.Fatalf("append returned %+v, %v\nwant %+v", cp, err, wantCP)
	}
	want.UpdatedAt, want.Head, want.Versions, want.Phase = at1UTC, 1, 1, state.Planning
	check("after an append", id, want)

	at2 := at1.Add(time.Minute)
	cp, err = st.Append(ctx, id, 1, state.Event{Kind: state.Answered, At: at2, Messages: []state.Message{{Role: state.RoleAssistant, Content: "a"}}})
	if wantCP := (storage.Checkpoint{Version: 2, Parent: 1, Event: state.Answered, Phase: state.Done, At: at1UTC.Add(time.Minute)}); err != nil || cp != wantCP {
		t.Fatalf("second append returned %+v, %v\nwant %+v", cp, err, wantCP)
	}
	want.UpdatedAt, want.Head, want.Versions, want.Phase = at1UTC.Add(time.Minute), 2, 2, state.Done
	check("after a second append", id, want)

	clock = clock.Add(time.Hour)
	if err := st.SetHead(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	want.UpdatedAt, want.Head, want.Phase = tenUTC.Add(time.Hour), 1, state.Planning
	check("after a rollback to v1", id, want)
	clock = clock.Add(time.Hour)
	if err := st.SetHead(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	want.UpdatedAt, want.Head, want.Phase = tenUTC.Add(2*time.Hour), 0, state.Idle
	check("after a rollback to v0", id, want)
	if err := st.SetHead(ctx, id, 2); err != nil {
		t.Fatal(err)
	}
	want.Head, want.Phase = 2, state.Done
	check("forward to v2 again", id, want)

	clock = clock.Add(time.Hour)
	if err := st.Rename(ctx, id, "renamed"); err != nil {
		t.Fatal(err)
	}
	want.Title = "renamed"
	check("after a rename", id, want)

	// The head's parent is what the state says; a conflict names the head.
	s, err := st.Head(ctx, id)
	if err != nil || s.Version != 2 || s.ParentVersion != 1 || s.Phase != state.Done {
		t.Fatalf("head: v%d under v%d in %s, %v", s.Version, s.ParentVersion, s.Phase, err)
	}
	_, err = st.Append(ctx, id, 1, state.Event{Kind: state.Answered, At: at2, Messages: []state.Message{{Role: state.RoleAssistant, Content: "a"}}})
	var ce *storage.ConflictError
	if !errors.As(err, &ce) || *ce != (storage.ConflictError{Session: id, Parent: 1, Head: 2}) {
		t.Fatalf("an append under v1 with the head at v2: %v", err)
	}
	for _, v := range []int{2, 3} {
		_, err := st.At(ctx, id, v)
		var ve *storage.VersionError
		if v == 2 && err != nil {
			t.Fatalf("At(2) of 2 versions: %v", err)
		}
		if v == 3 && (!errors.As(err, &ve) || *ve != (storage.VersionError{Session: id, Version: 3, Versions: 2})) {
			t.Fatalf("At(3) of 2 versions: %v", err)
		}
	}
	// An event whose time cannot be stored is refused, naming the session.
	if _, err := st.Append(ctx, id, 2, state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "q"}}}); err == nil || !strings.Contains(err.Error(), "session "+id) {
		t.Fatalf("an event with no time: %v", err)
	}
}

// Resolve: a whole id wins even where it is the prefix of a longer one
// (ids retrace makes all have 16 digits; a file may hold others).
func TestResolveWholeIDWins(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	newSessions(t, path, 1)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	src := ""
	err = db.Update(func(tx *bolt.Tx) error {
		sessions := tx.Bucket([]byte("sessions"))
		c := sessions.Cursor()
		k, _ := c.First()
		src = string(k)
		info := bytes.Clone(sessions.Bucket(k).Get([]byte("info")))
		for _, id := range []string{"abc", "abcd", "abce"} {
			b, err := sessions.CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			if _, err := b.CreateBucket([]byte("v")); err != nil {
				return err
			}
			if err := b.Put([]byte("info"), info); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	st := mustOpen(t, path)
	for prefix, want := range map[string]string{"abc": "abc", "abcd": "abcd", src: src} {
		if got, err := st.Resolve(ctx, prefix); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", prefix, got, err, want)
		}
	}
	_, err = st.Resolve(ctx, "ab")
	var ae *storage.AmbiguousError
	if !errors.As(err, &ae) || len(ae.Candidates) != 3 {
		t.Fatalf("Resolve(\"ab\"): %v", err)
	}
	if _, err := st.Resolve(ctx, ""); err == nil {
		t.Fatal("an empty prefix resolved")
	}
	if _, err := st.Resolve(ctx, "abz"); !errors.Is(err, storage.ErrSessionNotFound) {
		t.Fatalf("Resolve(\"abz\"): %v", err)
	}
}

// The schema record: a retrace file without it is damaged, a bbolt file
// with other buckets is another program's (named, in order), a newer
// schema is refused; a current file is not written by reading it.
func TestSchemaRecord(t *testing.T) {
	ctx := context.Background()
	bboltFile := func(t *testing.T, fn func(tx *bolt.Tx) error) string {
		path := filepath.Join(t.TempDir(), "retrace.db")
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(fn)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	ours := func(schema []byte) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			for _, name := range []string{"retrace", "sessions", "blobs", "chunks", "memory"} {
				if _, err := tx.CreateBucket([]byte(name)); err != nil {
					return err
				}
			}
			if schema == nil {
				return nil
			}
			return tx.Bucket([]byte("retrace")).Put([]byte("schema"), schema)
		}
	}
	for _, c := range []struct {
		name string
		fn   func(tx *bolt.Tx) error
		is   error
		says string
	}{
		{"no schema record", ours(nil), storage.ErrCorrupt, "the schema version is missing"},
		{"a schema record of 3 bytes", ours([]byte{0, 0, 1}), storage.ErrCorrupt, "the schema version is missing"},
		{"the next schema", ours(schemaRecord(boltstore.SchemaVersion + 1)), storage.ErrTooNew,
			fmt.Sprintf("(schema %d; this retrace reads up to %d)", boltstore.SchemaVersion+1, boltstore.SchemaVersion)},
		{"schema 2^32-1", ours([]byte{0xFF, 0xFF, 0xFF, 0xFF}), storage.ErrTooNew,
			fmt.Sprintf("(schema 4294967295; this retrace reads up to %d)", boltstore.SchemaVersion)},
		{"the current schema without its blobs bucket", func(tx *bolt.Tx) error {
			if err := ours(schemaRecord(boltstore.SchemaVersion))(tx); err != nil {
				return err
			}
			return tx.DeleteBucket([]byte("blobs"))
		}, storage.ErrCorrupt, `bucket "blobs" is missing`},
		{"another program's buckets", func(tx *bolt.Tx) error {
			for _, name := range []string{"zeta", "alpha"} {
				if _, err := tx.CreateBucket([]byte(name)); err != nil {
					return err
				}
			}
			return nil
		}, storage.ErrNotDatabase, `it is a bbolt file of another program (buckets "alpha", "zeta")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := bboltFile(t, c.fn)
			before := fileSum(t, path)
			_, err := boltstore.Open(path, boltstore.Options{})
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v; want %v saying %q", err, c.is, c.says)
			}
			if err := boltstore.Verify(ctx, path); !errors.Is(err, c.is) {
				t.Fatalf("verify: %v", err)
			}
			if fileSum(t, path) != before {
				t.Fatal("refusing the file changed it")
			}
		})
	}
	t.Run("the current schema read without a write", func(t *testing.T) {
		path := bboltFile(t, ours(schemaRecord(boltstore.SchemaVersion)))
		before := fileSum(t, path)
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if list, err := st.Sessions(ctx); err != nil || len(list) != 0 {
			t.Fatalf("sessions: %v, %v", list, err)
		}
		if fileSum(t, path) != before {
			t.Fatal("reading a current file wrote to it")
		}
	})
	// An old file gains what the current schema has, and says so, on the
	// first operation of a store: a read is enough.
	upgraded := func(t *testing.T, path string) {
		t.Helper()
		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.View(func(tx *bolt.Tx) error {
			if v, want := tx.Bucket([]byte("retrace")).Get([]byte("schema")), schemaRecord(boltstore.SchemaVersion); !bytes.Equal(v, want) {
				t.Errorf("schema record %x; want %x", v, want)
			}
			for _, name := range []string{"sessions", "blobs"} {
				if tx.Bucket([]byte(name)) == nil {
					t.Errorf("no %s bucket", name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("schema 0 upgraded", func(t *testing.T) {
		upgraded(t, bboltFile(t, func(*bolt.Tx) error { return nil }))
	})
	t.Run("schema 1 upgraded", func(t *testing.T) {
		upgraded(t, bboltFile(t, func(tx *bolt.Tx) error {
			if err := ours([]byte{0, 0, 0, 1})(tx); err != nil {
				return err
			}
			return tx.DeleteBucket([]byte("blobs"))
		}))
	})
}

// Paths Open refuses before anything is made.
func TestOpenRefusesPaths(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, says string
	}{
		{"", "open database: no path given"},
		{dir, "database path " + dir + " is a directory; give a file path such as " + filepath.Join(dir, "retrace.db")},
		{fifo, "database path " + fifo + " is not a regular file"},
		{filepath.Join(file, "a", "retrace.db"), "open database " + filepath.Join(file, "a", "retrace.db") + ": stat " + filepath.Join(file, "a", "retrace.db") + ": not a directory"},
	} {
		if _, err := boltstore.Open(c.path, boltstore.Options{}); err == nil || err.Error() != c.says {
			t.Errorf("Open(%q): %v; want %q", c.path, err, c.says)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("Open left %v behind (%v)", entries, err)
	}
}

// Without a database file, every session is missing, named with the file,
// and nothing is made by asking.
func TestReadsOfAMissingFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "retrace.db")
	st := mustOpen(t, path)
	const id = "0123456789abcdef"
	reads := map[string]error{}
	_, reads["head"] = st.Head(ctx, id)
	_, reads["at"] = st.At(ctx, id, 0)
	_, reads["tree"] = st.Tree(ctx, id)
	_, reads["session"] = st.Session(ctx, id)
	_, reads["export"] = st.Export(ctx, id)
	_, reads["resolve"] = st.Resolve(ctx, "01")
	for what, err := range reads {
		var nf *storage.NotFoundError
		if !errors.As(err, &nf) || nf.Where != path {
			t.Errorf("%s: %v; want a NotFoundError in %s", what, err, path)
		}
	}
	if list, err := st.Sessions(ctx); list != nil || err != nil {
		t.Errorf("sessions: %v, %v", list, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("reads left %v behind (%v)", entries, err)
	}
}

// A closed store does nothing more, reading or writing.
func TestClosedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st := mustOpen(t, path)
	info, err := st.Create(ctx, storage.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	before := fileSum(t, path)
	if _, err := st.Head(ctx, info.ID); err == nil || err.Error() != "store is closed" {
		t.Fatalf("head after close: %v", err)
	}
	if err := st.Rename(ctx, info.ID, "x"); err == nil || err.Error() != "store is closed" {
		t.Fatalf("rename after close: %v", err)
	}
	if fileSum(t, path) != before {
		t.Fatal("a closed store wrote")
	}
}

// A key among the sessions that is not a bucket is nothing of ours:
// listing passes over it, Verify reports it.
func TestStrayKeyAmongTheSessions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	id := newSessions(t, path, 1)[0]
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("sessions")).Put([]byte(id[:4]), []byte("x")) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	st := mustOpen(t, path)
	if list, err := st.Sessions(ctx); err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("sessions: %+v, %v", list, err)
	}
	if got, err := st.Resolve(ctx, id[:4]); err != nil || got != id {
		t.Fatalf("resolve %s: %q, %v", id[:4], got, err)
	}
	err = boltstore.Verify(ctx, path)
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || ce.Reason != fmt.Sprintf("stray key %q among the sessions", id[:4]) || ce.Session != "" {
		t.Fatalf("verify: %v", err)
	}
}

// schemaRecord is the schema record of schema v, as the file keeps it.
func schemaRecord(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
