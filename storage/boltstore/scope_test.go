package boltstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/storetest"
)

// chatSessions writes sessions of n chat checkpoints each, titled
// "session 0", "session 1" ..., and returns their ids.
func chatSessions(t *testing.T, path string, sessions, n int) []string {
	t.Helper()
	ctx := context.Background()
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for i := range sessions {
		info, err := st.Create(ctx, storage.NewSession{Title: fmt.Sprint("session ", i)})
		if err != nil {
			t.Fatal(err)
		}
		s := state.New(info.ID)
		for i := range n {
			if s, err = storage.Commit(ctx, st, s, chatEvent(s, i)); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, info.ID)
	}
	return ids
}

// bucketRoot is the root page of the bucket at names, read with bbolt.
func bucketRoot(t *testing.T, path string, names ...string) uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root uint64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(names[0]))
		for _, n := range names[1:] {
			b = b.Bucket([]byte(n))
		}
		root = uint64(b.Root())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// loopBack makes the branch page root point back to itself: its first
// child, or with all every one. bbolt following it goes down forever.
func loopBack(t *testing.T, path string, root uint64, all bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := int64(root) * int64(os.Getpagesize())
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], page); err != nil {
		t.Fatal(err)
	}
	if root == 0 || binary.LittleEndian.Uint16(hdr[8:]) != 0x01 {
		t.Fatalf("page %d is not a branch page: the test needs more data", root)
	}
	n := int64(1)
	if all {
		n = int64(binary.LittleEndian.Uint16(hdr[10:]))
	}
	for i := range n {
		if _, err := f.WriteAt(binary.LittleEndian.AppendUint64(nil, root), page+16+i*16+8); err != nil {
			t.Fatal(err)
		}
	}
}

// An operation reads only its own session: a loop in another session's
// pages, which would send bbolt down forever and kill the process, stops
// nothing but that session's reads. Before, a store's first operation
// walked the whole file and refused it all.
func TestOperationsReadOnlyTheirSession(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	ids := chatSessions(t, path, 2, 200)
	mine, broken := ids[0], ids[1]

	// The first child of the broken session's branch page points back to
	// the page itself.
	loopBack(t, path, bucketRoot(t, path, "sessions", broken, "v"), false)

	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer st.Close()
	head, err := st.Head(ctx, mine)
	if err != nil {
		t.Fatalf("head of the sound session: %v", err)
	}
	if _, err := st.Tree(ctx, mine); err != nil {
		t.Fatalf("tree of the sound session: %v", err)
	}
	if _, err := storage.Commit(ctx, st, head, chatEvent(head, 200)); err != nil {
		t.Fatalf("a write to the sound session: %v", err)
	}
	list, err := st.Sessions(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions: %v, %d", err, len(list))
	}
	if _, err := st.Session(ctx, broken); err != nil {
		t.Fatalf("the broken session's summary, which its versions do not hold: %v", err)
	}

	sum := fileSum(t, path)
	_, err = st.Head(ctx, broken)
	if !errors.Is(err, storage.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(path)) {
		t.Fatalf("head of the broken session: want damage naming the file, got %v", err)
	}
	// Damage seen is never written over: not by this store, nor another.
	if _, err := storage.Commit(ctx, st, head, chatEvent(head, 201)); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("a write after the damage was seen: %v", err)
	}
	other, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Create(ctx, storage.NewSession{}); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("another store's write after the damage was seen: %v", err)
	}
	if fileSum(t, path) != sum {
		t.Fatal("the damaged file was written to")
	}
}

// A writer that did not close its store (killed, or the power went) may
// have left damage no later operation of its session reads: the next
// writer checks the whole file first. A writer that closed leaves nothing
// to check.
func TestAWholeCheckFollowsACrashedWriter(t *testing.T) {
	ctx := context.Background()
	for _, crashed := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "retrace.db")
		ids := chatSessions(t, path, 3, 4)
		mine, writer, broken := ids[0], ids[1], ids[2]
		flipLastByte(t, path, broken, 1) // below every read of the others

		cmd := helperCmd(t, "killed-writer", path, writer)
		startHolder(t, cmd, "wrote")
		if crashed {
			_ = cmd.Process.Signal(syscall.SIGKILL)
		} else {
			_ = cmd.Process.Signal(syscall.SIGTERM) // the role closes its store
		}
		_ = cmd.Wait()

		st, err := boltstore.Open(path, boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.Append(ctx, mine, 4, state.Event{Kind: state.UserMessage, At: time.Now(), Messages: []state.Message{{Role: state.RoleUser, Content: "more"}}})
		st.Close()
		switch {
		case crashed && !errors.Is(err, storage.ErrCorrupt):
			t.Errorf("after a crashed writer: want the whole check to find the damage, got %v", err)
		case !crashed && err != nil:
			t.Errorf("after a writer that closed: %v", err)
		}
	}
}

// flipLastByte flips the last byte of a session's version v, with bbolt,
// below its checksum.
func flipLastByte(t *testing.T, path, id string, v uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		vb := tx.Bucket([]byte("sessions")).Bucket([]byte(id)).Bucket([]byte("v"))
		k := binary.BigEndian.AppendUint64(nil, v)
		rec := bytes.Clone(vb.Get(k))
		rec[len(rec)-1] ^= 1
		return vb.Put(k, rec)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A file content's lookup walks the way to its key first: a loop in the
// contents bucket, which would send bbolt down forever, is an error for
// the lookups that cross it, and no other operation reads it.
func TestContentLookupsWalkTheirWay(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := storetest.ScriptedExport("0123456789abcdef", 2000, 7)
	if _, err := st.Import(ctx, ex); err != nil {
		t.Fatal(err)
	}
	mine := chatSessions(t, path, 1, 4)[0]
	st.Close()

	loopBack(t, path, bucketRoot(t, path, "blobs"), true)

	st, err = boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Head(ctx, mine); err != nil {
		t.Fatalf("a session with no file contents: %v", err)
	}
	for d := range ex.Blobs {
		_, err := st.Blob(ctx, d)
		if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "points back to itself") {
			t.Fatalf("a content behind the loop: want damage, got %v", err)
		}
		break
	}
}
