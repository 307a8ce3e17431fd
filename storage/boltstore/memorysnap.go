package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// The memory log's snapshot (storage.MemorySnapshot) is derived data in a
// bucket of its own. A file without it (one an older build made) is read
// by folding the whole log until the next append keeps one. An older
// build that appends leaves it further behind its log, as a newer one
// does between snapshots: the entries after it are applied, or, when
// they cannot be (a restore), the log is folded. So the bucket needs no
// new schema.
var (
	memoryNowBucket = []byte("memory-now")
	memoryNowKey    = []byte("now")
)

// memoryNowScope walks the snapshot, and in the log only the way to each
// entry read: a task start costs what is kept, not the log's length.
var memoryNowScope = scope{memoryNow: true}

// errWholeLog says the snapshot cannot serve: there is none, it is
// damaged, or it is not of this log's entries. The whole log is read.
var errWholeLog = errors.New("the memory log is read whole")

// MemoriesNow returns the memories as they are now.
func (s *Store) MemoriesNow(ctx context.Context) (state.Memories, error) {
	var m state.Memories
	err := s.viewIn(ctx, memoryNowScope, func(tx *bolt.Tx) error {
		b, err := s.memoryOf(tx)
		if err != nil {
			return err
		}
		now, err := s.memoriesAfterSnapshot(tx, b)
		m = now.Memories
		return err
	})
	if errors.Is(err, errWholeLog) {
		err = s.viewIn(ctx, memoryScope, func(tx *bolt.Tx) error {
			b, err := s.memoryOf(tx)
			if err != nil {
				return err
			}
			m, err = s.foldMemory(b)
			return err
		})
	}
	if errors.Is(err, errNoFile) {
		return state.Memories{}, nil
	}
	if err != nil {
		return state.Memories{}, s.memoryError("read the memories of", err)
	}
	return state.Folded(m.Version, m.List), nil
}

// memoriesNowIn is MemoriesNow inside a transaction whose scope walked
// the whole log, and the version of the snapshot it started from: -1
// when it folded the whole log.
func (s *Store) memoriesNowIn(tx *bolt.Tx, b *bolt.Bucket) (state.Memories, int, error) {
	now, err := s.memoriesAfterSnapshot(tx, b)
	if errors.Is(err, errWholeLog) {
		m, err := s.foldMemory(b)
		return m, -1, err
	}
	return now.Memories, now.Base, err
}

// memoriesAfterSnapshot is the snapshot with the log's entries after it
// applied, or errWholeLog. Only damage on the way to what it reads, in
// the file's pages, is an error of its own.
func (s *Store) memoriesAfterSnapshot(tx *bolt.Tx, b *bolt.Bucket) (based, error) {
	snap, ok := readMemorySnapshot(tx)
	if !ok {
		return based{}, errWholeLog
	}
	last, err := s.lastMemory(b)
	if err != nil {
		return based{}, err
	}
	if snap.Version > last || last-snap.Version > 2*storage.MemorySnapshotEvery {
		// Ahead of the log, or far behind it (an older build appended):
		// the whole log costs about as much.
		return based{}, errWholeLog
	}
	if snap.Version > 0 {
		raw, err := s.memoryEntry(b, snap.Version)
		if err != nil {
			return based{}, err
		}
		if _, err := decodeMemory(raw, snap.Version); err != nil || entrySum(raw) != snap.Entry {
			return based{}, errWholeLog
		}
	}
	var tail []state.MemoryEvent
	for v := snap.Version + 1; v <= last; v++ {
		raw, err := s.memoryEntry(b, v)
		if err != nil {
			return based{}, err
		}
		ev, err := decodeMemory(raw, v)
		if err != nil {
			return based{}, errWholeLog // the whole read names it
		}
		tail = append(tail, ev)
	}
	m, ok := storage.MemoriesAfter(snap, tail)
	if !ok {
		return based{}, errWholeLog
	}
	return based{m, snap.Version}, nil
}

// based is memories read from the snapshot of version Base.
type based struct {
	state.Memories
	Base int
}

// lastMemory is the log's last version, 0 when it is empty.
func (s *Store) lastMemory(b *bolt.Bucket) (int, error) {
	if err := s.guardMemory(versionKey(math.MaxInt64)); err != nil {
		return 0, err
	}
	k, _ := b.Cursor().Last()
	if k == nil {
		return 0, nil
	}
	v, ok := keyVersion(k)
	if !ok {
		return 0, errWholeLog // a stray key: the whole read names it
	}
	return v, nil
}

// memoryEntry is the log's raw entry at v, or errWholeLog when it is not
// there.
func (s *Store) memoryEntry(b *bolt.Bucket, v int) ([]byte, error) {
	key := versionKey(v)
	if err := s.guardMemory(key); err != nil {
		return nil, err
	}
	raw := b.Get(key)
	if raw == nil {
		return nil, errWholeLog
	}
	return raw, nil
}

// entrySum is the checksum a sealed entry carries, which a snapshot names.
func entrySum(raw []byte) uint64 {
	if len(raw) < sealSize {
		return 0
	}
	return uint64(binary.LittleEndian.Uint32(raw[1:sealSize]))
}

// readMemorySnapshot reads the snapshot, if there is a sound one.
func readMemorySnapshot(tx *bolt.Tx) (storage.MemorySnapshot, bool) {
	nb := tx.Bucket(memoryNowBucket)
	if nb == nil {
		return storage.MemorySnapshot{}, false
	}
	snap, err := decodeMemorySnapshot(nb.Get(memoryNowKey))
	return snap, err == nil
}

func decodeMemorySnapshot(raw []byte) (storage.MemorySnapshot, error) {
	p, err := unseal(raw)
	if err != nil {
		return storage.MemorySnapshot{}, err
	}
	return storage.DecodeMemorySnapshot(p)
}

// keepMemorySnapshot keeps next as the snapshot of the log whose entry
// at next's version is rec (nil for an empty log).
func keepMemorySnapshot(tx *bolt.Tx, next state.Memories, rec []byte) error {
	p := storage.EncodeMemorySnapshot(next, entrySum(rec))
	nb, err := tx.CreateBucketIfNotExists(memoryNowBucket)
	if err != nil {
		return err
	}
	return nb.Put(memoryNowKey, seal(append(make([]byte, sealSize, sealSize+len(p)), p...)))
}

// verifyMemorySnapshot checks the snapshot against m, the whole log
// folded (every version known), in mb: it must be what the log's entries
// make of its version. It returns that version, -1 when there is no
// snapshot. Damage in it is derived, and passed over by every read.
func (s *Store) verifyMemorySnapshot(tx *bolt.Tx, m state.Memories, mb *bolt.Bucket) (int, error) {
	nb := tx.Bucket(memoryNowBucket)
	if nb == nil {
		return -1, nil
	}
	damaged := func(format string, args ...any) (int, error) {
		return -1, &storage.CorruptError{Path: s.path, Reason: "the memory log's snapshot " + fmt.Sprintf(format, args...), Derived: true}
	}
	if k, _ := nb.Cursor().First(); k != nil && !bytes.Equal(k, memoryNowKey) {
		return damaged("bucket holds a stray key %x", k)
	}
	if k, _ := nb.Cursor().Last(); k != nil && !bytes.Equal(k, memoryNowKey) {
		return damaged("bucket holds a stray key %x", k)
	}
	raw := nb.Get(memoryNowKey)
	if raw == nil {
		return -1, nil
	}
	snap, err := decodeMemorySnapshot(raw)
	if err != nil {
		return damaged("%v", err)
	}
	then, ok := m.At(snap.Version)
	if !ok {
		return damaged("is of v%d, past the log's end (v%d)", snap.Version, m.Version)
	}
	want := storage.EncodeMemorySnapshot(state.Folded(snap.Version, then), entrySum(mb.Get(versionKey(snap.Version))))
	if p, _ := unseal(raw); !bytes.Equal(p, want) {
		return damaged("is not what the log's entries make of v%d", snap.Version)
	}
	return snap.Version, nil
}
