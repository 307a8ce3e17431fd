package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// Which damage gives which error, naming which session and version. Each
// case writes a healthy store, then changes its records with bbolt itself,
// below the checksums where it says so: the store must name the session,
// the version and the reason the record fails.

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// chat is the i-th event of a plain chat (user message, answer, ...), at
// t0 plus i seconds.
func chat(i int) state.Event {
	at := t0.Add(time.Duration(i) * time.Second)
	if i%2 == 0 {
		return state.Event{Kind: state.UserMessage, At: at, Messages: []state.Message{{Role: state.RoleUser, Content: "q"}}}
	}
	return state.Event{Kind: state.Answered, At: at, Messages: []state.Message{{Role: state.RoleAssistant, Content: "a"}}}
}

// healthy writes a store with one session of n chat checkpoints and
// returns the path and the session's id.
func healthy(t *testing.T, n int) (string, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Title: "s", CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := st.Append(ctx, info.ID, i, chat(i)); err != nil {
			t.Fatal(err)
		}
	}
	return path, info.ID
}

// tamper changes the file with bbolt, in the session's bucket.
func tamper(t *testing.T, path, id string, fn func(b *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket(sessionsBucket).Bucket([]byte(id))) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// record is a checkpoint record as encodeCheckpoint writes it (pinned by
// TestCheckpointRecordLayout).
func record(t *testing.T, parent int, phase state.Phase, ev state.Event) []byte {
	t.Helper()
	b, err := encodeCheckpoint(parent, phase, ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantCorrupt checks err names the file, session id and version v (0:
// none) and says reason.
func wantCorrupt(t *testing.T, what string, err error, path, id string, v int, reason string) {
	t.Helper()
	var ce *storage.CorruptError
	if !errors.As(err, &ce) {
		t.Errorf("%s: want a *storage.CorruptError, got %v", what, err)
		return
	}
	if ce.Path != path || ce.Session != id || ce.Version != v || !strings.Contains(ce.Reason, reason) {
		t.Errorf("%s: got %q (session %q, version %d); want session %q, version %d, saying %q", what, err, ce.Session, ce.Version, id, v, reason)
	}
}

// want is what one operation gives: no error when says is empty, else a
// CorruptError naming version v (0: the session as a whole) and saying
// says.
type want struct {
	v    int
	says string
}

func TestDamagedRecordsAreNamed(t *testing.T) {
	ctx := context.Background()
	put := func(v int, rec []byte) func(*testing.T, *bolt.Bucket) error {
		return func(t *testing.T, b *bolt.Bucket) error { return b.Bucket(versionsBucket).Put(versionKey(v), rec) }
	}
	// v2 as a header and an event of the test's choosing, sealed in
	// record format 1: the event as JSON, which repeats the header's kind
	// and time (a format-2 body has neither, so they cannot disagree).
	v2 := func(phase, kind string, at time.Time, event state.Event) []byte {
		js, err := state.EncodeEvent(event)
		if err != nil {
			t.Fatal(err)
		}
		buf := binary.AppendUvarint(make([]byte, sealSize), 1)
		buf = appendString(buf, phase)
		buf = appendString(buf, kind)
		buf = binary.AppendVarint(buf, at.UnixNano())
		return seal(append(buf, js...))
	}
	ok := want{}
	for _, c := range []struct {
		name                       string
		damage                     func(t *testing.T, b *bolt.Bucket) error
		head, tree, export, verify want
	}{
		{"v2's checksum", func(t *testing.T, b *bolt.Bucket) error {
			v := bytes.Clone(b.Bucket(versionsBucket).Get(versionKey(2)))
			v[len(v)-2] ^= 1
			return b.Bucket(versionsBucket).Put(versionKey(2), v)
		}, want{2, "checksum mismatch"}, want{2, "checksum mismatch"}, want{2, "checksum mismatch"}, want{2, "checksum mismatch"}},
		{"v2 missing", func(t *testing.T, b *bolt.Bucket) error {
			return b.Bucket(versionsBucket).Delete(versionKey(2))
		}, want{2, "the version is missing"}, ok, ok, want{2, "the version is missing"}},
		{"v3 its own parent", put(3, record(t, 3, state.Planning, chat(2))),
			want{3, "its parent v3 is not older than it"}, want{3, "its parent v3 is not older than it"},
			want{3, "its parent v3 is not older than it"}, want{3, "its parent v3 is not older than it"}},
		{"v3 under a newer version", put(3, record(t, 4, state.Planning, chat(2))),
			want{3, "its parent v4 is not older than it"}, want{3, "its parent v4 is not older than it"},
			want{3, "its parent v4 is not older than it"}, want{3, "its parent v4 is not older than it"}},
		{"v2's event of another kind than its header", put(2, v2("done", "answered", chat(1).At, func() state.Event { e := chat(0); e.At = chat(1).At; return e }())),
			want{2, "event (user_message at 2025-03-04 05:06:08 +0000 UTC) disagrees with its header (answered at 2025-03-04 05:06:08 +0000 UTC)"}, ok,
			want{2, "event (user_message at 2025-03-04 05:06:08 +0000 UTC) disagrees with its header (answered at 2025-03-04 05:06:08 +0000 UTC)"},
			want{2, "event (user_message at 2025-03-04 05:06:08 +0000 UTC) disagrees with its header (answered at 2025-03-04 05:06:08 +0000 UTC)"}},
		{"v2's event at another time than its header", put(2, v2("done", "answered", chat(9).At, chat(1))),
			want{2, "event (answered at 2025-03-04 05:06:08 +0000 UTC) disagrees with its header (answered at 2025-03-04 05:06:16 +0000 UTC)"}, ok,
			want{2, "event (answered at 2025-03-04 05:06:08 +0000 UTC) disagrees with its header (answered at 2025-03-04 05:06:16 +0000 UTC)"},
			want{2, "event (answered at 2025-03-04 05:06:08 +0000 UTC) disagrees with its header (answered at 2025-03-04 05:06:16 +0000 UTC)"}},
		// Verify checks each record on its own; a replay finds these.
		{"v2 stored in the wrong phase", put(2, record(t, 1, state.Error, chat(1))),
			want{2, "replays to phase done, but was stored as error"}, ok, ok, ok},
		{"v2 an event that cannot follow v1", put(2, record(t, 1, state.Planning, chat(0))),
			want{2, "does not replay: "}, ok, ok, ok},
		{"v2's event not JSON", func(t *testing.T, b *bolt.Bucket) error {
			rec := v2("done", "answered", chat(1).At, chat(1))
			rec[len(rec)-1] = '!' // the closing brace
			return b.Bucket(versionsBucket).Put(versionKey(2), seal(rec))
		}, want{2, "event: "}, ok, want{2, "event: "}, want{2, "event: "}},
		{"v2's binary body cut short", func(t *testing.T, b *bolt.Bucket) error {
			rec := record(t, 1, state.Done, chat(1))
			return b.Bucket(versionsBucket).Put(versionKey(2), sealAs(rec[:len(rec)-1], checkpointFormat))
		}, want{2, "event: invalid answered event: binary body: truncated"}, ok,
			want{2, "event: invalid answered event: binary body: truncated"}, want{2, "event: invalid answered event: binary body: truncated"}},
		{"the session's record", func(t *testing.T, b *bolt.Bucket) error {
			v := bytes.Clone(b.Get(infoKey))
			v[10] ^= 1
			return b.Put(infoKey, v)
		}, want{0, "session record: checksum mismatch"}, want{0, "session record: checksum mismatch"},
			want{0, "session record: checksum mismatch"}, want{0, "session record: checksum mismatch"}},
		{"the versions bucket", func(t *testing.T, b *bolt.Bucket) error {
			return b.DeleteBucket(versionsBucket)
		}, want{0, "its versions are missing"}, want{0, "its versions are missing"},
			want{0, "its versions are missing"}, want{0, "its versions are missing"}},
		{"a version key of 7 bytes", func(t *testing.T, b *bolt.Bucket) error {
			return b.Bucket(versionsBucket).Put([]byte{0, 0, 0, 0, 0, 0, 9}, record(t, 3, state.Done, chat(3)))
		}, ok, want{0, "a version key is malformed (00000000000009)"},
			want{0, "a version key is malformed (00000000000009)"}, want{0, "a version key is malformed (00000000000009)"}},
		{"a version more than the record counts", put(5, record(t, 4, state.Planning, chat(4))),
			ok, ok, ok, want{0, "it records 4 versions but holds 5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, id := healthy(t, 4)
			tamper(t, path, id, func(b *bolt.Bucket) error { return c.damage(t, b) })
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// A parent link followed without the checks loops forever
			// (and, in a replay, grows without end): give up at once,
			// leaving the store (whose lock the loop holds) unclosed.
			done := make(chan [3]error, 1)
			go func() {
				var errs [3]error
				_, errs[0] = st.Head(ctx, id)
				_, errs[1] = st.Tree(ctx, id)
				_, errs[2] = st.Export(ctx, id)
				done <- errs
			}()
			var errs [3]error
			select {
			case errs = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("reading the session did not end: it follows a loop of parents")
			}
			st.Close()
			headErr, treeErr, exportErr := errs[0], errs[1], errs[2]
			for _, op := range []struct {
				what string
				err  error
				want want
			}{{"head", headErr, c.head}, {"tree", treeErr, c.tree}, {"export", exportErr, c.export}, {"verify", Verify(ctx, path), c.verify}} {
				if op.want.says == "" {
					if op.err != nil {
						t.Errorf("%s: %v", op.what, op.err)
					}
					continue
				}
				wantCorrupt(t, op.what, op.err, st.path, id, op.want.v, op.want.says)
			}
		})
	}
}

// Once a read has come across damage, the store writes nothing more, to
// any session: the damage must not be written over. Reads of intact
// sessions go on.
func TestDamageFoundByAReadStopsWrites(t *testing.T) {
	ctx := context.Background()
	path, id := healthy(t, 4)
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other, err := st.Create(ctx, storage.NewSession{Title: "other"}) // the check before the first write passes
	if err != nil {
		t.Fatal(err)
	}
	// Damage that comes after that check, from outside.
	tamper(t, path, id, func(b *bolt.Bucket) error {
		v := bytes.Clone(b.Bucket(versionsBucket).Get(versionKey(3)))
		v[len(v)-2] ^= 1
		return b.Bucket(versionsBucket).Put(versionKey(3), v)
	})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Head(ctx, id)
	wantCorrupt(t, "head", err, st.path, id, 3, "checksum mismatch")
	for what, err := range map[string]error{
		"append":   func() error { _, err := st.Append(ctx, other.ID, 0, chat(0)); return err }(),
		"set head": st.SetHead(ctx, other.ID, 0),
		"rename":   st.Rename(ctx, other.ID, "renamed"),
		"create":   func() error { _, err := st.Create(ctx, storage.NewSession{}); return err }(),
		"delete":   st.Delete(ctx, other.ID),
	} {
		wantCorrupt(t, what, err, st.path, id, 3, "checksum mismatch")
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the damaged file was written to")
	}
	if got, err := st.Session(ctx, other.ID); err != nil || got.Title != "other" {
		t.Fatalf("reading an intact session: %+v, %v", got, err)
	}
}

// A file that changes under a store between operations is checked again:
// emptied or cut short by someone else, it is refused, never silently
// made into a new database or read past its end.
func TestFileDamagedBetweenOperations(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cut  func(size int64) int64
		says string
	}{
		{"emptied", func(int64) int64 { return 0 }, "the file is empty (0 bytes)"},
		{"cut to half", func(n int64) int64 { return n / 2 }, "it was truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, id := healthy(t, 4)
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Head(ctx, id); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, c.cut(fi.Size())); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.Head(ctx, id)
			wantCorrupt(t, "head", err, st.path, "", 0, c.says)
			_, err = st.Create(ctx, storage.NewSession{})
			wantCorrupt(t, "create", err, st.path, "", 0, c.says)
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the file changed (%v)", err)
			}
		})
	}
}

// The check before a store's first write to a session finds damage in its
// records that no read has come across: the write is refused, and so is
// every later write of that store, even once the file reads well again
// (restored from a backup, say): the store saw damage, and a person has to
// look. Other stores are told by the damage mark: they refuse to write to
// the damaged file, and write to the one put back in its place.
func TestDamageFoundBeforeTheFirstWriteIsKept(t *testing.T) {
	ctx := context.Background()
	path, id := healthy(t, 4)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tamper(t, path, id, func(b *bolt.Bucket) error {
		v := bytes.Clone(b.Bucket(versionsBucket).Get(versionKey(2)))
		v[len(v)-2] ^= 1
		return b.Bucket(versionsBucket).Put(versionKey(2), v)
	})
	damaged, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Append(ctx, id, 4, chat(4))
	wantCorrupt(t, "the first write", err, st.path, id, 2, "checksum mismatch")
	_, err = st.Create(ctx, storage.NewSession{})
	wantCorrupt(t, "a write elsewhere after it", err, st.path, id, 2, "checksum mismatch")

	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Create(ctx, storage.NewSession{})
	wantCorrupt(t, "another store's write", err, st.path, id, 2, "(found before: nothing is written to the file")
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, damaged) {
		t.Fatalf("the damaged file was written to (%v)", err)
	}

	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = st.Create(ctx, storage.NewSession{})
	wantCorrupt(t, "a write after the file was restored", err, st.path, id, 2, "checksum mismatch")
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(after, good) {
		t.Fatalf("the store wrote (%v)", err)
	}
	fresh, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.Create(ctx, storage.NewSession{}); err != nil {
		t.Fatalf("a new store on the restored file: %v", err)
	}
}
