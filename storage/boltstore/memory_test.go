package boltstore

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// A damaged memory log entry is named when the log is read, holds back
// every later append, and Recover copies the entries before it.
func TestDamagedMemoryLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three", "four"} {
		if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	withBolt(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket(memoryBucket)
		raw := slices.Clone(b.Get(versionKey(3)))
		raw[len(raw)-3] ^= 0x01
		return b.Put(versionKey(3), raw)
	})

	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.MemoryEvents(ctx)
	if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "memory log v3: checksum mismatch") || !strings.Contains(err.Error(), path) {
		t.Fatalf("reading the damaged log: %v", err)
	}
	if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "five"}}); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("an append after the damage: %v", err)
	}
	st.Close()
	if err := Verify(ctx, path); !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("verify: %v", err)
	}

	dst := filepath.Join(t.TempDir(), "recovered.db")
	r, err := Recover(ctx, path, dst)
	if err != nil {
		t.Fatal(err)
	}
	if r.Memories != 2 || !strings.Contains(r.MemoryLost, "memory log v3") || !strings.Contains(r.MemoryLost, "(2 of 4 entries) are not copied") {
		t.Fatalf("recovered %d memories; lost: %q", r.Memories, r.MemoryLost)
	}
	// The recovered copy has a snapshot of what it copied, made anew.
	if err := Verify(ctx, dst); err != nil {
		t.Fatalf("verify the recovered file: %v", err)
	}
	withBolt(t, dst, func(tx *bolt.Tx) error {
		if snap, ok := readMemorySnapshot(tx); !ok || snap.Version != 2 {
			t.Errorf("the recovered file's memory snapshot: %+v, %v", snap, ok)
		}
		return nil
	})
	rec, err := Open(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if now, err := rec.MemoriesNow(ctx); err != nil || now.Version != 2 || len(now.List) != 2 {
		t.Fatalf("the recovered memories now: %+v, %v", now, err)
	}
	m, err := storage.Memories(ctx, rec)
	if err != nil || len(m.List) != 2 || m.List[1].Text != "two" {
		t.Fatalf("the recovered memories: %+v, %v", m.List, err)
	}
	if _, err := rec.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "three, again"}}); err != nil {
		t.Fatalf("an append to the recovered file: %v", err)
	}
}
