package storage

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"retrace/state"
)

func TestBuildTree(t *testing.T) {
	// v1-v2-v3 ; v4 from v1 ; v5 from v4 ; v6 from v1 (a second fork of v1) ;
	// v7 from the root ; head v5.
	parents := []int{0, 1, 2, 1, 4, 1, 0}
	cps := make([]Checkpoint, len(parents))
	for i, p := range parents {
		cps[i] = Checkpoint{Version: i + 1, Parent: p}
	}
	tree := BuildTree("s", 5, cps)
	want := []Branch{
		{ID: 1, Fork: 0, First: 1, Tip: 3, Versions: 3},
		{ID: 2, Fork: 1, First: 4, Tip: 5, Versions: 2, Current: true},
		{ID: 3, Fork: 1, First: 6, Tip: 6, Versions: 1},
		{ID: 4, Fork: 0, First: 7, Tip: 7, Versions: 1},
	}
	if !reflect.DeepEqual(tree.Branches, want) {
		t.Fatalf("branches\ngot  %+v\nwant %+v", tree.Branches, want)
	}
	var branch []int
	var current []int
	for _, n := range tree.Nodes {
		branch = append(branch, n.Branch)
		if n.Current {
			current = append(current, n.Version)
		}
	}
	if !reflect.DeepEqual(branch, []int{1, 1, 1, 2, 2, 3, 4}) || !reflect.DeepEqual(current, []int{1, 4, 5}) {
		t.Fatalf("branch of each version %v, current path %v", branch, current)
	}
	if p := tree.Path(5); !reflect.DeepEqual(p, []int{1, 4, 5}) {
		t.Fatalf("path %v", p)
	}
	if p := tree.Path(9); p != nil {
		t.Fatalf("path to a missing version: %v", p)
	}
	if empty := BuildTree("s", 0, nil); len(empty.Nodes) != 0 || len(empty.Branches) != 0 {
		t.Fatalf("empty tree: %+v", empty)
	}
}

// Each branch opens with the person's words in the first user message
// made on it, never the system prompt, and a branch without one stays
// empty.
func TestOpenBranches(t *testing.T) {
	// v1 user "first" (with the system prompt), v2 answered, v3 user
	// "second"; v4 from v2: a note, then v5 user "other"; v6 from v1: a
	// note alone.
	kinds := []state.EventKind{state.UserMessage, state.Answered, state.UserMessage, state.NoteSet, state.UserMessage, state.NoteSet}
	parents := []int{0, 1, 2, 2, 4, 1}
	said := map[int]string{1: "first", 3: "second", 5: "other"}
	cps := make([]Checkpoint, len(parents))
	for i, p := range parents {
		cps[i] = Checkpoint{Version: i + 1, Parent: p, Event: kinds[i]}
	}
	tree := BuildTree("s", 5, cps)
	OpenBranches(&tree, func(v int) (state.Event, bool) {
		text, ok := said[v]
		if !ok {
			return state.Event{}, false
		}
		// The system prompt comes last here, so taking the last message
		// whatever its role would show it.
		return state.Event{Kind: state.UserMessage, Messages: []state.Message{
			{Role: state.RoleUser, Content: text}, {Role: state.RoleSystem, Content: "You are retrace."}}}, true
	})
	var got []string
	for _, b := range tree.Branches {
		got = append(got, b.Opening)
	}
	if want := []string{"first", "other", ""}; !reflect.DeepEqual(got, want) {
		t.Fatalf("openings %q, want %q", got, want)
	}
}

// An opening is a label: a branch started by a pasted log keeps its
// start, cut on a character, not the whole message.
func TestOpeningIsBounded(t *testing.T) {
	long := strings.Repeat("é", 300) // two bytes each
	got := openingOf(long)
	if len(got) > maxOpening+len("…") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Fatalf("opening of a 600-byte message: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if openingOf("short") != "short" {
		t.Fatal("a short message is not its own opening")
	}
}
