package tui

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

// A long session is opened with its recent part (state.State.Window):
// the first frame and the first message wait for its last turns only.
// The panes read the earlier messages and tool calls right after, in the
// background, and show them once they are there; until then the
// conversation says they are being read.

// earlierMsg brings the whole state the head's earlier messages come
// from, for the read key names.
type earlierMsg struct {
	key   earlierKey
	whole state.State
	err   error
}

// earlierKey names a read of the earlier messages, so each is asked once.
type earlierKey struct {
	session string
	version int
}

// readEarlier reads the whole state at the head when the head leaves out
// messages or calls that the whole read last does not give. One read runs
// at a time: a head that moves on while it runs (a task's checkpoints)
// is read for when it answers, if what it brings does not fit.
func (m *Model) readEarlier() tea.Cmd {
	h := m.head
	key := earlierKey{h.SessionID, h.Version}
	if !h.Windowed() || earlierFits(m.earlier, h) || m.earlierReading || m.earlierAsked == key {
		return nil
	}
	m.earlierAsked, m.earlierReading = key, true
	m.conv.SetEarlierUnread("being read")
	d := m.d
	return func() tea.Msg {
		whole, err := d.Whole(key.session, key.version)
		return earlierMsg{key: key, whole: whole, err: err}
	}
}

// handleEarlier takes the answer to a read when it fits the head shown
// now: the person may have moved to another session, or back, since it
// was asked. An answer that does not fit is dropped, and Update's next
// readEarlier asks for the head as it is now, if it moved on.
func (m *Model) handleEarlier(msg earlierMsg) tea.Cmd {
	m.earlierReading = false
	if msg.key.session != m.head.SessionID {
		return nil
	}
	if msg.err != nil {
		// Asked again when the head moves on, not at every message: a
		// damaged file would fail each time.
		m.notice = "could not read the earlier messages: " + msg.err.Error()
		m.conv.SetEarlierUnread("could not be read")
		return nil
	}
	if !earlierFits(msg.whole, m.head) {
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
	if whole.SessionID != s.SessionID || whole.Windowed() || whole.Version > s.Version ||
		s.HistoryFrom > whole.HistoryLen() || s.Memory.ToolCallsFrom > len(whole.Memory.ToolCalls) {
		return false
	}
	return s.HistoryFrom == whole.HistoryLen() || len(s.History) == 0 || sameMessage(whole.History[s.HistoryFrom], s.History[0])
}

// shownCalls is s's tool log for the panes: with the calls its window
// leaves out when they were read (earlier), and how many it still
// leaves out.
func (m *Model) shownCalls(s state.State) ([]state.ToolCall, int) {
	left := s.Memory.ToolCallsFrom
	if left == 0 || !earlierFits(m.earlier, s) {
		return s.Memory.ToolCalls, left
	}
	return slices.Concat(m.earlier.Memory.ToolCalls[:left], s.Memory.ToolCalls), 0
}
