package state_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"retrace/state"
)

var memoryT0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func memory(id, project, text string) state.Memory {
	return state.Memory{ID: id, Project: project, Text: text, CreatedAt: memoryT0, UpdatedAt: memoryT0}
}

// memoryLog numbers events 1..n and gives each a time.
func memoryLog(evs ...state.MemoryEvent) []state.MemoryEvent {
	for i := range evs {
		evs[i].Version, evs[i].At = i+1, memoryT0.Add(time.Duration(i)*time.Minute)
	}
	return evs
}

func TestMemoryLogFolds(t *testing.T) {
	edited := memory("m2", "/src/app", "tabs, not spaces")
	edited.UpdatedAt = memoryT0.Add(time.Hour)
	log := memoryLog(
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m1", "", "the person is called Ada")},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m2", "/src/app", "spaces, not tabs")},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m3", "/src/other", "uses make")},
		state.MemoryEvent{Kind: state.MemoryEdited, Memory: edited},
		state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: "m1"}},
		state.MemoryEvent{Kind: state.MemoryRestored, To: 2},
	)
	m, err := state.FoldMemories(log)
	if err != nil {
		t.Fatal(err)
	}
	texts := func(ms []state.Memory) string {
		var out []string
		for _, x := range ms {
			out = append(out, x.ID+":"+x.Text)
		}
		return strings.Join(out, ", ")
	}
	for v, want := range []string{
		"",
		"m1:the person is called Ada",
		"m1:the person is called Ada, m2:spaces, not tabs",
		"m1:the person is called Ada, m2:spaces, not tabs, m3:uses make",
		"m1:the person is called Ada, m2:tabs, not spaces, m3:uses make",
		"m2:tabs, not spaces, m3:uses make",
		"m1:the person is called Ada, m2:spaces, not tabs", // v2's, back
	} {
		got, ok := m.At(v)
		if !ok || texts(got) != want {
			t.Errorf("v%d holds %q, want %q", v, texts(got), want)
		}
	}
	if _, ok := m.At(7); ok {
		t.Error("v7 of a log of 6")
	}
	if got := texts(m.For("/src/app")); got != "m1:the person is called Ada, m2:spaces, not tabs" {
		t.Errorf("for /src/app: %s", got)
	}
	if got := texts(m.For("/src/elsewhere")); got != "m1:the person is called Ada" {
		t.Errorf("for a project of none of its own: %s", got)
	}
	if x, err := m.Find("m2"); err != nil || x.Text != "spaces, not tabs" {
		t.Errorf("find m2: %+v, %v", x, err)
	}
	if _, err := m.Find("m"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("find m: %v", err)
	}
	if _, err := m.Find("zz"); err == nil {
		t.Error("found zz")
	}
}

// Every event that cannot follow the log is refused, saying why, and
// leaves the memories as they were.
func TestMemoryLogRefuses(t *testing.T) {
	base, err := state.FoldMemories(memoryLog(state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m1", "", "a fact")}))
	if err != nil {
		t.Fatal(err)
	}
	at := memoryT0.Add(time.Hour)
	backwards := memory("m9", "", "x")
	backwards.UpdatedAt = memoryT0.Add(-time.Second)
	for _, c := range []struct {
		ev   state.MemoryEvent
		says string
	}{
		{state.MemoryEvent{Version: 3, Kind: state.MemoryAdded, At: at, Memory: memory("m2", "", "x")}, "follows v1"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, Memory: memory("m2", "", "x")}, "no time"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, At: at, Memory: memory("m1", "", "again")}, "there already"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, At: at, Memory: memory("", "", "x")}, "no id"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, At: at, Memory: memory("m2", "", " \n")}, "empty"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, At: at, Memory: memory("m2", "", strings.Repeat("x", state.MaxMemory+1))}, "AGENTS.md"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, At: at, Memory: backwards}, "times are out of order"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryEdited, At: at, Memory: memory("m2", "", "x")}, "no memory m2"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryRemoved, At: at, Memory: state.Memory{ID: "m2"}}, "no memory m2"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryRestored, At: at, To: 2}, "can restore v0 to v1"},
		{state.MemoryEvent{Version: 2, Kind: state.MemoryRestored, At: at, To: -1}, "can restore v0 to v1"},
		{state.MemoryEvent{Version: 2, Kind: "forgotten", At: at}, "unknown kind"},
	} {
		got, err := base.Apply(c.ev)
		var me *state.MemoryError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s v%d: %v; want it to say %q", c.ev.Kind, c.ev.Version, err, c.says)
		}
		if got.Version != 1 || len(got.List) != 1 {
			t.Errorf("%s: the refusal changed the memories to %+v", c.ev.Kind, got)
		}
	}
	// The longest memory kept, and a restore of nothing.
	long := memory("m2", "", strings.Repeat("x", state.MaxMemory))
	if _, err := base.Apply(state.MemoryEvent{Version: 2, Kind: state.MemoryAdded, At: at, Memory: long}); err != nil {
		t.Error(err)
	}
	none, err := base.Apply(state.MemoryEvent{Version: 2, Kind: state.MemoryRestored, At: at, To: 0})
	if err != nil || len(none.List) != 0 {
		t.Errorf("restoring v0: %+v, %v", none.List, err)
	}
}

// Memories are values: applying an event to one leaves it, and every
// version folded before, as it was.
func TestMemoriesAreValues(t *testing.T) {
	m, err := state.FoldMemories(memoryLog(
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m1", "", "one")},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m2", "", "two")},
	))
	if err != nil {
		t.Fatal(err)
	}
	at := memoryT0.Add(time.Hour)
	edit := memory("m1", "", "uno")
	left, err := m.Apply(state.MemoryEvent{Version: 3, Kind: state.MemoryEdited, At: at, Memory: edit})
	if err != nil {
		t.Fatal(err)
	}
	right, err := m.Apply(state.MemoryEvent{Version: 3, Kind: state.MemoryAdded, At: at, Memory: memory("m3", "", "three")})
	if err != nil {
		t.Fatal(err)
	}
	if m.List[0].Text != "one" || len(m.List) != 2 || left.List[0].Text != "uno" || len(left.List) != 2 || len(right.List) != 3 || right.List[0].Text != "one" {
		t.Fatalf("shared memory: base %+v, left %+v, right %+v", m.List, left.List, right.List)
	}
	if v1, _ := right.At(1); len(v1) != 1 || v1[0].Text != "one" {
		t.Fatalf("v1 is now %+v", v1)
	}
}

// A memory holds where it was kept for: a fact kept for every project
// is known in each, one kept for a project only there, and a removed one
// nowhere.
func TestHoldingFindsTheSameFactWhereItHolds(t *testing.T) {
	m, err := state.FoldMemories(memoryLog(
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m1", "", "the person is called Ada")},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m2", "/src/app", "tabs, not spaces")},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("m3", "/src/app", "staging is kestrel")},
		state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: "m3"}},
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		project, text, want string
	}{
		{"/src/app", "  the person is called Ada\n", "m1"},
		{"/src/app", "the  person is\tcalled Ada", "m1"},
		{"", "the person is called Ada", "m1"},
		{"/src/app", "tabs, not spaces", "m2"},
		{"/src/other", "tabs, not spaces", ""},
		{"", "tabs, not spaces", ""}, // for everywhere: a project's memory says less
		{"/src/app", "tabs, not spaces!", ""},
		{"/src/app", "staging is kestrel", ""}, // removed
	} {
		got, ok := m.Holding(state.Memory{Project: c.project, Text: c.text})
		if ok != (c.want != "") || got.ID != c.want {
			t.Errorf("Holding(%q in %q) = %q, %v; want %q", c.text, c.project, got.ID, ok, c.want)
		}
	}
}

// A fold appends in place, and what it appends never shows in a version
// before it: a memory added after a restore leaves the versions the
// restore passed over as they were, and so does one added after a second
// restore of the same version.
func TestAFoldSharesNoVersionItChanges(t *testing.T) {
	var evs []state.MemoryEvent
	for _, id := range []string{"m1", "m2", "m3", "m4", "m5"} {
		evs = append(evs, state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory(id, "", id)})
	}
	evs = append(evs, state.MemoryEvent{Kind: state.MemoryRestored, To: 3},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("x", "", "x")},
		state.MemoryEvent{Kind: state.MemoryRestored, To: 3},
		state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory("y", "", "y")})
	m, err := state.FoldMemories(memoryLog(evs...))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(v int) string {
		ms, ok := m.At(v)
		if !ok {
			t.Fatalf("v%d not known", v)
		}
		var out []string
		for _, x := range ms {
			out = append(out, x.ID)
		}
		return strings.Join(out, " ")
	}
	for v, want := range []string{"", "m1", "m1 m2", "m1 m2 m3", "m1 m2 m3 m4", "m1 m2 m3 m4 m5", "m1 m2 m3", "m1 m2 m3 x", "m1 m2 m3", "m1 m2 m3 y"} {
		if got := ids(v); got != want {
			t.Errorf("v%d holds %q, want %q", v, got, want)
		}
	}
	next, err := m.Apply(state.MemoryEvent{Version: 10, Kind: state.MemoryAdded, At: memoryT0.Add(time.Hour), Memory: memory("z", "", "z")})
	if err != nil || len(next.List) != 5 || ids(9) != "m1 m2 m3 y" {
		t.Fatalf("an add after the fold: %+v, %v; v9 %q", next.List, err, ids(9))
	}
}

// Memories read from a snapshot know their own version alone: an
// earlier one is not made up, a restore is refused saying why, and
// anything else applies.
func TestFoldedKnowsItsVersionAlone(t *testing.T) {
	m := state.Folded(7, []state.Memory{memory("m1", "", "one")})
	if m.Whole() {
		t.Fatal("a snapshot's memories claim every version")
	}
	if got, ok := m.At(7); !ok || len(got) != 1 {
		t.Fatalf("v7: %+v, %v", got, ok)
	}
	if _, ok := m.At(3); ok {
		t.Fatal("a snapshot's memories made up v3")
	}
	at := memoryT0.Add(time.Hour)
	if _, err := m.Apply(state.MemoryEvent{Version: 8, Kind: state.MemoryRestored, At: at, To: 3}); err == nil || !strings.Contains(err.Error(), "only the whole log") {
		t.Fatalf("a restore from a snapshot: %v", err)
	}
	next, err := m.Apply(state.MemoryEvent{Version: 8, Kind: state.MemoryAdded, At: at, Memory: memory("m2", "", "two")})
	if err != nil || next.Version != 8 || len(next.List) != 2 || next.Whole() {
		t.Fatalf("an add: %+v, %v", next, err)
	}
	if _, ok := next.At(7); ok {
		t.Fatal("v7 is known after an add to a snapshot")
	}
	if (state.Memories{Version: 2}).Whole() {
		t.Fatal("a literal of v2 claims every version")
	}
}

// A fold of a long log of adds costs what the log holds, not its square.
func BenchmarkFoldMemories(b *testing.B) {
	var evs []state.MemoryEvent
	for i := range 2000 {
		evs = append(evs, state.MemoryEvent{Kind: state.MemoryAdded, Memory: memory(fmt.Sprintf("m%d", i), "/src/app", "text")})
	}
	log := memoryLog(evs...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := state.FoldMemories(log); err != nil {
			b.Fatal(err)
		}
	}
}

// A snapshot's memories are held to what a log of their adds would be.
func TestCheckMemories(t *testing.T) {
	good := []state.Memory{memory("m1", "", "one"), memory("m2", "/src/app", "two")}
	if err := state.CheckMemories(good); err != nil {
		t.Fatal(err)
	}
	if err := state.CheckMemories(nil); err != nil {
		t.Fatal(err)
	}
	backwards := memory("m3", "", "x")
	backwards.UpdatedAt = memoryT0.Add(-time.Second)
	for _, c := range []struct {
		list []state.Memory
		says string
	}{
		{[]state.Memory{good[0], good[1], good[0]}, "memory 3: memory m1 is there already"},
		{[]state.Memory{good[0], memory("", "", "x")}, "memory 2: the memory has no id"},
		{[]state.Memory{memory("m9", "", strings.Repeat("x", state.MaxMemory+1))}, "memory 1: the memory is"},
		{[]state.Memory{good[1], backwards}, "memory 2: the memory's times are out of order"},
	} {
		if err := state.CheckMemories(c.list); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v; want it to say %q", err, c.says)
		}
	}
}
