package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// approvalGuard is how long a question must have been on screen, and the
// keyboard still, before a key answers an approval. A message being
// typed as the question opens, or a paste a terminal sends as keys, would
// otherwise answer it with whichever of a, y, s, p, d or n it holds: what
// is typed then goes to the message instead. A person who reads the
// question before answering takes longer than this; typing goes faster.
const approvalGuard = 600 * time.Millisecond

func (m *Model) handleApproval(msg ApprovalMsg) tea.Cmd {
	m.approval = &msg
	m.asked = m.opts.Now()
	m.detail = detailView{}
	return nil
}

// askGuarded puts up a question that came by itself (another process
// quit, a restore found changed files): keys typed as it opens answer
// nothing, as at an approval. The command it returns redraws the screen
// when keys start to count.
func (m *Model) askGuarded(c confirmation) tea.Cmd {
	c.guarded = true
	m.confirm = &c
	m.asked = m.opts.Now()
	return guardTick()
}

// guardPassedMsg redraws the screen once a guarded question takes keys:
// nothing else need happen for the input's title to say so.
type guardPassedMsg struct{}

// guardTick is a redraw when the guard that began now has passed.
func guardTick() tea.Cmd {
	return tea.Tick(approvalGuard, func(time.Time) tea.Msg { return guardPassedMsg{} })
}

// inputTitle is what the input's border says while an approval is on
// screen: that the question waits for an answer, and which keys give it
// (Enter, which sends a message, gives none), or, while keys are still
// taken as typing, that they go to the message. The running task's tick
// redraws it when the guard passes. Over a guarded question, it says
// while keys answer nothing.
func (m *Model) inputTitle() string {
	if m.confirm != nil && m.confirm.guarded && !m.settled(m.opts.Now()) {
		return "a question waits below · keys typed now answer nothing"
	}
	if m.approval == nil {
		return ""
	}
	if !m.settled(m.opts.Now()) {
		return "a question waits above · keys typed now go to your message"
	}
	a := keymap.Approval
	return "waiting on the question above: " + legend(a.Approve) + " approve · " + legend(a.Deny) + " deny · " + legend(a.Cancel) + " cancel"
}

// settled reports whether a key pressed at now may answer the approval:
// the question has been on screen, and the keyboard still, for
// approvalGuard.
func (m *Model) settled(now time.Time) bool {
	return now.Sub(m.asked) >= approvalGuard && now.Sub(m.lastInput) >= approvalGuard
}

// typing records that a key or a paste came now, and reports whether it
// is part of typing rather than a possible answer.
func (m *Model) typing() bool {
	now := m.opts.Now()
	typing := !m.settled(now)
	m.lastInput = now
	return typing
}

// approvalKey answers the approval on screen, or scrolls what the call
// will do. A key that is part of typing answers nothing: what it types
// goes to the message.
func (m *Model) approvalKey(k tea.KeyPressMsg, typing bool) tea.Cmd {
	if typing && k.Text != "" {
		m.focus = focusInput
		m.notice = "typed as the question opened: kept in your message, not taken as an answer"
		return m.input.Update(k)
	}
	a := keymap.Approval
	switch {
	case key.Matches(k, a.Up):
		m.detail.scroll(-1)
	case key.Matches(k, a.Down):
		m.detail.scroll(1)
	case key.Matches(k, a.PageUp):
		m.detail.scroll(-10)
	case key.Matches(k, a.PageDown):
		m.detail.scroll(10)
	case typing:
		// Enter, Esc and the like, typed ahead: they answer nothing.
	case key.Matches(k, a.Approve):
		return m.decide(Decision{Approve: true})
	case key.Matches(k, a.Always):
		return m.decide(Decision{Approve: true, Always: true})
	case key.Matches(k, a.Project):
		return m.decide(Decision{Approve: true, Always: true, Project: true})
	case key.Matches(k, a.Deny):
		return m.decide(Decision{})
	case key.Matches(k, a.Cancel):
		m.d.Cancel()
	}
	return nil
}
