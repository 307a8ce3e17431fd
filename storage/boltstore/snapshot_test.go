package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/storetest"
)

// chatFile writes a chat of n events to a new file, goes back to version
// back (when not 0) and writes more more, and returns the path and id.
func chatFile(t *testing.T, n, back, more int) (string, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, err := st.Create(ctx, storage.NewSession{Title: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	clock := t0
	chat := func(cur *storage.Cursor, n int) {
		for i := range n {
			clock = clock.Add(time.Second)
			ev := chatTurn(cur.State(), i)
			ev.At = clock
			if _, err := cur.Commit(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	chat(storage.NewCursor(st, state.New(info.ID)), n)
	if back > 0 {
		if err := st.SetHead(ctx, info.ID, back); err != nil {
			t.Fatal(err)
		}
		s, err := st.At(ctx, info.ID, back)
		if err != nil {
			t.Fatal(err)
		}
		chat(storage.NewCursor(st, s), more)
	}
	return path, info.ID
}

// chatTurn is the next event of a chat: a question, or its answer.
func chatTurn(s state.State, i int) state.Event {
	if s.Phase == state.Planning {
		return state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d", i)}}}
	}
	return state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d", i)}}}
}

// snapshotSizes reads the versions that have a snapshot, and what each
// takes with its key.
func snapshotSizes(t *testing.T, path, id string) map[int]int64 {
	t.Helper()
	out := map[int]int64{}
	withBolt(t, path, func(tx *bolt.Tx) error {
		sb := tx.Bucket(sessionsBucket).Bucket([]byte(id)).Bucket(snapshotsBucket)
		if sb == nil {
			return nil
		}
		return sb.ForEach(func(k, v []byte) error {
			ver, _ := keyVersion(k)
			out[ver] = int64(len(k) + len(v))
			return nil
		})
	})
	return out
}

func withBolt(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// A snapshot is kept every snapshotEvery versions, on whichever branch
// the versions are: a branch started far back gets its own.
func TestSnapshotsAreKeptEverySoManyVersions(t *testing.T) {
	path, id := chatFile(t, 600, 100, 300)
	got := snapshotSizes(t, path, id)
	want := []int{snapshotEvery, 2 * snapshotEvery, 3 * snapshotEvery}
	if vs := slices.Sorted(maps.Keys(got)); !slices.Equal(vs, want) {
		t.Fatalf("snapshots at %v, want %v", vs, want)
	}
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, v := range []int{1, 99, 100, 255, 256, 257, 600, 601, 767, 768, 900} {
		storetest.SameRecent(t, st, id, v, 3)
	}
	if err := Verify(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

// gc --branches removes the snapshots of the versions it removes, counts
// their bytes, and leaves a file verify passes.
func TestGCRemovesTheSnapshotsOfRemovedVersions(t *testing.T) {
	ctx := context.Background()
	path, id := chatFile(t, 600, 100, 300)
	snaps := snapshotSizes(t, path, id)
	var records int64 // what the abandoned branch's checkpoints take
	withBolt(t, path, func(tx *bolt.Tx) error {
		vb := tx.Bucket(sessionsBucket).Bucket([]byte(id)).Bucket(versionsBucket)
		for v := 101; v <= 600; v++ {
			records += int64(8 + len(vb.Get(versionKey(v))))
		}
		return nil
	})
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.GC(ctx, GCOptions{Branches: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Branches) != 1 || len(rep.Branches[0].Versions) != 500 {
		t.Fatalf("gc removed %+v, want v101-v600", rep.Branches)
	}
	if left := snapshotSizes(t, path, id); !slices.Equal(slices.Sorted(maps.Keys(left)), []int{3 * snapshotEvery}) {
		t.Fatalf("snapshots left at %v, want only v%d's", slices.Sorted(maps.Keys(left)), 3*snapshotEvery)
	}
	if err := Verify(ctx, path); err != nil {
		t.Fatal(err)
	}
	// The bytes reported are the records' and the two snapshots'.
	if want := records + snaps[snapshotEvery] + snaps[2*snapshotEvery]; rep.Branches[0].Bytes != want {
		t.Fatalf("gc counted %d bytes, want %d: %d of checkpoints and %d and %d of snapshots",
			rep.Branches[0].Bytes, want, records, snaps[snapshotEvery], snaps[2*snapshotEvery])
	}
	storetest.SameRecent(t, st, id, 900, 3)
}

// Verify reports a snapshot that is damaged, another session's, or sound
// but not what the events make; Recent passes over a damaged one, reading
// the events it was made from instead, and a damaged one holds back no
// write.
func TestVerifyFindsAWrongSnapshot(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		edit func(id string, raw []byte) []byte
		says string
		// right are the versions whose recent part Recent reads right,
		// passing over the snapshot: all for one it can tell is damaged;
		// past it for a sound one the next event does not apply to.
		right []int
	}{
		{"a flipped byte", func(_ string, raw []byte) []byte {
			raw = slices.Clone(raw)
			raw[len(raw)-3] ^= 0x20
			return raw
		}, "checksum mismatch", []int{snapshotEvery, snapshotEvery + 1, 2*snapshotEvery - 1}},
		{"another version's", func(string, []byte) []byte {
			return encodeSnapshot("x", 2*snapshotEvery, state.New("x"))
		}, "its snapshot is kept at v256 but is of v512", []int{snapshotEvery, snapshotEvery + 1, 2*snapshotEvery - 1}},
		{"another session's", func(string, []byte) []byte {
			return encodeSnapshot("another", snapshotEvery, state.New("another"))
		}, "its snapshot is of another session", []int{snapshotEvery, snapshotEvery + 1, 2*snapshotEvery - 1}},
		{"a sound one of another state", func(id string, _ []byte) []byte {
			return encodeSnapshot(id, snapshotEvery, state.State{Phase: state.Planning, Summary: "not so"})
		}, "is not what its events make of the version", []int{snapshotEvery + 1, 2*snapshotEvery - 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, id := chatFile(t, 600, 0, 0)
			withBolt(t, path, func(tx *bolt.Tx) error {
				sb := tx.Bucket(sessionsBucket).Bucket([]byte(id)).Bucket(snapshotsBucket)
				return sb.Put(versionKey(snapshotEvery), c.edit(id, sb.Get(versionKey(snapshotEvery))))
			})
			err := Verify(ctx, path)
			var ce *storage.CorruptError
			if !errors.As(err, &ce) || ce.Session != id || ce.Version != snapshotEvery || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("verify: %v; want damage to v%d's snapshot saying %q", err, snapshotEvery, c.says)
			}
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, v := range c.right {
				storetest.SameRecent(t, st, id, v, 3)
			}
			head, err := st.Head(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := storage.NewCursor(st, head).Commit(ctx, chatTurn(head, 0)); err != nil {
				t.Fatalf("a write after a damaged snapshot: %v", err)
			}
		})
	}
}

// An import keeps the snapshots appending the same versions kept, byte
// for byte, so an imported session resumes as quickly.
func TestImportKeepsTheSnapshotsAppendsKeep(t *testing.T) {
	ctx := context.Background()
	path, id := chatFile(t, 600, 100, 300)
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := st.Export(ctx, id)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "imported.db")
	imp, err := Open(other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imp.Import(ctx, ex); err != nil {
		t.Fatal(err)
	}
	imp.Close()
	want, got := snapshotValues(t, path, id), snapshotValues(t, other, id)
	if len(want) != 3 || !maps.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("imported snapshots at %v, appended at %v (or their bytes differ)", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}

func snapshotValues(t *testing.T, path, id string) map[int][]byte {
	t.Helper()
	out := map[int][]byte{}
	withBolt(t, path, func(tx *bolt.Tx) error {
		sb := tx.Bucket(sessionsBucket).Bucket([]byte(id)).Bucket(snapshotsBucket)
		if sb == nil {
			return nil
		}
		return sb.ForEach(func(k, v []byte) error {
			ver, _ := keyVersion(k)
			out[ver] = bytes.Clone(v)
			return nil
		})
	})
	return out
}

// Recover copies a session gc pruned: with nothing lost, its version
// numbers and gc's gaps stay, and the copy makes the snapshots appending
// made; with a version lost to damage, the numbers close up, gaps and
// all, and the report says they moved.
func TestRecoverAfterGC(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		damaged int // the version whose record is damaged, or 0
	}{{"nothing lost", 0}, {"a version lost", 700}} {
		t.Run(c.name, func(t *testing.T) {
			path, id := chatFile(t, 600, 100, 300) // v101..v600 abandoned for v601..v900
			st, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.GC(ctx, GCOptions{Branches: true}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			if c.damaged > 0 {
				withBolt(t, path, func(tx *bolt.Tx) error {
					vb := tx.Bucket(sessionsBucket).Bucket([]byte(id)).Bucket(versionsBucket)
					raw := slices.Clone(vb.Get(versionKey(c.damaged)))
					raw[len(raw)-2] ^= 0x10
					return vb.Put(versionKey(c.damaged), raw)
				})
			}
			dst := filepath.Join(t.TempDir(), "recovered.db")
			r, err := Recover(ctx, path, dst)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := Open(dst, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer rec.Close()
			info, err := rec.Session(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.damaged == 0 {
				if len(r.Lost) != 0 || info.Head != 900 || info.Versions != 900 {
					t.Fatalf("lost %+v; head v%d of %d, want v900 of 900", r.Lost, info.Head, info.Versions)
				}
				if _, err := rec.At(ctx, id, 300); !errors.Is(err, storage.ErrVersionNotFound) {
					t.Fatalf("v300, removed by gc: %v", err)
				}
				if got, want := snapshotValues(t, dst, id), snapshotValues(t, path, id); !maps.EqualFunc(got, want, bytes.Equal) {
					t.Fatalf("recovered snapshots at %v, the original's at %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
				}
				storetest.SameRecent(t, rec, id, 900, 3)
				return
			}
			// v1..v100 and v601..v699 are kept: 199 versions, renumbered.
			if len(r.Lost) != 1 || !r.Lost[0].Renumbered || info.Versions != 199 || info.Head != 199 {
				t.Fatalf("lost %+v; head v%d of %d, want v199 of 199", r.Lost, info.Head, info.Versions)
			}
			storetest.SameRecent(t, rec, id, 199, 3)
		})
	}
}
