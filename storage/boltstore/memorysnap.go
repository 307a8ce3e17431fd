package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// The memory log's snapshot (storage.MemorySnapshot) is derived data in a
// bucket of its own. A file without it (one an older build made, or one
// recovered) is read by folding the whole log until the next append
// keeps one. An older build that appends leaves it behind its log: the
// entries after it are applied, or, when they cannot be, the log is
// folded. So the bucket needs no new schema.
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
		m, err = s.memoriesAfterSnapshot(tx, b)
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
// the whole log.
func (s *Store) memoriesNowIn(tx *bolt.Tx, b *bolt.Bucket) (state.Memories, error) {
	m, err := s.memoriesAfterSnapshot(tx, b)
	if errors.Is(err, errWholeLog) {
		return s.foldMemory(b)
	}
	return m, err
}

// memoriesAfterSnapshot is the snapshot with the log's entries after it
// applied, or errWholeLog. Only damage on the way to what it reads, in
// the file's pages, is an error of its own.
func (s *Store) memoriesAfterSnapshot(tx *bolt.Tx, b *bolt.Bucket) (state.Memories, error) {
	snap, ok := readMemorySnapshot(tx)
	if !ok {
		return state.Memories{}, errWholeLog
	}
	last, err := s.lastMemory(b)
	if err != nil {
		return state.Memories{}, err
	}
	if snap.Version > last {
		return state.Memories{}, errWholeLog
	}
	if snap.Version > 0 {
		raw, err := s.memoryEntry(b, snap.Version)
		if err != nil {
			return state.Memories{}, err
		}
		if _, err := decodeMemory(raw, snap.Version); err != nil || entrySum(raw) != snap.Entry {
			return state.Memories{}, errWholeLog
		}
	}
	var tail []state.MemoryEvent
	for v := snap.Version + 1; v <= last; v++ {
		raw, err := s.memoryEntry(b, v)
		if err != nil {
			return state.Memories{}, err
		}
		ev, err := decodeMemory(raw, v)
		if err != nil {
			return state.Memories{}, errWholeLog // the whole read names it
		}
		tail = append(tail, ev)
	}
	m, ok := storage.MemoriesAfter(snap, tail)
	if !ok {
		return state.Memories{}, errWholeLog
	}
	return m, nil
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

// keepMemorySnapshot keeps next as the snapshot of the log whose last
// entry is rec (nil for an empty log).
func keepMemorySnapshot(tx *bolt.Tx, next state.Memories, rec []byte) error {
	js, err := storage.EncodeMemorySnapshot(next, entrySum(rec))
	if err != nil {
		return err
	}
	nb, err := tx.CreateBucketIfNotExists(memoryNowBucket)
	if err != nil {
		return err
	}
	return nb.Put(memoryNowKey, seal(append(make([]byte, sealSize, sealSize+len(js)), js...)))
}

// verifyMemorySnapshot checks the snapshot against the fold of the whole
// log, m, whose last entry is last: damage in it is derived, and passed
// over by every read.
func (s *Store) verifyMemorySnapshot(tx *bolt.Tx, m state.Memories, last []byte) error {
	nb := tx.Bucket(memoryNowBucket)
	if nb == nil {
		return nil
	}
	damaged := func(reason string) error {
		return &storage.CorruptError{Path: s.path, Reason: "the memory log's snapshot " + reason, Derived: true}
	}
	var stray error
	_ = nb.ForEach(func(k, _ []byte) error {
		if !bytes.Equal(k, memoryNowKey) && stray == nil {
			stray = damaged("bucket holds a stray key")
		}
		return nil
	})
	if stray != nil {
		return stray
	}
	raw := nb.Get(memoryNowKey)
	if raw == nil {
		return nil
	}
	if _, err := decodeMemorySnapshot(raw); err != nil {
		return damaged(err.Error())
	}
	js, err := storage.EncodeMemorySnapshot(m, entrySum(last))
	if err != nil {
		return err
	}
	if p, _ := unseal(raw); !bytes.Equal(p, js) {
		return damaged("is not what the log's entries make")
	}
	return nil
}
