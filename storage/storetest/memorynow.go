package storetest

import (
	"fmt"
	"reflect"
	"testing"

	"retrace/state"
	"retrace/storage"
)

// sameNow checks that st's memories now are its whole log folded, as the
// snapshot a task start reads must be, and know no earlier version.
func sameNow(t *testing.T, st storage.Store, after string) state.Memories {
	t.Helper()
	whole, err := storage.Memories(ctx, st)
	if err != nil {
		t.Fatalf("after %s: %v", after, err)
	}
	now, err := st.MemoriesNow(ctx)
	if err != nil {
		t.Fatalf("after %s: the memories now: %v", after, err)
	}
	if now.Version != whole.Version || !reflect.DeepEqual(now.List, whole.List) {
		t.Fatalf("after %s: the memories now are v%d %+v; the log folds to v%d %+v", after, now.Version, now.List, whole.Version, whole.List)
	}
	if now.Whole() && now.Version > 0 {
		t.Fatalf("after %s: the memories now claim every earlier version", after)
	}
	return now
}

// The memories now follow every kind of event, from a store that
// appended them and from one that did not (whose appends read the
// snapshot another store kept), and after a reopen.
func testMemoriesNow(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	st, other := b.Open(t, loc), b.Open(t, loc)
	if now := sameNow(t, st, "nothing"); now.Version != 0 || len(now.List) != 0 {
		t.Fatalf("a new store's memories now: %+v", now)
	}
	a := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "one"}})
	sameNow(t, st, "an add")
	bee := appendMemory(t, other, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Project: "/src/app", Text: "two"}})
	sameNow(t, st, "another store's add")
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: bee.Memory.ID, Text: "two, edited"}})
	sameNow(t, other, "an edit")
	appendMemory(t, other, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: a.Memory.ID}})
	sameNow(t, st, "a removal")
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRestored, To: 1})
	if now := sameNow(t, other, "a restore"); len(now.List) != 1 || now.List[0].Text != "one" {
		t.Fatalf("after restoring v1: %+v", now.List)
	}
	for i := range 3 {
		appendMemory(t, other, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: fmt.Sprintf("more %d", i)}})
	}
	sameNow(t, reopen(t, b, st, loc), "a reopen")
}

// A prune folds away what was removed and the texts edited since, and
// keeps the memories as they are, renumbered from 1; a dry run says the
// same and changes nothing; a second prune finds nothing to do; the log
// goes on from the prune.
func testMemoryPrune(t *testing.T, b Backend) {
	st := open(t, b)
	if rep, err := st.PruneMemories(ctx, false); err != nil || rep.Changed() || rep.Entries != 0 {
		t.Fatalf("a prune of an empty log: %+v, %v", rep, err)
	}
	var ids []string
	for i := range 6 {
		ids = append(ids, appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: fmt.Sprintf("memory %d", i)}}).Memory.ID)
	}
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: ids[1], Text: "memory 1, edited"}})
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: ids[2]}})
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: ids[3]}})
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRestored, To: 8}) // ids[3] back
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: ids[5]}})
	before, err := storage.Memories(ctx, st)
	if err != nil {
		t.Fatal(err)
	}

	dry, err := st.PruneMemories(ctx, true)
	want := storage.MemoryPrune{DryRun: true, Entries: 11, Kept: 4, Forgotten: 2}
	if err != nil || dry != want {
		t.Fatalf("the dry run: %+v, %v; want %+v", dry, err, want)
	}
	if log, err := st.MemoryEvents(ctx); err != nil || len(log) != 11 {
		t.Fatalf("the dry run changed the log to %d entries (%v)", len(log), err)
	}
	rep, err := st.PruneMemories(ctx, false)
	want.DryRun = false
	if err != nil || rep != want {
		t.Fatalf("the prune: %+v, %v; want %+v", rep, err, want)
	}
	log, err := st.MemoryEvents(ctx)
	if err != nil || len(log) != 4 {
		t.Fatalf("the pruned log: %d entries, %v", len(log), err)
	}
	for i, ev := range log {
		if ev.Version != i+1 || ev.Kind != state.MemoryAdded || !reflect.DeepEqual(ev.Memory, before.List[i]) {
			t.Fatalf("the pruned log's v%d is %+v, not the add of %+v", i+1, ev, before.List[i])
		}
	}
	after := sameNow(t, st, "a prune")
	if !reflect.DeepEqual(after.List, before.List) {
		t.Fatalf("the prune changed the memories:\n%+v\nnot\n%+v", after.List, before.List)
	}
	if rep, err := st.PruneMemories(ctx, false); err != nil || rep.Changed() {
		t.Fatalf("a second prune: %+v, %v", rep, err)
	}
	if kept := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "after the prune"}}); kept.Version != 5 {
		t.Fatalf("the first entry after the prune is v%d, want v5", kept.Version)
	}
	appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRestored, To: 2})
	if now := sameNow(t, st, "a restore after the prune"); len(now.List) != 2 || now.List[1].Text != "memory 1, edited" {
		t.Fatalf("v2 of the pruned log: %+v", now.List)
	}
}
