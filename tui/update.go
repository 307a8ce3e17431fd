package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

func (m *Model) handleResize(msg tea.WindowSizeMsg) tea.Cmd {
	m.width, m.height = msg.Width, msg.Height
	m.relayout()
	return nil
}

// relayout recomputes the rectangles: on resize, and when the input or
// the timeline banner changes height.
func (m *Model) relayout() {
	extra := 0
	if m.timeline != nil && m.mode != modeTree {
		extra = 3 // the banner: keys, the version's change, its files
	}
	m.lay = computeLayout(m.width, m.height, m.input.Lines(), extra)
}

func (m *Model) handleState(msg StateMsg) tea.Cmd {
	grew := len(msg.State.History) > len(m.head.History)
	m.setHead(msg.State)
	if grew {
		m.conv.EndStream()
	}
	return nil
}

func (m *Model) handleDelta(msg DeltaMsg) tea.Cmd {
	m.conv.Stream(msg.Reasoning, msg.Text)
	return nil
}

func (m *Model) handleRetry(msg RetryMsg) tea.Cmd {
	if msg.Restart {
		m.conv.Restart()
	}
	m.notice = fmt.Sprintf("retrying in %s (%d of %d): %s", msg.Wait.Round(100*time.Millisecond), msg.Attempt, msg.Of, msg.Reason)
	return nil
}

func (m *Model) handleNotice(text string) tea.Cmd {
	m.notice = text
	return nil
}

// handleError shows what a command's driver call failed with. In the
// sessions dialog it is a refusal to read before typing on.
func (m *Model) handleError(err error) tea.Cmd {
	m.notice = "error: " + err.Error()
	if m.mode == modeSessions && m.sessions != nil {
		m.sessions.refused = true
	}
	return nil
}

func (m *Model) handleTaskDone(msg TaskDoneMsg) tea.Cmd {
	m.running = false
	m.approval = nil
	m.conv.EndStream()
	if msg.Session.ID == m.session.ID || m.session.ID == "" { // "": its first message wrote a new session
		m.session = msg.Session
		m.setHead(msg.Head)
	}
	switch {
	case msg.Err == nil:
		m.errText = ""
	case msg.Interrupted:
		m.notice = "interrupted: what streamed is kept; send a message to go on"
	default:
		m.errText = msg.Err.Error()
	}
	if m.quitting {
		return tea.Quit
	}
	return nil
}

func (m *Model) handleApproval(msg ApprovalMsg) tea.Cmd {
	m.approval = &msg
	m.detail = detailView{}
	return nil
}

func (m *Model) handleSessionChanged(msg SessionChangedMsg) tea.Cmd {
	m.timeline = nil
	m.mode = modeChat
	m.errText, m.notice = "", ""
	m.loadSession(msg.Session, msg.Head)
	m.relayout()
	if m.head.Phase.Active() && !m.session.ReadOnly {
		m.running = true
		return m.run(m.d.Resume)
	}
	return nil
}

func (m *Model) handleWheel(msg tea.MouseWheelMsg) tea.Cmd {
	switch msg.Button {
	case tea.MouseWheelUp:
		m.conv.Scroll(3)
	case tea.MouseWheelDown:
		m.conv.Scroll(-3)
	}
	return nil
}

// maxInput bounds a message (state.MaxMessage says why).
const maxInput = state.MaxMessage

func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	if m.mode != modeChat || m.approval != nil || m.session.ReadOnly {
		return nil
	}
	text := msg.Content
	if room := maxInput - len(m.input.Value()); len(text) > room {
		cut := max(room, 0)
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		m.notice = fmt.Sprintf("the paste was cut to %d KiB of its %d KiB: a message holds at most %d KiB", cut>>10, len(text)>>10, maxInput>>10)
		text = text[:cut]
	}
	m.input.Insert(text)
	m.relayout()
	return nil
}

func (m *Model) handleTick() tea.Cmd {
	if !m.running {
		return nil
	}
	return tick()
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{} })
}

// submit sends the input as a message, or runs it as a slash command.
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	switch {
	case text == "":
		return nil
	case strings.HasPrefix(text, "/"):
		m.input.Reset()
		m.relayout()
		return m.command(text)
	case m.session.ReadOnly:
		m.notice = "read-only: another retrace process writes this session"
		return nil
	case m.running:
		m.notice = busyNotice("")
		return nil
	}
	m.input.Reset()
	m.relayout()
	return m.send(text)
}

// send starts a task.
func (m *Model) send(text string) tea.Cmd {
	if m.timeline != nil {
		m.closeTimeline()
	}
	m.lastSent, m.errText, m.notice = text, "", ""
	m.running = true
	m.conv.Bottom()
	return tea.Batch(m.run(func() error { return m.d.Submit(text) }), tick())
}

// retry carries on a task left mid-way (after a restore), or sends the
// last message again after a failure.
func (m *Model) retry() tea.Cmd {
	if m.running || m.session.ReadOnly {
		return nil
	}
	if m.head.Phase.Active() {
		m.running, m.notice = true, ""
		return tea.Batch(m.run(m.d.Resume), tick())
	}
	if m.lastSent == "" && m.head.Memory.CurrentGoal == "" {
		return nil
	}
	text := m.lastSent
	if text == "" {
		text = m.head.Memory.CurrentGoal
	}
	return m.send(text)
}

// decide answers the pending approval.
func (m *Model) decide(d Decision) tea.Cmd {
	if m.approval == nil {
		return nil
	}
	m.approval = nil
	m.detail = detailView{}
	return func() tea.Msg { m.d.Decide(d); return nil }
}
