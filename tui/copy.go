package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"retrace/state"

	"retrace/state/transcript"
)

// The interface tracks the mouse for the wheel, and a terminal that
// reports the mouse to a program does not select text with it (most
// still do with Shift held). /copy puts what people most want to take
// away on the clipboard, and /mouse off gives the mouse back to the
// terminal.

// copyText puts the last answer, or with "tool" the selected tool call's
// result, on the clipboard (OSC 52, which the terminal must allow).
func (m *Model) copyText(c command, args []string) tea.Cmd {
	s := m.shown()
	var what, text string
	switch {
	case len(args) == 0 || args[0] == "answer":
		text, what = lastAnswer(s.History), "the last answer"
	case args[0] == "tool" && len(args) == 1:
		log := m.calls
		if len(log) == 0 {
			m.notice = "no tool call to copy yet"
			return nil
		}
		i := m.tools.selected
		if i < 0 || i >= len(log) {
			i = len(log) - 1
		}
		text, what = log[i].Result, "the result of "+inert(log[i].Name)
	default:
		m.notice = c.usage("")
		return nil
	}
	if text == "" {
		m.notice = "nothing to copy: " + what + " is empty"
		return nil
	}
	m.notice = fmt.Sprintf("copied %s (%s, %s) to the clipboard; a terminal that ignores OSC 52 copies nothing: "+
		"/mouse off, then select it with the mouse", what, transcript.ApproxSize(int64(len(text))), lineCount(text))
	return tea.SetClipboard(text)
}

// lastAnswer is what the model last said to the person.
func lastAnswer(h []state.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == state.RoleAssistant && h[i].Content != "" {
			return h[i].Content
		}
	}
	return ""
}

// setMouse turns the mouse tracking on (the wheel scrolls) or off (the
// terminal selects text).
func (m *Model) setMouse(c command, args []string) tea.Cmd {
	switch {
	case len(args) == 1 && args[0] == "off":
		m.mouseOff = true
		m.notice = "mouse off: select text with it as in any terminal; " + legendPair(keymap.Chat.ScrollUp, keymap.Chat.ScrollDown) +
			" scroll; /mouse on for the wheel"
	case len(args) == 1 && args[0] == "on":
		m.mouseOff = false
		m.notice = "mouse on: the wheel scrolls; Shift+drag selects in most terminals, or /mouse off"
	default:
		m.notice = c.usage("")
	}
	return nil
}
