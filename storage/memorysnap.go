package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"retrace/state"
)

// A memory log is read at every task's start, and it only grows: a log
// of thousands of entries (a model told to remember, again and again)
// made every task of every project slow. So the log keeps a snapshot, the
// log folded at a version, and a task start reads that and the entries
// after it (fewer than MemorySnapshotEvery) instead of the whole log.
//
// A snapshot is derived data, as a session's are: it names the version
// it folds and the checksum of the log's entry there, so one left from
// another log (one pruned since, or put back from a backup) is told from
// the log's own. One that is damaged, or does not match, is passed over
// and the whole log folded instead; the next append keeps a sound one,
// verify reports it, and a recovered copy makes it again. The log stays
// the truth: an append folds the whole log before a Store's first write,
// and a restore always does.

// MemorySnapshotEvery is how many entries of the log an append lets pass
// before it keeps a new snapshot: a snapshot holds every memory kept, so
// keeping one at each append would write them all each time, and a read
// applies at most this many entries past one.
const MemorySnapshotEvery = 32

// SnapshotDue reports whether the append of ev keeps a new snapshot, the
// memories it followed having been read from a snapshot of version base,
// or from the whole log (base -1). A restore always does: a read whose
// entries after the snapshot hold one must fold the whole log.
func SnapshotDue(ev state.MemoryEvent, base int) bool {
	return base < 0 || ev.Kind == state.MemoryRestored || ev.Version-base >= MemorySnapshotEvery
}

// MemorySnapshot is the memory log folded at Version.
type MemorySnapshot struct {
	Version int
	// Entry is the checksum of the log's entry at Version, as the
	// backend keeps it (0 at version 0).
	Entry    uint64
	Memories []state.Memory
}

// memorySnapshotFormat leads an encoded snapshot: a change of layout
// makes the old ones unreadable, and so passed over.
const memorySnapshotFormat = 1

// EncodeMemorySnapshot is the snapshot of m, whose last entry has the
// checksum entry. It is binary, not JSON: a log of thousands of memories
// decodes in milliseconds rather than a tenth of a second.
func EncodeMemorySnapshot(m state.Memories, entry uint64) []byte {
	b := binary.AppendUvarint([]byte{memorySnapshotFormat}, uint64(m.Version))
	b = binary.AppendUvarint(b, entry)
	b = binary.AppendUvarint(b, uint64(len(m.List)))
	for _, x := range m.List {
		for _, s := range []string{x.ID, x.Project, x.Text, x.Source} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		for _, t := range []time.Time{x.CreatedAt, x.UpdatedAt} {
			b = binary.AppendVarint(b, t.Unix())
			b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
		}
	}
	return b
}

// DecodeMemorySnapshot reads a snapshot EncodeMemorySnapshot wrote. Its
// memories are checked as an entry's would be: one that would not follow
// is not taken.
func DecodeMemorySnapshot(b []byte) (MemorySnapshot, error) {
	var snap MemorySnapshot
	bad := func(what string) (MemorySnapshot, error) {
		return MemorySnapshot{}, fmt.Errorf("not a snapshot of the memory log: %s", what)
	}
	if len(b) == 0 || b[0] != memorySnapshotFormat {
		return bad("unknown format")
	}
	r := snapshotReader{b: b[1:]}
	v, entry, n := r.uint(), r.uint(), r.uint()
	if r.err || v > math.MaxInt32 || n > uint64(len(r.b)) {
		return bad("a bad header")
	}
	snap.Version, snap.Entry = int(v), entry
	snap.Memories = make([]state.Memory, 0, n)
	for range n {
		x := state.Memory{ID: r.str(), Project: r.str(), Text: r.str(), Source: r.str(), CreatedAt: r.time(), UpdatedAt: r.time()}
		if r.err {
			return bad("it is cut short")
		}
		snap.Memories = append(snap.Memories, x)
	}
	if len(r.b) != 0 {
		return bad("bytes after its end")
	}
	if err := state.CheckMemories(snap.Memories); err != nil {
		return bad(err.Error())
	}
	return snap, nil
}

// snapshotReader reads what EncodeMemorySnapshot wrote, noting the first
// read past the end.
type snapshotReader struct {
	b   []byte
	err bool
}

func (r *snapshotReader) uint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *snapshotReader) str() string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *snapshotReader) time() time.Time {
	sec, k := binary.Varint(r.b)
	if k <= 0 {
		r.err, r.b = true, nil
		return time.Time{}
	}
	r.b = r.b[k:]
	nsec := r.uint()
	if nsec >= 1e9 {
		r.err = true
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// MemoriesAfter is the memories snap holds with the log's entries after
// it applied: tail, which must be versions snap.Version+1 on. It returns
// false when they cannot be had so: an entry does not follow (damage the
// whole log's fold names), or restores a version the snapshot does not
// know.
func MemoriesAfter(snap MemorySnapshot, tail []state.MemoryEvent) (state.Memories, bool) {
	m := state.Folded(snap.Version, snap.Memories)
	for _, ev := range tail {
		var err error
		if m, err = m.Apply(ev); err != nil {
			return state.Memories{}, false
		}
	}
	return m, true
}

// MemoryPrune says what PruneMemories folded away, or would.
type MemoryPrune struct {
	DryRun bool
	// Entries is the log's length before, Kept after: one entry for each
	// memory kept now.
	Entries, Kept int
	// Forgotten counts the memories removed since they were added, whose
	// every entry goes.
	Forgotten int
}

// Changed reports whether the prune rewrites the log.
func (p MemoryPrune) Changed() bool { return p.Entries != p.Kept }

// PrunedLog is the log a prune leaves of cur, a whole fold of log: each
// memory kept now, added at the time its text was last changed, in the
// order kept; and what it folds away.
func PrunedLog(cur state.Memories, log []state.MemoryEvent) ([]state.MemoryEvent, MemoryPrune) {
	rep := MemoryPrune{Entries: len(log), Kept: len(cur.List)}
	kept := map[string]bool{}
	out := make([]state.MemoryEvent, len(cur.List))
	for i, m := range cur.List {
		kept[m.ID] = true
		out[i] = state.MemoryEvent{Version: i + 1, Kind: state.MemoryAdded, At: m.UpdatedAt, Memory: m}
	}
	for _, ev := range log {
		if ev.Kind == state.MemoryAdded && !kept[ev.Memory.ID] {
			rep.Forgotten++
		}
	}
	return out, rep
}
