package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
