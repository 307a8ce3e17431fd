package boltstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// PruneMemories rewrites the memory log as the memories kept now, in one
// transaction: the log's bucket is made anew, so the pages of what goes
// are free for later writes (and `retrace compact` gives them back).
func (s *Store) PruneMemories(ctx context.Context, dryRun bool) (storage.MemoryPrune, error) {
	var rep storage.MemoryPrune
	fn := func(tx *bolt.Tx) error {
		b, err := s.memoryOf(tx)
		if err != nil {
			return err
		}
		log, err := s.readMemory(b)
		if err != nil {
			return err
		}
		cur, err := storage.FoldStored(s.path, log)
		if err != nil {
			return err
		}
		var pruned []state.MemoryEvent
		pruned, rep = storage.PrunedLog(cur, log)
		rep.DryRun = dryRun
		if dryRun || !rep.Changed() {
			return nil
		}
		return s.rewriteMemory(tx, cur, pruned)
	}
	var err error
	if dryRun {
		err = s.viewIn(ctx, memoryScope, fn)
	} else {
		err = s.updateIn(ctx, memoryScope, fn)
	}
	if errors.Is(err, errNoFile) {
		return storage.MemoryPrune{DryRun: dryRun}, nil
	}
	if err != nil {
		return storage.MemoryPrune{}, s.memoryError("prune the memories of", err)
	}
	return rep, nil
}

// rewriteMemory replaces the log with pruned, which must fold to the
// memories cur holds, and keeps its snapshot.
func (s *Store) rewriteMemory(tx *bolt.Tx, cur state.Memories, pruned []state.MemoryEvent) error {
	after, err := state.FoldMemories(pruned)
	if err != nil || !slices.Equal(after.List, cur.List) {
		return fmt.Errorf("the pruned memory log would not hold the memories kept now (%v); nothing was changed", err)
	}
	if err := tx.DeleteBucket(memoryBucket); err != nil {
		return err
	}
	b, err := tx.CreateBucket(memoryBucket)
	if err != nil {
		return err
	}
	b.FillPercent = 1.0
	var last []byte
	for _, ev := range pruned {
		if last, err = encodeMemory(ev); err != nil {
			return err
		}
		if err := b.Put(versionKey(ev.Version), last); err != nil {
			return err
		}
	}
	return keepMemorySnapshot(tx, after, last)
}
