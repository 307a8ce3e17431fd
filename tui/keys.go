package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// handleKey routes a key press: a pending confirmation or approval first,
// then the mode.
func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	typing := m.typing()
	if m.confirm != nil {
		return m.confirmKey(k, typing)
	}
	if key.Matches(k, keymap.Chat.Quit) {
		if m.input.Value() != "" {
			// As in a shell: the first Ctrl+C takes back the line being
			// written, and only a second one leaves, whatever screen is
			// over the input.
			m.input.Reset()
			m.relayout()
			m.notice = "draft cleared; " + legend(keymap.Chat.Quit) + " again quits"
			return nil
		}
		return m.quit()
	}
	if m.approval != nil {
		return m.approvalKey(k, typing)
	}
	switch m.mode {
	case modeHelp:
		return m.helpKey(k)
	case modeToolDetail:
		return m.detailKey(k)
	case modeMemories:
		return m.memoriesKey(k)
	case modeSessions:
		return m.sessionsKey(k)
	case modeTree:
		return m.treeKey(k)
	case modeTimeline:
		return m.timelineKey(k)
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

// chatKey acts on the chat's keys; the rest (letters, Alt+Enter) go to
// the input.
func (m *Model) chatKey(k tea.KeyPressMsg) tea.Cmd {
	c := keymap.Chat
	page := max(m.lay.mainH-4, 1)
	switch {
	case key.Matches(k, c.Send):
		if m.focus == focusTools {
			return m.openToolDetail()
		}
		return m.submit()
	case key.Matches(k, c.Cancel):
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
	case key.Matches(k, c.NextPane):
		if m.focus == focusInput && strings.HasPrefix(m.input.Value(), "/") {
			m.completeCommand()
			return nil
		}
		return m.nextPane(1)
	case key.Matches(k, c.PrevPane):
		return m.nextPane(-1)
	case key.Matches(k, c.Timeline):
		return m.openTimeline()
	case key.Matches(k, c.Sessions):
		return m.openSessions()
	case key.Matches(k, c.Reasoning):
		m.conv.ToggleReasoning()
		return nil
	case key.Matches(k, c.Retry):
		return m.retry()
	case key.Matches(k, c.Editor):
		return m.openEditor()
	case key.Matches(k, c.ScrollUp):
		m.conv.Scroll(page)
		return nil
	case key.Matches(k, c.ScrollDown):
		m.conv.Scroll(-page)
		return nil
	// Home and End are the input's while nothing is scrolled: they move
	// the cursor.
	case key.Matches(k, c.Top) && (m.conv.offset > 0 || k.String() != "home"):
		m.conv.Top()
		return nil
	case key.Matches(k, c.Follow) && (m.conv.offset > 0 || k.String() != "end"):
		m.conv.Bottom()
		return nil
	// A printable help key (?) is typed once there is a message.
	case key.Matches(k, c.Help) && (k.Text == "" || m.input.Value() == ""):
		m.openHelp()
		return nil
	case key.Matches(k, c.ToolUp, c.ToolDown) && m.focus == focusTools:
		m.moveTool(key.Matches(k, c.ToolUp))
		return nil
	}
	if m.session.ReadOnly {
		return nil
	}
	if m.focus != focusInput {
		if k.Text == "" {
			return nil
		}
		// Typing is for the input: a letter typed in the tool log goes
		// there, with the focus, instead of vanishing.
		m.focus = focusInput
		if !m.lay.wide {
			m.tab = 0
		}
	}
	before := m.input.Lines()
	cmd := m.input.Update(k)
	if m.input.Lines() != before {
		m.relayout()
	}
	m.completeHint()
	return cmd
}

// moveTool moves the tool log's selection a call up or down, in the
// state shown (the head's, or the timeline's version).
func (m *Model) moveTool(up bool) {
	step := 1
	if up {
		step = -1
	}
	m.tools.Move(step, len(m.calls))
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

// confirmation is a yes/no question over the current mode.
type confirmation struct {
	question string
	yes      func() tea.Cmd
	keep     func() tea.Cmd // a third answer, when the question has one
	look     func() tea.Cmd // another: open read-only, to look
	// guarded is a question that comes by itself, not as the answer to
	// a key: like an approval, it takes no key typed as it opens
	// (askGuarded).
	guarded bool
}

// confirmKey answers the question: yes, or no for any other key. A
// guarded question ignores keys that are part of typing.
func (m *Model) confirmKey(k tea.KeyPressMsg, typing bool) tea.Cmd {
	c := m.confirm
	if c.guarded && typing {
		return guardTick() // the guard runs on from this key
	}
	m.confirm = nil
	if key.Matches(k, keymap.Confirm.Yes) {
		return c.yes()
	}
	if c.keep != nil && key.Matches(k, keymap.Confirm.Keep) {
		return c.keep()
	}
	if c.look != nil && key.Matches(k, keymap.Confirm.Look) {
		return c.look()
	}
	m.notice = ""
	return nil
}
