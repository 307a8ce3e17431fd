package tui

import (
	"strings"
	"testing"

	"retrace/state"
)

// thinkingSession is two questions, each answered after some thinking:
// v2 holds the first answer, v4 the second.
func thinkingSession() []state.Event {
	user := func(s string) []state.Message { return []state.Message{{Role: state.RoleUser, Content: s}} }
	answer := func(content, reasoning string) []state.Message {
		return []state.Message{{Role: state.RoleAssistant, Content: content, Reasoning: reasoning}}
	}
	return []state.Event{
		{Kind: state.UserMessage, Messages: user("what is 2+2?")},
		{Kind: state.Answered, Messages: answer("It is 4.", "\nadding two and two\ncounting on fingers\nso four\n")},
		{Kind: state.UserMessage, Messages: user("and 3+3?")},
		{Kind: state.Answered, Messages: answer("It is 6.", "three and three\nmakes six")},
	}
}

// conversationText is the conversation pane as a person reads it.
func conversationText(m *Model) string {
	return conversationPane(m, lines(plain(m.View().Content)))
}

// wantIn fails unless the conversation shows each of want and none of
// not.
func wantIn(t *testing.T, when string, m *Model, want, not []string) {
	t.Helper()
	conv := conversationText(m)
	for _, w := range want {
		if !strings.Contains(conv, w) {
			t.Errorf("%s: the conversation lacks %q:\n%s", when, w, conv)
		}
	}
	for _, n := range not {
		if strings.Contains(conv, n) {
			t.Errorf("%s: the conversation shows %q:\n%s", when, n, conv)
		}
	}
}

// A kept reply shows its thinking folded to one line; Ctrl+O unfolds it
// and folds it again, at the head and at an older version in the
// timeline, where only what was thought by then is shown.
func TestThinkingFoldsAtTheHeadAndInTheTimeline(t *testing.T) {
	m := newModel(t, newFake(thinkingSession()...), "dark", 120, 40)
	first, second := "▸ thinking, 3 lines (Ctrl+O): so four", "▸ thinking, 2 lines (Ctrl+O): makes six"
	body := []string{"adding two and two", "counting on fingers", "three and three"}
	wantIn(t, "at the head, folded", m, []string{first, second, "It is 4.", "It is 6."}, body)

	m.Update(ctrl('o'))
	wantIn(t, "at the head, unfolded", m, append([]string{"▾ thinking, 3 lines (Ctrl+O)", "▾ thinking, 2 lines (Ctrl+O)",
		"It is 4.", "It is 6.", "so four", "makes six"}, body...), []string{"▸ thinking"})
	m.Update(ctrl('o'))
	wantIn(t, "at the head, folded again", m, []string{first, second}, body)

	_, cmd := m.Update(keyMsg("ctrl+t"))
	run(m, cmd)
	press(m, "left", "left")
	if m.timeline == nil || m.timeline.current().Version != 2 {
		t.Fatal("the timeline does not show v2")
	}
	wantIn(t, "at v2, folded", m, []string{first, "It is 4.", "Conversation at v2"}, append(body, "makes six", "It is 6."))
	m.Update(ctrl('o'))
	if m.timeline == nil || m.timeline.current().Version != 2 {
		t.Fatal("Ctrl+O left the timeline or moved it")
	}
	wantIn(t, "at v2, unfolded", m, []string{"▾ thinking, 3 lines (Ctrl+O)", "adding two and two", "counting on fingers", "so four"},
		[]string{"three and three", "▸ thinking"})
	press(m, "right", "right")
	wantIn(t, "at v4, unfolded", m, []string{"three and three", "makes six", "adding two and two"}, []string{"▸ thinking"})
	m.Update(ctrl('o'))
	wantIn(t, "at v4, folded", m, []string{first, second}, body)
}

// The reply being streamed and the same reply once kept draw its thinking
// alike, folded and unfolded: when the checkpoint arrives only the
// streaming mark goes. The screen is too short for the conversation, so
// it is drawn from its end, where a line more or less would move it all.
func TestStreamedThinkingLooksAsKept(t *testing.T) {
	all := thinkingSession()
	kept := newFake(all...).head
	for _, unfold := range []bool{false, true} {
		m := newModel(t, newFake(all[:3]...), "dark", 120, 16)
		if unfold {
			m.Update(ctrl('o'))
		}
		m.Update(DeltaMsg{Phase: state.Planning, Reasoning: true, Text: "three and three\n"})
		m.Update(DeltaMsg{Phase: state.Planning, Reasoning: true, Text: "makes six"})
		m.Update(DeltaMsg{Phase: state.Planning, Text: "It is 6."})
		streamed := conversationText(m)
		m.Update(StateMsg{State: kept})
		after := conversationText(m)
		if m.conv.live.active {
			t.Fatal("the kept reply did not replace the streamed one")
		}
		if strings.Replace(streamed, "retrace …", "retrace  ", 1) != after {
			t.Errorf("unfolded %v: streamed\n%s\nkept\n%s", unfold, streamed, after)
		}
		if !strings.Contains(after, "thinking, 2 lines") || strings.Contains(after, "what is 2+2?") {
			t.Errorf("unfolded %v: the kept thinking is not shown, or the conversation fits:\n%s", unfold, after)
		}
	}
}

// A message at the same place in another version's history, saying the
// same but having thought otherwise (a branch), is drawn again, not taken
// from the cache.
func TestCachedMessageRedrawnForOtherThinking(t *testing.T) {
	m := newModel(t, newFake(thinkingSession()...), "dark", 120, 40)
	c := m.conv
	h := append([]state.Message{}, m.head.History...)
	before := strings.Join(c.Render(60, 30), "\n")
	if !strings.Contains(plain(before), "so four") {
		t.Fatalf("the first reply's thinking is not shown:\n%s", plain(before))
	}
	h[1].Reasoning = "on another branch\nso it is four"
	c.SetHistory(h, 0)
	if after := plain(strings.Join(c.Render(60, 30), "\n")); !strings.Contains(after, "2 lines (Ctrl+O): so it is four") {
		t.Fatalf("the other thinking is not shown:\n%s", after)
	}
}
