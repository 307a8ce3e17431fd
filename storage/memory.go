package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"retrace/state"
)

// MemoryLog keeps what the agent remembers of the person across sessions
// (state.Memories): one log per store, beside the sessions and never
// inside one. Like a checkpoint, an event is durable once AppendMemory
// returns.
type MemoryLog interface {
	// AppendMemory keeps ev as the log's next version and returns it as
	// kept. The store numbers it, and fills in what the caller may leave
	// out (NextMemory says what). An event that cannot follow the log is
	// a *state.MemoryError, and nothing is kept.
	AppendMemory(ctx context.Context, ev state.MemoryEvent) (state.MemoryEvent, error)
	// MemoryEvents returns the whole log, in order: an empty one when no
	// memory was ever kept.
	MemoryEvents(ctx context.Context) ([]state.MemoryEvent, error)
	// MemoriesNow returns the memories as they are now, read from the
	// log's snapshot (MemorySnapshot) when it has a sound one: what a task
	// start reads costs what is kept, not the log's length. They know no
	// earlier version (state.Folded); Memories folds the whole log.
	MemoriesNow(ctx context.Context) (state.Memories, error)
	// PruneMemories rewrites the log as the memories kept now, one added
	// event each, numbered from 1: removed memories and earlier texts are
	// folded away, and with them every earlier version a restore could
	// bring back. With dryRun it only says what would go.
	PruneMemories(ctx context.Context, dryRun bool) (MemoryPrune, error)
}

// Memories folds a store's whole memory log: the memories as they are
// now, and every earlier version's.
func Memories(ctx context.Context, log MemoryLog) (state.Memories, error) {
	events, err := log.MemoryEvents(ctx)
	if err != nil {
		return state.Memories{}, err
	}
	return state.FoldMemories(events)
}

// NextMemory completes ev as the event that follows cur, and checks that
// it can: its version, its time (now, unless set), an added memory's id
// (newID's, unless set) and times, an edit's creation time (the memory's
// own) and an edit's or removal's id, which may be a prefix of one. It
// returns the memories with ev applied too. Both backends call it in the
// transaction that appends.
func NextMemory(cur state.Memories, ev state.MemoryEvent, now time.Time, newID func() string) (state.MemoryEvent, state.Memories, error) {
	ev.Version = cur.Version + 1
	if ev.At.IsZero() {
		ev.At = now
	}
	ev.At = ev.At.UTC()
	switch ev.Kind {
	case state.MemoryAdded:
		if ev.Memory.ID == "" {
			ev.Memory.ID = newID()
		}
		if ev.Memory.CreatedAt.IsZero() {
			ev.Memory.CreatedAt = ev.At
		}
		if ev.Memory.UpdatedAt.IsZero() {
			ev.Memory.UpdatedAt = ev.Memory.CreatedAt
		}
		ev.Memory.CreatedAt, ev.Memory.UpdatedAt = ev.Memory.CreatedAt.UTC(), ev.Memory.UpdatedAt.UTC()
	case state.MemoryEdited, state.MemoryRemoved:
		was, err := cur.Find(ev.Memory.ID)
		if err != nil {
			return ev, cur, &state.MemoryError{Version: ev.Version, Kind: ev.Kind, Reason: err.Error()}
		}
		if ev.Kind == state.MemoryRemoved {
			ev.Memory = state.Memory{ID: was.ID}
			break
		}
		text := ev.Memory.Text
		ev.Memory = was
		// Not before it was made, whatever the clock of the machine
		// that edits it says.
		ev.Memory.Text, ev.Memory.UpdatedAt = text, maxTime(ev.At, was.CreatedAt)
	case state.MemoryRestored:
		// A restore that changes nothing would only lengthen the log.
		if then, ok := cur.At(ev.To); ok && slices.Equal(then, cur.List) {
			return ev, cur, &state.MemoryError{Version: ev.Version, Kind: ev.Kind, Reason: fmt.Sprintf("nothing to restore: the memories of v%d are those kept now", ev.To)}
		}
	}
	next, err := cur.Apply(ev)
	if err != nil {
		return ev, cur, err
	}
	return ev, next, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// FoldStored folds a memory log read from the store at where: an entry
// that does not follow the ones before it was not written so by any
// append, and is damage.
func FoldStored(where string, log []state.MemoryEvent) (state.Memories, error) {
	m, err := state.FoldMemories(log)
	if me := (*state.MemoryError)(nil); errors.As(err, &me) {
		return m, MemoryDamage(where, me.Version, "does not follow the entries before it: %s", me.Reason)
	}
	return m, err
}

// MemoryDamage is a *CorruptError for the memory log's entry v.
func MemoryDamage(where string, v int, format string, args ...any) error {
	return &CorruptError{Path: where, Reason: fmt.Sprintf("memory log v%d: "+format, append([]any{v}, args...)...)}
}
