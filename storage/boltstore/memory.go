package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// The memory log (state.Memories) is one bucket beside the sessions, and
// its snapshot (storage.MemorySnapshot) another:
//
//	memory/      version (uint64, big-endian) -> sealed JSON of the event
//	memory-now/  "now" -> sealed JSON of the snapshot (memorysnap.go)
//
// A Store's first append reads the whole log and folds it before it
// writes, so a damaged entry is found, and never written after, as a
// session's records are checked before its first write; later appends,
// and every read of the memories as they are, start from the snapshot,
// which an append keeps anew every storage.MemorySnapshotEvery entries.
// The log's entries name their version, so one moved to another key is
// told from the one that belongs there.

// memoryScope walks the root and the memory log, every page of it.
var memoryScope = scope{memory: true}

// AppendMemory keeps ev as the memory log's next version.
func (s *Store) AppendMemory(ctx context.Context, ev state.MemoryEvent) (state.MemoryEvent, error) {
	var kept state.MemoryEvent
	err := s.updateIn(ctx, memoryScope, func(tx *bolt.Tx) error {
		b, err := s.memoryOf(tx)
		if err != nil {
			return err
		}
		cur, base := state.Memories{}, -1
		if !s.memoryChecked || ev.Kind == state.MemoryRestored {
			// A restore brings back a version only the whole log knows.
			// The snapshot is checked against the fold: a sound one
			// need not be kept anew.
			if cur, err = s.foldMemory(b); err == nil {
				s.memoryChecked = true
				if v, serr := s.verifyMemorySnapshot(tx, cur, b); serr == nil {
					base = v
				}
			}
		} else {
			cur, base, err = s.memoriesNowIn(tx, b)
		}
		if err != nil {
			return err
		}
		var next state.Memories
		if kept, next, err = storage.NextMemory(cur, ev, s.opts.Now(), newID); err != nil {
			return err
		}
		rec, err := encodeMemory(kept)
		if err != nil {
			return err
		}
		b.FillPercent = 1.0 // appended in key order, never inserted between
		if err := b.Put(versionKey(kept.Version), rec); err != nil {
			return err
		}
		if !storage.SnapshotDue(kept, base) {
			return nil
		}
		return keepMemorySnapshot(tx, next, rec)
	})
	if err != nil {
		return state.MemoryEvent{}, s.memoryError("keep a memory in", err)
	}
	return kept, nil
}

// MemoryEvents returns the memory log.
func (s *Store) MemoryEvents(ctx context.Context) ([]state.MemoryEvent, error) {
	var log []state.MemoryEvent
	err := s.viewIn(ctx, memoryScope, func(tx *bolt.Tx) error {
		b, err := s.memoryOf(tx)
		if err != nil {
			return err
		}
		log, err = s.readMemory(b)
		return err
	})
	if errors.Is(err, errNoFile) {
		return nil, nil
	}
	if err != nil {
		return nil, s.memoryError("read the memories of", err)
	}
	return log, nil
}

// memoryError says what failed where; damage and a refused event say so
// themselves.
func (s *Store) memoryError(what string, err error) error {
	var me *state.MemoryError
	if errors.Is(err, storage.ErrCorrupt) || errors.As(err, &me) {
		return err
	}
	return fmt.Errorf("%s %s: %w", what, s.path, err)
}

// readMemory reads every entry of the log, each checked: its seal, that
// it is the entry its key says, and that the versions run 1, 2, 3...
func (s *Store) readMemory(b *bolt.Bucket) ([]state.MemoryEvent, error) {
	var log []state.MemoryEvent
	c := b.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		v, ok := keyVersion(k)
		if !ok || raw == nil {
			return nil, &storage.CorruptError{Path: s.path, Reason: fmt.Sprintf("stray key %x in the memory log", k)}
		}
		if v != len(log)+1 {
			return nil, storage.MemoryDamage(s.path, len(log)+1, "is missing")
		}
		ev, err := decodeMemory(raw, v)
		if err != nil {
			return nil, storage.MemoryDamage(s.path, v, "%v", err)
		}
		log = append(log, ev)
	}
	return log, nil
}

// foldMemory reads the log and folds it: an entry that does not follow
// the ones before it is damage, as a checkpoint that does not replay is.
func (s *Store) foldMemory(b *bolt.Bucket) (state.Memories, error) {
	log, err := s.readMemory(b)
	if err != nil {
		return state.Memories{}, err
	}
	return storage.FoldStored(s.path, log)
}

func encodeMemory(ev state.MemoryEvent) ([]byte, error) {
	js, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	return seal(append(make([]byte, sealSize, sealSize+len(js)), js...)), nil
}

// decodeMemory checks a sealed entry, and that it is version v's.
func decodeMemory(raw []byte, v int) (state.MemoryEvent, error) {
	p, err := unseal(raw)
	if err != nil {
		return state.MemoryEvent{}, err
	}
	var ev state.MemoryEvent
	if err := json.Unmarshal(p, &ev); err != nil {
		return state.MemoryEvent{}, fmt.Errorf("not an entry: %v", err)
	}
	if ev.Version != v {
		return state.MemoryEvent{}, fmt.Errorf("holds v%d's entry", ev.Version)
	}
	return ev, nil
}
