package tui

import (
	tea "charm.land/bubbletea/v2"
)

// handleKey routes a key press: a pending confirmation or approval first,
// then the mode.
func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	key := k.String()
	if m.confirm != nil {
		return m.confirmKey(key)
	}
	if key == "ctrl+c" {
		return m.quit()
	}
	if m.approval != nil {
		return m.approvalKey(key)
	}
	switch m.mode {
	case modeHelp:
		m.mode = modeChat
		return nil
	case modeToolDetail:
		return m.detailKey(key)
	case modeSessions:
		return m.sessionsKey(k)
	case modeTree:
		return m.treeKey(key)
	case modeTimeline:
		return m.timelineKey(key)
	}
	return m.chatKey(k)
}

// quit leaves at once when nothing runs; a running task asks first.
func (m *Model) quit() tea.Cmd {
	if !m.running {
		return tea.Quit
	}
	m.confirm = &confirmation{
		question: "A task is running. Quit? It will be interrupted (y/n)",
		yes: func() tea.Cmd {
			m.quitting = true
			m.d.Cancel()
			return nil
		},
	}
	return nil
}

func (m *Model) chatKey(k tea.KeyPressMsg) tea.Cmd {
	switch key := k.String(); key {
	case "enter":
		if m.focus == focusTools {
			return m.openToolDetail()
		}
		return m.submit()
	case "esc":
		switch {
		case m.running:
			m.notice = "cancelling…"
			m.d.Cancel()
		case m.focus == focusTools:
			m.focus = focusInput
		default:
			m.notice, m.errText = "", ""
		}
		return nil
	case "tab":
		if m.focus == focusInput && m.completeCommand() {
			return nil
		}
		return m.nextPane(1)
	case "shift+tab":
		return m.nextPane(-1)
	case "ctrl+t":
		return m.openTimeline()
	case "ctrl+s":
		return m.openSessions()
	case "ctrl+o":
		m.conv.ToggleReasoning()
		return nil
	case "ctrl+r":
		return m.retry()
	case "ctrl+e":
		return m.openEditor()
	case "pgup":
		m.conv.Scroll(max(m.lay.mainH-4, 1))
		return nil
	case "pgdown":
		m.conv.Scroll(-max(m.lay.mainH-4, 1))
		return nil
	case "ctrl+end":
		m.conv.Bottom()
		return nil
	case "f1":
		m.mode = modeHelp
		return nil
	case "?":
		if m.input.Value() == "" {
			m.mode = modeHelp
			return nil
		}
	case "up", "down":
		if m.focus == focusTools {
			m.tools.Move(map[string]int{"up": -1, "down": 1}[key], len(m.shown().Memory.ToolCalls))
			return nil
		}
	}
	if m.session.ReadOnly || m.focus != focusInput {
		return nil
	}
	before := m.input.Lines()
	cmd := m.input.Update(k)
	if m.input.Lines() != before {
		m.relayout()
	}
	m.completeHint()
	return cmd
}

// nextPane moves the keyboard between the input and the tool log, or, in
// a narrow layout, between the tabs.
func (m *Model) nextPane(step int) tea.Cmd {
	if !m.lay.wide {
		m.tab = (m.tab + step + len(tabs)) % len(tabs)
		m.focus = focusInput
		if m.tab == 2 {
			m.focus = focusTools
		}
		return nil
	}
	if m.focus == focusInput {
		m.focus = focusTools
	} else {
		m.focus = focusInput
	}
	return nil
}

func (m *Model) approvalKey(key string) tea.Cmd {
	switch key {
	case "a", "y", "enter":
		return m.decide(Decision{Approve: true})
	case "s":
		return m.decide(Decision{Approve: true, Always: true})
	case "d", "n":
		return m.decide(Decision{})
	case "esc":
		m.d.Cancel()
		return nil
	case "up", "k":
		m.detail.scroll(-1)
	case "down", "j":
		m.detail.scroll(1)
	case "pgup":
		m.detail.scroll(-10)
	case "pgdown", "space":
		m.detail.scroll(10)
	}
	return nil
}

// confirmation is a yes/no question over the current mode.
type confirmation struct {
	question string
	yes      func() tea.Cmd
}

func (m *Model) confirmKey(key string) tea.Cmd {
	c := m.confirm
	m.confirm = nil
	if key == "y" || key == "Y" {
		return c.yes()
	}
	m.notice = ""
	return nil
}
