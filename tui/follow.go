package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// A session another process writes is open read-only here. The driver
// follows it: each checkpoint the writer keeps arrives as a FollowedMsg,
// and when the writer lets the session go, WriterGoneMsg offers to take
// it over.

// takeOverQuestion is asked in the status line: short enough for 80
// columns beside the session's id, version and read-only badge.
const takeOverQuestion = "Writer quit: take the session over? (y/n)"

func (m *Model) handleFollowed(msg FollowedMsg) tea.Cmd {
	if msg.Session.ID != m.session.ID || !m.session.ReadOnly {
		return nil // a report from before this session was opened, or taken over
	}
	m.session = msg.Session
	m.setHead(msg.Head)
	return nil
}

func (m *Model) handleWriterGone() tea.Cmd {
	return m.offerTakeOver(askTakeOverMsg{id: m.session.ID})
}

// askTakeOverMsg asks again, for session id, once the question before it
// has been answered.
type askTakeOverMsg struct{ id string }

// offerTakeOver asks whether to take over the read-only session whose
// writer quit. One question at a time: while another waits for its
// answer, this one is asked a moment later, not dropped.
func (m *Model) offerTakeOver(ask askTakeOverMsg) tea.Cmd {
	if ask.id != m.session.ID || !m.session.ReadOnly {
		return nil // taken over, or another session opened meanwhile
	}
	if m.confirm != nil {
		return tea.Tick(time.Second, func(time.Time) tea.Msg { return ask })
	}
	return m.askGuarded(confirmation{
		question: takeOverQuestion,
		yes: func() tea.Cmd {
			return m.switchSession(busyNotice(""), m.d.TakeOver)
		},
	})
}
