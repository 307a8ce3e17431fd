package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
)

// RunMemory runs the memory log's part of the suite (Run runs it too).
func RunMemory(t *testing.T, b Backend) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"MemoryLogKeepsEveryVersion", testMemoryLog},
		{"MemoryRefusedIsNotKept", testMemoryRefused},
		{"MemoryAppendsFromTwoStores", testMemoryTwoStores},
		{"MemoriesNowAreTheLogFolded", testMemoriesNow},
		{"MemoryPruneFoldsAwayWhatWent", testMemoryPrune},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, b) })
	}
}

func appendMemory(t *testing.T, st storage.MemoryLog, ev state.MemoryEvent) state.MemoryEvent {
	t.Helper()
	kept, err := st.AppendMemory(ctx, ev)
	if err != nil {
		t.Fatalf("append %s: %v", ev.Kind, err)
	}
	return kept
}

// An empty log, then memories added, edited (by an id prefix), removed
// and an earlier version's restored: the store numbers and times each
// event, gives an added memory an id, and reads back every event as it
// returned it, after a reopen too.
func testMemoryLog(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	st := b.Open(t, loc)
	if log, err := st.MemoryEvents(ctx); err != nil || len(log) != 0 {
		t.Fatalf("a new store's memory log: %v, %v", log, err)
	}
	at := created.Add(time.Hour)
	ada := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryAdded, At: at, Memory: state.Memory{Text: "the person is called Ada", Source: "session 1 v3"}})
	if ada.Version != 1 || ada.Memory.ID == "" || !ada.Memory.CreatedAt.Equal(at) || !ada.Memory.UpdatedAt.Equal(at) {
		t.Fatalf("the first memory kept as %+v", ada)
	}
	tabs := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Project: "/src/app", Text: "tabs"}})
	if tabs.At.Before(at) || tabs.Memory.ID == ada.Memory.ID {
		t.Fatalf("the second memory kept as %+v", tabs)
	}
	// An edit timed before the memory was made (another machine's clock)
	// is not taken to be older than it.
	edited := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryEdited, At: at.Add(time.Minute), Memory: state.Memory{ID: tabs.Memory.ID[:6], Text: "spaces"}})
	if edited.Memory.ID != tabs.Memory.ID || edited.Memory.Project != "/src/app" || edited.Memory.Text != "spaces" ||
		!edited.Memory.CreatedAt.Equal(tabs.Memory.CreatedAt) || !edited.Memory.UpdatedAt.Equal(tabs.Memory.CreatedAt) {
		t.Fatalf("the edit kept as %+v", edited)
	}
	removed := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: ada.Memory.ID}})
	restored := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryRestored, To: 2})
	want := []state.MemoryEvent{ada, tabs, edited, removed, restored}
	for _, s := range []func() storage.Store{func() storage.Store { return st }, func() storage.Store { return reopen(t, b, st, loc) }} {
		s := s()
		log, err := s.MemoryEvents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !sameEvents(log, want) {
			t.Fatalf("the log reads back as\n%+v\nnot\n%+v", log, want)
		}
		m, err := storage.Memories(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.List) != 2 || m.List[0].Text != "the person is called Ada" || m.List[1].Text != "tabs" {
			t.Fatalf("after restoring v2: %+v", m.List)
		}
	}
}

// sameEvents compares logs with times compared as instants.
func sameEvents(got, want []state.MemoryEvent) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.At.Equal(w.At) || !g.Memory.CreatedAt.Equal(w.Memory.CreatedAt) || !g.Memory.UpdatedAt.Equal(w.Memory.UpdatedAt) {
			return false
		}
		g.At, g.Memory.CreatedAt, g.Memory.UpdatedAt = w.At, w.Memory.CreatedAt, w.Memory.UpdatedAt
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}

func reopen(t *testing.T, b Backend, st storage.Store, loc string) storage.Store {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Open(t, loc)
}

// An event that cannot follow the log is refused saying why, and nothing
// of it is kept.
func testMemoryRefused(t *testing.T, b Backend) {
	st := open(t, b)
	kept := appendMemory(t, st, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "a fact"}})
	for _, c := range []struct {
		ev   state.MemoryEvent
		says string
	}{
		{state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "  "}}, "empty"},
		{state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{ID: kept.Memory.ID, Text: "again"}}, "there already"},
		{state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: strings.Repeat("x", state.MaxMemory+1)}}, "AGENTS.md"},
		{state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: "nosuch", Text: "x"}}, "no memory"},
		{state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: "nosuch"}}, "no memory"},
		{state.MemoryEvent{Kind: state.MemoryRestored, To: 5}, "can restore v0 to v1"},
		{state.MemoryEvent{Kind: state.MemoryRestored, To: 1}, "nothing to restore: the memories of v1 are those kept now"},
	} {
		_, err := st.AppendMemory(ctx, c.ev)
		var me *state.MemoryError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want a *state.MemoryError saying %q", c.ev.Kind, err, c.says)
		}
	}
	log, err := st.MemoryEvents(ctx)
	if err != nil || !sameEvents(log, []state.MemoryEvent{kept}) {
		t.Fatalf("after the refusals the log is %+v (%v)", log, err)
	}
}

// Two stores on one location append at once: every append is kept, once,
// numbered 1..n, whatever the order.
func testMemoryTwoStores(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	stores := []storage.Store{b.Open(t, loc), b.Open(t, loc)}
	const each = 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for i, st := range stores {
		wg.Go(func() {
			for k := range each {
				if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: fmt.Sprintf("store %d, memory %d", i, k)}}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, err := storage.Memories(ctx, stores[0])
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, x := range m.List {
		seen[x.Text] = true
	}
	if m.Version != 2*each || len(seen) != 2*each {
		t.Fatalf("%d versions, %d distinct memories; want %d of each", m.Version, len(seen), 2*each)
	}
}
