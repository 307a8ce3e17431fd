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
	f.whole = func(v int) (state.State, error) {
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
