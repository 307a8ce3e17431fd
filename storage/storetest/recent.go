package storetest

import (
	"bytes"
	"encoding/json"
	"testing"

	"retrace/storage"
)

// testRecentIsTheWholeWindowed: Recent of any version, from a store
// opened afresh, is what At gives there windowed as Recent promises, in
// a session long enough for a store to keep snapshots, with branches
// that leave some of them off the head's path.
func testRecentIsTheWholeWindowed(t *testing.T, b Backend) {
	loc := b.NewLocation(t)
	st := b.Open(t, loc)
	info := create(t, st, "long")
	s := head(t, st, info.ID)
	var tips []int
	for i, back := range []int{0, 300, 650, 0} {
		if back > 0 {
			if err := st.SetHead(ctx, info.ID, back); err != nil {
				t.Fatal(err)
			}
			s = head(t, st, info.ID)
		}
		s, _ = commitScript(t, st, s, uint64(40+i), 400)
		tips = append(tips, s.Version)
	}
	st.Close()

	st = b.Open(t, loc)
	defer st.Close()
	checked := 0
	for v := 1; v <= tips[len(tips)-1]; v += 7 {
		for _, keep := range []int{0, 5, 200} {
			SameRecent(t, st, info.ID, v, keep)
			checked++
		}
	}
	for _, v := range tips {
		SameRecent(t, st, info.ID, v, 1)
	}
	if _, err := st.Recent(ctx, info.ID, tips[len(tips)-1]+1, 0); err == nil {
		t.Error("recent of a version past the last was given")
	}
	t.Logf("%d windows checked", checked)
}

// SameRecent fails t unless Recent of version v keeping keep messages is
// the whole state there windowed as storage.Store says.
func SameRecent(t *testing.T, st storage.Store, id string, v, keep int) {
	t.Helper()
	whole, err := st.At(ctx, id, v)
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole.Window(max(0, min(whole.SummaryThrough, whole.HistoryLen()-keep)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Recent(ctx, id, v, keep)
	if err != nil {
		t.Fatalf("recent v%d keeping %d: %v", v, keep, err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) || got.SystemPrompt() != want.SystemPrompt() {
		t.Fatalf("v%d keeping %d: recent holds messages from %d and calls from %d, want %d and %d:\n%.3000s\nwant\n%.3000s",
			v, keep, got.HistoryFrom, got.Memory.ToolCallsFrom, want.HistoryFrom, want.Memory.ToolCallsFrom, g, w)
	}
}
