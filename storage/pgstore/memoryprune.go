package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"retrace/state"
	"retrace/storage"
)

// PruneMemories rewrites the memory log as the memories kept now, in one
// transaction that holds the log's lock: the rows that go are deleted,
// and PostgreSQL reuses their space (VACUUM FULL gives it back).
func (s *Store) PruneMemories(ctx context.Context, dryRun bool) (storage.MemoryPrune, error) {
	var rep storage.MemoryPrune
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.lockMemory(ctx, tx); err != nil {
			return err
		}
		log, err := s.readMemory(ctx, tx, 0)
		if err != nil {
			return err
		}
		cur, err := storage.FoldStored(s.where, log)
		if err != nil {
			return err
		}
		var pruned []state.MemoryEvent
		pruned, rep = storage.PrunedLog(cur, log)
		rep.DryRun = dryRun
		if dryRun || !rep.Changed() {
			return nil
		}
		return rewriteMemory(ctx, tx, cur, pruned)
	})
	if err != nil {
		return storage.MemoryPrune{}, s.memoryError("prune the memories of", err)
	}
	return rep, nil
}

// rewriteMemory replaces the log with pruned, which must fold to the
// memories cur holds, and keeps its snapshot.
func rewriteMemory(ctx context.Context, tx pgx.Tx, cur state.Memories, pruned []state.MemoryEvent) error {
	after, err := state.FoldMemories(pruned)
	if err != nil || !slices.Equal(after.List, cur.List) {
		return fmt.Errorf("the pruned memory log would not hold the memories kept now (%v); nothing was changed", err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM retrace_memory"); err != nil {
		return err
	}
	var last int64
	for _, ev := range pruned {
		body, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		last = memoryCRC(ev.Version, body)
		if _, err := tx.Exec(ctx, "INSERT INTO retrace_memory (version, body, crc) VALUES ($1, $2, $3)", ev.Version, body, last); err != nil {
			return err
		}
	}
	return keepMemorySnapshot(ctx, tx, after, last)
}
