package storage_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
)

func snapshotMemories() state.Memories {
	at := time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.UTC)
	return state.Folded(41, []state.Memory{
		{ID: "a1", Text: "tabs, not spaces", Source: "session 3f2a v4", CreatedAt: at, UpdatedAt: at.Add(time.Hour)},
		{ID: "b2", Project: "/src/app", Text: "数据 🙂 \"quoted\"\nline", CreatedAt: at.Add(-24 * time.Hour), UpdatedAt: at.Add(-24 * time.Hour)},
	})
}

// A snapshot reads back as written; one cut short, with bytes after its
// end, of another format, or holding a memory no log could hold, is not
// read.
func TestMemorySnapshotRoundTrip(t *testing.T) {
	m := snapshotMemories()
	b := storage.EncodeMemorySnapshot(m, 0xfeedface)
	snap, err := storage.DecodeMemorySnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 41 || snap.Entry != 0xfeedface || !reflect.DeepEqual(snap.Memories, m.List) {
		t.Fatalf("read back as %+v", snap)
	}
	dup := state.Folded(2, []state.Memory{m.List[0], m.List[0]})
	long := state.Folded(1, []state.Memory{{ID: "x", Text: strings.Repeat("x", state.MaxMemory+1), CreatedAt: m.List[0].CreatedAt, UpdatedAt: m.List[0].CreatedAt}})
	for name, bad := range map[string][]byte{
		"empty":             nil,
		"cut short":         b[:len(b)-3],
		"bytes after":       append(b[:len(b):len(b)], 0),
		"another format":    append([]byte{9}, b[1:]...),
		"an id twice":       storage.EncodeMemorySnapshot(dup, 1),
		"a memory too long": storage.EncodeMemorySnapshot(long, 1),
	} {
		if _, err := storage.DecodeMemorySnapshot(bad); err == nil || !strings.Contains(err.Error(), "not a snapshot of the memory log") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecodeMemorySnapshot: no input panics or allocates past its size,
// and what decodes encodes to what decodes the same.
func FuzzDecodeMemorySnapshot(f *testing.F) {
	f.Add(storage.EncodeMemorySnapshot(snapshotMemories(), 7))
	f.Add(storage.EncodeMemorySnapshot(state.Memories{}, 0))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		snap, err := storage.DecodeMemorySnapshot(b)
		if err != nil {
			return
		}
		again, err := storage.DecodeMemorySnapshot(storage.EncodeMemorySnapshot(state.Folded(snap.Version, snap.Memories), snap.Entry))
		if err != nil || again.Version != snap.Version || again.Entry != snap.Entry || !reflect.DeepEqual(again.Memories, snap.Memories) {
			t.Fatalf("decoded %+v, then %+v (%v)", snap, again, err)
		}
	})
}
