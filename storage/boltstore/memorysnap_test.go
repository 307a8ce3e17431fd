package boltstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
)

// memoryFile is a file whose memory log holds n memories, the second
// edited.
func memoryFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for i := range n {
		kept, err := st.AppendMemory(context.Background(), state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: fmt.Sprintf("memory %d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, kept.Memory.ID)
	}
	if _, err := st.AppendMemory(context.Background(), state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: ids[1], Text: "memory 1, edited"}}); err != nil {
		t.Fatal(err)
	}
	return path
}

// nowIsTheFold checks that a new Store's memories now are the whole log
// folded, and returns them.
func nowIsTheFold(t *testing.T, path string) state.Memories {
	t.Helper()
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	whole, err := storage.Memories(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	now, err := st.MemoriesNow(context.Background())
	if err != nil || now.Version != whole.Version || !reflect.DeepEqual(now.List, whole.List) {
		t.Fatalf("the memories now are v%d %+v (%v); the log folds to v%d %+v", now.Version, now.List, err, whole.Version, whole.List)
	}
	return now
}

// A snapshot that cannot serve is passed over, and the memories read
// from the whole log: damaged, ahead of the log, of another log's entry,
// behind the log (an older build appended), with a restore after it, or
// not there at all. Verify reports a damaged one as derived, which holds
// back no write, and the next append makes a sound one.
func TestAMemorySnapshotThatCannotServeIsPassedOver(t *testing.T) {
	ctx := context.Background()
	snapshotOf := func(m state.Memories, entry uint64) []byte {
		return seal(append(make([]byte, sealSize), storage.EncodeMemorySnapshot(m, entry)...))
	}
	appendRaw := func(b *bolt.Bucket, ev state.MemoryEvent) error {
		rec, err := encodeMemory(ev)
		if err != nil {
			return err
		}
		return b.Put(versionKey(ev.Version), rec)
	}
	for _, c := range []struct {
		name    string
		spoil   func(tx *bolt.Tx) error
		derived bool // verify reports it
	}{
		{"a byte flipped", func(tx *bolt.Tx) error {
			nb := tx.Bucket(memoryNowBucket)
			raw := slices.Clone(nb.Get(memoryNowKey))
			raw[len(raw)/2] ^= 0x04
			return nb.Put(memoryNowKey, raw)
		}, true},
		{"ahead of the log", func(tx *bolt.Tx) error {
			return tx.Bucket(memoryNowBucket).Put(memoryNowKey, snapshotOf(state.Folded(99, nil), 1))
		}, true},
		{"of another log's entry", func(tx *bolt.Tx) error {
			return tx.Bucket(memoryNowBucket).Put(memoryNowKey, snapshotOf(state.Folded(6, nil), 12345))
		}, true},
		{"behind the log", func(tx *bolt.Tx) error {
			return appendRaw(tx.Bucket(memoryBucket), state.MemoryEvent{Version: 7, Kind: state.MemoryAdded, At: statetest.Epoch,
				Memory: state.Memory{ID: "older", Text: "an older build's", CreatedAt: statetest.Epoch, UpdatedAt: statetest.Epoch}})
		}, false},
		{"a restore after it", func(tx *bolt.Tx) error {
			return appendRaw(tx.Bucket(memoryBucket), state.MemoryEvent{Version: 7, Kind: state.MemoryRestored, At: statetest.Epoch, To: 2})
		}, false},
		{"not there", func(tx *bolt.Tx) error { return tx.DeleteBucket(memoryNowBucket) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := memoryFile(t, 5)
			withBolt(t, path, c.spoil)
			nowIsTheFold(t, path)
			err := Verify(ctx, path)
			var ce *storage.CorruptError
			if c.derived != (err != nil) || err != nil && (!errors.As(err, &ce) || !ce.Derived || !strings.Contains(err.Error(), "memory log's snapshot")) {
				t.Fatalf("verify: %v", err)
			}
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "after"}})
			st.Close()
			if err != nil {
				t.Fatalf("an append after the snapshot was spoilt: %v", err)
			}
			if err := Verify(ctx, path); err != nil {
				t.Fatalf("verify after an append: %v", err)
			}
			nowIsTheFold(t, path)
		})
	}
}

// A sound snapshot serves alone: the log's earlier entries are not read,
// so damage in one of them does not stop a task start (an append, and
// verify, still find it).
func TestMemoriesNowReadNoEarlierEntry(t *testing.T) {
	ctx := context.Background()
	path := memoryFile(t, 40)
	withBolt(t, path, func(tx *bolt.Tx) error {
		b := tx.Bucket(memoryBucket)
		raw := slices.Clone(b.Get(versionKey(1)))
		raw[len(raw)-3] ^= 0x01
		return b.Put(versionKey(1), raw)
	})
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now, err := st.MemoriesNow(ctx)
	if err != nil || now.Version != 41 || len(now.List) != 40 || now.List[1].Text != "memory 1, edited" {
		t.Fatalf("the memories now: v%d, %d memories, %v", now.Version, len(now.List), err)
	}
	if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "x"}}); !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "memory log v1") {
		t.Fatalf("an append over the damaged log: %v", err)
	}
}

// Recover copies the memory log up to an entry that is sound but does
// not follow the ones before it, and keeps a snapshot of what it copied.
func TestRecoverStopsAtAMemoryThatDoesNotFollow(t *testing.T) {
	ctx := context.Background()
	path := memoryFile(t, 5) // v1-v5 added, v6 an edit
	withBolt(t, path, func(tx *bolt.Tx) error {
		rec, err := encodeMemory(state.MemoryEvent{Version: 4, Kind: state.MemoryEdited, At: statetest.Epoch,
			Memory: state.Memory{ID: "nosuch", Text: "x", CreatedAt: statetest.Epoch, UpdatedAt: statetest.Epoch}})
		if err != nil {
			return err
		}
		return tx.Bucket(memoryBucket).Put(versionKey(4), rec)
	})
	dst := filepath.Join(t.TempDir(), "recovered.db")
	r, err := Recover(ctx, path, dst)
	if err != nil {
		t.Fatal(err)
	}
	if r.Memories != 3 || !strings.Contains(r.MemoryLost, "memory log v4") || !strings.Contains(r.MemoryLost, "(3 of 6 entries) are not copied") {
		t.Fatalf("recovered %d memories; lost: %q", r.Memories, r.MemoryLost)
	}
	if err := Verify(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if now := nowIsTheFold(t, dst); now.Version != 3 || len(now.List) != 3 {
		t.Fatalf("the recovered memories now: %+v", now)
	}
}

// A snapshot is kept every storage.MemorySnapshotEvery entries: a
// Store's first append, which folds the whole log, keeps a sound one
// where it is, and the append that reaches the interval keeps a new one.
func TestAMemorySnapshotIsKeptEverySoManyEntries(t *testing.T) {
	ctx := context.Background()
	path := memoryFile(t, 5) // v1 to v6; the snapshot at v1, the first append's
	snapshotAt := func() int {
		t.Helper()
		v := -1
		withBolt(t, path, func(tx *bolt.Tx) error {
			if snap, ok := readMemorySnapshot(tx); ok {
				v = snap.Version
			}
			return nil
		})
		return v
	}
	if v := snapshotAt(); v != 1 {
		t.Fatalf("the snapshot is at v%d, want v1", v)
	}
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 7; i <= 1+storage.MemorySnapshotEvery; i++ {
		if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: fmt.Sprintf("more %d", i)}}); err != nil {
			t.Fatal(err)
		}
		want := 1
		if i == 1+storage.MemorySnapshotEvery {
			want = i
		}
		st.Close()
		if v := snapshotAt(); v != want {
			t.Fatalf("after v%d the snapshot is at v%d, want v%d", i, v, want)
		}
		if st, err = Open(path, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	// A restore keeps one at once: the entries after a snapshot cannot
	// hold one for a read to apply.
	if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryRestored, To: 3}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if v := snapshotAt(); v != 2+storage.MemorySnapshotEvery {
		t.Fatalf("after a restore at v%d the snapshot is at v%d", 2+storage.MemorySnapshotEvery, v)
	}
	nowIsTheFold(t, path)
}
