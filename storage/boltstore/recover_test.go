package boltstore_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// A flipped byte in one record: Recover copies everything else into a new
// file that can be written again, and says what was lost and renumbered.
func TestRecover(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "damaged.db")
	st, err := boltstore.Open(src, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	damaged, err := st.Create(ctx, storage.NewSession{Title: "damaged"})
	if err != nil {
		t.Fatal(err)
	}
	intact, err := st.Create(ctx, storage.NewSession{Title: "intact"})
	if err != nil {
		t.Fatal(err)
	}
	// damaged: v1..v6 on one line, then a branch from v2 (v7, v8). v4
	// carries the marker and will be damaged: v4..v6 are lost, v7 and v8
	// (their ancestors v1, v2 intact) are kept as v4 and v5.
	s := state.New(damaged.ID)
	var atV2 state.State
	for i := range 6 {
		ev := chatEvent(s, i)
		if i == 3 {
			ev.Messages[0].Content = marker
		}
		if s, err = storage.Commit(ctx, st, s, ev); err != nil {
			t.Fatal(err)
		}
		if s.Version == 2 {
			atV2 = s
		}
	}
	if err := st.SetHead(ctx, damaged.ID, 2); err != nil {
		t.Fatal(err)
	}
	fork := atV2
	for i := range 2 {
		if fork, err = storage.Commit(ctx, st, fork, chatEvent(fork, 10+i)); err != nil {
			t.Fatal(err)
		}
	}
	other := state.New(intact.ID)
	for i := range 5 {
		if other, err = storage.Commit(ctx, st, other, chatEvent(other, i)); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b[bytes.Index(b, []byte(marker))+3] ^= 0x20
	if err := os.WriteFile(src, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, src)

	dst := filepath.Join(dir, "recovered.db")
	r, err := boltstore.Recover(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if fileSum(t, src) != before {
		t.Fatal("Recover changed the damaged file")
	}
	if r.Sessions != 2 || r.Versions != 5+5 || len(r.Lost) != 1 {
		t.Fatalf("report %+v", r)
	}
	loss := r.Lost[0]
	if loss.Session != damaged.ID || len(loss.Lost) != 3 || loss.Lost[0] != 4 || !loss.Renumbered {
		t.Fatalf("loss %+v", loss)
	}

	again, err := boltstore.Open(dst, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	got, err := again.Head(ctx, intact.ID)
	if err != nil || !bytes.Equal(mustJSON(t, got), mustJSON(t, other)) {
		t.Fatalf("the intact session changed: %v", err)
	}
	head, err := again.Head(ctx, damaged.ID)
	if err != nil || head.Version != 5 || len(head.History) != len(fork.History) {
		t.Fatalf("the damaged session's head: v%d, %d messages (%v); want v5 with %d", head.Version, len(head.History), err, len(fork.History))
	}
	// The copy is a working store: the session goes on.
	if _, err := storage.Commit(ctx, again, head, chatEvent(head, 99)); err != nil {
		t.Fatalf("writing to the recovered file: %v", err)
	}
	if _, err := boltstore.Recover(ctx, src, dst); err == nil {
		t.Fatal("Recover overwrote an existing file")
	}
}

// Damage to bbolt's structure cannot be read around: Recover says so and
// writes nothing.
func TestRecoverRefusesBrokenStructure(t *testing.T) {
	path, _, good := goodStore(t)
	if err := os.WriteFile(path, good[:len(good)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out.db")
	_, err := boltstore.Recover(context.Background(), path, dst)
	if !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Fatal("a file was written")
	}
}

// Recover copies the file contents the sessions it keeps refer to, each
// once, and none that nothing refers to. A content that cannot be read
// costs no version: the versions that refer to it are kept, their file
// images say the content was lost, and the report names it.
func TestRecoverCopiesBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "damaged.db"), filepath.Join(dir, "recovered.db")
	st, err := boltstore.Open(src, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blob := func(text string) (state.Blob, state.FileImage) {
		b := state.Blob{Digest: storage.Digest([]byte(text)), Data: []byte(text)}
		return b, state.FileImage{Blob: b.Digest, Size: int64(len(text)), Mode: 0o644}
	}
	a, aImg := blob("a.go as it was written\n")
	damaged, damagedImg := blob(strings.Repeat("b.go, whose record will be damaged\n", 20))
	shared, sharedImg := blob("shared by two sessions\n")
	orphan, orphanImg := blob("only a deleted session referred to this\n")
	absent := state.FileImage{Absent: true}
	run := func(title string, changes ...[]any) (string, state.State) {
		info, err := st.Create(ctx, storage.NewSession{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		cur := storage.NewCursor(st, state.New(info.ID))
		for i, c := range changes {
			path, img, b := c[0].(string), c[1].(state.FileImage), c[2].(state.Blob)
			evs := boltstore.FileChangeEvents(cur.State().Phase, fmt.Sprint("call_", i), state.FileChange{Path: path, Before: absent, After: img})
			evs[len(evs)-1].Blobs = []state.Blob{b}
			for _, ev := range evs {
				if _, err := cur.Commit(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
		}
		return info.ID, cur.State()
	}
	files, _ := run("files", []any{"a.go", aImg, a}, []any{"b.go", damagedImg, damaged}, []any{"c.go", sharedImg, shared})
	other, otherHead := run("other", []any{"x.go", sharedImg, shared})
	gone, _ := run("deleted", []any{"o.go", orphanImg, orphan})
	if err := st.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := bolt.Open(src, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		k, _ := hex.DecodeString(strings.TrimPrefix(damaged.Digest, "sha256:"))
		v := bytes.Clone(tx.Bucket([]byte("blobs")).Get(k))
		v[len(v)-5] ^= 0x08
		return tx.Bucket([]byte("blobs")).Put(k, v)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	r, err := boltstore.Recover(ctx, src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 2 || r.Blobs != 2 || len(r.Lost) != 1 {
		t.Fatalf("report %+v; want 2 sessions, 2 contents copied, one loss", r)
	}
	loss := r.Lost[0]
	if loss.Session != files || len(loss.Lost) != 0 || loss.Whole || len(loss.Blobs) != 1 ||
		loss.Blobs[0].Digest != damaged.Digest || !strings.Contains(loss.Blobs[0].Reason, "checksum mismatch") ||
		!strings.Contains(loss.Reason, damaged.Digest) {
		t.Fatalf("loss %+v; want the content %s of session %s, and no version", loss, damaged.Digest, files)
	}

	again, err := boltstore.Open(dst, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for _, b := range []state.Blob{a, shared} {
		if got, err := again.Blob(ctx, b.Digest); err != nil || !bytes.Equal(got, b.Data) {
			t.Errorf("content %s in the copy: %v", b.Digest, err)
		}
	}
	for _, d := range []string{damaged.Digest, orphan.Digest} {
		if _, err := again.Blob(ctx, d); !errors.Is(err, storage.ErrBlobNotFound) {
			t.Errorf("content %s in the copy: %v; want none", d, err)
		}
	}
	head, err := again.Head(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := head.Files["b.go"].Now; got.Blob != "" || !strings.Contains(got.Untracked, damaged.Digest) || !strings.Contains(got.Untracked, "lost") || got.Size != damagedImg.Size {
		t.Errorf("b.go in the copy: %+v; want its content marked lost", got)
	}
	if got := head.Files["a.go"].Now; got != aImg {
		t.Errorf("a.go in the copy: %+v; want %+v", got, aImg)
	}
	if got, err := again.Head(ctx, other); err != nil || !bytes.Equal(mustJSON(t, got), mustJSON(t, otherHead)) {
		t.Errorf("the intact session changed: %v", err)
	}
	// The copy is a working store: a change refers to content it holds.
	more := boltstore.FileChangeEvents(head.Phase, "call_more", state.FileChange{Path: "d.go", Before: absent, After: aImg})
	cur := storage.NewCursor(again, head)
	for _, ev := range more {
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatalf("writing to the recovered file: %v", err)
		}
	}
	if err := boltstore.Verify(ctx, dst); err != nil {
		t.Fatal(err)
	}
}
