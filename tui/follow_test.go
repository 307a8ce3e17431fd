package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"retrace/state"
)

// readOnlyFake is a session another process writes, at rest.
func readOnlyFake() *fakeDriver {
	f := newFake(answeredSession()...)
	f.info.ReadOnly = true
	return f
}

// movedOn is the fake's session after its writer kept another turn.
func movedOn(f *fakeDriver) (SessionInfo, state.State) {
	head := f.head
	head.History = append(append([]state.Message(nil), head.History...),
		state.Message{Role: state.RoleUser, Content: "what changed?"},
		state.Message{Role: state.RoleAssistant, Content: "The writer moved on."})
	head.Version += 2
	info := f.info
	info.Head, info.Versions = head.Version, head.Version
	return info, head
}

// The read-only screen follows what its writer keeps: the conversation
// and the status line move on with it, and it stays read-only.
func TestReadOnlyFollowsItsWriter(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := readOnlyFake()
			m := newModel(t, f, "dark", size[0], size[1])
			info, head := movedOn(f)
			stale := info
			stale.ID = "0123456789abcdef"
			m.Update(FollowedMsg{Session: stale, Head: head}) // another session's: not this one
			if s := screenOf(m); strings.Contains(s, "The writer moved on.") {
				t.Fatalf("another session's report was shown:\n%s", s)
			}
			m.Update(FollowedMsg{Session: info, Head: head})
			s := screenOf(m)
			if !strings.Contains(s, "The writer moved on.") || !strings.Contains(statusText(m), "v4/4") || !strings.Contains(statusText(m), "read-only") {
				t.Fatalf("after the writer moved on:\n%s", s)
			}
			checkScreen(t, m.View().Content, size[0], size[1])
		})
	}
}

// When the writer quits the status line asks whether to take the session
// over: y does, and the input takes messages; n leaves it read-only; a
// writer back first makes y an error that leaves it read-only.
func TestWriterGoneOffersTakeOver(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("yes/%dx%d", size[0], size[1]), func(t *testing.T) {
			f := readOnlyFake()
			m := newModel(t, f, "dark", size[0], size[1])
			m.Update(WriterGoneMsg{})
			if s := statusText(m); !strings.Contains(s, takeOverQuestion) {
				t.Fatalf("the status line does not ask: %q", s)
			}
			checkScreen(t, m.View().Content, size[0], size[1])
			// A y typed on as the question came takes nothing over.
			pressKeys(t, m, "y")
			if f.takenOver != 0 || m.confirm == nil {
				t.Fatalf("a y typed as the question opened: taken over %d times", f.takenOver)
			}
			if !strings.Contains(screenOf(m), "keys typed now answer nothing") {
				t.Fatalf("the input does not say keys answer nothing yet:\n%s", screenOf(m))
			}
			later(m, approvalGuard)
			if strings.Contains(screenOf(m), "keys typed now answer nothing") {
				t.Fatalf("past the guard, the input still says keys answer nothing:\n%s", screenOf(m))
			}
			pressKeys(t, m, "y")
			if f.takenOver != 1 || m.session.ReadOnly || strings.Contains(statusText(m), "read-only") {
				t.Fatalf("y: taken over %d times, read-only %v", f.takenOver, m.session.ReadOnly)
			}
			typed(t, m, "mine now")
			if len(f.submitted) != 1 || f.submitted[0] != "mine now" {
				t.Fatalf("after the takeover, sent %q", f.submitted)
			}
		})
	}
	t.Run("no", func(t *testing.T) {
		f := readOnlyFake()
		m := newModel(t, f, "dark", 80, 24)
		m.Update(WriterGoneMsg{})
		later(m, approvalGuard)
		pressKeys(t, m, "n")
		if f.takenOver != 0 || !m.session.ReadOnly || m.confirm != nil {
			t.Fatalf("n: taken over %d times, read-only %v", f.takenOver, m.session.ReadOnly)
		}
	})
	t.Run("writer back first", func(t *testing.T) {
		f := readOnlyFake()
		f.takeErr = errors.New("session 3f2a9c1b0d4e5f67 is in use by another retrace process (pid 77)")
		m := newModel(t, f, "dark", 120, 40)
		m.Update(WriterGoneMsg{})
		later(m, approvalGuard)
		pressKeys(t, m, "y")
		if !m.session.ReadOnly || !strings.Contains(m.notice, "in use by another retrace process") {
			t.Fatalf("a refused takeover: read-only %v, notice %q", m.session.ReadOnly, m.notice)
		}
	})
	t.Run("already writable", func(t *testing.T) {
		f := newFake(answeredSession()...)
		m := newModel(t, f, "dark", 120, 40)
		m.Update(WriterGoneMsg{})
		if m.confirm != nil {
			t.Fatal("a session this process writes was offered for takeover")
		}
	})
}

// A question already waiting is answered first; the offer comes after
// it, not instead of it, and not for a session opened meanwhile.
func TestTakeOverWaitsForTheQuestionBefore(t *testing.T) {
	f := readOnlyFake()
	m := newModel(t, f, "dark", 120, 40)
	pressKeys(t, m, "ctrl+s", "down", "d")
	_, again := m.Update(WriterGoneMsg{})
	if s := statusText(m); !strings.Contains(s, "Delete session 9b8c7d6e") || again == nil {
		t.Fatalf("the delete question was replaced: %q", s)
	}
	pressKeys(t, m, "n")
	run(m, again)
	if s := statusText(m); !strings.Contains(s, takeOverQuestion) {
		t.Fatalf("after the delete question, no offer: %q", s)
	}

	later(m, approvalGuard)
	pressKeys(t, m, "n", "down", "d")
	_, again = m.Update(WriterGoneMsg{})
	pressKeys(t, m, "n")
	m.session.ID = "another session"
	run(m, again)
	if m.confirm != nil {
		t.Fatal("the offer was made for a session opened since")
	}
}
