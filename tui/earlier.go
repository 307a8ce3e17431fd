package tui

import (
	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

// A long session is opened with its recent part (state.State.Window):
// the first frame and the first message wait for its last turns only.
// The pane reads the earlier messages right after, in the background,
// and shows them above once they are there; until then it says they are
// being read.

// earlierMsg brings the whole state the head's earlier messages come
// from.
type earlierMsg struct {
	whole state.State
	err   error
}

// earlierKey names a read of the earlier messages, so each is asked once.
type earlierKey struct {
	session string
	version int
}

// readEarlier reads the whole state at the head when the head leaves out
// messages that the whole read last does not give.
func (m *Model) readEarlier() tea.Cmd {
	h := m.head
	key := earlierKey{h.SessionID, h.Version}
	if h.HistoryFrom == 0 || earlierFits(m.earlier, h) || m.earlierAsked == key {
		return nil
	}
	m.earlierAsked = key
	d := m.d
	return func() tea.Msg {
		whole, err := d.Whole(key.version)
		return earlierMsg{whole: whole, err: err}
	}
}

func (m *Model) handleEarlier(msg earlierMsg) tea.Cmd {
	if msg.err != nil {
		m.notice = "could not read the earlier messages: " + msg.err.Error()
		return nil
	}
	m.earlier = msg.whole
	if m.timeline == nil {
		m.showState(m.head)
	}
	return nil
}

// earlierFits reports whether whole, a state with every message, holds
// what s leaves out: the same session, no newer than s, and the same
// message where s's window starts (a head moved to another branch since
// is told by it).
func earlierFits(whole, s state.State) bool {
	if whole.SessionID != s.SessionID || whole.HistoryFrom != 0 || whole.Version > s.Version ||
		s.HistoryFrom > whole.HistoryLen() || s.Memory.ToolCallsFrom > len(whole.Memory.ToolCalls) {
		return false
	}
	return s.HistoryFrom == whole.HistoryLen() || len(s.History) == 0 || sameMessage(whole.History[s.HistoryFrom], s.History[0])
}
