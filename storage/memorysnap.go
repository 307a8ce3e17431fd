package storage

import (
	"encoding/json"
	"fmt"

	"retrace/state"
)

// A memory log is read at every task's start, and it only grows: a log
// of thousands of entries (a model told to remember, again and again)
// made every task of every project slow. So each append also keeps a
// snapshot, the log folded at its version, and a task start reads that
// and the entries after it, if any, instead of the whole log.
//
// A snapshot is derived data, as a session's are: it names the version
// it folds and the checksum of the log's entry there, so one left from
// another log (one pruned since, or put back from a backup) is told from
// the log's own. One that is damaged, or does not match, is passed over
// and the whole log folded instead; the next append writes a sound one,
// verify reports it, and a recovered copy makes it again. The log stays
// the truth: an append folds the whole log before a Store's first write,
// and a restore always does.

// MemorySnapshot is the memory log folded at Version.
type MemorySnapshot struct {
	Version int `json:"version"`
	// Entry is the checksum of the log's entry at Version, as the
	// backend keeps it (0 at version 0).
	Entry    uint64         `json:"entry"`
	Memories []state.Memory `json:"memories"`
}

// EncodeMemorySnapshot is the snapshot of m, whose last entry has the
// checksum entry, as JSON.
func EncodeMemorySnapshot(m state.Memories, entry uint64) ([]byte, error) {
	list := m.List
	if list == nil {
		list = []state.Memory{}
	}
	return json.Marshal(MemorySnapshot{Version: m.Version, Entry: entry, Memories: list})
}

// DecodeMemorySnapshot reads a snapshot EncodeMemorySnapshot wrote.
func DecodeMemorySnapshot(b []byte) (MemorySnapshot, error) {
	var snap MemorySnapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		return snap, fmt.Errorf("not a snapshot of the memory log: %v", err)
	}
	if snap.Version < 0 {
		return snap, fmt.Errorf("a snapshot of the memory log at v%d", snap.Version)
	}
	return snap, nil
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
