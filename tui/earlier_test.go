package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/themes"
)

// A head opened with its recent part shows it at once, says the earlier
// messages are being read, reads them once in the background, and then
// shows them above, as the whole session would; a checkpoint on top keeps
// them.
func TestEarlierMessagesAreReadInTheBackground(t *testing.T) {
	var events []state.Event
	for i := range 150 {
		events = append(events,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d", i+1)}}},
			state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d", i+1)}}})
	}
	f := newFake(events...)
	whole := f.head
	recent, err := whole.Window(whole.HistoryLen() - 4)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	f.head = recent
	f.whole = func(_ string, v int) (state.State, error) {
		reads++
		if v != whole.Version {
			return state.State{}, fmt.Errorf("read v%d, want v%d", v, whole.Version)
		}
		return whole, nil
	}
	p, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(f, Options{Palette: p, Now: func() time.Time { return t0 }})
	_, read := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if _, again := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24}); again != nil {
		t.Fatal("the earlier messages were asked for again while the first read was under way")
	}
	m.conv.Scroll(100000)
	top := plain(m.View().Content)
	if !strings.Contains(top, "296 earlier messages, being read") || !strings.Contains(top, "question 149") || strings.Contains(top, "question 148") {
		t.Fatalf("scrolled to the top of the recent part before the read:\n%s", top)
	}

	run(m, read)
	if reads != 1 {
		t.Fatalf("%d reads of the whole state, want 1", reads)
	}
	if cmd := m.readEarlier(); cmd != nil {
		t.Fatal("the earlier messages were asked for again once read")
	}
	m.conv.Scroll(100000)
	top = plain(m.View().Content)
	if strings.Contains(top, "being read") || !strings.Contains(top, "question 1\n") && !strings.Contains(top, "question 1 ") {
		t.Fatalf("scrolled to the top after the read:\n%s", top)
	}

	// The next checkpoint of the same line keeps them.
	next, err := state.Apply(recent, state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "question 151"}}})
	if err != nil {
		t.Fatal(err)
	}
	next.Version = recent.Version + 1
	m.Update(StateMsg{State: next})
	if cmd := m.readEarlier(); cmd != nil {
		t.Fatal("a checkpoint on top asked for the earlier messages again")
	}
	if m.conv.earlier == nil || len(m.conv.earlier) != 296 {
		t.Fatalf("after a checkpoint the pane holds %d earlier messages, want 296", len(m.conv.earlier))
	}
}

// A whole state from another branch does not fill in a head's window.
func TestEarlierFromAnotherBranchDoesNotFit(t *testing.T) {
	f := newFake(
		state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "one"}}},
		state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "two"}}},
		state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "three"}}},
	)
	head := f.head
	w, err := head.Window(2)
	if err != nil {
		t.Fatal(err)
	}
	if !earlierFits(head, w) {
		t.Fatal("the whole state does not fit its own window")
	}
	other := head
	other.History = append([]state.Message{}, head.History...)
	other.History[2].Content = "another three"
	if earlierFits(other, w) {
		t.Fatal("a whole state of another branch fits the window")
	}
	newer := head
	newer.Version++
	if earlierFits(newer, w) {
		t.Fatal("a whole state newer than the window fits it")
	}
}

// turnsWithCalls is n tasks of one tool call each.
func turnsWithCalls(n int) []state.Event {
	var evs []state.Event
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		evs = append(evs,
			state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d", i+1)}}},
			state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "look"}}},
			state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant, Content: "reading",
				ToolCalls: []state.ToolRequest{{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":"f%d.go"}`, i)}}}}},
			state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: id}},
			state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: fmt.Sprintf("contents of f%d.go", i), DurationMS: 1}},
			state.Event{Kind: state.StepCompleted, Step: 0},
			state.Event{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("answer %d", i+1)}}},
		)
	}
	return evs
}

// The tool log pane counts every call of a head opened with its recent
// part, and once the earlier part is read it lists, selects and opens
// the oldest call as the timeline does at the same version.
func TestToolLogOfARecentHeadHoldsEveryCall(t *testing.T) {
	f := newFake(turnsWithCalls(40)...)
	whole := f.head
	recent, err := whole.Window(whole.HistoryLen() - 10)
	if err != nil {
		t.Fatal(err)
	}
	if recent.Memory.ToolCallsFrom == 0 {
		t.Fatal("the window keeps every call")
	}
	f.head = recent
	f.whole = func(string, int) (state.State, error) { return whole, nil }
	p, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(f, Options{Palette: p, Now: func() time.Time { return t0 }})
	_, read := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if v := plain(m.View().Content); !strings.Contains(v, "Tools (40)") {
		t.Fatalf("before the read, the pane does not count every call:\n%s", v)
	}
	run(m, read)
	m.focus = focusTools
	for range 45 {
		m.moveTool(true)
	}
	run(m, m.openToolDetail())
	if v := plain(m.View().Content); !strings.Contains(v, "call id call_0") {
		t.Fatalf("the oldest call cannot be opened after the read:\n%s", v)
	}
}

// chatState is a session of turns questions and answers, tagged, and
// its window of the last four messages.
func chatState(t *testing.T, id string, turns int, tag string) (whole, recent state.State) {
	t.Helper()
	b := state.NewBuilder(state.New(id))
	for i := range turns {
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, At: t0, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("%s question %d", tag, i+1)}}},
			{Kind: state.Answered, At: t0, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("%s answer %d", tag, i+1)}}},
		} {
			if err := b.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.SetVersion(2*turns, 2*turns-1)
	whole = b.State()
	recent, err := whole.Window(whole.HistoryLen() - 4)
	if err != nil {
		t.Fatal(err)
	}
	return whole, recent
}

// A read of session A's earlier messages that answers after the person
// moved to session B is dropped, and B's read asked then; one read runs at
// a time. B's answer, coming after the person went back to A, leaves A's
// earlier messages as they are. A read that fails says so where the
// messages would be.
func TestEarlierReadOfALeftSessionIsDropped(t *testing.T) {
	wholeA, recentA := chatState(t, "aaaaaaaaaaaaaaaa", 150, "A")
	wholeB, recentB := chatState(t, "bbbbbbbbbbbbbbbb", 100, "B")
	f := newFake()
	f.info.ID, f.head = wholeA.SessionID, recentA
	fail := false
	f.whole = func(session string, v int) (state.State, error) {
		switch {
		case fail:
			return state.State{}, fmt.Errorf("page 7 is damaged")
		case session == wholeA.SessionID && v == wholeA.Version:
			return wholeA, nil
		case session == wholeB.SessionID && v == wholeB.Version:
			return wholeB, nil
		}
		return state.State{}, fmt.Errorf("no v%d in %s", v, session)
	}
	p, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(f, Options{Palette: p, Now: func() time.Time { return t0 }})
	top := func() string {
		m.conv.Scroll(100000)
		return plain(m.View().Content)
	}
	infoA, infoB := f.info, f.info
	infoB.ID, infoB.Head, infoB.Versions = wholeB.SessionID, wholeB.Version, wholeB.Version
	_, readA := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if _, second := m.Update(SessionChangedMsg{Session: infoB, Head: recentB}); second != nil {
		t.Fatal("B's read was asked while A's was under way")
	}
	_, readB := m.Update(readA()) // A's answer, late
	if readB == nil {
		t.Fatal("B's read was not asked once A's answered")
	}
	run(m, readB)
	if v := top(); !strings.Contains(v, "B question 1\n") && !strings.Contains(v, "B question 1 ") {
		t.Fatalf("after A's late answer, B's pane does not reach B's first message:\n%s", v)
	}

	// Back to A, read again; on to B, and back to A before B's answer.
	_, readA = m.Update(SessionChangedMsg{Session: infoA, Head: recentA})
	run(m, readA)
	_, readB = m.Update(SessionChangedMsg{Session: infoB, Head: recentB})
	m.Update(SessionChangedMsg{Session: infoA, Head: recentA})
	run(m, readB)
	if v := top(); !strings.Contains(v, "A question 1\n") && !strings.Contains(v, "A question 1 ") {
		t.Fatalf("B's late answer took A's earlier messages away:\n%s", v)
	}

	fail = true
	next, err := state.Apply(recentA, state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "A question 151"}}})
	if err != nil {
		t.Fatal(err)
	}
	next.Version = recentA.Version + 1
	m.earlier = state.State{} // as if A's earlier part no longer fitted
	_, read := m.Update(StateMsg{State: next})
	run(m, read)
	if v := top(); !strings.Contains(v, "earlier messages, could not be read") {
		t.Fatalf("a failed read still says the messages are being read:\n%s", v)
	}
}

// An answer of the same session that does not fit the head shown now (a
// read of another branch's version, the head moved since) leaves the
// earlier messages that fit as they are.
func TestEarlierThatNoLongerFitsIsDropped(t *testing.T) {
	whole, recent := chatState(t, "aaaaaaaaaaaaaaaa", 150, "A")
	other, _ := chatState(t, "aaaaaaaaaaaaaaaa", 150, "another branch's")
	f := newFake()
	f.info.ID, f.head = whole.SessionID, recent
	f.whole = func(string, int) (state.State, error) { return whole, nil }
	p, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	m := New(f, Options{Palette: p, Now: func() time.Time { return t0 }})
	_, read := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	run(m, read)
	m.Update(earlierMsg{key: earlierKey{whole.SessionID, whole.Version}, whole: other})
	if len(m.conv.earlier) != recent.HistoryFrom || m.conv.earlier[0].Content != "A question 1" {
		t.Fatalf("after another branch's answer the pane holds %d earlier messages", len(m.conv.earlier))
	}
}
